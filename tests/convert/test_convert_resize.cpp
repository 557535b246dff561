// SPDX-License-Identifier: MIT
//
// Resize, crop, letterbox, output formats, layouts and dtypes against the reference.
//
// How resize is compared: the reference resamples with the engine's documented convention
// (half-pixel centres, samples clamped to the crop, chroma replicated over its luma block,
// resampling before the matrix), in double precision. The engine computes the same function in
// float, so the tolerance is the same as at 1:1: u8 max 2 levels / mean 0.5, floats 1e-2 after
// normalisation. A convention mismatch (corner-aligned sampling, a half-pixel shift, chroma
// siting) moves high-contrast pixels by tens of levels and fails these limits.

#include "reference.hpp"

#include <gtest/gtest.h>

#include <string>

namespace edgetensor::test
{
namespace
{

constexpr std::array<float, 4> kMean{123.675f, 116.28f, 103.53f, 10.f};
constexpr std::array<float, 4> kStd{58.395f, 57.12f, 57.375f, 64.f};

void expect_matches(const Frame& fr, const ConvertConfig& cfg, const std::string& what)
{
    std::vector<uint8_t> out;
    const std::string err = run_tight(fr, cfg, out);
    ASSERT_EQ(err, "") << what;
    const Errors e = compare(out, cfg, reference(fr, cfg));
    if (cfg.dtype == DType::F32 || cfg.dtype == DType::F16) {
        EXPECT_LE(e.max, 1e-2) << what << ": " << e.describe();
    } else {
        EXPECT_LE(e.max, 2.0) << what << ": " << e.describe();
        EXPECT_LE(e.mean, 0.5) << what << ": " << e.describe();
    }
}

TEST(ConvertResize, BilinearAndNearestEveryFormat)
{
    for (const ConvertFormat fmt :
         {ConvertFormat::Nv12, ConvertFormat::Nv21, ConvertFormat::Nv16, ConvertFormat::Nv24,
          ConvertFormat::I420, ConvertFormat::Yuy2, ConvertFormat::Uyvy, ConvertFormat::Vyuy,
          ConvertFormat::Rgb, ConvertFormat::Bgr, ConvertFormat::Rgba, ConvertFormat::Bgra,
          ConvertFormat::Rgbx, ConvertFormat::Bgrx, ConvertFormat::Gray8,
          ConvertFormat::PlanarRgb}) {
        const Frame fr = make_frame(fmt, 321, 241, 11, 5);
        for (const ResizeMethod m : {ResizeMethod::Bilinear, ResizeMethod::Nearest})
            for (const auto& [w, h] : {std::pair<size_t, size_t>{160, 97}, // down, odd
                                       {640, 480},                         // up
                                       {100, 300},                         // mixed
                                       {1, 1}}) {
                ConvertConfig cfg = config_for(fr, ColorEncoding::Bt709, ColorRange::Limited);
                cfg.dst_width = w;
                cfg.dst_height = h;
                cfg.method = m;
                cfg.dst_format = OutputFormat::Rgba;
                expect_matches(fr, cfg,
                               std::string(convert_format_name(fmt)) + " " +
                                   std::string(resize_method_name(m)) + " to " + std::to_string(w) +
                                   "x" + std::to_string(h));
            }
    }
}

TEST(ConvertResize, CropThenResize)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 640, 480, 0, 2);
    ConvertConfig cfg = config_for(fr, ColorEncoding::Bt601, ColorRange::Full);
    cfg.crop = Region{33, 17, 301, 203};
    cfg.dst_width = 224;
    cfg.dst_height = 224;
    expect_matches(fr, cfg, "crop + stretch");
    cfg.letterbox = true;
    cfg.fill = {114, 114, 114, 255};
    expect_matches(fr, cfg, "crop + letterbox");
}

TEST(ConvertResize, DownscaleIsNotCornerAligned)
{
    // A 4x1 ramp 0, 85, 170, 255 (GRAY8) halved: half-pixel centres sample at 0.5 and 2.5,
    // giving 42.5 and 212.5 -> 43 and 213 (corner alignment would give 0 and 255).
    Frame fr = make_frame(ConvertFormat::Gray8, 4, 1);
    fr.planes[0] = {0, 85, 170, 255};
    ConvertConfig cfg = config_for(fr);
    cfg.dst_format = OutputFormat::Gray;
    cfg.dst_width = 2;
    std::vector<uint8_t> out;
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0], 43);
    EXPECT_EQ(out[1], 213);
    cfg.method = ResizeMethod::Nearest; // samples at 1 and 3
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    EXPECT_EQ(out[0], 85);
    EXPECT_EQ(out[1], 255);
}

