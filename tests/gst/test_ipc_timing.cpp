// SPDX-License-Identifier: MIT
//
// When tensoripcsrc's frames are due: a receiver's pipeline has its own clock and base time, so
// the sender's running time means nothing there. Not live, the receiver keeps the sender's
// timestamps and starts its segment at the first (a synchronised sink plays them as they come);
// live, it puts each frame's capture time on its own clock (as unixfdsrc does).

#include "element_harness.hpp"
#include "ipc_test_util.hpp"

#include <gst/app/gstappsink.h>
#include <gst/edgetensor/edgetensor.h>

#include <chrono>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace edgetensor::test
{
namespace
{

using namespace std::chrono_literals;

class GstIpcTiming : public ::testing::Test
{
protected:
    static void SetUpTestSuite()
    {
        load_system_plugins();
        // videotestsrc's timestamp-offset stands for a sender that has been up a while.
        load_system_plugin("videotestsrc");
    }
};

constexpr const char* kSmallNv12 = "video/x-raw,format=NV12,width=64,height=32,framerate=30/1";
constexpr GstClockTime kFrame = GST_SECOND / 30;

GstClockTime running_time_now(const Pipeline& p)
{
    GstClock* clock = gst_element_get_clock(p.get());
    if (!clock)
        return GST_CLOCK_TIME_NONE;
    const GstClockTime now = gst_clock_get_time(clock);
    gst_object_unref(clock);
    return now - gst_element_get_base_time(p.get());
}

// The sender's frames are stamped 100 s on (a sender that has been up for a while): a
// receiver with a synchronised sink must play them at their pace from the first, not wait
// 100 s for its own running time to get there.
TEST_F(GstIpcTiming, NotLive_ASyncedSinkPlaysTheSendersFramesFromTheFirst)
{
    constexpr int kFrames = 45;
    constexpr GstClockTime kOffset = 100 * GST_SECOND;
    SocketDir dir;
    Pipeline tx("videotestsrc num-buffers=" + std::to_string(kFrames) +
                " timestamp-offset=" + std::to_string(kOffset) + " ! " + kSmallNv12 +
                " ! tensoripcsink socket-path=" + dir.path() +
                " wait-for-connection=true block=true sync=false");
    Pipeline rx("tensoripcsrc socket-path=" + dir.path() +
                " ! appsink name=out sync=true max-buffers=4 enable-last-sample=false");
    ASSERT_TRUE(tx && rx);
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    std::chrono::steady_clock::time_point first_at, last_at;
    for (int n = 0; n < kFrames; ++n) {
        auto s = pull(rx);
        ASSERT_TRUE(s) << "frame " << n
                       << " did not come within 5 s: the sink waits for the "
                          "sender's running time";
        (n == 0 ? first_at : last_at) = std::chrono::steady_clock::now();
        GstBuffer* b = gst_sample_get_buffer(s.get());
        EXPECT_EQ(GST_BUFFER_PTS(b), kOffset + gst_util_uint64_scale(n, GST_SECOND, 30))
            << "the sender's PTS is kept";
        const GstSegment* seg = gst_sample_get_segment(s.get());
        ASSERT_TRUE(seg);
        EXPECT_EQ(seg->start, kOffset) << "the segment starts at the first frame";
        EXPECT_EQ(seg->time, kOffset) << "stream time is the sender's PTS";
        if (n == 0) {
            EXPECT_EQ(gst_segment_to_running_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(b)), 0u);
        }
    }
    // 44 frame intervals of 33 ms after the first: the sink did synchronise.
    const auto paced = std::chrono::duration_cast<std::chrono::milliseconds>(last_at - first_at);
    EXPECT_GE(paced.count(), 1000)
        << "frames rendered in " << paced.count() << " ms: not paced by the clock";
    auto eos = rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 5s);
    ASSERT_TRUE(eos);
    EXPECT_EQ(GST_MESSAGE_TYPE(eos.get()), GST_MESSAGE_EOS) << message_text(eos.get());
}

