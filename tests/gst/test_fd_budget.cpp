// SPDX-License-Identifier: MIT
//
// File descriptors as a budget: every pool the elements make is bounded by default, a pooled
// buffer holds one fd, and running out of them is an element error that says "too many open
// files" instead of "Internal data stream error" (issue 11, defect 4).

#include "element_harness.hpp"
#include "fd_count.hpp"

#include <gst/base/gstbasesrc.h>
#include <gst/base/gstbasetransform.h>

#include <sys/resource.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace edgetensor::test
{
namespace
{

using namespace std::chrono_literals;

constexpr const char* kNv12 = "video/x-raw,format=NV12,width=64,height=48,framerate=30/1";

BufferPtr nv12_frame()
{
    BufferPtr b(gst_buffer_new_allocate(nullptr, 64 * 48 * 3 / 2, nullptr));
    gst_buffer_memset(b.get(), 0, 0x40, 64 * 48 * 3 / 2);
    return b;
}

guint max_buffers_of(GstBufferPool* pool)
{
    GstStructure* config = gst_buffer_pool_get_config(pool);
    guint min = 0, max = 0;
    gst_buffer_pool_config_get_params(config, nullptr, nullptr, &min, &max);
    gst_structure_free(config);
    return max;
}

// Lowers RLIMIT_NOFILE so that only `spare` more fds can be opened; restores it on scope exit.
class FdLimit
{
public:
    explicit FdLimit(int spare)
    {
        getrlimit(RLIMIT_NOFILE, &saved_);
        const std::set<int> open = open_fds();
        rlim_t limit = 0;
        for (int free_slots = 0; free_slots < spare; ++limit)
            if (!open.count(int(limit)))
                ++free_slots;
        rlimit rl = saved_;
        rl.rlim_cur = limit;
        EXPECT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
    }
    ~FdLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }
    FdLimit(const FdLimit&) = delete;
    FdLimit& operator=(const FdLimit&) = delete;

private:
    rlimit saved_{};
};

TEST(FdBudget, TensorConvertsOutputPoolIsBoundedByDefault)
{
    ElementHarness t("tensorconvert width=8 height=8");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), kNv12);
    ASSERT_EQ(gst_harness_push(t.get(), nv12_frame().release()), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(t.get()));
    GstObjectPtr<GstBufferPool> pool(
        gst_base_transform_get_buffer_pool(GST_BASE_TRANSFORM(t.element)));
    ASSERT_TRUE(pool);
    const guint max = max_buffers_of(pool.get());
    EXPECT_GT(max, 0u) << "an unbounded pool behind a deep queue takes every fd";
    EXPECT_LE(max, 64u);
}

TEST(FdBudget, TensorTestSrcsPoolIsBoundedByDefault)
{
    GstHarness* h = gst_harness_new("tensortestsrc");
    guint prop = 0;
    g_object_get(h->element, "max-buffers", &prop, nullptr);
    EXPECT_EQ(prop, 32u);
    gst_harness_set_sink_caps_str(h, kNv12);
    gst_harness_play(h);
    GstBuffer* b = gst_harness_pull(h);
    ASSERT_TRUE(b);
    gst_buffer_unref(b);
    GstBufferPool* pool = gst_base_src_get_buffer_pool(GST_BASE_SRC(h->element));
    ASSERT_TRUE(pool);
    EXPECT_EQ(max_buffers_of(pool), 32u);
    gst_object_unref(pool);
    gst_harness_teardown(h);
}

TEST(FdBudget, TensorImportsProposedPoolIsBounded)
{
    ElementHarness t("tensorimport");
    gst_harness_set_src_caps_str(t.get(), kNv12);
    CapsPtr caps = caps_from(kNv12);
    MiniObjectPtr<GstQuery> q(gst_query_new_allocation(caps.get(), TRUE));
    ASSERT_TRUE(gst_pad_peer_query(t->srcpad, q.get()));
    ASSERT_GE(gst_query_get_n_allocation_pools(q.get()), 1u);
    guint max = 0;
    gst_query_parse_nth_allocation_pool(q.get(), 0, nullptr, nullptr, nullptr, &max);
    EXPECT_GT(max, 0u);
}

