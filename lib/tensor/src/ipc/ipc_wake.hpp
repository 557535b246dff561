// SPDX-License-Identifier: MIT
//
// A self-pipe that interrupts a poll() on an IPC socket. Both elements need one: the sink's
// serving thread must notice a dead receiver found by render() and its own shutdown, the
// source's streaming thread must leave a blocking receive when GstBaseSrc unlocks it. A pipe
// (not an eventfd) so a 0 byte can mean "stop" apart from a plain wakeup. And the sink's
// wait for releases (Generation).

#pragma once

#include <edgetensor/error.hpp>
#include <edgetensor/unique_fd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <mutex>

namespace edgetensor::ipc
{

class WakePipe
{
public:
    /// Both ends non-blocking and CLOEXEC. Errors are Io with errno.
    Result<void> open();
    void close() noexcept;
    bool is_open() const noexcept { return bool(write_); }
    /// For poll(): readable after wake() or request_stop().
    int read_fd() const noexcept { return read_.get(); }

    void wake() noexcept;
    void request_stop() noexcept;
    /// Empties the pipe; true when a stop was requested, or the write end is closed.
    bool drain() noexcept;

private:
    void put(char byte) noexcept;

    UniqueFd read_, write_;
};

/// What std::condition_variable does for a waiter that holds a std::mutex, without its mutex
/// handshake: glibc's pthread_cond_wait() takes the mutex back marked contended, so after every
/// wait the waiter's next unlock is a futex() call whether or not anyone waits for the mutex.
/// tensoripcsink's streaming thread waits once a frame for a receiver's release (max-pending
/// is 2 by default), and that futex() was a third of its system calls. A generation counter
/// that the waiter sleeps on with the mutex released leaves the mutex uncontended.
///
/// The state a waiter waits for changes under the mutex, and notify_all() follows every change
/// (under the mutex or after it).
class Generation
{
public:
    /// Blocks until pred() holds; `lock` (held on entry and on return) guards what it reads.
    template <typename Pred> void wait(std::unique_lock<std::mutex>& lock, Pred pred)
    {
        while (!pred()) {
            // Read under the lock: a change after it (which needs the lock) moves it on.
            const uint32_t seen = gen_.load();
            lock.unlock();
            sleep(seen, nullptr);
            lock.lock();
        }
    }
    /// As wait(), giving up at `deadline`: pred()'s value on return.
    template <typename Pred>
    bool wait_until(std::unique_lock<std::mutex>& lock,
                    std::chrono::steady_clock::time_point deadline, Pred pred)
    {
        while (!pred()) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= deadline)
                return false;
            const uint32_t seen = gen_.load();
            lock.unlock();
            sleep_once(seen, deadline - now);
            lock.lock();
        }
        return true;
    }
    /// Wakes every waiter; a system call only when one sleeps.
    void notify_all() noexcept;

private:
    /// One sleep while gen_ is `seen` (a wake, a signal or the time ends it), of at most
    /// `timeout` (relative, CLOCK_MONOTONIC) when there is one.
    void sleep(uint32_t seen, const timespec* timeout) noexcept;
    void sleep_once(uint32_t seen, std::chrono::steady_clock::duration most) noexcept;

    std::atomic<uint32_t> gen_{0};
    std::atomic<uint32_t> sleepers_{0};
};

} // namespace edgetensor::ipc
