// SPDX-License-Identifier: MIT
//
// The provenance and quantization records on converted tensors: GstEdgeTensorBatchMeta (its C
// API, copies, the mapping of a slot point or box back to the source frame) and the
// GstEdgeTensorMeta quantization fields, whose addition keeps the struct's size and older
// offsets; and tensorconvert's batch of one, whose slot maps a box it converted back to the
// frame it came from; and on GStreamer 1.26+ the GstTensorMeta that each batch, and each
// other/tensors output of tensorconvert, describes itself with.

#include "element_harness.hpp"
#include "gst_tensor_meta.hpp"
#include "tensorbatch_test_util.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

#if GLIB_SIZEOF_VOID_P == 8
// The layout of 0.1.0 on LP64: the quantization fields came out of _gst_reserved.
static_assert(sizeof(GstEdgeTensorMeta) == 456);
static_assert(offsetof(GstEdgeTensorMeta, identity) == 16);
static_assert(offsetof(GstEdgeTensorMeta, memory_kind) == 24);
static_assert(offsetof(GstEdgeTensorMeta, desc) == 32);
static_assert(offsetof(GstEdgeTensorMeta, video_format) == 224);
static_assert(offsetof(GstEdgeTensorMeta, width) == 228);
static_assert(offsetof(GstEdgeTensorMeta, height) == 232);
static_assert(offsetof(GstEdgeTensorMeta, n_planes) == 236);
static_assert(offsetof(GstEdgeTensorMeta, plane_offsets) == 240);
static_assert(offsetof(GstEdgeTensorMeta, plane_strides) == 272);
static_assert(offsetof(GstEdgeTensorMeta, flags) == 288);
static_assert(offsetof(GstEdgeTensorMeta, applied_colorimetry) == 292);
static_assert(offsetof(GstEdgeTensorMeta, quant_scale) == 296);
static_assert(offsetof(GstEdgeTensorMeta, quant_zero_point) == 300);
#endif

TEST(TensorBatchMeta, NewSlotsAreEmptyAndTheApiReadsThem)
{
    BufferPtr buf(gst_buffer_new());
    EXPECT_FALSE(gst_buffer_get_edge_tensor_batch_meta(buf.get()));
    GstEdgeTensorBatchMeta* m = gst_buffer_add_edge_tensor_batch_meta(buf.get(), 3, 224, 160);
    ASSERT_TRUE(m);
    EXPECT_EQ(gst_buffer_get_edge_tensor_batch_meta(buf.get()), m);
    EXPECT_EQ(gst_edge_tensor_batch_meta_get_n_slots(m), 3u);
    EXPECT_EQ(m->slot_width, 224u);
    EXPECT_EQ(m->slot_height, 160u);
    for (guint i = 0; i < 3; ++i) {
        const GstEdgeTensorBatchSlot* s = gst_edge_tensor_batch_meta_get_slot(m, i);
        ASSERT_TRUE(s);
        EXPECT_FALSE(s->filled);
        EXPECT_EQ(s->roi_id, -1);
        EXPECT_EQ(s->pts, GST_CLOCK_TIME_NONE);
        EXPECT_EQ(gst_edge_tensor_batch_slot_get_roi_label(s), nullptr);
        gdouble x = -1;
        EXPECT_FALSE(gst_edge_tensor_batch_slot_to_source(s, 1, 1, &x, nullptr))
            << "an empty slot maps nothing";
        EXPECT_EQ(x, -1);
    }
    EXPECT_EQ(gst_edge_tensor_batch_meta_get_slot(m, 3), nullptr);
}

TEST(TensorBatchMeta, NegativeSlotCountsOutsideTheBoundAreRefused)
{
    BufferPtr buf(gst_buffer_new());
    // g_return_val_if_fail's critical, counted instead of printed.
    guint criticals = 0;
    const guint id = g_log_set_handler(
        nullptr, G_LOG_LEVEL_CRITICAL,
        [](const gchar*, GLogLevelFlags, const gchar*, gpointer n) { ++*static_cast<guint*>(n); },
        &criticals);
    EXPECT_EQ(gst_buffer_add_edge_tensor_batch_meta(buf.get(), 0, 8, 8), nullptr);
    EXPECT_EQ(
        gst_buffer_add_edge_tensor_batch_meta(buf.get(), GST_EDGE_TENSOR_BATCH_MAX_SLOTS + 1, 8, 8),
        nullptr);
    g_log_remove_handler(nullptr, id);
    EXPECT_EQ(criticals, 2u);
    EXPECT_FALSE(gst_buffer_get_edge_tensor_batch_meta(buf.get()));
    EXPECT_TRUE(
        gst_buffer_add_edge_tensor_batch_meta(buf.get(), GST_EDGE_TENSOR_BATCH_MAX_SLOTS, 8, 8));
}

