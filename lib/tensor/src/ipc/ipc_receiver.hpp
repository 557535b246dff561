// SPDX-License-Identifier: MIT
//
// The receiving side of tensoripcsrc without GStreamer: connecting (waiting for a sink to
// appear, and connecting again after one left), the sink's credentials, its greeting, every
// record parsed and checked before use, the caps a frame must belong to, and the release
// token each frame carries back to the Connection it came through. The element pulls one
// Event at a time from next() on its streaming thread and turns it into caps, a GstBuffer or
// a flow return; unlock() from any thread ends a wait inside next().

#pragma once

#include "ipc_connection.hpp"
#include "ipc_log.hpp"
#include "ipc_socket.hpp"
#include "ipc_wake.hpp"
#include "ipc_wire.hpp"

#include <edgetensor/error.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace edgetensor::ipc
{

struct ReceiverConfig {
    std::string path;
    /// How long next() waits for a sink to listen on `path` (ns); 0 waits forever.
    uint64_t timeout_ns = 10'000'000'000ull;
    int allowed_uid = -1; ///< -1: a sink of any user
};

/// Why next() could not connect.
enum class ConnectFailure : uint8_t {
    NoPath,      ///< config.path is empty
    Connect,     ///< connect() failed in a way waiting does not cure (why: its error)
    Timeout,     ///< no sink listened within timeout_ns (why: the last connect()'s error)
    Credentials, ///< SO_PEERCRED failed (why: its error)
    WrongUid,    ///< the sink runs as another user than allowed_uid (peer says who)
};

/// How the sender left: its socket closed or failed.
enum class Departure : uint8_t {
    AfterEos,       ///< it had sent EOS: the stream ended already
    BeforeGreeting, ///< before HELLO: it refused this receiver (or stopped in that instant)
    WithoutEos,     ///< mid-stream without EOS: it stopped, crashed or was killed
};

/// One thing next() reports. Only the fields its kind names are set.
struct Event {
    enum class Kind : uint8_t {
        Caps,     ///< caps_seq, caps: the sender's new caps; see Receiver::accept_caps()
        Frame,    ///< frame (its fds checked against its records), release
        Eos,      ///< the sender sent EOS
        Invalid,  ///< why, rejections: a record was refused (fds closed, a FRAME released)
        Gone,     ///< departure, why: the sender left; the connection is closed
        Failed,   ///< failure, why, peer: no connection could be made
        Flushing, ///< unlock() interrupted next()
        /// held, max_pending: this receiver has held every frame the sink lets it hold for a
        /// second while waiting for the next, which cannot come until downstream releases one
        /// (a sink keeping its last buffer, at max-pending=1). Once per connection; next()
        /// goes on waiting when called again.
        Stalled,
    };
    Kind kind = Kind::Flushing;
    uint32_t caps_seq = 0;
    std::string caps;
    Frame frame;
    /// Sends the frame's RELEASE when the last copy of it dies (the element's memories hold
    /// it); a frame dropped with the Event is released at once.
    std::shared_ptr<FrameRelease> release;
    std::string why;
    uint64_t rejections = 0; ///< Invalid: rejections since start(), this one included
    Departure departure = Departure::WithoutEos;
    ConnectFailure failure = ConnectFailure::Connect;
    PeerCredentials peer;
    uint32_t held = 0;        ///< Stalled: frames this receiver holds
    uint32_t max_pending = 0; ///< Stalled: frames the sink lets it hold (its HELLO)
};

/// What the element reports in its stats.
struct ReceiverStats {
    uint64_t received = 0;
    uint64_t rejected = 0;
    std::string last_rejection;
    uint64_t sink_pid = 0; ///< the connected sink's (SO_PEERCRED); 0 before the first
    /// Frames the connected sink lets this receiver hold at once (its HELLO); 0 before it.
    uint32_t max_pending = 0;
};

class Receiver
{
public:
    /// `kept` (optional, outliving the Receiver): the files the element keeps open, whose
    /// seals check_fd() need not ask again (see KeptFiles).
    explicit Receiver(LogObserver& log, const KeptFiles* kept = nullptr) : log_(log), kept_(kept) {}
    ~Receiver() { stop(); }
    Receiver(const Receiver&) = delete;
    Receiver& operator=(const Receiver&) = delete;

    /// Opens the wake pipe and forgets the previous session: connection, caps, counters.
    /// Errors: Io with errno (pipe2).
    Result<void> start();
    /// Closes the connection (frames still held release into nothing: the sink frees what it
    /// held for us when the socket closes) and the wake pipe, and forgets the session; the
    /// counters stay readable. Not concurrent with next(). Idempotent.
    void stop() noexcept;

    /// Blocks until there is something for the element to act on, connecting first when there
    /// is no connection (again after a sender left). Counts every Invalid it returns.
    Event next(const ReceiverConfig& config);

    /// The element can use the caps of `caps_seq`: frames for them pass from now on (and
    /// frames for any other caps are Invalid). Caps stay accepted across a reconnection.
    void accept_caps(uint32_t caps_seq);
    /// Counts a record the element refused after next() handed it over; returns the count.
    uint64_t reject(std::string why);
    /// Counts a frame the element pushed.
    void count_received() noexcept { received_++; }
    /// The element takes no more frames (its num-buffers, downstream ended, an EOS sent to
    /// it): tells the sink with DONE after the last frame read, so a sink that blocks is no
    /// longer held back and lets go of the frames not read; the frames still downstream release
    /// as they die. next() reports Eos from now until stop(). Any thread.
    void finish() noexcept;

    /// Makes next() return Flushing, now and until unlock_stop(). Any thread.
    void unlock() noexcept;
    void unlock_stop() noexcept;

    uint64_t received() const noexcept { return received_.load(); }
    uint64_t rejected() const noexcept { return rejected_.load(); }
    ReceiverStats stats() const;

private:
    std::optional<Event> connect(const ReceiverConfig& config);
    uint32_t max_pending() const;
    int stall_wait_ms(const Connection& conn);
    std::optional<Event> stall(const Connection& conn);
    bool wait_readable(int fd, int timeout_ms) noexcept;
    Event invalid(std::string why);
    Event depart(std::string why);
    Event frame(Frame&& f, const std::shared_ptr<Connection>& conn);
    std::shared_ptr<Connection> connection();

    LogObserver& log_;
    const KeptFiles* kept_;
    WakePipe wake_;
    std::atomic<bool> flushing_{false};
    std::atomic<uint64_t> received_{0};
    std::atomic<uint64_t> rejected_{0};

    // The session, under mu_: written on the streaming thread, read by stats() anywhere.
    mutable std::mutex mu_;
    std::shared_ptr<Connection> conn_;
    bool eos_ = false;      ///< the sender sent EOS on this connection
    bool finished_ = false; ///< finish() was called: no more reading
    uint64_t last_seq_ = 0; ///< the last FRAME read on this connection (0: none)
    bool greeted_ = false;  ///< the sink's HELLO arrived on this connection
    bool have_caps_ = false;
    uint32_t caps_seq_ = 0; ///< the accepted caps, when have_caps_
    uint64_t sink_pid_ = 0;
    uint32_t max_pending_ = 0; ///< the HELLO's, on this connection
    std::string last_rejection_;

    // The streaming thread's alone (next(), and start() when it is not running).
    bool stall_told_ = false; ///< Stalled was reported on this connection
    /// Since when next() has waited holding every frame the sink allows.
    std::optional<std::chrono::steady_clock::time_point> stall_since_;
};

} // namespace edgetensor::ipc