// A live sender that has been running 1.5 s before this receiver plays: the receiver's frames
// carry their capture time on its own running time (not the sender's, 1.5 s ahead), one frame
// interval apart.
TEST_F(GstIpcTiming, Live_FramesCarryTheirCaptureTimeOnThisPipelinesClock)
{
    constexpr int kFrames = 30;
    SocketDir dir;
    Pipeline tx("tensortestsrc is-live=true pattern=frame-counter ! " + std::string(kSmallNv12) +
                " ! tensoripcsink socket-path=" + dir.path() +
                " wait-for-connection=false sync=false");
    Pipeline rx("tensoripcsrc is-live=true socket-path=" + dir.path() +
                " ! appsink name=out sync=false max-buffers=" + std::to_string(kFrames + 10) +
                " enable-last-sample=false");
    ASSERT_TRUE(tx && rx);
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    std::this_thread::sleep_for(1500ms);
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    std::vector<GstClockTime> pts;
    for (int n = 0; n < kFrames; ++n) {
        auto s = pull(rx);
        ASSERT_TRUE(s) << "frame " << n;
        const GstClockTime now = running_time_now(rx);
        const GstClockTime t = GST_BUFFER_PTS(gst_sample_get_buffer(s.get()));
        ASSERT_TRUE(GST_CLOCK_TIME_IS_VALID(t)) << "frame " << n;
        ASSERT_TRUE(GST_CLOCK_TIME_IS_VALID(now));
        // Due at most the sender's latency (one frame) ahead of now, captured at most 1 s ago
        // (a loaded machine); the sender's own running time would be ~1.5 s ahead.
        EXPECT_LE(t, now + 3 * kFrame)
            << "frame " << n << ": PTS " << double(t) / GST_SECOND << " s, running time here "
            << double(now) / GST_SECOND << " s";
        EXPECT_GE(t + GST_SECOND, now) << "frame " << n;
        pts.push_back(t);
    }
    // The first frames may have been sent while this pipeline was still going to PLAYING:
    // captured before its base time, they are due at once (0). From then on, the sender's pace.
    constexpr size_t kSettled = 3;
    for (size_t i = kSettled + 1; i < pts.size(); ++i)
        EXPECT_GT(pts[i], pts[i - 1]) << "frame " << i;
    const GstClockTime mean = (pts.back() - pts[kSettled]) / (pts.size() - 1 - kSettled);
    EXPECT_NEAR(double(mean), double(kFrame), double(kFrame) / 4)
        << "the sender's pace, on this clock";
}

// A live receiver answers the latency query as a live source that can fall behind by the
// frames its sender lets it hold: GstBaseSrc's own answer (max 0, as unixfdsrc gives) leaves a
// synchronised sink no room for its processing deadline, and it warns that the "pipeline
// construction is invalid" on every start.
TEST_F(GstIpcTiming, Live_LatencyBoundsHowFarTheReceiverMayFallBehind)
{
    constexpr int kMaxPending = 4;
    SocketDir dir;
    Pipeline tx("tensortestsrc is-live=true pattern=frame-counter ! " + std::string(kSmallNv12) +
                " ! tensoripcsink socket-path=" + dir.path() + " max-pending=" +
                std::to_string(kMaxPending) + " wait-for-connection=false sync=false");
    Pipeline rx("tensoripcsrc name=src is-live=true socket-path=" + dir.path() +
                " ! appsink name=out sync=true max-buffers=2 drop=true enable-last-sample=false");
    ASSERT_TRUE(tx && rx);
    auto latency = [&] {
        GstQuery* q = gst_query_new_latency();
        gboolean live = FALSE;
        GstClockTime min = 1, max = 1;
        if (gst_element_query(rx.by_name("src"), q))
            gst_query_parse_latency(q, &live, &min, &max);
        gst_query_unref(q);
        return std::tuple{live, min, max};
    };
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    {
        // No sender yet: nothing bounds it.
        const auto [live, min, max] = latency();
        EXPECT_TRUE(live);
        EXPECT_EQ(min, 0u);
        EXPECT_EQ(max, GST_CLOCK_TIME_NONE);
    }
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    for (int n = 0; n < 10; ++n)
        ASSERT_TRUE(pull(rx)) << "frame " << n;
    const auto [live, min, max] = latency();
    EXPECT_TRUE(live);
    EXPECT_EQ(min, 0u) << "frames arrive when they were due at the sender";
    EXPECT_EQ(max, gst_util_uint64_scale_int(kMaxPending * GST_SECOND, 1, 30))
        << "max-pending frames of the caps' framerate";
    auto warning = rx.wait(GST_MESSAGE_WARNING, 0ms);
    EXPECT_FALSE(warning) << message_text(warning.get());
}

