// SPDX-License-Identifier: MIT

#include "thread_pool.hpp"

#include <chrono>
#include <exception>
#include <string>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace edgetensor::detail
{

namespace
{

/// How long a side spins before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(50);

inline void cpu_relax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

/// Spins until pred() holds or kSpin has passed; true when it holds.
template <typename Pred> bool spin_until(Pred pred) noexcept
{
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (pred())
                return true;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() >= deadline)
            return pred();
    }
}

} // namespace

Result<std::unique_ptr<ThreadPool>> ThreadPool::create(size_t threads)
{
    std::unique_ptr<ThreadPool> pool(new ThreadPool());
    try {
        pool->workers_.reserve(threads > 0 ? threads - 1 : 0);
        for (size_t i = 1; i < threads; ++i)
            pool->workers_.emplace_back(&ThreadPool::worker_main, pool.get(), i);
    } catch (const std::system_error& e) {
        // The destructor joins the workers that did start.
        return make_error(ErrorCode::AllocationFailed,
                          "could not start converter worker thread " +
                              std::to_string(pool->workers_.size() + 1) + ": " + e.what());
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed, "out of memory starting converter threads");
    }
    return pool;
}

ThreadPool::~ThreadPool()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_.store(true, std::memory_order_release);
    }
    start_cv_.notify_all();
    for (auto& t : workers_)
        t.join();
}

void ThreadPool::run(TaskFn fn, void* ctx) noexcept
{
    if (workers_.empty()) {
        fn(ctx, 0);
        return;
    }
    fn_ = fn;
    ctx_ = ctx;
    pending_.store(workers_.size(), std::memory_order_relaxed);
    {
        // Under the mutex so a worker about to sleep either sees the new generation or is
        // already waiting and gets the notification.
        std::lock_guard<std::mutex> lock(mutex_);
        generation_.fetch_add(1, std::memory_order_release);
        if (start_sleepers_ > 0)
            start_cv_.notify_all();
    }
    fn(ctx, 0);
    auto done = [this] { return pending_.load(std::memory_order_acquire) == 0; };
    if (spin_until(done))
        return;
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeps_ = true;
    done_cv_.wait(lock, done);
    caller_sleeps_ = false;
}

void ThreadPool::worker_main(size_t index) noexcept
{
    uint64_t seen = 0;
    for (;;) {
        auto ready = [&] {
            return stopping_.load(std::memory_order_acquire) ||
                   generation_.load(std::memory_order_acquire) != seen;
        };
        if (!spin_until(ready)) {
            std::unique_lock<std::mutex> lock(mutex_);
            ++start_sleepers_;
            start_cv_.wait(lock, ready);
            --start_sleepers_;
        }
        if (stopping_.load(std::memory_order_acquire))
            return;
        seen = generation_.load(std::memory_order_acquire);
        fn_(ctx_, index);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (caller_sleeps_)
                done_cv_.notify_one();
        }
    }
}

} // namespace edgetensor::detail
