// SPDX-License-Identifier: MIT
//
// tensortestsrc's pattern renderer (table lookups, one packed period, row copies) against the
// plain definition: every row's pixels colour-converted one by one and packed on their own.
// Byte for byte, over every format the element offers, odd and even sizes, every pattern,
// several frame numbers, both matrices and ranges, and a negative-stride frame.

#include "gsttensortestsrc.h"
#include "testsrc_patterns.hpp"

#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace
{

std::array<guint8, 4> reference_pixel(GstTensorTestSrcPattern p, gint x, gint y, guint64 n,
                                      const GstVideoInfo& info)
{
    guint8 r = 0, g = 0, b = 0;
    if (p == GST_TENSOR_TEST_SRC_GRADIENT) {
        r = guint8((guint64(x) + n) & 0xff);
        g = guint8(y & 0xff);
        b = 128;
    } else if (p == GST_TENSOR_TEST_SRC_CHECKERS) {
        r = g = b = ((x / 8 + y / 8) & 1) ? 255 : 0;
    } else if (p == GST_TENSOR_TEST_SRC_WHITE) {
        r = g = b = 255;
    }
    if (!GST_VIDEO_INFO_IS_YUV(&info))
        return {255, r, g, b};
    gdouble kr = 0.299, kb = 0.114;
    if (!gst_video_color_matrix_get_Kr_Kb(info.colorimetry.matrix, &kr, &kb)) {
        kr = 0.299;
        kb = 0.114;
    }
    const bool full = info.colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
    const double ys = full ? 1.0 : 219.0 / 255.0, yo = full ? 0.0 : 16.0;
    const double cs = full ? 1.0 : 224.0 / 255.0;
    auto u8 = [](double v) { return guint8(std::clamp(v + 0.5, 0.0, 255.0)); };
    const double l = kr * r + (1.0 - kr - kb) * g + kb * b;
    return {255, u8(yo + ys * l), u8(128.0 + cs * (b - l) / (2.0 * (1.0 - kb))),
            u8(128.0 + cs * (r - l) / (2.0 * (1.0 - kr)))};
}

void reference_fill(GstVideoFrame* frame, GstTensorTestSrcPattern p, guint64 n)
{
    const GstVideoFormatInfo* finfo = frame->info.finfo;
    const gint w = GST_VIDEO_FRAME_WIDTH(frame), h = GST_VIDEO_FRAME_HEIGHT(frame);
    const gint lines = std::max<gint>(finfo->pack_lines, 1);
    std::vector<guint8> line(gsize(lines) * gsize(w) * 4);
    for (gint y = 0; y + lines <= h; y += lines) {
        for (gint l = 0; l < lines; ++l)
            for (gint x = 0; x < w; ++x) {
                const auto px = reference_pixel(p, x, y + l, n, frame->info);
                std::copy(px.begin(), px.end(), line.begin() + (gsize(l) * w + x) * 4);
            }
        finfo->pack_func(finfo, GST_VIDEO_PACK_FLAG_NONE, line.data(), w * 4, frame->data,
                         frame->info.stride, frame->info.chroma_site, y, w);
    }
}

struct Rendered {
    GstVideoInfo info;
    std::vector<guint8> bytes;
};

Rendered render(const std::string& caps_str, GstTensorTestSrcPattern p, guint64 n, bool ours,
                bool flip)
{
    Rendered r;
    GstCaps* caps = gst_caps_from_string(caps_str.c_str());
    EXPECT_TRUE(gst_video_info_from_caps(&r.info, caps)) << caps_str;
    gst_caps_unref(caps);
    r.bytes.assign(GST_VIDEO_INFO_SIZE(&r.info), 0xa5); // what a pattern leaves unwritten shows
    GstVideoInfo layout = r.info;
    if (flip) {
        // Bottom-up: plane 0 starts at its last row and walks back (single-plane formats).
        const gint stride = GST_VIDEO_INFO_PLANE_STRIDE(&r.info, 0);
        layout.offset[0] = gsize(stride) * gsize(GST_VIDEO_INFO_HEIGHT(&r.info) - 1);
        layout.stride[0] = -stride;
    }
    GstBuffer* buf = gst_buffer_new_wrapped_full(GstMemoryFlags(0), r.bytes.data(), r.bytes.size(),
                                                 0, r.bytes.size(), nullptr, nullptr);
    gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(&layout),
                                   GST_VIDEO_INFO_WIDTH(&layout), GST_VIDEO_INFO_HEIGHT(&layout),
                                   GST_VIDEO_INFO_N_PLANES(&layout), layout.offset, layout.stride);
    GstVideoFrame frame;
    EXPECT_TRUE(gst_video_frame_map(&frame, &r.info, buf, GST_MAP_WRITE));
    if (ours)
        edgetensor::gst::fill_video_pattern(&frame, p, n);
    else
        reference_fill(&frame, p, n);
    gst_video_frame_unmap(&frame);
    gst_buffer_unref(buf);
    return r;
}