TEST(FdBudget, EveryHeldOutputBufferCostsOneFd)
{
    ElementHarness t("tensorconvert width=8 height=8");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), kNv12);
    std::vector<BufferPtr> held;
    std::set<int> at2;
    for (int n = 0; n < 10; ++n) {
        ASSERT_EQ(gst_harness_push(t.get(), nv12_frame().release()), GST_FLOW_OK);
        held.emplace_back(gst_harness_pull(t.get()));
        ASSERT_TRUE(held.back());
        if (n == 1)
            at2 = open_fds(); // the pool's two preallocated buffers are both out
    }
    const size_t grown = open_fds().size() - at2.size();
    EXPECT_EQ(grown, 8u) << "8 more buffers held: " << describe_fds(open_fds());
}

TEST(FdBudget, EveryPooledBufferHoldsOneFd)
{
    const std::set<int> before = open_fds();
    PoolPtr pool = make_active_pool("video/x-raw,format=RGBA,width=32,height=32", {.min = 1});
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> held;
    held.push_back(acquire(pool.get()));
    // One buffer out, and GstBufferPool's own wake-up fds: the baseline.
    const std::set<int> one = open_fds();
    for (int n = 1; n < 13; ++n)
        held.push_back(acquire(pool.get()));
    EXPECT_EQ(open_fds().size(), one.size() + 12) << describe_fds(open_fds());
    held.clear();
    gst_buffer_pool_set_active(pool.get(), FALSE);
    pool.reset();
    EXPECT_EQ(open_fds(), before);
}

// The repro: (ulimit -n 1024; tensortestsrc ! tensorconvert ! queue max-size-buffers=600 ! slow
// sink) failed with "Internal data stream error". The pool is bounded now, so only a much lower
// limit runs out; it must then say what happened.
TEST(FdBudget, NegativeRunningOutOfFdsIsAnErrorThatSaysTooManyOpenFiles)
{
    ElementHarness t("tensorconvert width=8 height=8");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), kNv12);
    ASSERT_EQ(gst_harness_push(t.get(), nv12_frame().release()), GST_FLOW_OK);
    std::vector<BufferPtr> held;
    held.emplace_back(gst_harness_pull(t.get()));
    GstFlowReturn ret = GST_FLOW_OK;
    {
        FdLimit limit(3);
        for (int n = 0; n < 20 && ret == GST_FLOW_OK; ++n) {
            ret = gst_harness_push(t.get(), nv12_frame().release());
            if (ret == GST_FLOW_OK)
                held.emplace_back(gst_harness_pull(t.get()));
        }
    }
    EXPECT_EQ(ret, GST_FLOW_ERROR);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("too many open files (EMFILE)"), std::string::npos) << err;
    EXPECT_NE(err.find("Cannot allocate an output buffer"), std::string::npos) << err;
    // With fds back, the same element goes on.
    held.clear();
    EXPECT_EQ(gst_harness_push(t.get(), nv12_frame().release()), GST_FLOW_OK);
}

TEST(FdBudget, NegativeASourceOutOfFdsSaysTooManyOpenFiles)
{
    GstHarness* h = gst_harness_new("tensortestsrc");
    GstObjectPtr<GstBus> bus(gst_bus_new());
    gst_element_set_bus(h->element, bus.get());
    gst_harness_set_sink_caps_str(h, kNv12);
    std::string text;
    {
        FdLimit limit(2); // fewer than the pool's 4 preallocated buffers
        gst_harness_play(h);
        MiniObjectPtr<GstMessage> msg(
            gst_bus_timed_pop_filtered(bus.get(), 10 * GST_SECOND, GST_MESSAGE_ERROR));
        ASSERT_TRUE(msg) << "no error within 10 s";
        GError* e = nullptr;
        gst_message_parse_error(msg.get(), &e, nullptr);
        text = e ? e->message : "";
        g_clear_error(&e);
    }
    gst_harness_teardown(h);
    gst_bus_set_flushing(bus.get(), TRUE);
    EXPECT_NE(text.find("too many open files (EMFILE)"), std::string::npos) << text;
}

} // namespace
} // namespace edgetensor::test
