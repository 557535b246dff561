// SPDX-License-Identifier: MIT
//
// Timestamps across the IPC process boundary, without a pipeline (gst/elements/tensoripc_clock
// compiled in): the CLOCK_MONOTONIC mapping both ends use, and the segments of a non-live
// receiver that keeps the sender's timestamps.

#include "tensoripc_clock.hpp"

#include <gst/gst.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace
{

namespace tipc = edgetensor::gst::tensoripc;

constexpr GstClockTime kFrame = GST_SECOND / 30;

class IpcClock : public ::testing::Test
{
protected:
    static void SetUpTestSuite() { gst_init(nullptr, nullptr); }

    void SetUp() override
    {
        element = gst_bin_new("timed");
        gst_object_ref_sink(element);
    }
    void TearDown() override { gst_object_unref(element); }

    void use_clock(GstClockType type, GstClockTime base)
    {
        GstClock* clock =
            GST_CLOCK(g_object_new(GST_TYPE_SYSTEM_CLOCK, "clock-type", type, nullptr));
        gst_object_ref_sink(clock);
        gst_element_set_clock(element, clock);
        gst_object_unref(clock);
        gst_element_set_base_time(element, base);
    }

    GstElement* element = nullptr;
};

TEST_F(IpcClock, OnTheMonotonicSystemClockTheMappingIsExact)
{
    const GstClockTime base = tipc::monotonic_now() - 5 * GST_SECOND;
    use_clock(GST_CLOCK_TYPE_MONOTONIC, base);
    const GstClockTime running = 7 * GST_SECOND + 123;
    const GstClockTime mono = tipc::running_to_monotonic(element, running, 40 * GST_MSECOND);
    EXPECT_EQ(mono, base + running + 40 * GST_MSECOND) << "base time + running time + latency";
    EXPECT_EQ(tipc::monotonic_to_running(element, mono), running + 40 * GST_MSECOND);
    EXPECT_EQ(tipc::running_to_monotonic(element, running, GST_CLOCK_TIME_NONE), base + running)
        << "no latency counts as 0";
}

TEST_F(IpcClock, AnotherClockIsMovedOntoTheMonotonicOne)
{
    // A realtime clock is ~1.7e18 ns ahead of CLOCK_MONOTONIC: the offset must be applied.
    GstClock* probe = GST_CLOCK(
        g_object_new(GST_TYPE_SYSTEM_CLOCK, "clock-type", GST_CLOCK_TYPE_REALTIME, nullptr));
    gst_object_ref_sink(probe);
    const GstClockTime realtime_now = gst_clock_get_time(probe);
    gst_object_unref(probe);
    use_clock(GST_CLOCK_TYPE_REALTIME, realtime_now - 2 * GST_SECOND);

    const GstClockTime before = tipc::monotonic_now();
    const GstClockTime mono = tipc::running_to_monotonic(element, 2 * GST_SECOND, 0);
    const GstClockTime after = tipc::monotonic_now();
    // Running time 2 s is "now" on that clock: on CLOCK_MONOTONIC it is now too.
    EXPECT_GE(mono + 50 * GST_MSECOND, before);
    EXPECT_LE(mono, after + 50 * GST_MSECOND);
    const GstClockTime back = tipc::monotonic_to_running(element, mono);
    EXPECT_LT(std::llabs(GST_CLOCK_DIFF(back, 2 * GST_SECOND)), GstClockTimeDiff(GST_MSECOND))
        << "there and back within a millisecond";
}

TEST_F(IpcClock, NoClockOrNoTimeGivesNone)
{
    EXPECT_EQ(tipc::running_to_monotonic(element, GST_SECOND, 0), GST_CLOCK_TIME_NONE)
        << "an element outside a playing pipeline has no clock";
    EXPECT_EQ(tipc::monotonic_to_running(element, GST_SECOND), GST_CLOCK_TIME_NONE);
    use_clock(GST_CLOCK_TYPE_MONOTONIC, GST_SECOND);
    EXPECT_EQ(tipc::running_to_monotonic(element, GST_CLOCK_TIME_NONE, 0), GST_CLOCK_TIME_NONE);
    EXPECT_EQ(tipc::monotonic_to_running(element, GST_CLOCK_TIME_NONE), GST_CLOCK_TIME_NONE);
}

TEST_F(IpcClock, ATimeBeforeThisPipelineStartedIsRunningTimeZero)
{
    const GstClockTime base = tipc::monotonic_now();
    use_clock(GST_CLOCK_TYPE_MONOTONIC, base);
    EXPECT_EQ(tipc::monotonic_to_running(element, base - GST_SECOND), 0u)
        << "a frame captured before this receiver played is due at once, not in the past";
}

TEST(IpcReceiverSegment, TheFirstTimestampStartsTheSegmentAndIsRunningTimeZero)
{
    tipc::ReceiverSegment seg;
    EXPECT_FALSE(seg.before(GST_CLOCK_TIME_NONE, kFrame)) << "a frame without PTS needs none";
    auto first = seg.before(100 * GST_SECOND, kFrame);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->format, GST_FORMAT_TIME);
    EXPECT_EQ(first->start, 100 * GST_SECOND);
    EXPECT_EQ(first->time, 100 * GST_SECOND) << "stream time stays the sender's PTS";
    EXPECT_EQ(first->base, 0u);
    EXPECT_EQ(gst_segment_to_running_time(&*first, GST_FORMAT_TIME, 100 * GST_SECOND), 0u);
    for (int n = 1; n < 30; ++n)
        EXPECT_FALSE(seg.before(100 * GST_SECOND + n * kFrame, kFrame)) << "frame " << n;
    EXPECT_FALSE(seg.before(500 * GST_SECOND, kFrame))
        << "a jump forward is a gap, not a new segment";
}

