// SPDX-License-Identifier: MIT
//
// tensoripcsrc's connection and its releases (see ipc_connection.hpp).

#include "ipc_connection.hpp"

#include "ipc_socket.hpp"
#include "ipc_wire.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <span>

namespace edgetensor::ipc
{

void Connection::release(uint64_t seq) noexcept
{
    held_.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu_);
    if (!fd_)
        return;
    try {
        unsent_.push_back(seq);
    } catch (...) {
        return;
    }
    flush_locked();
}

bool Connection::done(uint64_t last_seq, int wait_ms) noexcept
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    std::lock_guard<std::mutex> lock(mu_);
    if (!fd_)
        return false;
    unsent_done_ = last_seq;
    for (;;) {
        flush_locked();
        if (!unsent_done_)
            return true; // sent (or the sink is gone, and with it what it held for us)
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0)
            return false;
        // The sink's serving thread drains its socket all the time: a full one empties soon.
        pollfd p{fd_.get(), POLLOUT, 0};
        if (::poll(&p, 1, int(left)) < 0 && errno != EINTR)
            return false;
    }
}

void Connection::flush() noexcept
{
    std::lock_guard<std::mutex> lock(mu_);
    flush_locked();
}

void Connection::close() noexcept
{
    std::lock_guard<std::mutex> lock(mu_);
    fd_.reset();
    unsent_.clear();
    unsent_done_.reset();
}

void Connection::flush_locked() noexcept
{
    while (fd_ && !unsent_.empty()) {
        const size_t n = std::min<size_t>(unsent_.size(), kMaxReleases);
        auto msg = encode_release(std::span(unsent_.data(), n));
        if (!msg)
            return;
        auto r = send_record(fd_.get(), *msg);
        if (!r) {
            if (r.error().sys_errno() != EAGAIN && r.error().sys_errno() != ENOBUFS)
                unsent_.clear(); // the sink is gone, and with it what it held for us
            return;
        }
        unsent_.erase(unsent_.begin(), unsent_.begin() + ptrdiff_t(n));
    }
    if (fd_ && unsent_.empty() && unsent_done_) {
        auto r = send_record(fd_.get(), encode_done({*unsent_done_}));
        if (r || (r.error().sys_errno() != EAGAIN && r.error().sys_errno() != ENOBUFS))
            unsent_done_.reset(); // sent, or the sink is gone
    }
}

} // namespace edgetensor::ipc