TEST(TensorBatchMeta, APointAndABoxMapBackThroughCropScaleAndPadding)
{
    BufferPtr buf(gst_buffer_new());
    GstEdgeTensorBatchMeta* m = gst_buffer_add_edge_tensor_batch_meta(buf.get(), 1, 100, 100);
    ASSERT_TRUE(m);
    GstEdgeTensorBatchSlot* s = &m->slots[0];
    // A 400x200 crop at (40, 30) letterboxed into 100x100: scale 0.25, 25 rows above and below.
    s->filled = TRUE;
    s->crop_x = 40;
    s->crop_y = 30;
    s->crop_width = 400;
    s->crop_height = 200;
    s->scale_x = 0.25;
    s->scale_y = 0.25;
    s->pad_top = 25;
    s->pad_bottom = 25;
    s->roi_label = g_quark_from_static_string("person");
    gdouble x = 0, y = 0;
    ASSERT_TRUE(gst_edge_tensor_batch_slot_to_source(s, 50, 50, &x, &y));
    EXPECT_DOUBLE_EQ(x, 240.0); // the centre of the crop
    EXPECT_DOUBLE_EQ(y, 130.0);
    ASSERT_TRUE(gst_edge_tensor_batch_slot_to_source(s, 0, 25, &x, &y));
    EXPECT_DOUBLE_EQ(x, 40.0); // the crop's corner
    EXPECT_DOUBLE_EQ(y, 30.0);
    gdouble bx = 0, by = 0, bw = 0, bh = 0;
    ASSERT_TRUE(gst_edge_tensor_batch_slot_box_to_source(s, 10, 30, 20, 10, &bx, &by, &bw, &bh));
    EXPECT_DOUBLE_EQ(bx, 80.0);
    EXPECT_DOUBLE_EQ(by, 50.0);
    EXPECT_DOUBLE_EQ(bw, 80.0);
    EXPECT_DOUBLE_EQ(bh, 40.0);
    EXPECT_STREQ(gst_edge_tensor_batch_slot_get_roi_label(s), "person");
}

TEST(TensorBatchMeta, CopiesOfTheBufferKeepTheSlotsAndTheBoxedSlotCopies)
{
    BufferPtr buf(gst_buffer_new_allocate(nullptr, 16, nullptr));
    GstEdgeTensorBatchMeta* m = gst_buffer_add_edge_tensor_batch_meta(buf.get(), 2, 8, 4);
    ASSERT_TRUE(m);
    m->slots[1].filled = TRUE;
    m->slots[1].pad_index = 7;
    m->slots[1].pts = 42;
    for (GstBuffer* copy : {gst_buffer_copy(buf.get()), gst_buffer_copy_deep(buf.get())}) {
        BufferPtr c(copy);
        const GstEdgeTensorBatchMeta* cm = gst_buffer_get_edge_tensor_batch_meta(c.get());
        ASSERT_TRUE(cm);
        EXPECT_NE(cm->slots, m->slots) << "each meta owns its slots";
        EXPECT_EQ(cm->n_slots, 2u);
        EXPECT_TRUE(cm->slots[1].filled);
        EXPECT_EQ(cm->slots[1].pad_index, 7u);
        EXPECT_EQ(cm->slots[1].pts, 42u);
    }
    GstEdgeTensorBatchSlot* boxed = static_cast<GstEdgeTensorBatchSlot*>(
        g_boxed_copy(GST_TYPE_EDGE_TENSOR_BATCH_SLOT, &m->slots[1]));
    EXPECT_EQ(boxed->pad_index, 7u);
    g_boxed_free(GST_TYPE_EDGE_TENSOR_BATCH_SLOT, boxed);
}

TEST(TensorBatchMeta, QuantizationReadsBackOnlyWithTheFlag)
{
    GstEdgeTensorMeta m{};
    gfloat scale = -1;
    gint zp = -1;
    EXPECT_FALSE(gst_edge_tensor_meta_get_quantization(&m, &scale, &zp));
    EXPECT_EQ(scale, 0.f);
    EXPECT_EQ(zp, 0);
    m.quant_scale = 0.5f;
    m.quant_zero_point = 3;
    EXPECT_FALSE(gst_edge_tensor_meta_get_quantization(&m, &scale, &zp)) << "no flag, no values";
    m.flags = GST_EDGE_TENSOR_META_FLAG_QUANTIZED;
    EXPECT_TRUE(gst_edge_tensor_meta_get_quantization(&m, &scale, &zp));
    EXPECT_EQ(scale, 0.5f);
    EXPECT_EQ(zp, 3);
}

