// SPDX-License-Identifier: MIT
//
// tensoripcsink's serving thread (see ipc_server.hpp): it accepts receivers (refusing those of
// another uid, past max_clients, or while the fd table is full), greets them, and reads what
// they send back (RELEASE, DONE, a hangup), letting go of the frames no receiver holds any more.

#include "ipc_server.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::ipc
{

namespace
{
// How long the listening socket sits out after accept() failed for want of fds or memory
// with nothing to refuse the connection with: long enough not to spin, short enough that a
// receiver is served soon after the shortage ends.
constexpr int kAcceptBackoffMs = 100;

// How a receiver is named in logs and bus messages.
std::string receiver_name(const PeerCredentials& cred)
{
    return "pid " + std::to_string(cred.pid) + " (uid " + std::to_string(cred.uid) + ")";
}

} // namespace

bool Server::first_refusal_locked(Refusal why)
{
    bool& once = refused_once_[static_cast<size_t>(why)];
    const bool first = !once;
    once = true;
    return first;
}

// The fd table is full: take the oldest connection off the backlog with the spare fd's slot
// and close it, so the receiver hears of it (a close before its greeting) and the listening
// socket stops being readable. False when that was not possible either.
bool Server::refuse_for_want_of_fds(int err)
{
    if (!spare_fd_)
        return false;
    spare_fd_.reset();
    auto fd = accept_on(listen_fd_.get());
    std::string name = "a receiver";
    if (fd) {
        if (auto cred = peer_credentials(fd->get()))
            name = receiver_name(*cred);
        fd->reset();
    }
    spare_fd_ = open_spare_fd();
    if (!fd)
        return false;
    std::string path;
    bool first;
    {
        std::lock_guard<std::mutex> lock(mu_);
        path = path_;
        first = first_refusal_locked(Refusal::NoFds);
    }
    log(LogLevel::Debug, "accept: %s; refused %s", std::strerror(err), name.c_str());
    observer_.refused(Refusal::NoFds, 0, name, path, first);
    return true;
}

void Server::accept_clients()
{
    for (;;) {
        auto fd = accept_on(listen_fd_.get());
        if (!fd) {
            const int err = fd.error().sys_errno();
            if (err == EMFILE || err == ENFILE) {
                if (refuse_for_want_of_fds(err))
                    continue;
            } else if (err != ENOBUFS && err != ENOMEM) {
                return; // EAGAIN: none left; ECONNABORTED and the like: gone already
            }
            // Out of resources and nothing to refuse with: leave the backlog alone for a
            // while rather than poll a socket that stays readable.
            accept_backoff_ = true;
            return;
        }
        auto cred = peer_credentials(fd->get());
        if (!cred) {
            log(LogLevel::Warning, "refusing a receiver: %s", cred.error().message().c_str());
            continue;
        }
        Client c;
        c.fd = std::move(*fd);
        c.cred = *cred;
        c.name = receiver_name(*cred);
        int allowed;
        std::string path;
        uint32_t max_clients;
        bool full, first_full = false;
        {
            std::lock_guard<std::mutex> lock(mu_);
            allowed = allowed_uid_;
            path = path_;
            max_clients = max_clients_;
            full = clients_list_.size() >= max_clients_;
            if (full && (allowed < 0 || cred->uid == uid_t(allowed)))
                first_full = first_refusal_locked(Refusal::MaxClients);
        }
        if (allowed >= 0 && cred->uid != uid_t(allowed)) {
            observer_.refused_uid(*cred, allowed, c.name, path);
            continue; // closes the socket
        }
        if (full) {
            observer_.refused(Refusal::MaxClients, max_clients, c.name, path, first_full);
            continue; // closes the socket before the greeting: the receiver reports it
        }
        std::lock_guard<std::mutex> lock(mu_);
        Hello hello;
        hello.max_pending = max_pending_;
        hello.sink_pid = uint64_t(::getpid());
        if (!send_record(c.fd.get(), encode_hello(hello)) || !send_caps_locked(c)) {
            log(LogLevel::Info, "receiver %s left before the greeting", c.name.c_str());
            continue;
        }
        log(LogLevel::Info, "receiver %s connected", c.name.c_str());
        clients_list_.push_back(std::move(c));
        clients_ = uint32_t(clients_list_.size());
        peak_clients_ = std::max<uint32_t>(peak_clients_, clients_);
        connected_.notify_all();
    }
}

// Reads what a receiver sent (RELEASE and DONE records), or its hangup: one record per poll()
// while it is connected, since it sends one RELEASE a frame and reading on until EAGAIN cost a
// recvmsg() a frame that found nothing (a second record waiting makes the next poll() return at
// once); everything once it hung up.
void Server::read_client_locked(Client& c, bool hung_up, Graveyard& graveyard)
{
    for (int budget = 0; budget < 256; ++budget)
        if (!read_record_locked(c, graveyard) || !hung_up)
            return;
}

// False when there is nothing more to read: none waiting, or the receiver is gone.
bool Server::read_record_locked(Client& c, Graveyard& graveyard)
{
    auto rec = receive_record(c.fd.get());
    if (!rec) {
        if (rec.error().sys_errno() != EAGAIN)
            c.dead = true;
        return false;
    }
    if (rec->eof) {
        c.dead = true;
        return false;
    }
    auto msg = parse(rec->bytes, std::move(rec->fds), rec->truncated);
    if (!msg || (msg->type != MsgType::Release && msg->type != MsgType::Done)) {
        // Receivers send releases and DONE only; anything else is a broken or hostile peer.
        // Its fds (if any) are already closed.
        log(LogLevel::Warning, "disconnecting receiver %s: %s", c.name.c_str(),
            msg ? "it sent something other than RELEASE or DONE" : msg.error().message().c_str());
        c.dead = true;
        return false;
    }
    if (msg->type == MsgType::Done) {
        finish_client_locked(c, msg->done.last_seq, graveyard);
        return true;
    }
    for (uint64_t seq : msg->releases)
        release_locked(c, seq, graveyard);
    held_ = uint32_t(held_map_.size());
    return true;
}

void Server::release_locked(Client& c, uint64_t seq, Graveyard& graveyard)
{
    if (c.pending.erase(seq) == 0) {
        log(LogLevel::Debug, "receiver %s released frame %llu, which it did not hold",
            c.name.c_str(), static_cast<unsigned long long>(seq));
        return;
    }
    c.given_up = false; // it moves again: frames wait for it again
    auto it = held_map_.find(seq);
    if (it != held_map_.end())
        forget_held_locked(it, graveyard);
}

// The receiver stopped reading after frame `last_seq` (its num-buffers, or its downstream
// ended): the frames after it wait unread in its socket and never will be, so they are let go
// now; the ones it read stay held until it releases them (or leaves), since its pipeline may
// still be reading them.
void Server::finish_client_locked(Client& c, uint64_t last_seq, Graveyard& graveyard)
{
    if (c.done) {
        log(LogLevel::Debug, "receiver %s sent DONE again", c.name.c_str());
        return;
    }
    c.done = true;
    std::vector<uint64_t> unread;
    for (auto it = c.pending.upper_bound(last_seq); it != c.pending.end(); ++it)
        unread.push_back(*it);
    for (uint64_t seq : unread)
        release_locked(c, seq, graveyard);
    held_ = uint32_t(held_map_.size());
    log(LogLevel::Info,
        "receiver %s takes no more frames (DONE after frame %llu): %zu unread frames let go, "
        "%zu still held by it",
        c.name.c_str(), static_cast<unsigned long long>(last_seq), unread.size(), c.pending.size());
}

bool Server::has_taker_locked() const noexcept
{
    return std::any_of(clients_list_.begin(), clients_list_.end(),
                       [](const Client& c) { return c.takes_frames(); });
}

void Server::serve()
{
    std::vector<pollfd> fds;
    std::vector<Client*> owners;
    for (;;) {
        fds.clear();
        owners.clear();
        fds.push_back({wake_.read_fd(), POLLIN, 0});
        // After a failed accept for want of resources, the listening socket sits out one
        // poll of at most kAcceptBackoffMs (a negative fd is ignored by poll()).
        const bool backoff = std::exchange(accept_backoff_, false);
        fds.push_back({backoff ? -1 : listen_fd_.get(), POLLIN, 0});
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (Client& c : clients_list_) {
                fds.push_back({c.fd.get(), POLLIN, 0});
                owners.push_back(&c);
            }
        }
        const int n = ::poll(fds.data(), fds.size(), backoff ? kAcceptBackoffMs : -1);
        if (n < 0 && errno != EINTR) {
            log(LogLevel::Error, "poll failed: %s", std::strerror(errno));
            return;
        }
        if (fds[0].revents && wake_.drain())
            return; // stop() asked
        if (fds[1].revents & POLLIN)
            accept_clients();
        Graveyard graveyard;
        {
            std::lock_guard<std::mutex> lock(mu_);
            // Clients are only removed on this thread, so the pointers are still valid.
            for (size_t i = 0; i < owners.size(); ++i) {
                const bool hung_up = fds[i + 2].revents & (POLLHUP | POLLERR | POLLNVAL);
                if (fds[i + 2].revents & POLLIN)
                    read_client_locked(*owners[i], hung_up, graveyard);
                if (hung_up)
                    owners[i]->dead = true;
            }
            reap_dead_locked(graveyard);
        }
        released_.notify_all();
        // graveyard dies here, outside the lock: buffers go back to their pool.
    }
}

} // namespace edgetensor::ipc