TEST(ConvertLetterbox, GeometryIsExact)
{
    struct Case {
        Region src;
        size_t dw, dh;
        Region content;
        double scale;
    };
    const Case cases[] = {
        {{0, 0, 1920, 1080}, 640, 640, {0, 140, 640, 360}, 1.0 / 3.0},
        {{0, 0, 1080, 1920}, 640, 640, {140, 0, 360, 640}, 1.0 / 3.0},
        {{0, 0, 640, 480}, 640, 640, {0, 80, 640, 480}, 1.0},
        {{0, 0, 321, 241}, 100, 100, {0, 12, 100, 75}, 100.0 / 321.0}, // 75.08 -> 75, 12 + 13
        {{0, 0, 1, 1000}, 10, 10, {4, 0, 1, 10}, 0.01},                // width rounds up to 1
        {{0, 0, 300, 300}, 416, 416, {0, 0, 416, 416}, 416.0 / 300.0},
        {{10, 20, 200, 100}, 301, 301, {0, 75, 301, 151}, 301.0 / 200.0}, // 150.5 -> 151
    };
    for (const auto& c : cases) {
        const ConvertGeometry g = compute_convert_geometry(c.src, c.dw, c.dh, true);
        EXPECT_EQ(g.content, c.content)
            << c.src.width << "x" << c.src.height << " -> " << c.dw << "x" << c.dh << ": got "
            << g.content.x << "," << g.content.y << " " << g.content.width << "x"
            << g.content.height;
        EXPECT_DOUBLE_EQ(g.scale, c.scale);
        EXPECT_EQ(g.pad_left, c.content.x);
        EXPECT_EQ(g.pad_top, c.content.y);
        EXPECT_EQ(g.pad_left + g.content.width + g.pad_right, c.dw);
        EXPECT_EQ(g.pad_top + g.content.height + g.pad_bottom, c.dh);
        EXPECT_EQ(g.source, c.src);
    }
    // Without letterbox the picture fills the output and the axes scale independently.
    const ConvertGeometry s = compute_convert_geometry({0, 0, 1920, 1080}, 640, 640, false);
    EXPECT_EQ(s.content, (Region{0, 0, 640, 640}));
    EXPECT_DOUBLE_EQ(s.scale_x, 1.0 / 3.0);
    EXPECT_DOUBLE_EQ(s.scale_y, 640.0 / 1080.0);
    EXPECT_EQ(s.pad_top + s.pad_bottom + s.pad_left + s.pad_right, 0u);
}

TEST(ConvertLetterbox, ConverterReportsGeometryAndFillsPadding)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 1920, 1080, 0, 8);
    ConvertConfig cfg = config_for(fr);
    cfg.dst_width = 640;
    cfg.dst_height = 640;
    cfg.letterbox = true;
    cfg.fill = {10, 20, 30, 40};
    cfg.dst_format = OutputFormat::Bgra;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    const ConvertGeometry& g = conv->geometry();
    EXPECT_EQ(g.content, (Region{0, 140, 640, 360}));
    EXPECT_EQ(g.pad_top, 140u);
    EXPECT_EQ(g.pad_bottom, 140u);
    EXPECT_DOUBLE_EQ(g.scale, 1.0 / 3.0);

    std::vector<uint8_t> out;
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    // Every padding pixel is exactly the fill colour in BGRA order.
    for (size_t y : {size_t(0), size_t(139), size_t(500), size_t(639)})
        for (size_t x : {size_t(0), size_t(321), size_t(639)}) {
            const uint8_t* p = &out[(y * 640 + x) * 4];
            EXPECT_EQ(p[0], 30);
            EXPECT_EQ(p[1], 20);
            EXPECT_EQ(p[2], 10);
            EXPECT_EQ(p[3], 40);
        }
    // Content rows carry opaque alpha and match the reference.
    EXPECT_EQ(out[(140 * 640 + 5) * 4 + 3], 255);
    const Errors e = compare(out, cfg, reference(fr, cfg));
    EXPECT_LE(e.max, 2.0) << e.describe();
    EXPECT_LE(e.mean, 0.5) << e.describe();
}

