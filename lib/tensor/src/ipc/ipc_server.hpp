// SPDX-License-Identifier: MIT
//
// The serving side of tensoripcsink without GStreamer: the listening socket, one session per
// receiver (greeting, caps, the frames it holds, its releases), the thread that accepts and
// reads them, and the fan-out of each frame with its drop and back-pressure rules. The element
// hands in what keeps a frame's memory alive (a Keepalive) and is told, through a
// ServerObserver, what it should log or post.

#pragma once

#include "ipc_log.hpp"
#include "ipc_socket.hpp"
#include "ipc_wake.hpp"
#include "ipc_wire.hpp"

#include <edgetensor/error.hpp>
#include <edgetensor/log.hpp>
#include <edgetensor/unique_fd.hpp>

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace edgetensor::ipc
{

/// One reference on whatever backs a sent frame. Dropped only outside the server's lock: the
/// drop may return a buffer to a pool, whose callbacks may re-enter the element.
class Keepalive
{
public:
    Keepalive() noexcept = default;
    Keepalive(void* object, void (*drop)(void*)) noexcept : object_(object), drop_(drop) {}
    Keepalive(Keepalive&& o) noexcept : object_(o.object_), drop_(o.drop_) { o.object_ = nullptr; }
    Keepalive& operator=(Keepalive&& o) noexcept;
    Keepalive(const Keepalive&) = delete;
    Keepalive& operator=(const Keepalive&) = delete;
    ~Keepalive() { reset(); }
    void reset() noexcept;

private:
    void* object_ = nullptr;
    void (*drop_)(void*) = nullptr;
};

/// Why a receiver was turned away before its greeting (besides allowed-uid).
enum class Refusal : uint8_t {
    MaxClients, ///< max_clients receivers were served already
    NoFds,      ///< this process is out of file descriptors (EMFILE / ENFILE at accept)
};

/// What holds a blocked frame up at a receiver.
enum class HeldBackBy : uint8_t {
    /// The receiver holds all max_pending lets it: the other receivers are not short of room.
    MaxPending,
    /// The frame would pass max_held_bytes, and the receiver holds the oldest frame held (by
    /// any receiver still waited for): it has released none since, and the bytes it pins are
    /// what the bound holds back.
    MaxHeldBytes,
};

/// A receiver that holds a blocked frame up (ServerObserver::waiting_for_receiver(),
/// gave_up_on_receiver()).
struct HoldUp {
    std::string receiver;
    HeldBackBy by = HeldBackBy::MaxPending;
    uint32_t held = 0;       ///< frames it holds
    uint64_t held_bytes = 0; ///< what those frames pin (a frame others hold too counted whole)
    uint32_t max_pending = 0;
    uint64_t max_held_bytes = 0;
    uint32_t waited_ms = 0; ///< how long the frame has waited
};

/// How the server reaches the element's log and bus. Called from the serving thread and from
/// send_frame()'s caller; implementations must be thread-safe and must not call the server.
class ServerObserver : public LogObserver
{
public:
    /// A receiver of another user than allowed-uid connected and was disconnected. Called
    /// without the server's lock held, so the element may post a bus message.
    virtual void refused_uid(const PeerCredentials& peer, int allowed_uid,
                             const std::string& receiver, const std::string& path) noexcept = 0;
    /// A receiver was disconnected before its greeting for `why` (max_clients: the limit).
    /// Called without the server's lock held; `first` is true for the first refusal of this
    /// kind since start(), so a receiver retrying in a loop cannot flood the bus.
    virtual void refused(Refusal why, uint32_t max_clients, const std::string& receiver,
                         const std::string& path, bool first) noexcept = 0;
    /// The frames held for receivers pin `held_bytes`, and a frame of `frame_bytes` more
    /// would exceed `bound` (ServerConfig::max_held_bytes): without block it was `dropped` for
    /// every receiver; with block its sender waits for releases (reported the first time
    /// only). Called without the server's lock held; `first` is true for the first report
    /// since start(), so a stream that keeps hitting the bound cannot flood the bus.
    virtual void over_byte_bound(uint64_t frame_bytes, uint64_t held_bytes, uint64_t bound,
                                 bool dropped, bool first) noexcept = 0;
    /// With block, a frame has waited ServerConfig::report_wait_ms for a receiver (see
    /// HoldUp): the sender stands still until it releases a frame, and nothing else would say
    /// so. Once per receiver connection (one slower than the stream would report every
    /// frame). Called without the server's lock held.
    virtual void waiting_for_receiver(const HoldUp& who) noexcept = 0;
    /// With block and a block timeout, a frame has waited the timeout for a receiver (see
    /// HoldUp): until it releases one, frames do not wait for it (ServerConfig::
    /// block_timeout_ms says what that means for each HeldBackBy). Once per receiver
    /// connection. Called without the server's lock held.
    virtual void gave_up_on_receiver(const HoldUp& who) noexcept = 0;
};

struct ServerConfig {
    std::string path;
    unsigned mode = 0600;
    uint32_t max_pending = 2;
    int allowed_uid = -1; ///< -1: any user the socket's permissions let in
    /// Receivers served at once; one more is disconnected before its greeting. Each pins up to
    /// max_pending frames (upstream buffers), so this bounds what receivers can hold.
    uint32_t max_clients = 64;
    /// Bytes the frames held for receivers may pin at once (each frame counted once, however
    /// many receivers hold it, by its memories' maxsize); 0: no bound in bytes. A frame that
    /// would pass it waits for releases (block) or is dropped for every receiver; a frame
    /// larger than the bound on its own is an error.
    uint64_t max_held_bytes = 0;
    /// How long a blocked frame waits for a receiver holding max_pending frames (or for
    /// releases under max_held_bytes) before waiting_for_receiver() names it (as long as
    /// tensoripcsrc waits before saying its own downstream holds them).
    uint32_t report_wait_ms = 1000;
    /// How long, with block, a frame waits for a receiver that holds max_pending frames (or for
    /// releases under max_held_bytes) before the sender gives up on it (under the byte bound:
    /// on the receivers holding the oldest frame held): until it releases one, frames skip it
    /// when it is full, and under the byte bound a frame that could not fit without its
    /// releases is dropped at once, so a hung receiver holds the stream back by this much once,
    /// not forever. 0: no limit.
    uint32_t block_timeout_ms = 0;
};

/// Which step of start() failed, so the element can name it.
enum class StartStep { Listen, Pipe, Thread };
struct StartError {
    StartStep step;
    Error error;
};

enum class SendOutcome {
    Done,     ///< sent to every receiver that could take it (possibly none)
    Flushing, ///< unlock() interrupted a wait
};

class Server
{
public:
    explicit Server(ServerObserver& observer) : observer_(observer) {}
    ~Server() { stop(); }
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Listens on config.path and starts the serving thread. On failure nothing keeps running
    /// and a socket file this call created is removed. Resets sent and dropped.
    bool start(const ServerConfig& config, StartError* error);
    /// Joins the serving thread, disconnects every receiver, drops every Keepalive and removes
    /// the socket file if it is still ours. Idempotent.
    void stop() noexcept;

    void set_max_pending(uint32_t max_pending);
    void set_max_held_bytes(uint64_t max_held_bytes);
    /// Each receiver gets new caps (a changed string) before its next frame.
    void set_caps(std::string caps);

    /// Sends one frame (head.seq and head.caps_seq are set here) with `fds` to every receiver
    /// that holds fewer than max-pending frames, keeping `keep` until all of them released it.
    /// A receiver that sent DONE gets no more frames and holds nothing back.
    /// wait_for_connection: wait for a receiver that takes frames instead of discarding the
    /// frame. block: wait for every receiver to have room, and for the held frames to leave room
    /// under max_held_bytes, instead of dropping the frame. Errors: InsufficientCapacity when the
    /// frame's memories alone exceed max_held_bytes (it could never be sent).
    /// `meta` is the frame's meta section (encode_metas(), or empty); `fds` are the memories'
    /// fds followed by the head.n_meta_fds meta fds it names.
    Result<SendOutcome> send_frame(FrameHead head, std::span<const MemoryRecord> memories,
                                   std::span<const int> fds, Keepalive keep,
                                   bool wait_for_connection, bool block,
                                   std::span<const uint8_t> meta = {});
    void send_eos();
    /// ServerConfig::block_timeout_ms while serving; a frame waiting now waits by the new one.
    void set_block_timeout_ms(uint32_t ms);

    /// Interrupts, until unlock_stop(), every wait of send_frame().
    void unlock();
    void unlock_stop();

    uint32_t clients() const noexcept { return clients_.load(); }
    uint64_t sent() const noexcept { return sent_.load(); }
    uint64_t dropped() const noexcept { return dropped_.load(); }
    uint32_t held() const noexcept { return held_.load(); }
    /// Bytes the held frames pin now, and the most they pinned since start().
    uint64_t held_bytes() const noexcept { return held_bytes_.load(); }
    uint64_t peak_held_bytes() const noexcept { return peak_held_bytes_.load(); }
    uint32_t peak_clients();

private:
    struct Client {
        UniqueFd fd;
        PeerCredentials cred;
        std::set<uint64_t> pending; ///< frames sent and not yet released
        uint32_t caps_seq = 0;      ///< the caps this receiver has; 0 = none yet
        bool dead = false;
        bool done = false;      ///< it sent DONE: it reads no more, and only releases what it read
        bool wait_told = false; ///< waiting_for_receiver() named it
        /// A frame gave up waiting for it (block_timeout_ms) until it releases one: frames do not
        /// wait for it (when it is full they skip it), and under max_held_bytes the frames it
        /// holds count as pinned for good.
        bool given_up = false;
        bool give_up_told = false; ///< gave_up_on_receiver() named it
        std::string name;
        bool takes_frames() const noexcept { return !dead && !done; }
    };
    struct Held {
        Keepalive keep;
        unsigned holders = 0;
        uint64_t bytes = 0;
    };
    using Graveyard = std::vector<Keepalive>;

    // The serving thread: accepting receivers, reading their releases, ipc_server_serve.cpp.
    void serve();
    void accept_clients();
    bool refuse_for_want_of_fds(int err);
    bool first_refusal_locked(Refusal why);
    void read_client_locked(Client& c, bool hung_up, Graveyard& graveyard);
    bool read_record_locked(Client& c, Graveyard& graveyard);
    void release_locked(Client& c, uint64_t seq, Graveyard& graveyard);
    void finish_client_locked(Client& c, uint64_t last_seq, Graveyard& graveyard);
    bool has_taker_locked() const noexcept;
    void release_all_locked(Client& c, Graveyard& graveyard);
    void reap_dead_locked(Graveyard& graveyard);
    void forget_held_locked(std::unordered_map<uint64_t, Held>::iterator it, Graveyard& graveyard);
    bool fits_locked(uint64_t bytes) const noexcept;
    /// `c` takes frames and holds all max-pending lets it: a frame skips it, or waits (block).
    bool full_locked(const Client& c) const noexcept
    {
        return c.takes_frames() && c.pending.size() >= max_pending_;
    }
    bool send_caps_locked(Client& c);
    // Back-pressure (block), ipc_server_block.cpp.
    bool room_locked(uint64_t bytes) const noexcept;
    bool fits_after_awaited_releases_locked(uint64_t bytes) const;
    uint64_t pinned_by_locked(const Client& c) const noexcept;
    void wait_for_room_locked(std::unique_lock<std::mutex>& lock, uint64_t bytes);
    std::optional<uint64_t> oldest_awaited_locked(uint64_t bytes) const noexcept;
    bool holds_up_locked(const Client& c, std::optional<uint64_t> oldest) const noexcept;
    HoldUp hold_up_locked(const Client& c, uint32_t waited_ms) const;
    void report_waiting_locked(std::unique_lock<std::mutex>& lock, uint64_t bytes);
    void give_up_locked(std::unique_lock<std::mutex>& lock, uint32_t waited_ms, uint64_t bytes);
    bool logs(LogLevel level) const noexcept { return observer_.log_enabled(level); }
    void log(LogLevel level, const char* format, ...) noexcept
        __attribute__((format(printf, 3, 4)));

    ServerObserver& observer_;
    std::mutex mu_;
    UniqueFd listen_fd_;
    WakePipe wake_;
    std::thread thread_;
    std::list<Client> clients_list_;
    std::unordered_map<uint64_t, Held> held_map_;
    uint64_t next_seq_ = 1;
    std::string caps_;
    uint32_t caps_seq_ = 0;
    uint32_t max_pending_ = 2;
    int allowed_uid_ = -1;
    uint32_t max_clients_ = 64;
    uint64_t max_held_bytes_ = 0;
    uint32_t report_wait_ms_ = 1000;
    uint32_t block_timeout_ms_ = 0;
    bool refused_once_[2] = {};    ///< per Refusal: reported since start()
    bool over_bound_once_ = false; ///< an over_byte_bound() reported since start()
    /// Held open so that, with the fd table full, accept() can still take a connection off
    /// the backlog (and refuse it) instead of leaving it there with the listening socket
    /// readable, which would spin the serving thread.
    UniqueFd spare_fd_;
    bool accept_backoff_ = false; ///< accept failed for want of resources: poll it later
    /// send_frame() calls writing to receivers' sockets outside mu_: while any does, no client
    /// is removed (reap_dead_locked() waits for the next turn, stop() for them to finish).
    uint32_t senders_ = 0;
    std::string path_;
    dev_t path_dev_ = 0;
    ino_t path_ino_ = 0;
    uint32_t peak_clients_ = 0;
    std::condition_variable connected_; ///< a receiver arrived, or unlock() was called
    /// A receiver released frames or left, unlock(), a send finished: what send_frame()'s
    /// back-pressure and stop() wait for.
    Generation released_;
    bool unlocked_ = false;
    // Atomics so the element's property reads never wait for the lock.
    std::atomic<uint32_t> clients_{0};
    std::atomic<uint64_t> sent_{0};
    std::atomic<uint64_t> dropped_{0};
    std::atomic<uint32_t> held_{0};
    std::atomic<uint64_t> held_bytes_{0};
    std::atomic<uint64_t> peak_held_bytes_{0};
};

} // namespace edgetensor::ipc
