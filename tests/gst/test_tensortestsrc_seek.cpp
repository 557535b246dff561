// SPDX-License-Identifier: MIT
//
// tensortestsrc seeks as videotestsrc does: flushing seeks succeed, the next frame is the one at
// the segment position (its timestamp and its frame-counter pattern), a segment stop ends the
// stream, and a negative rate counts down to frame 0 (issue 11, defect 8).

#include "element_harness.hpp"

#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

struct Frame {
    GstClockTime pts;
    guint64 offset;
    guint8 value; // frame-counter: every byte of frame n is n mod 256
};

struct Seen {
    std::mutex mu;
    std::vector<Frame> frames;
    void clear()
    {
        std::lock_guard<std::mutex> lock(mu);
        frames.clear();
    }
    std::vector<Frame> get()
    {
        std::lock_guard<std::mutex> lock(mu);
        return frames;
    }
};

GstPadProbeReturn record(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* seen = static_cast<Seen*>(data);
    GstBuffer* b = GST_PAD_PROBE_INFO_BUFFER(info);
    guint8 v = 0;
    gst_buffer_extract(b, 0, &v, 1);
    std::lock_guard<std::mutex> lock(seen->mu);
    seen->frames.push_back({GST_BUFFER_PTS(b), GST_BUFFER_OFFSET(b), v});
    return GST_PAD_PROBE_OK;
}

class TensorTestSrcSeek : public ::testing::Test
{
protected:
    void SetUp() override
    {
        ASSERT_TRUE(load_system_plugin("coreelements"));
        GError* err = nullptr;
        pipeline_.reset(gst_parse_launch(
            "tensortestsrc name=src pattern=frame-counter ! "
            "video/x-raw,format=GRAY8,width=16,height=8,framerate=30/1 ! fakesink name=sink "
            "sync=false",
            &err));
        ASSERT_TRUE(pipeline_) << (err ? err->message : "?");
        g_clear_error(&err);
        GstObjectPtr<GstElement> sink(gst_bin_get_by_name(GST_BIN(pipeline_.get()), "sink"));
        GstObjectPtr<GstPad> pad(gst_element_get_static_pad(sink.get(), "sink"));
        gst_pad_add_probe(pad.get(), GST_PAD_PROBE_TYPE_BUFFER, record, &seen_, nullptr);
    }
    void TearDown() override
    {
        if (pipeline_)
            gst_element_set_state(pipeline_.get(), GST_STATE_NULL);
    }

    bool set_state(GstState s)
    {
        if (gst_element_set_state(pipeline_.get(), s) == GST_STATE_CHANGE_FAILURE)
            return false;
        return gst_element_get_state(pipeline_.get(), nullptr, nullptr, 10 * GST_SECOND) ==
               GST_STATE_CHANGE_SUCCESS;
    }

    // The frame at `t` at 30 fps, and its timestamp.
    static guint64 frame_at(GstClockTime t) { return gst_util_uint64_scale(t, 30, GST_SECOND); }
    static GstClockTime pts_of(guint64 n) { return gst_util_uint64_scale(n, GST_SECOND, 30); }

    GstObjectPtr<GstElement> pipeline_;
    Seen seen_;
};

// "400 of 400 flushing seeks return FALSE".
TEST_F(TensorTestSrcSeek, FlushingSeeksSucceedAndTheNextFrameIsTheOneAtThePosition)
{
    ASSERT_TRUE(set_state(GST_STATE_PAUSED));
    GstQuery* q = gst_query_new_seeking(GST_FORMAT_TIME);
    ASSERT_TRUE(gst_element_query(pipeline_.get(), q));
    gboolean seekable = FALSE;
    gst_query_parse_seeking(q, nullptr, &seekable, nullptr, nullptr);
    gst_query_unref(q);
    EXPECT_TRUE(seekable);

    std::mt19937 rng(11);
    std::uniform_int_distribution<guint64> ms(0, 600000);
    for (int i = 0; i < 40; ++i) {
        const GstClockTime target = ms(rng) * GST_MSECOND;
        SCOPED_TRACE(std::to_string(i) + ": seek to " + std::to_string(target));
        seen_.clear();
        ASSERT_TRUE(gst_element_seek_simple(pipeline_.get(), GST_FORMAT_TIME,
                                            GstSeekFlags(GST_SEEK_FLAG_FLUSH), gint64(target)));
        ASSERT_TRUE(set_state(GST_STATE_PAUSED)); // prerolled on the first frame after the seek
        const auto frames = seen_.get();
        ASSERT_FALSE(frames.empty());
        const guint64 n = frame_at(target);
        EXPECT_EQ(frames.front().pts, pts_of(n));
        EXPECT_EQ(frames.front().offset, n);
        EXPECT_EQ(frames.front().value, guint8(n & 0xff)) << "the pattern of frame " << n;
        // The frame covers the target (it starts at or before it), so the position is the
        // target itself.
        EXPECT_LE(frames.front().pts, target);
        EXPECT_GT(pts_of(n + 1), target);
        gint64 pos = -1;
        EXPECT_TRUE(gst_element_query_position(pipeline_.get(), GST_FORMAT_TIME, &pos));
        EXPECT_EQ(GstClockTime(pos), target);
    }
}

TEST_F(TensorTestSrcSeek, ASegmentWithAStopEndsTheStreamThere)
{
    ASSERT_TRUE(set_state(GST_STATE_PAUSED));
    seen_.clear();
    ASSERT_TRUE(gst_element_seek(pipeline_.get(), 1.0, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH,
                                 GST_SEEK_TYPE_SET, gint64(GST_SECOND), GST_SEEK_TYPE_SET,
                                 gint64(2 * GST_SECOND)));
    const PipelineRun r = run_pipeline(pipeline_.get());
    ASSERT_TRUE(r.eos) << r.errors;
    const auto frames = seen_.get();
    ASSERT_EQ(frames.size(), 30u);
    for (size_t i = 0; i < frames.size(); ++i) {
        EXPECT_EQ(frames[i].offset, 30 + i);
        EXPECT_EQ(frames[i].pts, pts_of(30 + i));
        EXPECT_EQ(frames[i].value, guint8(30 + i));
    }
}

TEST_F(TensorTestSrcSeek, ANegativeRateCountsDownToTheFirstFrame)
{
    ASSERT_TRUE(set_state(GST_STATE_PAUSED));
    seen_.clear();
    ASSERT_TRUE(gst_element_seek(pipeline_.get(), -1.0, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH,
                                 GST_SEEK_TYPE_SET, 0, GST_SEEK_TYPE_SET, gint64(GST_SECOND / 2)));
    const PipelineRun r = run_pipeline(pipeline_.get());
    ASSERT_TRUE(r.eos) << r.errors;
    const auto frames = seen_.get();
    ASSERT_GE(frames.size(), 15u);
    const guint64 first = frames.front().offset;
    EXPECT_LE(first, 15u);
    for (size_t i = 0; i < frames.size(); ++i) {
        EXPECT_EQ(frames[i].offset, first - i);
        EXPECT_EQ(frames[i].pts, pts_of(first - i));
    }
    EXPECT_EQ(frames.back().offset, 0u);
}

} // namespace
} // namespace edgetensor::test