TEST(ConvertLetterbox, PillarboxWithPaddingLeftAndRight)
{
    const Frame fr = make_frame(ConvertFormat::Yuy2, 240, 320, 0, 6);
    ConvertConfig cfg = config_for(fr, ColorEncoding::Bt601, ColorRange::Limited);
    cfg.dst_width = 321;
    cfg.dst_height = 200;
    cfg.letterbox = true;
    cfg.fill = {255, 0, 128, 255};
    for (const TensorLayout l : {TensorLayout::Hwc, TensorLayout::Chw})
        for (const DType d : {DType::U8, DType::F32}) {
            cfg.layout = l;
            cfg.dtype = d;
            cfg.mean = d == DType::F32 ? kMean : std::array<float, 4>{0, 0, 0, 0};
            cfg.std = d == DType::F32 ? kStd : std::array<float, 4>{1, 1, 1, 1};
            expect_matches(fr, cfg,
                           std::string(tensor_layout_name(l)) + " " + std::string(dtype_name(d)));
        }
}

TEST(ConvertOutputs, EveryFormatLayoutAndDtype)
{
    const Frame fr = make_frame(ConvertFormat::I420, 301, 199, 3, 12);
    for (const OutputFormat of : {OutputFormat::Rgb, OutputFormat::Bgr, OutputFormat::Rgba,
                                  OutputFormat::Bgra, OutputFormat::Gray})
        for (const TensorLayout l : {TensorLayout::Hwc, TensorLayout::Chw})
            for (const DType d : {DType::U8, DType::I8, DType::F16, DType::F32}) {
                ConvertConfig cfg = config_for(fr, ColorEncoding::Bt709, ColorRange::Full);
                cfg.dst_format = of;
                cfg.layout = l;
                cfg.dtype = d;
                cfg.dst_width = 128;
                cfg.dst_height = 96;
                cfg.letterbox = true;
                cfg.fill = {1, 2, 3, 4};
                if (d == DType::F32 || d == DType::F16) {
                    cfg.mean = kMean;
                    cfg.std = kStd;
                }
                expect_matches(fr, cfg,
                               std::string(output_format_name(of)) + " " +
                                   std::string(tensor_layout_name(l)) + " " +
                                   std::string(dtype_name(d)));
            }
}

TEST(ConvertOutputs, Int8IsValueMinus128)
{
    Frame fr = make_frame(ConvertFormat::Gray8, 3, 1);
    fr.planes[0] = {0, 128, 255};
    ConvertConfig cfg = config_for(fr);
    cfg.dst_format = OutputFormat::Gray;
    cfg.dtype = DType::I8;
    std::vector<uint8_t> out;
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    EXPECT_EQ(int8_t(out[0]), -128);
    EXPECT_EQ(int8_t(out[1]), 0);
    EXPECT_EQ(int8_t(out[2]), 127);
}

TEST(ConvertOutputs, AlphaPassesThroughFromRgbaAndIsOpaqueOtherwise)
{
    Frame fr = make_frame(ConvertFormat::Rgba, 2, 1);
    fr.planes[0] = {1, 2, 3, 77, 4, 5, 6, 200};
    ConvertConfig cfg = config_for(fr);
    cfg.dst_format = OutputFormat::Bgra;
    std::vector<uint8_t> out;
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    EXPECT_EQ(out, (std::vector<uint8_t>{3, 2, 1, 77, 6, 5, 4, 200}));

    fr.format = ConvertFormat::Rgbx;
    cfg.src_format = ConvertFormat::Rgbx;
    ASSERT_EQ(run_tight(fr, cfg, out), "");
    EXPECT_EQ(out, (std::vector<uint8_t>{3, 2, 1, 255, 6, 5, 4, 255}));
}