TEST(IpcReceiverSegment, TimestampsGoingBackStartASegmentThatContinuesTheRunningTime)
{
    tipc::ReceiverSegment seg;
    ASSERT_TRUE(seg.before(10 * GST_SECOND, kFrame));
    for (int n = 1; n < 15; ++n)
        ASSERT_FALSE(seg.before(10 * GST_SECOND + n * kFrame, kFrame));
    const GstClockTime reached = 15 * kFrame; // running time at the end of frame 14
    auto looped = seg.before(0, kFrame);
    ASSERT_TRUE(looped) << "the sender's file looped: its PTS went back to 0";
    EXPECT_EQ(looped->start, 0u);
    EXPECT_EQ(looped->base, reached);
    EXPECT_EQ(gst_segment_to_running_time(&*looped, GST_FORMAT_TIME, 0), reached)
        << "running time goes on where it was";
    EXPECT_FALSE(seg.before(kFrame, kFrame));

    seg.reset();
    auto again = seg.before(3 * GST_SECOND, GST_CLOCK_TIME_NONE);
    ASSERT_TRUE(again) << "after reset the next frame starts a new stream";
    EXPECT_EQ(again->base, 0u);
    EXPECT_EQ(again->start, 3 * GST_SECOND);
}

// Another sender (on-disconnect=reconnect) starts a segment at its first frame even when its
// timestamps are ahead of the last sender's, and the running time goes on from where it was.
TEST(IpcReceiverSegment, AfterARestartTheNextSendersFirstFrameStartsASegmentThatContinues)
{
    tipc::ReceiverSegment seg;
    seg.restart();
    ASSERT_TRUE(seg.before(0, kFrame)) << "a restart before any frame changes nothing";
    ASSERT_FALSE(seg.before(kFrame, kFrame));
    const GstClockTime reached = 2 * kFrame;
    seg.restart();
    auto next = seg.before(100 * GST_SECOND, kFrame);
    ASSERT_TRUE(next) << "a PTS ahead is the next sender's start, not a gap";
    EXPECT_EQ(next->start, 100 * GST_SECOND);
    EXPECT_EQ(next->base, reached);
    EXPECT_FALSE(seg.before(100 * GST_SECOND + kFrame, kFrame)) << "one segment per restart";
    seg.restart();
    auto back = seg.before(0, kFrame);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->base, reached + 2 * kFrame);
}

// A live receiver's maximum latency: the frames its sender lets it hold, at the caps' rate.
TEST(IpcReceiverLatency, MaxPendingFramesAtTheCapsFramerate)
{
    EXPECT_EQ(tipc::receiver_max_latency(4, 30, 1), 4 * GST_SECOND / 30);
    EXPECT_EQ(tipc::receiver_max_latency(1, 30, 1), GST_SECOND / 30);
    EXPECT_EQ(tipc::receiver_max_latency(3, 15, 2), 3 * 2 * GST_SECOND / 15);
    EXPECT_EQ(tipc::receiver_max_latency(0, 30, 1), GST_CLOCK_TIME_NONE) << "before the HELLO";
    EXPECT_EQ(tipc::receiver_max_latency(4, 0, 1), GST_CLOCK_TIME_NONE)
        << "before the caps, or a variable framerate (0/1), or none in the caps";
    EXPECT_EQ(tipc::receiver_max_latency(4, 30, 0), GST_CLOCK_TIME_NONE) << "not a framerate";
}

} // namespace
