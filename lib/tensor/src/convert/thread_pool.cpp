// SPDX-License-Identifier: MIT

#include "thread_pool.hpp"

#include <exception>
#include <string>
#include <system_error>

namespace edgetensor::detail
{

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
        stopping_ = true;
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
    {
        std::lock_guard<std::mutex> lock(mutex_);
        fn_ = fn;
        ctx_ = ctx;
        pending_ = workers_.size();
        ++generation_;
    }
    start_cv_.notify_all();
    fn(ctx, 0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [this] { return pending_ == 0; });
}

void ThreadPool::worker_main(size_t index) noexcept
{
    uint64_t seen = 0;
    for (;;) {
        TaskFn fn;
        void* ctx;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            start_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_)
                return;
            seen = generation_;
            fn = fn_;
            ctx = ctx_;
        }
        fn(ctx, index);
        bool last;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            last = --pending_ == 0;
        }
        if (last)
            done_cv_.notify_one();
    }
}

} // namespace edgetensor::detail
