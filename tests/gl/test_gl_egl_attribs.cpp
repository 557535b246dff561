// SPDX-License-Identifier: MIT
//
// The EGL_LINUX_DMA_BUF_EXT attribute lists the GL backend builds, without a driver: byte grids
// (one plane), direct YUV imports (every plane of NV12, I420, YUY2, ..., the format modifier on
// each plane, the colour-space and range hints from each colorimetry), and bad descriptions
// refused with a message that names the problem. The driver's side runs in the VM lane
// (test_gl_dmabuf.cpp).

#include "gl/egl_import.hpp"
#include "gl/gl_api.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

namespace edgetensor::detail::gl
{
namespace
{

/// The list as key -> value; fails on a repeated key or a missing EGL_NONE.
std::map<EGLint, EGLint> as_map(const std::vector<EGLint>& a)
{
    std::map<EGLint, EGLint> m;
    EXPECT_EQ(a.size() % 2, 1u) << "pairs plus EGL_NONE";
    EXPECT_EQ(a.back(), EGL_NONE);
    for (size_t i = 0; i + 1 < a.size(); i += 2)
        EXPECT_TRUE(m.emplace(a[i], a[i + 1]).second)
            << "attribute 0x" << std::hex << a[i] << " given twice";
    return m;
}

uint32_t fourcc_of(ConvertFormat f)
{
    const auto fc = drm_fourcc_of(f);
    EXPECT_TRUE(fc);
    return fc.value_or(0);
}

DmaBufImage nv12(uint32_t w = 1920, uint32_t h = 1080)
{
    return {w, h, fourcc_of(ConvertFormat::Nv12), {{5, 0, 2048}, {5, 2048ull * h, 2048}}, {}, {}};
}

std::string error_of(const DmaBufImage& img)
{
    auto r = build_dma_buf_attribs(img);
    EXPECT_FALSE(r);
    if (r)
        return {};
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    return r.error().message();
}

TEST(GlEglAttribs, FourccsAreTheDrmNames)
{
    EXPECT_EQ(fourcc_string(fourcc_of(ConvertFormat::Nv12)), "NV12");
    EXPECT_EQ(fourcc_string(fourcc_of(ConvertFormat::Nv21)), "NV21");
    EXPECT_EQ(fourcc_string(fourcc_of(ConvertFormat::Nv16)), "NV16");
    EXPECT_EQ(fourcc_string(fourcc_of(ConvertFormat::Nv24)), "NV24");
    EXPECT_EQ(fourcc_string(fourcc_of(ConvertFormat::I420)), "YU12");
    EXPECT_EQ(fourcc_string(fourcc_of(ConvertFormat::Yuy2)), "YUYV");
    EXPECT_EQ(fourcc_string(fourcc_of(ConvertFormat::Uyvy)), "UYVY");
    EXPECT_EQ(fourcc_string(fourcc_of(ConvertFormat::Vyuy)), "VYUY");
    // drm_fourcc.h's values, not just their spelling.
    EXPECT_EQ(fourcc_of(ConvertFormat::Nv12), 0x3231564eu);
    EXPECT_EQ(fourcc_of(ConvertFormat::I420), 0x32315559u);
    EXPECT_EQ(fourcc_of(ConvertFormat::Yuy2), 0x56595559u);
    EXPECT_EQ(fourcc_string(kFourccR8), "R8");
    EXPECT_EQ(fourcc_string(kFourccAbgr8888), "AB24");
    for (ConvertFormat f :
         {ConvertFormat::Rgb, ConvertFormat::Bgra, ConvertFormat::Gray8, ConvertFormat::PlanarRgb})
        EXPECT_FALSE(drm_fourcc_of(f)) << "no direct import for RGB-family or GRAY8 sources";
    EXPECT_EQ(drm_fourcc_planes(fourcc_of(ConvertFormat::Nv12)), 2u);
    EXPECT_EQ(drm_fourcc_planes(fourcc_of(ConvertFormat::I420)), 3u);
    EXPECT_EQ(drm_fourcc_planes(fourcc_of(ConvertFormat::Uyvy)), 1u);
    EXPECT_EQ(drm_fourcc_planes(kFourccR8), 1u);
    EXPECT_EQ(drm_fourcc_planes(0x34325258u /* XR24 */), 0u);
}

TEST(GlEglAttribs, GridIsOnePlaneWithoutHints)
{
    const DmaBufImage g{1920, 1620, kFourccR8, {{7, 4096, 1920}}, {}, {}};
    auto a = build_dma_buf_attribs(g);
    ASSERT_TRUE(a) << a.error().message();
    const auto m = as_map(*a);
    EXPECT_EQ(m.size(), 6u);
    EXPECT_EQ(m.at(EGL_WIDTH), 1920);
    EXPECT_EQ(m.at(EGL_HEIGHT), 1620);
    EXPECT_EQ(m.at(EGL_LINUX_DRM_FOURCC_EXT), EGLint(kFourccR8));
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE0_FD_EXT), 7);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE0_OFFSET_EXT), 4096);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE0_PITCH_EXT), 1920);
    EXPECT_FALSE(m.count(EGL_YUV_COLOR_SPACE_HINT_EXT));
}

