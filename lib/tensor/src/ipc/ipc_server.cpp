// SPDX-License-Identifier: MIT
//
// tensoripcsink's serving side (see ipc_server.hpp): start and stop, the settings, and
// send_frame(). The serving thread (accepting receivers, reading their releases) is
// ipc_server_serve.cpp; the back-pressure wait of block=true, ipc_server_block.cpp.

#include "ipc_server.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <exception>
#include <utility>

namespace edgetensor::ipc
{

namespace
{
// What holding a frame pins: every byte its memories may address.
uint64_t pinned_bytes(std::span<const MemoryRecord> memories) noexcept
{
    uint64_t n = 0;
    for (const MemoryRecord& m : memories)
        n += m.maxsize;
    return n;
}
} // namespace

Keepalive& Keepalive::operator=(Keepalive&& o) noexcept
{
    if (this != &o) {
        reset();
        object_ = std::exchange(o.object_, nullptr);
        drop_ = o.drop_;
    }
    return *this;
}

void Keepalive::reset() noexcept
{
    if (object_ && drop_)
        drop_(std::exchange(object_, nullptr));
}

void Server::log(LogLevel level, const char* format, ...) noexcept
{
    va_list ap;
    va_start(ap, format);
    vlog_to(observer_, level, format, ap);
    va_end(ap);
}

bool Server::start(const ServerConfig& config, StartError* error)
{
    auto listen = listen_on(config.path, config.mode);
    if (!listen) {
        *error = {StartStep::Listen, std::move(listen).error()};
        return false;
    }
    if (auto r = wake_.open(); !r) {
        *error = {StartStep::Pipe, std::move(r).error()};
        ::unlink(config.path.c_str());
        return false;
    }
    // Remembered so that stop() removes only this socket file, never a newer sink's.
    struct stat path_st {
    };
    if (::stat(config.path.c_str(), &path_st) != 0) {
        const int err = errno;
        wake_.close();
        *error = {StartStep::Listen, Error::io(err, "stat of the socket file right after bind()")};
        return false;
    }
    {
        std::lock_guard<std::mutex> lock(mu_);
        listen_fd_ = std::move(*listen);
        path_ = config.path;
        path_dev_ = path_st.st_dev;
        path_ino_ = path_st.st_ino;
        max_pending_ = config.max_pending;
        allowed_uid_ = config.allowed_uid;
        max_clients_ = std::max<uint32_t>(config.max_clients, 1);
        max_held_bytes_ = config.max_held_bytes;
        report_wait_ms_ = config.report_wait_ms;
        block_timeout_ms_ = config.block_timeout_ms;
        refused_once_[0] = refused_once_[1] = false;
        over_bound_once_ = false;
        spare_fd_ = open_spare_fd();
        accept_backoff_ = false;
        caps_.clear();
        caps_seq_ = 0;
        peak_clients_ = 0;
    }
    sent_ = 0;
    dropped_ = 0;
    peak_held_bytes_ = 0;
    try {
        thread_ = std::thread(&Server::serve, this);
    } catch (const std::exception& e) {
        *error = {StartStep::Thread, Error(ErrorCode::Unavailable, e.what())};
        // As promised: nothing stays open after a failed start (GstBaseSink calls no stop()).
        std::lock_guard<std::mutex> lock(mu_);
        ::unlink(config.path.c_str());
        listen_fd_.reset();
        spare_fd_.reset();
        wake_.close();
        path_.clear();
        return false;
    }
    return true;
}

void Server::stop() noexcept
{
    if (thread_.joinable()) {
        wake_.request_stop();
        thread_.join();
    }
    Graveyard graveyard;
    std::list<Client> clients;
    {
        std::unique_lock<std::mutex> lock(mu_);
        // A send_frame() still writing (a caller that did not wait for its streaming thread).
        released_.wait(lock, [this] { return senders_ == 0; });
        for (auto& [seq, h] : held_map_)
            graveyard.push_back(std::move(h.keep));
        held_map_.clear();
        clients = std::move(clients_list_);
        clients_list_.clear();
        if (!path_.empty()) {
            // Only our own socket file: another sink may have replaced a stale one since.
            struct stat now {
            };
            if (::stat(path_.c_str(), &now) == 0 && now.st_dev == path_dev_ &&
                now.st_ino == path_ino_)
                ::unlink(path_.c_str());
        }
        listen_fd_.reset();
        spare_fd_.reset();
        wake_.close();
        path_.clear();
        clients_ = 0;
        held_ = 0;
        held_bytes_ = 0;
    }
}

void Server::set_max_pending(uint32_t max_pending)
{
    std::lock_guard<std::mutex> lock(mu_);
    max_pending_ = max_pending;
}

void Server::set_max_held_bytes(uint64_t max_held_bytes)
{
    std::lock_guard<std::mutex> lock(mu_);
    max_held_bytes_ = max_held_bytes;
    // A higher bound may let a waiting send_frame() through.
    released_.notify_all();
}

void Server::set_block_timeout_ms(uint32_t ms)
{
    std::lock_guard<std::mutex> lock(mu_);
    block_timeout_ms_ = ms;
    released_.notify_all(); // a waiting frame looks at its deadline again
}

void Server::set_caps(std::string caps)
{
    std::lock_guard<std::mutex> lock(mu_);
    if (caps != caps_) {
        caps_ = std::move(caps);
        ++caps_seq_;
    }
}

uint32_t Server::peak_clients()
{
    std::lock_guard<std::mutex> lock(mu_);
    return peak_clients_;
}

void Server::unlock()
{
    std::lock_guard<std::mutex> lock(mu_);
    unlocked_ = true;
    connected_.notify_all();
    released_.notify_all();
}

void Server::unlock_stop()
{
    std::lock_guard<std::mutex> lock(mu_);
    unlocked_ = false;
}

// One holder fewer for the frame at `it`; the last one takes it out of the held frames.
void Server::forget_held_locked(std::unordered_map<uint64_t, Held>::iterator it,
                                Graveyard& graveyard)
{
    if (--it->second.holders > 0)
        return;
    held_bytes_ = held_bytes_.load() - it->second.bytes;
    graveyard.push_back(std::move(it->second.keep));
    held_map_.erase(it);
}

bool Server::fits_locked(uint64_t bytes) const noexcept
{
    return max_held_bytes_ == 0 || held_bytes_.load() + bytes <= max_held_bytes_;
}

void Server::release_all_locked(Client& c, Graveyard& graveyard)
{
    for (uint64_t seq : c.pending) {
        auto it = held_map_.find(seq);
        if (it != held_map_.end())
            forget_held_locked(it, graveyard);
    }
    c.pending.clear();
    held_ = uint32_t(held_map_.size());
}

void Server::reap_dead_locked(Graveyard& graveyard)
{
    // A sender is writing to some clients' sockets outside the lock: they stay until it is
    // done. A dead client's socket keeps poll() returning, so the next turn reaps it.
    if (senders_ > 0)
        return;
    for (auto it = clients_list_.begin(); it != clients_list_.end();) {
        if (!it->dead) {
            ++it;
            continue;
        }
        log(LogLevel::Info, "receiver %s gone; releasing the %zu frames held for it",
            it->name.c_str(), it->pending.size());
        release_all_locked(*it, graveyard);
        it = clients_list_.erase(it);
    }
    clients_ = uint32_t(clients_list_.size());
}

bool Server::send_caps_locked(Client& c)
{
    if (caps_seq_ == 0 || c.caps_seq == caps_seq_)
        return true;
    auto msg = encode_caps(caps_seq_, caps_);
    if (!msg) {
        log(LogLevel::Error, "%s", msg.error().message().c_str());
        return false;
    }
    auto r = send_record(c.fd.get(), *msg);
    if (!r) {
        log(LogLevel::Info, "sending caps to %s failed: %s", c.name.c_str(),
            r.error().message().c_str());
        return false;
    }
    c.caps_seq = caps_seq_;
    return true;
}

Result<SendOutcome> Server::send_frame(FrameHead head, std::span<const MemoryRecord> memories,
                                       std::span<const int> fds, Keepalive keep,
                                       bool wait_for_connection, bool block,
                                       std::span<const uint8_t> meta)
{
    bool notify = false;
    const uint64_t bytes = pinned_bytes(memories);
    std::unique_lock<std::mutex> lock(mu_);
    if (max_held_bytes_ != 0 && bytes > max_held_bytes_)
        return make_error(
            ErrorCode::InsufficientCapacity,
            "a frame of " + std::to_string(bytes) + " bytes is larger on its own than the " +
                std::to_string(max_held_bytes_) + " bytes receivers may hold at once");
    if (wait_for_connection && !has_taker_locked()) {
        log(LogLevel::Debug, "waiting for a receiver");
        connected_.wait(lock, [this] { return unlocked_ || has_taker_locked(); });
        if (unlocked_)
            return SendOutcome::Flushing;
    }
    if (!has_taker_locked())
        return SendOutcome::Done;
    if (block) {
        wait_for_room_locked(lock, bytes);
        if (unlocked_)
            return SendOutcome::Flushing;
    }
    if (!fits_locked(bytes)) {
        // Without block: the frame would pin more than receivers may hold, so nobody gets it
        // (a frame is held once for all its receivers: there is no partial send).
        uint32_t would_take = 0, live = 0;
        for (const Client& c : clients_list_) {
            live += c.takes_frames();
            would_take += c.takes_frames() && !full_locked(c);
        }
        dropped_ += live;
        const uint64_t held = held_bytes_.load(), bound = max_held_bytes_;
        const bool first = would_take > 0 && !std::exchange(over_bound_once_, true);
        lock.unlock();
        log(LogLevel::Trace, "%llu bytes held: a frame of %llu bytes dropped for %u receivers",
            static_cast<unsigned long long>(held), static_cast<unsigned long long>(bytes),
            unsigned(would_take));
        if (would_take > 0)
            observer_.over_byte_bound(bytes, held, bound, true, first);
        return SendOutcome::Done; // `keep` dies here, outside the lock
    }
    head.seq = next_seq_++;
    head.caps_seq = caps_seq_;
    auto msg = encode_frame(head, memories, meta);
    if (!msg)
        return unexpected(std::move(msg).error());
    // Who gets the frame is decided here, and the frame is held for each of them before it is
    // sent: a receiver may RELEASE it before sendmsg() returns.
    std::vector<Client*> to;
    for (Client& c : clients_list_) {
        if (!c.takes_frames())
            continue;
        if (full_locked(c)) {
            dropped_++;
            log(LogLevel::Trace, "receiver %s holds %zu frames: frame %llu dropped for it",
                c.name.c_str(), c.pending.size(), static_cast<unsigned long long>(head.seq));
            continue;
        }
        if (!send_caps_locked(c)) {
            c.dead = true;
            notify = true;
            continue;
        }
        c.pending.insert(head.seq);
        to.push_back(&c);
    }
    if (to.empty()) {
        if (notify)
            wake_.wake();
        lock.unlock();
        return SendOutcome::Done; // `keep` dies here, outside the lock
    }
    Held h;
    h.keep = std::move(keep);
    h.holders = unsigned(to.size());
    h.bytes = bytes;
    held_map_.emplace(head.seq, std::move(h));
    held_ = uint32_t(held_map_.size());
    const uint64_t now = held_bytes_.load() + bytes;
    held_bytes_ = now;
    if (now > peak_held_bytes_.load())
        peak_held_bytes_ = now;

    // The sendmsg() calls (each wakes a receiver: the most expensive part of a frame) run
    // outside the lock, so that the serving thread taking a RELEASE meanwhile does not sleep on
    // it and need waking. Clients are not removed while senders_ is set, and only this thread
    // sends FRAMEs, so each receiver still gets them in order, after the caps sent above.
    ++senders_;
    lock.unlock();
    std::vector<std::pair<Client*, Error>> failed;
    for (Client* c : to) {
        auto r = send_record(c->fd.get(), *msg, fds);
        if (!r)
            failed.emplace_back(c, std::move(r).error());
    }
    Graveyard graveyard;
    lock.lock();
    --senders_;
    for (auto& [c, err] : failed) {
        const bool full = err.sys_errno() == EAGAIN || err.sys_errno() == ENOBUFS;
        if (full) {
            dropped_++;
        } else {
            log(LogLevel::Info, "sending to %s failed: %s", c->name.c_str(), err.message().c_str());
            c->dead = true;
            notify = true;
        }
        // Not sent after all: let go as a RELEASE would, unless the receiver's DONE did.
        if (c->pending.count(head.seq))
            release_locked(*c, head.seq, graveyard);
    }
    held_ = uint32_t(held_map_.size());
    sent_ += to.size() - failed.size();
    // The serving thread removes dead receivers (and frees what they held); stop() may be
    // waiting for this send to finish.
    if (notify)
        wake_.wake();
    if (senders_ == 0)
        released_.notify_all();
    lock.unlock();
    // A refused frame's Keepalive (in the graveyard) dies here, outside the lock.
    return SendOutcome::Done;
}

void Server::send_eos()
{
    std::lock_guard<std::mutex> lock(mu_);
    const auto eos = encode_eos();
    for (Client& c : clients_list_)
        if (c.takes_frames() && !send_record(c.fd.get(), eos))
            log(LogLevel::Info, "could not send EOS to %s", c.name.c_str());
}

} // namespace edgetensor::ipc
