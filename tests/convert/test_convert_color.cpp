// SPDX-License-Identifier: MIT
//
// Colour conversion at 1:1 against the double-precision reference: every input format x matrix
// x range, odd sizes, strided and cropped sources, and the colorimetry defaults.
// Limits (issue 6): u8 max error <= 2 levels and mean <= 0.5; float32 within 1e-2 after
// normalisation.

#include "reference.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace edgetensor::test
{
namespace
{

constexpr ConvertFormat kYuvFormats[] = {
    ConvertFormat::Nv12, ConvertFormat::Nv21, ConvertFormat::Nv16, ConvertFormat::Nv24,
    ConvertFormat::I420, ConvertFormat::Yuy2, ConvertFormat::Uyvy, ConvertFormat::Vyuy,
};
constexpr ConvertFormat kAllFormats[] = {
    ConvertFormat::Nv12, ConvertFormat::Nv21, ConvertFormat::Nv16,  ConvertFormat::Nv24,
    ConvertFormat::I420, ConvertFormat::Yuy2, ConvertFormat::Uyvy,  ConvertFormat::Vyuy,
    ConvertFormat::Rgb,  ConvertFormat::Bgr,  ConvertFormat::Rgba,  ConvertFormat::Bgra,
    ConvertFormat::Rgbx, ConvertFormat::Bgrx, ConvertFormat::Gray8, ConvertFormat::PlanarRgb,
};

constexpr std::array<float, 4> kImagenetMean{123.675f, 116.28f, 103.53f, 0.f};
constexpr std::array<float, 4> kImagenetStd{58.395f, 57.12f, 57.375f, 1.f};

void expect_u8_within_limits(const Frame& fr, const ConvertConfig& cfg, const std::string& what)
{
    std::vector<uint8_t> out;
    const std::string err = run_tight(fr, cfg, out);
    ASSERT_EQ(err, "") << what;
    const Errors e = compare(out, cfg, reference(fr, cfg));
    EXPECT_LE(e.max, 2.0) << what << ": " << e.describe();
    EXPECT_LE(e.mean, 0.5) << what << ": " << e.describe();
}

using MatrixCase = std::tuple<ConvertFormat, ColorEncoding, ColorRange>;

class ConvertMatrix : public ::testing::TestWithParam<MatrixCase>
{
};

TEST_P(ConvertMatrix, U8RgbMatchesReference)
{
    const auto [fmt, enc, range] = GetParam();
    const Frame fr = make_frame(fmt, 321, 241);
    ConvertConfig cfg = config_for(fr, enc, range);
    expect_u8_within_limits(fr, cfg, "u8 RGB");
    cfg.dst_format = OutputFormat::Bgra;
    expect_u8_within_limits(fr, cfg, "u8 BGRA");
}

TEST_P(ConvertMatrix, Float32NormalisedMatchesReference)
{
    const auto [fmt, enc, range] = GetParam();
    const Frame fr = make_frame(fmt, 321, 241, 0, 7);
    ConvertConfig cfg = config_for(fr, enc, range);
    cfg.dtype = DType::F32;
    cfg.layout = TensorLayout::Chw;
    cfg.mean = kImagenetMean;
    cfg.std = kImagenetStd;
    std::vector<uint8_t> out;
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    const Errors e = compare(out, cfg, reference(fr, cfg));
    EXPECT_LE(e.max, 1e-2) << e.describe();
}

TEST_P(ConvertMatrix, GrayIsFullRangeLuma)
{
    const auto [fmt, enc, range] = GetParam();
    const Frame fr = make_frame(fmt, 33, 17);
    ConvertConfig cfg = config_for(fr, enc, range);
    cfg.dst_format = OutputFormat::Gray;
    expect_u8_within_limits(fr, cfg, "gray");
}

std::string matrix_case_name(const ::testing::TestParamInfo<MatrixCase>& info)
{
    const auto [fmt, enc, range] = info.param;
    const char* e = enc == ColorEncoding::Bt601   ? "bt601"
                    : enc == ColorEncoding::Bt709 ? "bt709"
                                                  : "bt2020";
    return std::string(convert_format_name(fmt)) + "_" + e + "_" +
           (range == ColorRange::Full ? "full" : "limited");
}

INSTANTIATE_TEST_SUITE_P(
    AllYuv, ConvertMatrix,
    ::testing::Combine(::testing::ValuesIn(kYuvFormats),
                       ::testing::Values(ColorEncoding::Bt601, ColorEncoding::Bt709,
                                         ColorEncoding::Bt2020),
                       ::testing::Values(ColorRange::Limited, ColorRange::Full)),
    matrix_case_name);

class ConvertFormats : public ::testing::TestWithParam<ConvertFormat>
{
};

TEST_P(ConvertFormats, OddAndTinySizes)
{
    const ConvertFormat fmt = GetParam();
    for (const auto& [w, h] :
         {std::pair<size_t, size_t>{1, 1}, {2, 2}, {3, 3}, {5, 1}, {1, 4}, {321, 241}}) {
        const Frame fr = make_frame(fmt, w, h, 0, uint32_t(w * 31 + h));
        const std::string what = std::to_string(w) + "x" + std::to_string(h);
        ConvertConfig cfg = config_for(fr, ColorEncoding::Bt601, ColorRange::Limited);
        expect_u8_within_limits(fr, cfg, what + " RGB");
        cfg.dst_format = OutputFormat::Rgba;
        cfg.layout = TensorLayout::Chw;
        expect_u8_within_limits(fr, cfg, what + " RGBA CHW");
    }
}

TEST_P(ConvertFormats, StridedSource)
{
    const ConvertFormat fmt = GetParam();
    // Odd padding: pitches that are neither tight nor aligned, padding bytes poisoned (0xEE).
    const Frame fr = make_frame(fmt, 321, 241, 37, 3);
    ConvertConfig cfg = config_for(fr, ColorEncoding::Bt709, ColorRange::Full);
    expect_u8_within_limits(fr, cfg, "strided");
}

TEST_P(ConvertFormats, CroppedSourceAtOddOffsets)
{
    const ConvertFormat fmt = GetParam();
    const Frame fr = make_frame(fmt, 321, 241, 5, 4);
    ConvertConfig cfg = config_for(fr, ColorEncoding::Bt2020, ColorRange::Limited);
    for (const Region crop : {Region{3, 5, 200, 150}, Region{0, 0, 1, 1}, Region{320, 240, 1, 1},
                              Region{1, 1, 319, 239}, Region{2, 2, 2, 2}}) {
        cfg.crop = crop;
        expect_u8_within_limits(fr, cfg,
                                "crop " + std::to_string(crop.x) + "," + std::to_string(crop.y) +
                                    " " + std::to_string(crop.width) + "x" +
                                    std::to_string(crop.height));
    }
}

class ConvertRgbFormats : public ::testing::TestWithParam<ConvertFormat>
{
};

TEST_P(ConvertRgbFormats, ExactAtOneToOne)
{
    const ConvertFormat fmt = GetParam();
    const Frame fr = make_frame(fmt, 57, 31, 3, 9);
    for (const OutputFormat of :
         {OutputFormat::Rgb, OutputFormat::Bgr, OutputFormat::Rgba, OutputFormat::Bgra}) {
        ConvertConfig cfg = config_for(fr);
        cfg.dst_format = of;
        std::vector<uint8_t> out;
        ASSERT_EQ(run_tight(fr, cfg, out), "");
        const Errors e = compare(out, cfg, reference(fr, cfg));
        EXPECT_EQ(e.max, 0.0) << output_format_name(of) << ": " << e.describe();
    }
}

std::string format_case_name(const ::testing::TestParamInfo<ConvertFormat>& info)
{
    return std::string(convert_format_name(info.param));
}

INSTANTIATE_TEST_SUITE_P(All, ConvertFormats, ::testing::ValuesIn(kAllFormats), format_case_name);
INSTANTIATE_TEST_SUITE_P(RgbFamily, ConvertRgbFormats,
                         ::testing::Values(ConvertFormat::Rgb, ConvertFormat::Bgr,
                                           ConvertFormat::Rgba, ConvertFormat::Bgra,
                                           ConvertFormat::Rgbx, ConvertFormat::Bgrx,
                                           ConvertFormat::Gray8, ConvertFormat::PlanarRgb),
                         format_case_name);

TEST(ConvertColorimetry, UnspecifiedResolvedByFrameSizeLikeGStreamer)
{
    bool guessed = false;
    Colorimetry sd = resolve_yuv_colorimetry({}, 720, 576, &guessed);
    EXPECT_TRUE(guessed);
    EXPECT_EQ(sd.encoding, ColorEncoding::Bt601);
    EXPECT_EQ(sd.range, ColorRange::Limited);
    EXPECT_EQ(resolve_yuv_colorimetry({}, 720, 577).encoding, ColorEncoding::Bt709);
    EXPECT_EQ(resolve_yuv_colorimetry({}, 1920, 1080).encoding, ColorEncoding::Bt709);
    EXPECT_EQ(resolve_yuv_colorimetry({}, 640, 480).encoding, ColorEncoding::Bt601);

    Colorimetry only_space;
    only_space.space = ColorSpace::Bt2020;
    EXPECT_EQ(resolve_yuv_colorimetry(only_space, 640, 480).encoding, ColorEncoding::Bt2020);

    Colorimetry full;
    full.encoding = ColorEncoding::Bt709;
    full.range = ColorRange::Full;
    guessed = true;
    EXPECT_EQ(resolve_yuv_colorimetry(full, 640, 480, &guessed), full);
    EXPECT_FALSE(guessed);
}

TEST(ConvertColorimetry, ConverterAppliesResolvedMatrix)
{
    // 1280x720 with no colorimetry must convert exactly like explicit BT.709 limited.
    const Frame fr = make_frame(ConvertFormat::Nv12, 1280, 720);
    ConvertConfig unspecified = config_for(fr);
    unspecified.src_colorimetry = {};
    auto conv = Converter::create(unspecified);
    ASSERT_TRUE(conv) << conv.error().message();
    EXPECT_EQ(conv->applied_colorimetry().encoding, ColorEncoding::Bt709);
    EXPECT_EQ(conv->applied_colorimetry().range, ColorRange::Limited);

    std::vector<uint8_t> a, b;
    ASSERT_EQ(run_tight(fr, unspecified, a), "");
    ASSERT_EQ(run_tight(fr, config_for(fr, ColorEncoding::Bt709, ColorRange::Limited), b), "");
    EXPECT_EQ(a, b);
    // And not like BT.601: the matrices differ visibly on this pattern.
    std::vector<uint8_t> c;
    ASSERT_EQ(run_tight(fr, config_for(fr, ColorEncoding::Bt601, ColorRange::Limited), c), "");
    EXPECT_NE(a, c);

    // RGB sources have no matrix to resolve.
    const Frame rgb = make_frame(ConvertFormat::Rgb, 4, 4);
    auto rconv = Converter::create(config_for(rgb));
    ASSERT_TRUE(rconv);
    EXPECT_TRUE(rconv->applied_colorimetry().is_unspecified());
}

TEST(ConvertColorimetry, RangeAndMatrixChangeTheResult)
{
    // Guards against a converter that ignores colorimetry: known YUV triplets, exact answers.
    Frame fr = make_frame(ConvertFormat::Nv24, 2, 1);
    // Pixel 0: limited-range white; pixel 1: a saturated red-ish chroma.
    fr.planes[0][0] = 235;
    fr.planes[1][0] = 128;
    fr.planes[1][1] = 128;
    fr.planes[0][1] = 81;
    fr.planes[1][2] = 90;
    fr.planes[1][3] = 240;
    std::vector<uint8_t> out;
    ConvertConfig cfg = config_for(fr, ColorEncoding::Bt601, ColorRange::Limited);
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    EXPECT_EQ(out[0], 255);
    EXPECT_EQ(out[1], 255);
    EXPECT_EQ(out[2], 255);
    // BT.601 limited (81, 90, 240) is pure red (255, 0, 0) within rounding.
    EXPECT_GE(out[3], 253);
    EXPECT_LE(out[4], 2);
    EXPECT_LE(out[5], 2);
    cfg.src_colorimetry.range = ColorRange::Full;
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    EXPECT_EQ(out[0], 235); // full range: Y 235 is not white
}

} // namespace
} // namespace edgetensor::test
