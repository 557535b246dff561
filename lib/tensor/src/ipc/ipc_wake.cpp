// SPDX-License-Identifier: MIT
//
// The IPC elements' self-pipe (see ipc_wake.hpp).

#include "ipc_wake.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>

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

namespace
{
long futex(std::atomic<uint32_t>& word, int op, uint32_t value,
           const timespec* timeout = nullptr) noexcept
{
    static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free);
    return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op, value, timeout, nullptr, 0);
}
} // namespace

void Generation::sleep(uint32_t seen, const timespec* timeout) noexcept
{
    // sleepers_ before the second look at gen_, notify_all() the other way round (both
    // sequentially consistent): either it sees a sleeper and wakes it, or this sees the new
    // generation and does not sleep; a FUTEX_WAIT after the change returns at once (EAGAIN).
    sleepers_.fetch_add(1);
    if (gen_.load() == seen)
        futex(gen_, FUTEX_WAIT_PRIVATE, seen, timeout);
    sleepers_.fetch_sub(1);
}

void Generation::sleep_once(uint32_t seen, std::chrono::steady_clock::duration most) noexcept
{
    // FUTEX_WAIT's timeout is relative, on CLOCK_MONOTONIC (steady_clock's clock).
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(most).count();
    const timespec rel{time_t(ns / 1000000000), long(ns % 1000000000)};
    sleep(seen, &rel);
}

void Generation::notify_all() noexcept
{
    gen_.fetch_add(1);
    if (sleepers_.load() != 0)
        futex(gen_, FUTEX_WAKE_PRIVATE, uint32_t(INT32_MAX));
}

} // namespace edgetensor::ipc
