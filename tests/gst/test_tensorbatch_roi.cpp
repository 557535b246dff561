// SPDX-License-Identifier: MIT
//
// tensorbatch mode=roi (issue 23 item 4): the regions of interest of one stream's frames fill
// the slots, from GstVideoRegionOfInterestMeta (every GStreamer) and object detections of
// GstAnalyticsRelationMeta (1.24+, the compat lanes); more regions than slots make more
// batches of the same frame; each slot names its region and maps back to the frame; roi-labels
// and roi-min-size filter; a region outside the frame is refused by name, the others batched.

#include "fd_count.hpp"
#include "tensorbatch_test_util.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#if EDGETENSOR_HAVE_GST_ANALYTICS && GST_CHECK_VERSION(1, 24, 0)
#include <gst/analytics/analytics.h>
#define HAVE_ANALYTICS 1
#endif

#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

constexpr const char* kRgb = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";
constexpr size_t kSlotBytes = 32 * 32 * 3;

struct RoiCase {
    const char* label;
    gint id;
    Box box;
};

// A frame with a bright box inside each region (8 pixels in from its edges), and a
// GstVideoRegionOfInterestMeta per region.
BufferPtr frame_with_rois(const std::vector<RoiCase>& regions)
{
    BufferPtr buf = frame_with_box(kRgb, Box{});
    GstVideoInfo info;
    CapsPtr caps = caps_from(kRgb);
    gst_video_info_from_caps(&info, caps.get());
    GstVideoFrame f;
    EXPECT_TRUE(gst_video_frame_map(&f, &info, buf.get(), GST_MAP_WRITE));
    auto* px = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0));
    const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0);
    for (const RoiCase& r : regions) {
        const Box in{r.box.x + 8, r.box.y + 8, r.box.w - 16, r.box.h - 16};
        for (int y = std::max(0, in.y); y < std::min(240, in.y + in.h); ++y)
            for (int x = std::max(0, in.x); x < std::min(320, in.x + in.w); ++x)
                std::memset(px + y * stride + x * 3, 235, 3);
    }
    gst_video_frame_unmap(&f);
    for (const RoiCase& r : regions) {
        GstVideoRegionOfInterestMeta* m = gst_buffer_add_video_region_of_interest_meta(
            buf.get(), r.label, guint(r.box.x), guint(r.box.y), guint(r.box.w), guint(r.box.h));
        m->id = r.id;
    }
    return buf;
}

const GstEdgeTensorBatchSlot* slot_of(GstBuffer* b, guint i)
{
    const GstEdgeTensorBatchMeta* m = gst_buffer_get_edge_tensor_batch_meta(b);
    return m ? gst_edge_tensor_batch_meta_get_slot(m, i) : nullptr;
}

// Each filled slot holds its region: the bright box found in it maps back to the box drawn
// inside that region.
void expect_slot_holds(GstBuffer* out, guint i, const RoiCase& r)
{
    SCOPED_TRACE(std::string("slot ") + std::to_string(i) + " region " + std::to_string(r.id));
    const GstEdgeTensorBatchSlot* s = slot_of(out, i);
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->filled);
    EXPECT_EQ(s->roi_kind, guint(GST_EDGE_TENSOR_BATCH_ROI_VIDEO));
    EXPECT_EQ(s->roi_id, r.id);
    EXPECT_STREQ(gst_edge_tensor_batch_slot_get_roi_label(s), r.label);
    EXPECT_EQ(s->crop_x, guint(r.box.x));
    EXPECT_EQ(s->crop_width, guint(r.box.w));
    const std::vector<uint8_t> px = slot_bytes(out, i, kSlotBytes);
    const Box found = bright_box(px.data(), 32, 32, 3);
    expect_maps_back(s, found, Box{r.box.x + 8, r.box.y + 8, r.box.w - 16, r.box.h - 16},
                     1.0 / std::min(s->scale_x, s->scale_y) + 1);
}