TEST(GlEglAttribs, Nv12OneBufferTwoPlanesWithModifierAndHints)
{
    DmaBufImage img = nv12();
    img.modifier = kDrmFormatModLinear;
    img.yuv_hints = Colorimetry{ColorSpace::Unspecified, ColorTransfer::Unspecified,
                                ColorEncoding::Bt601, ColorRange::Limited};
    auto a = build_dma_buf_attribs(img);
    ASSERT_TRUE(a) << a.error().message();
    const auto m = as_map(*a);
    EXPECT_EQ(m.at(EGL_LINUX_DRM_FOURCC_EXT), EGLint(0x3231564e));
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE0_FD_EXT), 5);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE1_FD_EXT), 5);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE0_OFFSET_EXT), 0);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE1_OFFSET_EXT), 2048 * 1080);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE1_PITCH_EXT), 2048);
    EXPECT_FALSE(m.count(EGL_DMA_BUF_PLANE2_FD_EXT));
    for (EGLint k : {EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT, EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT,
                     EGL_DMA_BUF_PLANE1_MODIFIER_LO_EXT, EGL_DMA_BUF_PLANE1_MODIFIER_HI_EXT})
        EXPECT_EQ(m.at(k), 0) << "linear on every plane";
    EXPECT_FALSE(m.count(EGL_DMA_BUF_PLANE2_MODIFIER_LO_EXT));
    EXPECT_EQ(m.at(EGL_YUV_COLOR_SPACE_HINT_EXT), EGL_ITU_REC601_EXT);
    EXPECT_EQ(m.at(EGL_SAMPLE_RANGE_HINT_EXT), EGL_YUV_NARROW_RANGE_EXT);
    EXPECT_EQ(m.at(EGL_YUV_CHROMA_HORIZONTAL_SITING_HINT_EXT), EGL_YUV_CHROMA_SITING_0_EXT);
    EXPECT_EQ(m.at(EGL_YUV_CHROMA_VERTICAL_SITING_HINT_EXT), EGL_YUV_CHROMA_SITING_0_EXT);
}

TEST(GlEglAttribs, ModifierHalvesAreTheExtensionsLoAndHi)
{
    DmaBufImage img = nv12();
    img.modifier = 0x0100000000000002ull; // I915_FORMAT_MOD_Y_TILED
    auto a = build_dma_buf_attribs(img);
    ASSERT_TRUE(a);
    const auto m = as_map(*a);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE1_MODIFIER_LO_EXT), 2);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE1_MODIFIER_HI_EXT), 0x01000000);
    img.modifier = ~0ull >> 8; // DRM_FORMAT_MOD_INVALID's low bits set: two's complement halves
    a = build_dma_buf_attribs(img);
    ASSERT_TRUE(a);
    EXPECT_EQ(as_map(*a).at(EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT), -1);
    EXPECT_EQ(as_map(*a).at(EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT), 0x00ffffff);
}

TEST(GlEglAttribs, HintsFromEveryColorimetry)
{
    struct Case {
        ColorEncoding enc;
        ColorRange range;
        EGLint space, sample;
    };
    for (const Case& c :
         {Case{ColorEncoding::Bt601, ColorRange::Limited, EGL_ITU_REC601_EXT,
               EGL_YUV_NARROW_RANGE_EXT},
          Case{ColorEncoding::Bt601, ColorRange::Full, EGL_ITU_REC601_EXT, EGL_YUV_FULL_RANGE_EXT},
          Case{ColorEncoding::Bt709, ColorRange::Limited, EGL_ITU_REC709_EXT,
               EGL_YUV_NARROW_RANGE_EXT},
          Case{ColorEncoding::Bt709, ColorRange::Full, EGL_ITU_REC709_EXT, EGL_YUV_FULL_RANGE_EXT},
          Case{ColorEncoding::Bt2020, ColorRange::Limited, EGL_ITU_REC2020_EXT,
               EGL_YUV_NARROW_RANGE_EXT},
          Case{ColorEncoding::Bt2020, ColorRange::Full, EGL_ITU_REC2020_EXT,
               EGL_YUV_FULL_RANGE_EXT}}) {
        DmaBufImage img = nv12();
        img.yuv_hints =
            Colorimetry{ColorSpace::Unspecified, ColorTransfer::Unspecified, c.enc, c.range};
        auto a = build_dma_buf_attribs(img);
        ASSERT_TRUE(a) << a.error().message();
        const auto m = as_map(*a);
        EXPECT_EQ(m.at(EGL_YUV_COLOR_SPACE_HINT_EXT), c.space) << img.yuv_hints->to_string();
        EXPECT_EQ(m.at(EGL_SAMPLE_RANGE_HINT_EXT), c.sample) << img.yuv_hints->to_string();
    }
}