// tensorconvert's batch of one: the box it converted maps back to where it was in the frame,
// through the crop and the letterbox, from the buffer alone.
TEST(TensorConvertProvenance, ABoxInTheOutputMapsBackToTheFrame)
{
    const char* caps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";
    const Box drawn{96, 64, 64, 48};
    for (const char* props :
         {"width=160 height=160 letterbox=true", "width=160 height=160 crop=32,16,288,208",
          "width=160 height=160 letterbox=true crop=32,16,288,208"}) {
        SCOPED_TRACE(props);
        ElementHarness t(std::string("tensorconvert ") + props);
        gst_harness_set_src_caps_str(t.get(), caps);
        BufferPtr in = frame_with_box(caps, drawn);
        GST_BUFFER_PTS(in.get()) = 5 * GST_SECOND;
        ASSERT_EQ(gst_harness_push(t.get(), gst_buffer_ref(in.get())), GST_FLOW_OK)
            << t.messages(GST_MESSAGE_ERROR);
        BufferPtr out(gst_harness_pull(t.get()));
        ASSERT_TRUE(out);
        const GstEdgeTensorBatchMeta* m = gst_buffer_get_edge_tensor_batch_meta(out.get());
        ASSERT_TRUE(m);
        ASSERT_EQ(m->n_slots, 1u);
        EXPECT_EQ(m->slot_width, 160u);
        EXPECT_EQ(m->slot_height, 160u);
        const GstEdgeTensorBatchSlot* s = gst_edge_tensor_batch_meta_get_slot(m, 0);
        EXPECT_TRUE(s->filled);
        EXPECT_EQ(s->pts, 5 * GST_SECOND);
        EXPECT_EQ(s->source_width, 320u);
        EXPECT_EQ(s->source_height, 240u);
        EXPECT_EQ(s->roi_id, -1);
        const std::vector<uint8_t> bytes = buffer_bytes(out.get());
        ASSERT_EQ(bytes.size(), size_t(160 * 160 * 3));
        const Box found = bright_box(bytes.data(), 160, 160, 3);
        // A source pixel is about two slot pixels here: one slot pixel either way at an edge.
        expect_maps_back(s, found, drawn, 2.0 / std::min(s->scale_x, s->scale_y) / 2 + 1);
        GstEdgeTensorMeta* tm = gst_buffer_get_edge_tensor_meta(out.get());
        ASSERT_TRUE(tm);
        EXPECT_FALSE(gst_edge_tensor_meta_get_quantization(tm, nullptr, nullptr));
        EXPECT_EQ(t.messages(GST_MESSAGE_ERROR), "");
    }
}