TEST(TensorBatchRoi, MoreRegionsThanSlotsMakeMoreBatchesOfTheSameFrame)
{
    BatchHarness b("mode=roi batch-size=2 width=32 height=32 letterbox=true");
    gst_harness_set_src_caps_str(b.out(), kRgb);
    const std::vector<RoiCase> regions = {{"person", 11, {20, 30, 64, 96}},
                                          {"car", 12, {120, 100, 120, 60}},
                                          {"person", 13, {250, 10, 48, 200}}};
    BufferPtr in = frame_with_rois(regions);
    ASSERT_EQ(b.push(0, in.get(), 2 * GST_SECOND), GST_FLOW_OK);
    BufferPtr first(gst_harness_pull(b.out()));
    BufferPtr second(gst_harness_pull(b.out()));
    ASSERT_TRUE(first && second) << b.messages(GST_MESSAGE_ERROR);
    EXPECT_EQ(GST_BUFFER_PTS(first.get()), 2 * GST_SECOND);
    EXPECT_EQ(GST_BUFFER_PTS(second.get()), 2 * GST_SECOND) << "both batches are that frame's";
    expect_slot_holds(first.get(), 0, regions[0]);
    expect_slot_holds(first.get(), 1, regions[1]);
    expect_slot_holds(second.get(), 0, regions[2]);
    ASSERT_TRUE(slot_of(second.get(), 1));
    EXPECT_FALSE(slot_of(second.get(), 1)->filled);
    EXPECT_EQ(slot_bytes(second.get(), 1, kSlotBytes), std::vector<uint8_t>(kSlotBytes, 0));
    EXPECT_EQ(gst_harness_buffers_in_queue(b.out()), 0u);
    EXPECT_EQ(b.stat("rois"), 3u);
    EXPECT_EQ(b.stat("batches"), 2u);
    EXPECT_EQ(b.messages(GST_MESSAGE_ERROR), "");
}

TEST(TensorBatchRoi, LabelsAndMinimumSizeFilterTheRegions)
{
    BatchHarness b("mode=roi batch-size=4 width=32 height=32 roi-labels=person,dog "
                   "roi-min-size=40");
    gst_harness_set_src_caps_str(b.out(), kRgb);
    const std::vector<RoiCase> regions = {{"person", 1, {20, 30, 64, 96}},
                                          {"car", 2, {120, 100, 120, 60}},
                                          {"person", 3, {250, 10, 30, 200}}, // too narrow
                                          {"dog", 4, {100, 170, 60, 60}}};
    ASSERT_EQ(b.push(0, frame_with_rois(regions).get(), 0), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(b.out()));
    ASSERT_TRUE(out);
    EXPECT_EQ(slot_of(out.get(), 0)->roi_id, 1);
    EXPECT_EQ(slot_of(out.get(), 1)->roi_id, 4);
    EXPECT_FALSE(slot_of(out.get(), 2)->filled);
    EXPECT_EQ(b.stat("rois-filtered"), 2u);
}

