// SPDX-License-Identifier: MIT
//
// Four threads acquiring and releasing from one pool at once. Meant to run under
// ThreadSanitizer too (see docs/gstreamer.md, "Testing").

#include "gst_test_util.hpp"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace edgetensor::test
{
namespace
{

TEST(GstPoolThreads, FourThreadsAcquireAndReleaseConcurrently)
{
    PoolOptions o;
    o.min = 4;
    o.max = 4;
    PoolPtr pool = make_active_pool("video/x-raw,format=NV12,width=128,height=96", o);
    ASSERT_TRUE(pool);

    std::mutex mu;
    std::set<guint64> ids;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            std::set<guint64> local;
            for (int i = 0; i < 2000; ++i) {
                GstBuffer* b = nullptr;
                if (gst_buffer_pool_acquire_buffer(pool.get(), &b, nullptr) != GST_FLOW_OK) {
                    failures++;
                    return;
                }
                GstMapInfo map;
                if (gst_buffer_map(b, &map, GST_MAP_WRITE)) {
                    map.data[0] = guint8(t);
                    gst_buffer_unmap(b, &map);
                } else {
                    failures++;
                }
                local.insert(identity_of(b));
                gst_buffer_unref(b);
            }
            std::lock_guard<std::mutex> lock(mu);
            ids.insert(local.begin(), local.end());
        });
    }
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(failures.load(), 0);
    // Which buffers the threads got depends on their timing (the newest free one first); none
    // other than the pool's four, and all four came back: four are free now, and no fifth.
    EXPECT_GE(ids.size(), 1u);
    EXPECT_LE(ids.size(), 4u);
    std::vector<BufferPtr> all;
    GstBufferPoolAcquireParams dontwait{};
    dontwait.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
    std::set<guint64> back;
    for (int i = 0; i < 4; ++i) {
        GstBuffer* b = nullptr;
        ASSERT_EQ(gst_buffer_pool_acquire_buffer(pool.get(), &b, &dontwait), GST_FLOW_OK) << i;
        back.insert(identity_of(b));
        all.emplace_back(b);
    }
    EXPECT_EQ(back.size(), 4u);
    for (guint64 id : ids)
        EXPECT_TRUE(back.count(id)) << "identity " << id << " left the pool";
    GstBuffer* fifth = nullptr;
    EXPECT_EQ(gst_buffer_pool_acquire_buffer(pool.get(), &fifth, &dontwait), GST_FLOW_EOS);
    all.clear();
    EXPECT_TRUE(gst_buffer_pool_set_active(pool.get(), FALSE));
}

TEST(GstPoolThreads, FlushingWhileThreadsWaitReleasesThemAll)
{
    PoolOptions o;
    o.min = 1;
    o.max = 1;
    PoolPtr pool = make_active_pool("video/x-raw,format=RGB,width=16,height=16", o);
    ASSERT_TRUE(pool);
    BufferPtr held = acquire(pool.get());
    std::atomic<int> flushed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            GstBuffer* b = nullptr;
            if (gst_buffer_pool_acquire_buffer(pool.get(), &b, nullptr) == GST_FLOW_FLUSHING)
                flushed++;
            if (b)
                gst_buffer_unref(b);
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gst_buffer_pool_set_flushing(pool.get(), TRUE);
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(flushed.load(), 4);
}

} // namespace
} // namespace edgetensor::test