// Issue 23 item 1: on GStreamer 1.26+ a batch also describes itself to GStreamer's own tensor
// readers, in a GstTensorMeta of one tensor named after the element, [N, ...] of the caps'
// type, whose data is the batch's own memory (no copy). The meta leaves with the batch, so the
// pool gets its memory back unshared and reuses the buffer instead of allocating another. On
// 1.22 there is no such meta and none is attached.
TEST(TensorBatchGstTensorMeta, EachBatchDescribesItselfInItsOwnMemory)
{
    const char* caps =
        "video/x-raw,format=NV12,width=320,height=240,framerate=30/1,colorimetry=bt709";
    BatchHarness b("name=crops batch-size=2 width=64 height=48 layout=chw dtype=float32", 2);
    gst_harness_set_src_caps_str(b.pads[0], caps);
    gst_harness_set_src_caps_str(b.pads[1], caps);
    constexpr size_t kBytes = 2 * 3 * 48 * 64 * sizeof(float);
    std::set<guint64> identities;
    for (guint frame = 0; frame < 6; ++frame) {
        SCOPED_TRACE(frame);
        ASSERT_EQ(b.push(0, pattern_frame(caps, frame).get(), frame * 33 * GST_MSECOND),
                  GST_FLOW_OK);
        ASSERT_EQ(b.push(1, pattern_frame(caps, frame + 9).get(), frame * 33 * GST_MSECOND),
                  GST_FLOW_OK);
        BufferPtr out(gst_harness_pull(b.out()));
        ASSERT_TRUE(out) << b.messages(GST_MESSAGE_ERROR);
        const GstEdgeTensorMeta* em = gst_buffer_get_edge_tensor_meta(out.get());
        ASSERT_TRUE(em);
        identities.insert(em->identity);
        std::vector<gst::TensorRecord> recs = gst::read_gst_tensor_metas(out.get());
        if (!gst::have_gst_tensor_meta()) {
            EXPECT_TRUE(recs.empty());
            continue;
        }
        ASSERT_EQ(recs.size(), 1u) << b.messages(GST_MESSAGE_WARNING);
        const gst::TensorRecord& t = recs[0];
        EXPECT_EQ(t.id, "crops") << "the element's name, as tensorconvert's riding tensor";
        EXPECT_EQ(t.dtype, DType::F32);
        EXPECT_EQ(t.dims, (std::vector<size_t>{2, 3, 48, 64}));
        EXPECT_EQ(t.order, gst::TensorDimOrder::RowMajor);
        ASSERT_TRUE(t.data);
        ASSERT_EQ(gst_buffer_n_memory(t.data.get()), gst_buffer_n_memory(out.get()));
        EXPECT_EQ(gst_buffer_peek_memory(t.data.get(), 0), gst_buffer_peek_memory(out.get(), 0))
            << "the batch's own memory, not a copy";
        std::vector<uint8_t> batch_bytes = buffer_bytes(out.get());
        batch_bytes.resize(kBytes);
        std::vector<uint8_t> tensor_bytes = buffer_bytes(t.data.get());
        ASSERT_GE(tensor_bytes.size(), kBytes);
        tensor_bytes.resize(kBytes);
        EXPECT_TRUE(tensor_bytes == batch_bytes);
    }
    EXPECT_LE(identities.size(), 2u) << "a batch pool that allocated " << identities.size()
                                     << " buffers for 6 batches taken one at a time";
    EXPECT_EQ(b.stat("copies"), 0u);
    EXPECT_EQ(b.messages(GST_MESSAGE_ERROR), "");
    EXPECT_EQ(b.messages(GST_MESSAGE_WARNING), "");
}

// tensorconvert's other/tensors output describes itself the same way; a video/x-raw output is a
// picture and carries no GstTensorMeta.
TEST(TensorConvertGstTensorMeta, ATensorOutputDescribesItselfAndAPictureDoesNot)
{
    const char* caps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1,"
                       "colorimetry=sRGB";
    for (const char* downstream : {"other/tensors", "video/x-raw,format=RGB"}) {
        SCOPED_TRACE(downstream);
        const bool tensors = std::string(downstream) == "other/tensors";
        ElementHarness t("tensorconvert name=image width=64 height=48");
        gst_harness_set_src_caps_str(t.get(), caps);
        gst_harness_set_sink_caps_str(t.get(), downstream);
        std::set<guint64> identities;
        for (guint frame = 0; frame < 4; ++frame) {
            BufferPtr in = pattern_frame(caps, frame);
            ASSERT_EQ(gst_harness_push(t.get(), gst_buffer_ref(in.get())), GST_FLOW_OK)
                << t.messages(GST_MESSAGE_ERROR);
            BufferPtr out(gst_harness_pull(t.get()));
            ASSERT_TRUE(out);
            if (const GstEdgeTensorMeta* em = gst_buffer_get_edge_tensor_meta(out.get()))
                identities.insert(em->identity);
            std::vector<gst::TensorRecord> recs = gst::read_gst_tensor_metas(out.get());
            if (!gst::have_gst_tensor_meta() || !tensors) {
                EXPECT_TRUE(recs.empty());
                continue;
            }
            ASSERT_EQ(recs.size(), 1u);
            EXPECT_EQ(recs[0].id, "image");
            EXPECT_EQ(recs[0].dtype, DType::U8);
            EXPECT_EQ(recs[0].dims, (std::vector<size_t>{1, 48, 64, 3}));
            ASSERT_TRUE(recs[0].data);
            EXPECT_EQ(gst_buffer_peek_memory(recs[0].data.get(), 0),
                      gst_buffer_peek_memory(out.get(), 0));
        }
        EXPECT_LE(identities.size(), 2u) << "the pool reuses its buffers";
        EXPECT_EQ(t.messages(GST_MESSAGE_ERROR), "");
    }
}

} // namespace
} // namespace edgetensor::test
