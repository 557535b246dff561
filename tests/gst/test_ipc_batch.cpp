// SPDX-License-Identifier: MIT
//
// tensorbatch's per-slot provenance (GstEdgeTensorBatchMeta) through tensoripcsink/tensoripcsrc,
// on every GStreamer version: every field of every slot arrives as the sender had it (the ROI
// label by its string), a real tensorbatch's batch maps a slot's box back to its frame on the
// receiving side, and a record the receiver would refuse is left out while the frame still goes.

#include "glib_raii.hpp"
#include "gst_tensor_meta.hpp"
#include "ipc_test_util.hpp"

#include <gst/app/gstappsink.h>
#include <gst/edgetensor/edgetensor.h>

#include <string>

namespace edgetensor::test
{
namespace
{

constexpr const char* kSmallNv12 = "video/x-raw,format=NV12,width=64,height=32,framerate=30/1";
constexpr int kFrames = 6;

// Frame n's provenance: a letterboxed whole frame from pad 2, a ROI of the analytics meta with
// a label, and an empty slot; `bad` puts the ROI's crop outside its source.
GstPadProbeReturn add_batch_meta(GstPad*, GstPadProbeInfo* info, gpointer bad)
{
    GstBuffer* buf = gst_buffer_make_writable(GST_PAD_PROBE_INFO_BUFFER(info));
    GST_PAD_PROBE_INFO_DATA(info) = buf;
    const guint n = guint(GST_BUFFER_OFFSET(buf));
    GstEdgeTensorBatchMeta* m = gst_buffer_add_edge_tensor_batch_meta(buf, 3, 640, 640);
    GstEdgeTensorBatchSlot& frame = m->slots[0];
    frame.filled = TRUE;
    frame.pad_index = 2;
    frame.pts = 1000 + n;
    frame.source_width = 1920;
    frame.source_height = 1080;
    frame.crop_width = 1920;
    frame.crop_height = 1080;
    frame.scale_x = frame.scale_y = 1.0 / 3.0;
    frame.pad_top = 140;
    frame.pad_bottom = 140;
    frame.applied_colorimetry = 0x0a0b0c0d;
    GstEdgeTensorBatchSlot& roi = m->slots[1];
    roi = frame;
    roi.pad_index = 0;
    roi.crop_x = 100 + n;
    roi.crop_y = 50;
    roi.crop_width = 300;
    roi.crop_height = bad ? 1080 : 200;
    roi.scale_x = 640.0 / 300.0;
    roi.scale_y = 0.5;
    roi.pad_top = roi.pad_bottom = 0;
    roi.pad_left = 7;
    roi.pad_right = 9;
    roi.roi_kind = GST_EDGE_TENSOR_BATCH_ROI_ANALYTICS;
    roi.roi_id = 40 + gint(n);
    roi.roi_label = g_quark_from_string("person");
    // With a bad record, on 1.26+ also a GstTensorMeta (the frame's own bytes), which must still
    // go when the batch record is left out.
    if (bad && gst::have_gst_tensor_meta()) {
        const size_t dims[] = {gst_buffer_get_size(buf)};
        EXPECT_TRUE(gst::describe_buffer_as_gst_tensor(buf, "frame", DType::U8, dims));
    }
    return GST_PAD_PROBE_OK;
}

class GstIpcBatch : public ::testing::Test
{
protected:
    static void SetUpTestSuite() { load_system_plugins(); }
};

struct Link {
    SocketDir dir;
    Pipeline tx;
    Pipeline rx;
    Link(const std::string& producer, gpointer bad)
        : tx(producer +
             " ! tensoripcsink name=sink block=true wait-for-connection=true sync=false "
             "socket-path=" +
             dir.path()),
          rx("tensoripcsrc name=src socket-path=" + dir.path() +
             " ! appsink name=out sync=false max-buffers=4 enable-last-sample=false")
    {
        if (producer.find("tensorbatch") == std::string::npos) {
            GstObjectPtr<GstPad> pad(gst_element_get_static_pad(tx.by_name("sink"), "sink"));
            gst_pad_add_probe(pad.get(), GST_PAD_PROBE_TYPE_BUFFER, add_batch_meta, bad, nullptr);
        }
    }
    void play() const
    {
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    }
    void expect_eos_and_nothing_rejected() const
    {
        auto eos = rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 5s);
        ASSERT_TRUE(eos);
        EXPECT_EQ(GST_MESSAGE_TYPE(eos.get()), GST_MESSAGE_EOS) << message_text(eos.get());
        EXPECT_EQ(u64_property(rx.by_name("src"), "rejected"), 0u);
    }
};

TEST_F(GstIpcBatch, EverySlotFieldArrivesAsTheSenderHadIt)
{
    Link link("tensortestsrc num-buffers=" + std::to_string(kFrames) + " pattern=frame-counter ! " +
                  kSmallNv12,
              nullptr);
    link.play();
    for (guint n = 0; n < guint(kFrames); ++n) {
        SCOPED_TRACE(n);
        MiniObjectPtr<GstSample> s = pull(link.rx);
        ASSERT_TRUE(s);
        GstBuffer* b = gst_sample_get_buffer(s.get());
        ASSERT_EQ(GST_BUFFER_OFFSET(b), n);
        const GstEdgeTensorBatchMeta* m = gst_buffer_get_edge_tensor_batch_meta(b);
        ASSERT_TRUE(m) << "the provenance did not travel";
        ASSERT_EQ(m->n_slots, 3u);
        EXPECT_EQ(m->slot_width, 640u);
        EXPECT_EQ(m->slot_height, 640u);
        const GstEdgeTensorBatchSlot& f = m->slots[0];
        EXPECT_TRUE(f.filled);
        EXPECT_EQ(f.pad_index, 2u);
        EXPECT_EQ(f.pts, 1000u + n);
        EXPECT_EQ(f.source_width, 1920u);
        EXPECT_EQ(f.source_height, 1080u);
        EXPECT_EQ(f.crop_width, 1920u);
        EXPECT_EQ(f.scale_x, 1.0 / 3.0);
        EXPECT_EQ(f.pad_top, 140u);
        EXPECT_EQ(f.pad_bottom, 140u);
        EXPECT_EQ(f.roi_kind, guint(GST_EDGE_TENSOR_BATCH_ROI_NONE));
        EXPECT_EQ(f.roi_id, -1) << "a new slot's, as the sender left it";
        EXPECT_EQ(f.roi_label, 0u);
        EXPECT_EQ(f.applied_colorimetry, 0x0a0b0c0du);
        const GstEdgeTensorBatchSlot& r = m->slots[1];
        EXPECT_TRUE(r.filled);
        EXPECT_EQ(r.pad_index, 0u);
        EXPECT_EQ(r.crop_x, 100u + n);
        EXPECT_EQ(r.crop_y, 50u);
        EXPECT_EQ(r.crop_width, 300u);
        EXPECT_EQ(r.crop_height, 200u);
        EXPECT_EQ(r.scale_x, 640.0 / 300.0);
        EXPECT_EQ(r.scale_y, 0.5);
        EXPECT_EQ(r.pad_left, 7u);
        EXPECT_EQ(r.pad_right, 9u);
        EXPECT_EQ(r.roi_kind, guint(GST_EDGE_TENSOR_BATCH_ROI_ANALYTICS));
        EXPECT_EQ(r.roi_id, 40 + gint(n));
        EXPECT_STREQ(gst_edge_tensor_batch_slot_get_roi_label(&r), "person");
        const GstEdgeTensorBatchSlot& e = m->slots[2];
        EXPECT_FALSE(e.filled);
        EXPECT_EQ(e.pts, GST_CLOCK_TIME_NONE);
        EXPECT_EQ(e.roi_id, -1);
    }
    link.expect_eos_and_nothing_rejected();
}

// A real batch: on the receiving side the slot's picture maps back onto the whole source frame
// (320x240 letterboxed into 64x64: scale 0.2, 8 rows of padding above and below).
TEST_F(GstIpcBatch, ATensorbatchSlotMapsBackToItsFrameInTheReceiver)
{
    Link link("tensortestsrc num-buffers=" + std::to_string(kFrames) +
                  " pattern=frame-counter ! "
                  "video/x-raw,format=NV12,width=320,height=240,framerate=30/1,colorimetry=bt709 "
                  "! tensorbatch batch-size=1 width=64 height=64 letterbox=true",
              nullptr);
    link.play();
    for (int n = 0; n < kFrames; ++n) {
        SCOPED_TRACE(n);
        MiniObjectPtr<GstSample> s = pull(link.rx);
        ASSERT_TRUE(s);
        const GstEdgeTensorBatchMeta* m =
            gst_buffer_get_edge_tensor_batch_meta(gst_sample_get_buffer(s.get()));
        ASSERT_TRUE(m);
        ASSERT_EQ(m->n_slots, 1u);
        const GstEdgeTensorBatchSlot* slot = gst_edge_tensor_batch_meta_get_slot(m, 0);
        ASSERT_TRUE(slot->filled);
        EXPECT_EQ(slot->pts, GstClockTime(n) * GST_SECOND / 30);
        EXPECT_TRUE(picture_maps_onto_frame(slot, 8, 64, 48, 320, 240));
    }
    link.expect_eos_and_nothing_rejected();
}

// A producer's provenance whose crop leaves its source cannot be mapped back: the sink leaves
// it out (it would make the receiver refuse the frame), and the frames still arrive with their
// other metas.
TEST_F(GstIpcBatch, ARecordTheReceiverWouldRefuseIsLeftOutAndTheFrameGoes_Negative)
{
    static int bad = 1;
    Link link("tensortestsrc num-buffers=" + std::to_string(kFrames) + " pattern=frame-counter ! " +
                  kSmallNv12,
              &bad);
    link.play();
    for (int n = 0; n < kFrames; ++n) {
        MiniObjectPtr<GstSample> s = pull(link.rx);
        ASSERT_TRUE(s) << "frame " << n;
        GstBuffer* b = gst_sample_get_buffer(s.get());
        EXPECT_EQ(gst_buffer_get_edge_tensor_batch_meta(b), nullptr);
        EXPECT_TRUE(frame_counter_content(b));
        EXPECT_EQ(gst::read_gst_tensor_metas(b).size(), gst::have_gst_tensor_meta() ? 1u : 0u)
            << "the other metas still go";
    }
    link.expect_eos_and_nothing_rejected();
}

} // namespace
} // namespace edgetensor::test