// Two cameras in other processes, started 1.5 s apart, batched here: with both put on this
// pipeline's clock their frames are due together, so tensorbatch fills every batch (each
// sender's own running time would put one stream 1.5 s ahead of the other, and the batches
// would wait for it).
TEST_F(GstIpcTiming, Live_TwoSendersStartedApartFillEveryBatch)
{
    constexpr int kBatches = 30;
    SocketDir dir;
    const std::string s0 = dir.path() + "0", s1 = dir.path() + "1";
    auto camera = [&](const std::string& sock) {
        return "tensortestsrc is-live=true pattern=frame-counter ! " + std::string(kSmallNv12) +
               " ! tensoripcsink socket-path=" + sock + " wait-for-connection=false sync=false";
    };
    Pipeline cam0(camera(s0)), cam1(camera(s1));
    // A timeout well past a loaded machine's scheduling delays (a frame 20 ms late made a
    // partial batch under TSan and parallel builds) and far below the 1.5 s between the
    // senders' own running times, which would leave every batch partial.
    Pipeline rx("tensorbatch name=b batch-size=2 width=32 height=32 batched-push-timeout=" +
                std::to_string(100 * GST_MSECOND) +
                " ! appsink name=out sync=true max-buffers=" + std::to_string(kBatches + 10) +
                " enable-last-sample=false tensoripcsrc is-live=true socket-path=" + s0 +
                " ! b.sink_0 tensoripcsrc is-live=true socket-path=" + s1 + " ! b.sink_1");
    ASSERT_TRUE(cam0 && cam1 && rx);
    ASSERT_NE(cam0.play(), GST_STATE_CHANGE_FAILURE);
    std::this_thread::sleep_for(1500ms);
    ASSERT_NE(cam1.play(), GST_STATE_CHANGE_FAILURE);
    std::this_thread::sleep_for(1500ms);
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    int full = 0;
    std::chrono::steady_clock::time_point first_at;
    for (int n = 0; n < kBatches; ++n) {
        auto s = pull(rx);
        ASSERT_TRUE(s) << "batch " << n << " did not come within 5 s";
        if (n == 0)
            first_at = std::chrono::steady_clock::now();
        GstEdgeTensorBatchMeta* m =
            gst_buffer_get_edge_tensor_batch_meta(gst_sample_get_buffer(s.get()));
        ASSERT_TRUE(m) << "batch " << n;
        ASSERT_EQ(m->n_slots, 2u);
        full += (m->slots[0].filled && m->slots[1].filled) ? 1 : 0;
    }
    // The first batch or two may catch one stream before the other's first frame arrives.
    EXPECT_GE(full, kBatches - 3) << full << " of " << kBatches << " batches full";
    // At the cameras' pace (29 intervals of 33 ms), not held back by a stream 1.5 s ahead.
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - first_at);
    EXPECT_LT(took.count(), 3000) << kBatches << " batches took " << took.count() << " ms";
}

} // namespace
} // namespace edgetensor::test