TEST(ConvertThreads, ResultIndependentOfThreadCount)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 1920, 1080, 0, 21);
    ConvertConfig cfg = config_for(fr);
    cfg.dst_width = 640;
    cfg.dst_height = 640;
    cfg.letterbox = true;
    cfg.dtype = DType::F32;
    cfg.layout = TensorLayout::Chw;
    cfg.mean = kMean;
    cfg.std = kStd;
    std::vector<uint8_t> one, many, autod;
    cfg.threads = 1;
    ASSERT_EQ(run_tight(fr, cfg, one), "");
    cfg.threads = 3;
    ASSERT_EQ(run_tight(fr, cfg, many), "");
    cfg.threads = 0;
    ASSERT_EQ(run_tight(fr, cfg, autod), "");
    EXPECT_EQ(one, many);
    EXPECT_EQ(one, autod);

    cfg.threads = 3;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv);
    EXPECT_EQ(conv->threads(), 3u);
    // More threads than rows: capped, still correct.
    cfg.dst_height = 2;
    cfg.threads = 8;
    auto small = Converter::create(cfg);
    ASSERT_TRUE(small);
    EXPECT_EQ(small->threads(), 2u);
}

TEST(ConvertThreads, ConverterIsReusableAcrossFrames)
{
    // One converter, several different frames: no state leaks from one frame into the next.
    // Two output rows on two threads make one-row bands, where a per-thread row cache keyed
    // only on source rows and weight would serve the previous frame's pixels.
    const Frame a = make_frame(ConvertFormat::Nv12, 320, 240, 0, 1);
    const Frame b = make_frame(ConvertFormat::Nv12, 320, 240, 0, 2);
    for (const size_t dh : {size_t(150), size_t(2)}) {
        ConvertConfig cfg = config_for(a);
        cfg.dst_width = 200;
        cfg.dst_height = dh;
        cfg.threads = 2;
        auto conv = Converter::create(cfg);
        ASSERT_TRUE(conv);
        std::vector<uint8_t> out(conv->min_row_stride() * dh);
        const DestFrame dst{out.data(), conv->min_row_stride(), 0};
        for (const Frame* f : {&a, &b, &a}) {
            ASSERT_TRUE(conv->run(f->source(), dst));
            const Errors e = compare(out, cfg, reference(*f, cfg));
            EXPECT_LE(e.max, 2.0) << dh << " rows: " << e.describe();
        }
    }
}

TEST(ConvertDest, PaddedRowsAndPlanesAreLeftAlone)
{
    const Frame fr = make_frame(ConvertFormat::Nv16, 64, 48, 0, 4);
    ConvertConfig cfg = config_for(fr);
    cfg.layout = TensorLayout::Chw;
    cfg.dst_width = 50;
    cfg.dst_height = 30;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv);
    const size_t row = 64, plane = row * 31 + 16; // padded rows and an odd gap between planes
    std::vector<uint8_t> out(plane * 3, 0xAB);
    ASSERT_TRUE(conv->run(fr.source(), DestFrame{out.data(), row, plane}));
    std::vector<uint8_t> tight(50 * 30 * 3);
    const Expected e = reference(fr, cfg);
    for (size_t c = 0; c < 3; ++c)
        for (size_t y = 0; y < 31; ++y)
            for (size_t x = 0; x < row; ++x) {
                const uint8_t v = out[c * plane + y * row + x];
                if (y < 30 && x < 50) {
                    EXPECT_NEAR(v, e.at(c, x, y), 2.0);
                } else {
                    ASSERT_EQ(v, 0xAB) << "padding written at c" << c << " y" << y << " x" << x;
                }
            }
}

TEST(ConvertHalf, RoundTripAndRounding)
{
    EXPECT_EQ(float_to_half(0.f), 0u);
    EXPECT_EQ(float_to_half(1.f), 0x3C00u);
    EXPECT_EQ(float_to_half(-2.f), 0xC000u);
    EXPECT_EQ(float_to_half(65504.f), 0x7BFFu);
    EXPECT_EQ(float_to_half(1e6f), 0x7C00u);                 // overflow -> inf
    EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001u);        // smallest subnormal
    EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048.f), 0x3C00u); // tie -> even
    EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048.f), 0x3C02u); // tie -> even (up)
    for (float f : {0.5f, -3.25f, 1000.f, 1.f / 3.f, -0.0001f})
        EXPECT_NEAR(half_to_float(float_to_half(f)), f, std::fabs(f) * 1e-3f);
}

} // namespace
} // namespace edgetensor::test
