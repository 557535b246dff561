// SPDX-License-Identifier: MIT
//
// tensorbatch's ROI selection without a pipeline (gst/elements/tensorbatch_roi.cpp, compiled in:
// the plugin's symbols are hidden): regions read from the metas, refused when they do not lie
// inside the frame (never clamped), filtered by label and size, split into batches.

#include "tensorbatch_roi.hpp"

#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace edgetensor::gst::tensorbatch
{
namespace
{

RawRoi raw(int64_t x, int64_t y, int64_t w, int64_t h, const char* label, gint id)
{
    RawRoi r;
    r.x = x;
    r.y = y;
    r.width = w;
    r.height = h;
    r.id = id;
    r.label = label ? g_quark_from_string(label) : 0;
    return r;
}

TEST(TensorBatchRoiSelect, RegionsOutsideOrEmptyAreRefusedByNameNeverClamped)
{
    const std::vector<RawRoi> in = {raw(0, 0, 320, 240, "all", 1), raw(-1, 0, 10, 10, "a", 2),
                                    raw(300, 0, 21, 10, "b", 3),   raw(0, 230, 10, 11, "c", 4),
                                    raw(10, 10, 0, 5, nullptr, 5), raw(319, 239, 1, 1, "px", 6)};
    const FrameRois f = select_rois(in, 320, 240, RoiFilter{});
    ASSERT_EQ(f.accepted.size(), 2u);
    EXPECT_EQ(f.accepted[0].id, 1);
    EXPECT_EQ(f.accepted[1].id, 6);
    EXPECT_EQ(f.accepted[1].rect.x, 319u);
    ASSERT_EQ(f.refused.size(), 4u);
    EXPECT_EQ(f.refused[0], "ROI 2 (a) at -1,0 10x10 does not lie inside the 320x240 frame");
    EXPECT_EQ(f.refused[1], "ROI 3 (b) at 300,0 21x10 does not lie inside the 320x240 frame");
    EXPECT_EQ(f.refused[3], "ROI 5 at 10,10 0x5 is empty");
    EXPECT_EQ(f.filtered, 0u);
}

TEST(TensorBatchRoiSelect, LabelsAndMinimumSizeFilter)
{
    const std::vector<RawRoi> in = {raw(0, 0, 50, 50, "person", 1), raw(0, 0, 50, 50, "car", 2),
                                    raw(0, 0, 49, 80, "person", 3), raw(0, 0, 60, 60, nullptr, 4)};
    RoiFilter f;
    f.labels = {"person"};
    f.min_size = 50;
    const FrameRois r = select_rois(in, 100, 100, f);
    ASSERT_EQ(r.accepted.size(), 1u);
    EXPECT_EQ(r.accepted[0].id, 1);
    EXPECT_EQ(r.filtered, 3u);
    EXPECT_TRUE(r.refused.empty());
    // No label list: every label, unlabelled ones too.
    EXPECT_EQ(select_rois(in, 100, 100, RoiFilter{}).accepted.size(), 4u);
}

TEST(TensorBatchRoiSelect, RegionsSplitIntoFullBatchesAndOneRest)
{
    EXPECT_EQ(batch_split(0, 4), std::vector<size_t>{});
    EXPECT_EQ(batch_split(3, 4), std::vector<size_t>{3});
    EXPECT_EQ(batch_split(4, 4), std::vector<size_t>{4});
    EXPECT_EQ(batch_split(10, 4), (std::vector<size_t>{4, 4, 2}));
    EXPECT_EQ(batch_split(16, 16), std::vector<size_t>{16});
}

TEST(TensorBatchRoiSelect, VideoRoiMetasAreReadInOrder)
{
    GstBuffer* b = gst_buffer_new();
    auto* m1 = gst_buffer_add_video_region_of_interest_meta(b, "face", 1, 2, 3, 4);
    m1->id = 9;
    gst_buffer_add_video_region_of_interest_meta(b, "hand", 5, 6, 7, 8);
    const std::vector<RawRoi> r = rois_of(b);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].id, 9);
    EXPECT_STREQ(g_quark_to_string(r[0].label), "face");
    EXPECT_EQ(r[0].kind, GST_EDGE_TENSOR_BATCH_ROI_VIDEO);
    EXPECT_EQ(r[1].x, 5);
    EXPECT_EQ(r[1].height, 8);
    gst_buffer_unref(b);
}

// A pad keeps at least one batch's region converters: with fewer, the LRU order empties the
// cache every frame (16 fixed regions into 8 converters made every one again each frame).
TEST(TensorBatchRoiSelect, APadKeepsAtLeastOneBatchOfRegionConverters)
{
    EXPECT_EQ(roi_converter_capacity(1), kRoiConverters);
    EXPECT_EQ(roi_converter_capacity(8), 8u);
    EXPECT_EQ(roi_converter_capacity(16), 16u);
    EXPECT_EQ(roi_converter_capacity(1024), kRoiConvertersMax);
}

} // namespace
} // namespace edgetensor::gst::tensorbatch
