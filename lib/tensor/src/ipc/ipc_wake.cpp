// SPDX-License-Identifier: MIT
//
// The IPC elements' self-pipe (see ipc_wake.hpp).

#include "ipc_wake.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace edgetensor::ipc
{

Result<void> WakePipe::open()
{
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
        return unexpected(Error::io(errno, "pipe2"));
    read_.reset(p[0]);
    write_.reset(p[1]);
    return {};
}

void WakePipe::close() noexcept
{
    read_.reset();
    write_.reset();
}

void WakePipe::put(char byte) noexcept
{
    // A full pipe already holds a wakeup; nothing is lost by a failed write.
    if (write_) [[maybe_unused]]
        ssize_t n = ::write(write_.get(), &byte, 1);
}

void WakePipe::wake() noexcept
{
    put(1);
}

void WakePipe::request_stop() noexcept
{
    put(0);
}

bool WakePipe::drain() noexcept
{
    bool stop = false;
    char buf[64];
    for (;;) {
        const ssize_t r = ::read(read_.get(), buf, sizeof(buf));
        if (r == 0)
            return true;
        if (r < 0)
            return stop;
        if (std::memchr(buf, 0, size_t(r)))
            stop = true;
    }
}

} // namespace edgetensor::ipc
