// SPDX-License-Identifier: MIT
//
// A fixed set of worker threads that run one indexed job at a time, for the converter's row
// bands. The caller takes part (it runs task 0), so a pool of one thread starts no thread.
//
// A frame takes well under a millisecond, about what a futex wake-up can cost on a busy
// machine, so both sides spin briefly before they sleep: workers for the next job, the caller
// for the workers to finish. Back-to-back frames never sleep; a pipeline at 30 fps sleeps
// between frames after spinning for a few tens of microseconds.

#pragma once

#include "edgetensor/error.hpp"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace edgetensor::detail
{

class ThreadPool
{
public:
    using TaskFn = void (*)(void* ctx, size_t task);

    /// Starts `threads - 1` workers. AllocationFailed when the system refuses a thread.
    static Result<std::unique_ptr<ThreadPool>> create(size_t threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    size_t size() const noexcept { return workers_.size() + 1; }

    /// Runs fn(ctx, i) for i in [0, size()) concurrently and returns when all have finished.
    /// `fn` must not throw. Not reentrant: one run() at a time per pool.
    void run(TaskFn fn, void* ctx) noexcept;

private:
    ThreadPool() = default;
    void worker_main(size_t index) noexcept;

    std::mutex mutex_;
    std::condition_variable start_cv_;
    std::condition_variable done_cv_;
    // Written by run() before generation_ is bumped (release), read after (acquire).
    TaskFn fn_ = nullptr;
    void* ctx_ = nullptr;
    std::atomic<uint64_t> generation_{0};
    std::atomic<size_t> pending_{0};
    std::atomic<bool> stopping_{false};
    // How many threads sleep on each condition variable (under mutex_), so the other side
    // only takes the mutex to wake someone who needs it.
    size_t start_sleepers_ = 0;
    bool caller_sleeps_ = false;
    std::vector<std::thread> workers_;
};

} // namespace edgetensor::detail
