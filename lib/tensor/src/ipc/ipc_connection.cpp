// SPDX-License-Identifier: MIT
//
// tensoripcsrc's connection and its releases (see ipc_connection.hpp).

#include "ipc_connection.hpp"

#include "ipc_socket.hpp"
#include "ipc_wire.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <span>

namespace edgetensor::ipc
{

void Connection::release(uint64_t seq) noexcept
{
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
}

} // namespace edgetensor::ipc