const char* kFormats[] = {"NV12", "NV21", "NV16", "NV24", "I420", "YUY2", "UYVY",  "VYUY",
                          "RGB",  "BGR",  "RGBA", "BGRA", "RGBx", "BGRx", "GRAY8", "RGBP"};

TEST(TestSrcPatterns, EveryFormatSizeAndPatternMatchesPerPixelConversion)
{
    const std::pair<int, int> sizes[] = {{1, 1}, {2, 2}, {3, 5}, {321, 241}, {64, 600}, {7, 513}};
    const GstTensorTestSrcPattern patterns[] = {
        GST_TENSOR_TEST_SRC_GRADIENT, GST_TENSOR_TEST_SRC_CHECKERS, GST_TENSOR_TEST_SRC_WHITE,
        GST_TENSOR_TEST_SRC_BLACK};
    int compared = 0;
    for (const char* f : kFormats)
        for (auto [w, h] : sizes)
            for (const char* colorimetry : {"bt709", "bt601", "1:4:0:0"})
                for (GstTensorTestSrcPattern p : patterns)
                    for (guint64 n : {0u, 1u, 300u}) {
                        const std::string caps =
                            std::string("video/x-raw,format=") + f + ",width=" + std::to_string(w) +
                            ",height=" + std::to_string(h) + ",colorimetry=" + colorimetry;
                        const Rendered ours = render(caps, p, n, true, false);
                        const Rendered ref = render(caps, p, n, false, false);
                        ASSERT_EQ(ours.bytes, ref.bytes)
                            << caps << " pattern " << int(p) << " frame " << n;
                        ++compared;
                    }
    EXPECT_GT(compared, 1000);
}

TEST(TestSrcPatterns, BottomUpFramesMatchToo)
{
    for (const char* f : {"RGB", "BGRx", "GRAY8", "YUY2"})
        for (GstTensorTestSrcPattern p :
             {GST_TENSOR_TEST_SRC_GRADIENT, GST_TENSOR_TEST_SRC_CHECKERS}) {
            const std::string caps =
                std::string("video/x-raw,format=") + f + ",width=33,height=600";
            EXPECT_EQ(render(caps, p, 5, true, true).bytes, render(caps, p, 5, false, true).bytes)
                << caps;
        }
}

TEST(TestSrcPatterns, TensorPatternsPerDtype)
{
    using edgetensor::DType;
    std::vector<guint8> u8(20);
    edgetensor::gst::fill_tensor(u8.data(), u8.size(), DType::U8, GST_TENSOR_TEST_SRC_GRADIENT,
                                 250);
    for (size_t i = 0; i < u8.size(); ++i)
        EXPECT_EQ(u8[i], guint8((i + 250) & 0xff)) << i;
    edgetensor::gst::fill_tensor(u8.data(), u8.size(), DType::U8, GST_TENSOR_TEST_SRC_CHECKERS, 0);
    for (size_t i = 0; i < u8.size(); ++i)
        EXPECT_EQ(u8[i], ((i / 8) & 1) ? 255 : 0) << i;

    std::vector<float> f32(6);
    edgetensor::gst::fill_tensor(reinterpret_cast<guint8*>(f32.data()), f32.size() * 4, DType::F32,
                                 GST_TENSOR_TEST_SRC_WHITE, 0);
    for (float v : f32)
        EXPECT_EQ(v, 1.0f);
    std::vector<guint16> f16(6);
    edgetensor::gst::fill_tensor(reinterpret_cast<guint8*>(f16.data()), f16.size() * 2, DType::F16,
                                 GST_TENSOR_TEST_SRC_WHITE, 0);
    for (guint16 v : f16)
        EXPECT_EQ(v, 0x3c00) << "half-precision 1.0";

    std::vector<gint32> i32(3);
    edgetensor::gst::fill_tensor(reinterpret_cast<guint8*>(i32.data()), i32.size() * 4, DType::I32,
                                 GST_TENSOR_TEST_SRC_FRAME_COUNTER, 0x1ff);
    for (gint32 v : i32)
        EXPECT_EQ(v, gint32(0xffffffff)) << "every byte is n mod 256";
}

} // namespace