TEST(GlEglAttribs, I420ThreePlanesAndTwoBufferNv12)
{
    const DmaBufImage i420{640,
                           480,
                           fourcc_of(ConvertFormat::I420),
                           {{9, 0, 640}, {9, 640 * 480, 320}, {9, 640 * 480 * 5 / 4, 320}},
                           {},
                           Colorimetry{ColorSpace::Unspecified, ColorTransfer::Unspecified,
                                       ColorEncoding::Bt709, ColorRange::Full}};
    auto a = build_dma_buf_attribs(i420);
    ASSERT_TRUE(a) << a.error().message();
    auto m = as_map(*a);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE2_FD_EXT), 9);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE2_OFFSET_EXT), 640 * 480 * 5 / 4);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE2_PITCH_EXT), 320);
    // A from_planes frame: luma and chroma in buffers of their own.
    DmaBufImage two = nv12(64, 48);
    two.planes[1] = {11, 0, 64};
    a = build_dma_buf_attribs(two);
    ASSERT_TRUE(a);
    m = as_map(*a);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE0_FD_EXT), 5);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE1_FD_EXT), 11);
    EXPECT_EQ(m.at(EGL_DMA_BUF_PLANE1_OFFSET_EXT), 0);
    const DmaBufImage yuyv{64, 48, fourcc_of(ConvertFormat::Yuy2), {{4, 0, 128}}, {}, {}};
    EXPECT_TRUE(build_dma_buf_attribs(yuyv)) << "packed 4:2:2 is one plane";
}

TEST(GlEglAttribs, BadDescriptionsAreRefusedByName_Negative)
{
    DmaBufImage one = nv12();
    one.planes.pop_back();
    std::string e = error_of(one);
    EXPECT_NE(e.find("1920x1080 NV12"), std::string::npos) << e;
    EXPECT_NE(e.find("has 2 plane(s) but 1 were given"), std::string::npos) << e;

    DmaBufImage three = nv12();
    three.planes.push_back({5, 0, 2048});
    EXPECT_NE(error_of(three).find("has 2 plane(s) but 3 were given"), std::string::npos);

    DmaBufImage i420 = nv12();
    i420.fourcc = fourcc_of(ConvertFormat::I420);
    EXPECT_NE(error_of(i420).find("has 3 plane(s) but 2"), std::string::npos);

    DmaBufImage nofd = nv12();
    nofd.planes[1].fd = -1;
    EXPECT_NE(error_of(nofd).find("plane 1 has no fd"), std::string::npos);

    DmaBufImage nopitch = nv12();
    nopitch.planes[0].pitch = 0;
    EXPECT_NE(error_of(nopitch).find("plane 0 has a zero pitch"), std::string::npos);

    DmaBufImage far = nv12();
    far.planes[1].offset = 1ull << 33;
    EXPECT_NE(error_of(far).find("does not fit an EGLint"), std::string::npos);

    EXPECT_NE(error_of(nv12(0, 1080)).find("empty"), std::string::npos);

    DmaBufImage unknown = nv12();
    unknown.fourcc = 0x34325258u;
    EXPECT_NE(error_of(unknown).find("not one the converter imports"), std::string::npos);

    DmaBufImage unresolved = nv12();
    unresolved.yuv_hints = Colorimetry{ColorSpace::Unspecified, ColorTransfer::Unspecified,
                                       ColorEncoding::Unspecified, ColorRange::Limited};
    EXPECT_NE(error_of(unresolved).find("colour matrix is unspecified"), std::string::npos);
    unresolved.yuv_hints->encoding = ColorEncoding::Bt709;
    unresolved.yuv_hints->range = ColorRange::Unspecified;
    EXPECT_NE(error_of(unresolved).find("range is unspecified"), std::string::npos);

    DmaBufImage grid{64, 64, kFourccR8, {{3, 0, 64}}, {}, {}};
    grid.yuv_hints = Colorimetry{ColorSpace::Unspecified, ColorTransfer::Unspecified,
                                 ColorEncoding::Bt601, ColorRange::Full};
    EXPECT_NE(error_of(grid).find("not a byte grid"), std::string::npos);
}

// EGL calls made off the GL thread (loading the entry points, compute=auto's device probe) run
// on a thread that exits while libEGL is loaded, never on the caller's (a pooled streaming
// thread that may exit during exit(), with libglvnd's per-thread state to destroy).
TEST(GlThreads, RunOnOwnThreadRunsElsewhereAndWaits)
{
    std::thread::id ran;
    bool finished = false;
    run_on_own_thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ran = std::this_thread::get_id();
        finished = true;
    });
    EXPECT_TRUE(finished) << "returned before the function ended";
    EXPECT_NE(ran, std::thread::id());
    EXPECT_NE(ran, std::this_thread::get_id());
}

} // namespace
} // namespace edgetensor::detail::gl
