// SPDX-License-Identifier: MIT
//
// tensorbatch's bad input (issue 23 item 6): a pad with caps the batch cannot take, a
// batch-size of 0 or beyond what one pooled buffer holds, more pads than slots, a refused
// roi-labels value, a buffer that does not match its caps: each a message that names the
// problem, visible without GST_DEBUG, and no fd left behind.

#include "element_harness.hpp"
#include "fd_count.hpp"
#include "tensorbatch_test_util.hpp"

#include <string>

namespace edgetensor::test
{
namespace
{

class TensorBatchInput : public ::testing::Test
{
protected:
    void SetUp() override
    {
        ASSERT_TRUE(load_system_plugin("coreelements"));
        fds_ = open_fds();
    }
    void TearDown() override { EXPECT_EQ(open_fds(), fds_) << describe_fds(open_fds()); }

private:
    std::set<int> fds_;
};

// GLib refuses a value outside the property's range before the element sees it, with a
// warning naming the property and the value; the element keeps its batch-size.
TEST_F(TensorBatchInput, NegativeBatchSizeZeroOrAboveTheBoundIsRefusedNamingIt)
{
    GstElement* e = gst_element_factory_make("tensorbatch", nullptr);
    ASSERT_TRUE(e);
    for (const char* bad : {"0", "1025"}) {
        LogCapture glib("GLib-GObject", GLogLevelFlags(G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL));
        gst_util_set_object_arg(G_OBJECT(e), "batch-size", bad);
        EXPECT_NE(glib.text().find("batch-size"), std::string::npos) << glib.text();
        EXPECT_NE(glib.text().find(bad), std::string::npos) << glib.text();
        guint n = 0;
        g_object_get(e, "batch-size", &n, nullptr);
        EXPECT_EQ(n, 4u);
    }
    gst_object_unref(e);
}

// A batch one pooled buffer cannot hold (4 GiB) is refused when caps are set, naming
// batch-size.
TEST_F(TensorBatchInput, NegativeABatchBeyondWhatAPooledBufferHoldsIsRefusedNamingBatchSize)
{
    const PipelineRun r = run_launch(
        "tensorbatch name=b batch-size=1024 width=16384 height=16384 dtype=float32 ! fakesink "
        "tensortestsrc num-buffers=1 ! video/x-raw,format=NV12,width=64,height=48 ! b.sink_0");
    EXPECT_FALSE(r.eos);
    EXPECT_NE(r.errors.find("batch-size=1024 of [3:16384:16384] float32 slots is more than a "
                            "pooled buffer may hold (4 GiB)"),
              std::string::npos)
        << r.errors;
}

// Caps the batch cannot take: a format the engine does not read (refused at once, with a
// warning naming it), interlaced video (an error naming it when the caps arrive).
TEST_F(TensorBatchInput, NegativeAPadWithCapsTheBatchCannotTakeIsNamed)
{
    {
        BatchHarness b("batch-size=1 width=16 height=16");
        gst_harness_set_src_caps_str(b.out(), "video/x-raw,format=AYUV,width=64,height=48");
        EXPECT_NE(
            b.push(0, pattern_frame("video/x-raw,format=AYUV,width=64,height=48", 1).get(), 0),
            GST_FLOW_OK);
        const std::string w = b.messages(GST_MESSAGE_WARNING);
        EXPECT_NE(w.find("sink_0 cannot take"), std::string::npos) << w;
        EXPECT_NE(w.find("tensorbatch cannot read AYUV frames"), std::string::npos) << w;
    }
    {
        BatchHarness b("batch-size=1 width=16 height=16");
        const char* caps = "video/x-raw,format=NV12,width=64,height=48,interlace-mode=interleaved";
        gst_harness_set_src_caps_str(b.out(), caps);
        // The caps are queued with the frame; the error comes when the element reaches them.
        b.push(0, pattern_frame(caps, 1).get(), 0);
        const std::string e = b.wait_error();
        EXPECT_NE(e.find("sink_0: tensorbatch needs progressive video; deinterlace first"),
                  std::string::npos)
            << e;
    }
}

// The pad is offered the same sticky caps again before its first buffer: the refusal is one
// error, not one per offer.
TEST_F(TensorBatchInput, NegativeCapsRefusedAreOneErrorNotOnePerOffer)
{
    ASSERT_TRUE(load_system_plugin("videotestsrc")); // tensortestsrc makes progressive frames
    const std::vector<std::string> errors =
        errors_posted_by("videotestsrc num-buffers=3 ! "
                         "video/x-raw,format=NV12,width=64,height=48,interlace-mode=interleaved ! "
                         "tensorbatch name=b batch-size=1 width=16 height=16 ! fakesink",
                         "b");
    ASSERT_EQ(errors.size(), 1u) << (errors.empty() ? "" : errors[0] + " / " + errors.back());
    EXPECT_NE(errors[0].find("sink_0: tensorbatch needs progressive video"), std::string::npos)
        << errors[0];
}

// More pads than slots: the one beyond the bound is refused when requested; pads requested
// before batch-size was lowered stop the start, naming both numbers.
TEST_F(TensorBatchInput, NegativeMorePadsThanSlotsAreRefused)
{
    GstElement* e = gst_element_factory_make("tensorbatch", nullptr);
    ASSERT_TRUE(e);
    GstBus* bus = gst_bus_new();
    gst_element_set_bus(e, bus);
    g_object_set(e, "batch-size", 3u, "width", 16u, "height", 16u, nullptr);
    for (int i = 0; i < 3; ++i) {
        GstPad* p = gst_element_request_pad_simple(e, "sink_%u");
        ASSERT_TRUE(p);
        gst_object_unref(p);
    }
    EXPECT_EQ(gst_element_request_pad_simple(e, "sink_%u"), nullptr);
    g_object_set(e, "batch-size", 2u, nullptr);
    EXPECT_EQ(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    std::string errors;
    while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
        GError* err = nullptr;
        gst_message_parse_error(m, &err, nullptr);
        errors += err ? err->message : "";
        g_clear_error(&err);
        gst_message_unref(m);
    }
    EXPECT_NE(errors.find("3 sink pads are requested but batch-size=2"), std::string::npos)
        << errors;
    gst_element_set_state(e, GST_STATE_NULL);
    gst_bus_set_flushing(bus, TRUE);
    gst_object_unref(bus);
    gst_object_unref(e);
}

TEST_F(TensorBatchInput, NegativeARefusedRoiLabelsValueWarnsAndStopsTheStart)
{
    LogCapture warnings(nullptr, G_LOG_LEVEL_WARNING);
    const PipelineRun r = run_launch(
        "tensorbatch name=b mode=roi width=16 height=16 roi-labels=person,,car ! fakesink "
        "tensortestsrc num-buffers=1 ! video/x-raw,format=NV12,width=64,height=48 ! b.sink_0");
    EXPECT_FALSE(r.eos);
    EXPECT_NE(r.errors.find("roi-labels \"person,,car\""), std::string::npos) << r.errors;
    EXPECT_NE(warnings.text().find("an empty label"), std::string::npos) << warnings.text();
}

// A buffer smaller than its caps say is dropped (its slot empty) with a warning naming it.
TEST_F(TensorBatchInput, NegativeABufferThatDoesNotMatchItsCapsLeavesItsSlotEmpty)
{
    BatchHarness b("batch-size=1 width=16 height=16");
    gst_harness_set_src_caps_str(b.out(), "video/x-raw,format=NV12,width=64,height=48");
    BufferPtr small(gst_buffer_new_allocate(nullptr, 100, nullptr));
    ASSERT_EQ(b.push(0, small.get(), 0), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(b.out()));
    ASSERT_TRUE(out);
    const GstEdgeTensorBatchMeta* m = gst_buffer_get_edge_tensor_batch_meta(out.get());
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->slots[0].filled);
    const std::string w = b.messages(GST_MESSAGE_WARNING);
    EXPECT_NE(w.find("sink_0: a buffer does not match its caps"), std::string::npos) << w;
    EXPECT_EQ(b.stat("dropped"), 1u);
}

} // namespace
} // namespace edgetensor::test