TEST(TensorBatchRoi, NegativeARegionOutsideTheFrameIsRefusedByNameAndTheOthersBatched)
{
    const auto before = open_fds();
    {
        BatchHarness b("mode=roi batch-size=4 width=32 height=32");
        gst_harness_set_src_caps_str(b.out(), kRgb);
        const std::vector<RoiCase> regions = {{"person", 1, {20, 30, 64, 96}},
                                              {"dog", 7, {300, 200, 50, 50}}};
        ASSERT_EQ(b.push(0, frame_with_rois(regions).get(), 0), GST_FLOW_OK);
        BufferPtr out(gst_harness_pull(b.out()));
        ASSERT_TRUE(out);
        EXPECT_EQ(slot_of(out.get(), 0)->roi_id, 1);
        EXPECT_FALSE(slot_of(out.get(), 1)->filled);
        const std::string w = b.messages(GST_MESSAGE_WARNING);
        EXPECT_NE(w.find("ROI 7 (dog) at 300,200 50x50 does not lie inside the 320x240 frame"),
                  std::string::npos)
            << w;
        EXPECT_EQ(b.stat("rois-refused"), 1u);
        EXPECT_EQ(b.messages(GST_MESSAGE_ERROR), "");
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

TEST(TensorBatchRoi, AFrameWithoutRegionsGivesNoBatch)
{
    BatchHarness b("mode=roi batch-size=2 width=32 height=32");
    gst_harness_set_src_caps_str(b.out(), kRgb);
    ASSERT_EQ(b.push(0, frame_with_rois({}).get(), 0), GST_FLOW_OK);
    ASSERT_EQ(b.push(0, frame_with_rois({{"person", 5, {0, 0, 40, 40}}}).get(), GST_SECOND),
              GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(b.out()));
    ASSERT_TRUE(out);
    EXPECT_EQ(GST_BUFFER_PTS(out.get()), GST_SECOND) << "the first frame gave a batch";
    EXPECT_EQ(slot_of(out.get(), 0)->roi_id, 5);
}

TEST(TensorBatchRoi, NegativeRoiModeWithoutAnOutputSizeOrWithTwoPadsIsRefused)
{
    {
        BatchHarness b("mode=roi batch-size=2", 0);
        EXPECT_EQ(gst_element_set_state(b.element, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
        const std::string e = b.messages(GST_MESSAGE_ERROR);
        EXPECT_NE(e.find("mode=roi needs width and height"), std::string::npos) << e;
    }
    {
        BatchHarness b("mode=roi batch-size=2 width=16 height=16");
        EXPECT_EQ(gst_element_request_pad_simple(b.element, "sink_%u"), nullptr);
        const std::string w = b.messages(GST_MESSAGE_WARNING);
        EXPECT_NE(w.find("mode=roi batches the regions of one stream"), std::string::npos) << w;
    }
}

#ifdef HAVE_ANALYTICS
// GStreamer 1.24+: a detector's GstAnalyticsRelationMeta object detections are regions too.
TEST(TensorBatchRoi, ObjectDetectionsOfTheAnalyticsMetaFillSlots)
{
    BatchHarness b("mode=roi batch-size=2 width=32 height=32 letterbox=true");
    gst_harness_set_src_caps_str(b.out(), kRgb);
    const RoiCase person{"person", 0, {20, 30, 64, 96}};
    BufferPtr in = frame_with_rois({person});
    // Only the analytics meta: drop the ROI meta frame_with_rois() added.
    gpointer state = nullptr;
    while (GstMeta* m = gst_buffer_iterate_meta_filtered(
               in.get(), &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
        gst_buffer_remove_meta(in.get(), m);
        state = nullptr;
    }
    GstAnalyticsRelationMeta* rel = gst_buffer_add_analytics_relation_meta(in.get());
    ASSERT_TRUE(rel);
    GstAnalyticsODMtd od;
    ASSERT_TRUE(gst_analytics_relation_meta_add_od_mtd(rel, g_quark_from_string("person"), 20, 30,
                                                       64, 96, 0.9f, &od));
    GstAnalyticsODMtd outside;
    ASSERT_TRUE(gst_analytics_relation_meta_add_od_mtd(rel, g_quark_from_string("car"), -5, 10, 50,
                                                       50, 0.8f, &outside));
    ASSERT_EQ(b.push(0, in.get(), 0), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(b.out()));
    ASSERT_TRUE(out) << b.messages(GST_MESSAGE_ERROR);
    const GstEdgeTensorBatchSlot* s = slot_of(out.get(), 0);
    ASSERT_TRUE(s && s->filled);
    EXPECT_EQ(s->roi_kind, guint(GST_EDGE_TENSOR_BATCH_ROI_ANALYTICS));
    EXPECT_EQ(s->roi_id, gint(gst_analytics_mtd_get_id(&od)));
    EXPECT_STREQ(gst_edge_tensor_batch_slot_get_roi_label(s), "person");
    const std::vector<uint8_t> px = slot_bytes(out.get(), 0, kSlotBytes);
    expect_maps_back(s, bright_box(px.data(), 32, 32, 3), Box{28, 38, 48, 80},
                     1.0 / std::min(s->scale_x, s->scale_y) + 1);
    EXPECT_FALSE(slot_of(out.get(), 1)->filled) << "the box outside the frame is refused";
    const std::string w = b.messages(GST_MESSAGE_WARNING);
    EXPECT_NE(w.find("object detection"), std::string::npos) << w;
    EXPECT_NE(w.find("(car) at -5,10 50x50 does not lie inside"), std::string::npos) << w;
}
#endif

} // namespace
} // namespace edgetensor::test
