// SPDX-License-Identifier: MIT
//
// The kernel levels (AVX-512, AVX2, SSE4.1, portable) against each other and against the
// reference. Every level computes the same integer function, so integer outputs must match the
// portable level bit for bit and float outputs within float rounding (the SIMD levels may fuse
// the normalising multiply-add). The configurations are chosen to reach each path of the SIMD
// kernels: horizontal shuffle programs of 1, 2 and 4 windows per block (ratios from upscale to
// 1:20); AVX-512 permute programs of 1, 2 and 4 windows per 32 outputs for 1 to 4 components,
// or none (1:20 and short rows, which that level hands to the AVX2 pass); windows that slide
// back at the end of a row, rows too short for a window, column tails of every length mod 64,
// crops at odd offsets, letterbox and pillarbox, strided sources and padded destinations whose
// padding must stay untouched.
//
// Levels are chosen per converter with EDGETENSOR_CONVERT_ISA; a level the CPU lacks is
// skipped, one it has must be the one the converter reports.

#include "levels.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

/// Integer dtypes: equal bytes. Floats: equal up to float rounding of the normalisation.
std::string diff_outputs(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                         const ConvertConfig& cfg)
{
    if (a.size() != b.size())
        return "sizes differ";
    const size_t es = dtype_size(cfg.dtype);
    for (size_t i = 0; i < a.size(); i += es) {
        double va, vb, tol;
        switch (cfg.dtype) {
        case DType::F32: {
            float fa, fb;
            std::memcpy(&fa, &a[i], 4);
            std::memcpy(&fb, &b[i], 4);
            va = fa;
            vb = fb;
            tol = 1e-5 * std::max(1.0, std::fabs(va));
            break;
        }
        case DType::F16: {
            uint16_t ha, hb;
            std::memcpy(&ha, &a[i], 2);
            std::memcpy(&hb, &b[i], 2);
            va = half_to_float(ha);
            vb = half_to_float(hb);
            tol = std::fabs(va) / 1024.0 + 1e-7; // one binary16 step
            break;
        }
        default:
            va = a[i];
            vb = b[i];
            tol = 0.0;
            break;
        }
        if (std::fabs(va - vb) > tol)
            return "element " + std::to_string(i / es) + ": " + std::to_string(va) + " vs " +
                   std::to_string(vb);
    }
    return {};
}

struct Geometry {
    size_t sw, sh;
    std::optional<Region> crop;
    size_t dw, dh;
    bool letterbox;
    const char* what;
};

// Source sizes and output sizes that reach every shape of the horizontal shuffle program and
// every column tail; content widths run through many residues mod 32.
const Geometry kGeometries[] = {
    {37, 21, {}, 37, 21, false, "1:1 odd"},
    {321, 241, {}, 160, 97, false, "down 2x, odd"},
    {321, 241, {}, 640, 480, false, "up 2x"},
    {321, 241, {}, 33, 200, false, "1:10 across, up down"},
    {640, 96, {}, 31, 9, false, "1:20 (4 windows per block)"},
    {640, 96, {Region{301, 7, 339, 88}}, 71, 40, false, "crop at the right edge"},
    {250, 120, {Region{3, 5, 97, 61}}, 64, 64, true, "crop + pillarbox"},
    {250, 120, {}, 65, 90, true, "letterbox, odd padding"},
    {13, 9, {}, 7, 5, false, "rows shorter than a window"},
    {5, 3, {}, 1, 1, false, "one pixel"},
    {400, 60, {}, 133, 23, false, "1:3 (1 window)"},
    {400, 60, {}, 67, 30, false, "1:6 (2 windows)"},
    {400, 60, {}, 100, 30, false, "1:4 (4 permute windows for 4 components)"},
};

constexpr ConvertFormat kFormats[] = {
    ConvertFormat::Nv12, ConvertFormat::Nv21, ConvertFormat::Nv16,  ConvertFormat::Nv24,
    ConvertFormat::I420, ConvertFormat::Yuy2, ConvertFormat::Uyvy,  ConvertFormat::Vyuy,
    ConvertFormat::Rgb,  ConvertFormat::Bgr,  ConvertFormat::Rgba,  ConvertFormat::Bgra,
    ConvertFormat::Rgbx, ConvertFormat::Bgrx, ConvertFormat::Gray8, ConvertFormat::PlanarRgb,
};

/// Quantized u8/i8: none, one whose float multiply-add is exact (the kernels' fast form), or
/// one without (the table every level reads).
enum class Quant { None, Fast, Table };

struct Output {
    OutputFormat format;
    TensorLayout layout;
    DType dtype;
    Quant quant = Quant::None;
};

// Every fused and generic emit path: u8/i8 HWC 3 and 4 channels, CHW, gray, f32/f16 CHW and
// HWC, quantized u8/i8 in both forms.
const Output kOutputs[] = {
    {OutputFormat::Rgb, TensorLayout::Hwc, DType::U8},
    {OutputFormat::Bgra, TensorLayout::Hwc, DType::U8},
    {OutputFormat::Bgr, TensorLayout::Chw, DType::F32},
    {OutputFormat::Rgb, TensorLayout::Chw, DType::U8},
    {OutputFormat::Rgba, TensorLayout::Hwc, DType::I8},
    {OutputFormat::Gray, TensorLayout::Hwc, DType::U8},
    {OutputFormat::Rgb, TensorLayout::Chw, DType::F16},
    {OutputFormat::Bgra, TensorLayout::Chw, DType::U8},
    {OutputFormat::Rgb, TensorLayout::Hwc, DType::F32},
    {OutputFormat::Gray, TensorLayout::Chw, DType::F16},
    {OutputFormat::Bgr, TensorLayout::Hwc, DType::I8},
    {OutputFormat::Rgb, TensorLayout::Chw, DType::I8, Quant::Fast},
    {OutputFormat::Bgra, TensorLayout::Hwc, DType::U8, Quant::Fast},
    {OutputFormat::Gray, TensorLayout::Chw, DType::I8, Quant::Fast},
    {OutputFormat::Bgr, TensorLayout::Hwc, DType::I8, Quant::Table},
};

std::string colorimetry_name(ColorEncoding enc, ColorRange range)
{
    Colorimetry c;
    c.encoding = enc;
    c.range = range;
    return c.to_string();
}

ConvertConfig make_config(const Frame& fr, const Geometry& g, const Output& o, ResizeMethod m)
{
    ConvertConfig cfg = config_for(fr, ColorEncoding::Bt709, ColorRange::Limited);
    cfg.crop = g.crop;
    cfg.dst_width = g.dw;
    cfg.dst_height = g.dh;
    cfg.letterbox = g.letterbox;
    cfg.fill = {10, 200, 30, 128};
    cfg.method = m;
    cfg.dst_format = o.format;
    cfg.layout = o.layout;
    cfg.dtype = o.dtype;
    if (o.dtype == DType::F32 || o.dtype == DType::F16 || o.quant == Quant::Fast) {
        cfg.mean = {123.675f, 116.28f, 103.53f, 10.f};
        cfg.std = {58.395f, 57.12f, 57.375f, 64.f};
    }
    if (o.quant == Quant::Fast)
        cfg.quant = Quantization{0.0186584f, o.dtype == DType::I8 ? -14 : 114};
    if (o.quant == Quant::Table) {
        // No float multiply-add reproduces this one in i8 (test_convert_quantizer.cpp).
        cfg.mean = {195.896667f, 195.896667f, 195.896667f, 195.896667f};
        cfg.std = {44.7099762f, 44.7099762f, 44.7099762f, 44.7099762f};
        cfg.quant = Quantization{0.0141094513f, 0};
    }
    return cfg;
}

TEST(ConvertLevels, EachLevelTheCpuHasIsTheOneReported)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 64, 32);
    const ConvertConfig cfg = config_for(fr);
    for (const char* level : kLevels) {
        LevelScope scope(level);
        auto conv = Converter::create(cfg);
        ASSERT_TRUE(conv) << conv.error().message();
        if (cpu_has(level))
            EXPECT_EQ(conv->simd_level(), level);
        else
            EXPECT_NE(conv->simd_level(), level) << "a level the CPU lacks must not run";
    }
    // Without a request the best level runs.
    auto best = Converter::create(cfg);
    ASSERT_TRUE(best);
    EXPECT_EQ(best->simd_level(), levels_here().back());
}

TEST(ConvertLevels, NegativeUnknownLevelNameRunsTheBestLevel)
{
    const Frame fr = make_frame(ConvertFormat::I420, 40, 20);
    const ConvertConfig cfg = config_for(fr);
    std::vector<uint8_t> want;
    ASSERT_EQ(run_tight(fr, cfg, want), "");
    LevelScope scope("avx512-please");
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    EXPECT_EQ(conv->simd_level(), levels_here().back());
    std::vector<uint8_t> got;
    ASSERT_EQ(run_tight(fr, cfg, got), "");
    EXPECT_EQ(got, want);
}

TEST(ConvertLevels, SimdLevelsMatchPortableExactly)
{
    const auto levels = levels_here();
    if (levels.size() < 2)
        GTEST_SKIP() << "this CPU has the portable level only";
    size_t cases = 0, variant = 0;
    for (const ConvertFormat fmt : kFormats) {
        for (const Geometry& g : kGeometries) {
            // Tight rows (an over-read past the last row is an ASan error) and odd strides.
            const size_t src_pad = variant % 2 ? 0 : 7;
            const Frame fr = make_frame(fmt, g.sw, g.sh, src_pad, uint32_t(variant));
            for (const ResizeMethod m : {ResizeMethod::Bilinear, ResizeMethod::Nearest}) {
                const Output& o = kOutputs[variant++ % std::size(kOutputs)];
                const ConvertConfig cfg = make_config(fr, g, o, m);
                const std::string what =
                    std::string(convert_format_name(fmt)) + " " + std::to_string(g.sw) + "x" +
                    std::to_string(g.sh) + " " + g.what + " " + resize_method_name(m).data() +
                    " -> " + output_format_name(o.format).data() + " " +
                    tensor_layout_name(o.layout).data() + " " + dtype_name(o.dtype).data() +
                    (o.quant == Quant::None ? "" : " quantized");
                std::string err;
                const auto want = run_level("portable", fr, cfg, 5, err);
                ASSERT_EQ(err, "") << what;
                for (size_t i = 1; i < levels.size(); ++i) {
                    const auto got = run_level(levels[i], fr, cfg, 5, err);
                    ASSERT_EQ(err, "") << what;
                    EXPECT_EQ(diff_outputs(got, want, cfg), "") << levels[i] << ": " << what;
                }
                ++cases;
            }
        }
    }
    EXPECT_GT(cases, 300u);
}

void expect_reference(const std::string& level, const Frame& fr, const ConvertConfig& cfg,
                      const std::string& what)
{
    std::string err;
    const auto out = run_level(level, fr, cfg, 3, err);
    ASSERT_EQ(err, "") << what;
    const Errors e = compare(out, cfg, reference(fr, cfg));
    if (cfg.dtype == DType::F32 || cfg.dtype == DType::F16) {
        EXPECT_LE(e.max, 1e-2) << level << " " << what << ": " << e.describe();
    } else {
        EXPECT_LE(e.max, 2.0) << level << " " << what << ": " << e.describe();
        EXPECT_LE(e.mean, 0.5) << level << " " << what << ": " << e.describe();
    }
}

// The benchmark's jobs at full size, on every level, against the reference.
TEST(ConvertLevels, CameraJobsMatchTheReferenceAtEveryLevel)
{
    const Frame hd = make_frame(ConvertFormat::Nv12, 1920, 1080, 0, 3);
    const Frame uhd = make_frame(ConvertFormat::Nv12, 3840, 2160, 64, 4);
    const Frame yuy2 = make_frame(ConvertFormat::Yuy2, 1280, 720, 0, 5);
    const Frame nv21 = make_frame(ConvertFormat::Nv21, 1280, 720, 32, 6);
    for (const auto& level : levels_here()) {
        ConvertConfig cfg = config_for(hd);
        cfg.dst_width = 640;
        cfg.dst_height = 640;
        expect_reference(level, hd, cfg, "1080p NV12 -> 640x640 RGB");
        cfg.letterbox = true;
        cfg.fill = {114, 114, 114, 255};
        expect_reference(level, hd, cfg, "1080p NV12 -> 640x640 RGB letterbox");
        cfg.letterbox = false;
        cfg.layout = TensorLayout::Chw;
        cfg.dtype = DType::F32;
        cfg.mean = {123.675f, 116.28f, 103.53f, 0.f};
        cfg.std = {58.395f, 57.12f, 57.375f, 1.f};
        expect_reference(level, hd, cfg, "1080p NV12 -> 640x640 f32 CHW");
        cfg.dtype = DType::F16;
        expect_reference(level, hd, cfg, "1080p NV12 -> 640x640 f16 CHW");

        ConvertConfig c4 = config_for(uhd);
        c4.dst_width = 640;
        c4.dst_height = 640;
        expect_reference(level, uhd, c4, "4K NV12 -> 640x640 RGB");

        ConvertConfig cy = config_for(yuy2);
        cy.dst_width = 320;
        cy.dst_height = 320;
        expect_reference(level, yuy2, cy, "720p YUY2 -> 320x320 RGB");

        ConvertConfig cn = config_for(nv21, ColorEncoding::Bt601, ColorRange::Full);
        cn.dst_width = 416;
        cn.dst_height = 416;
        cn.dst_format = OutputFormat::Bgra;
        cn.method = ResizeMethod::Nearest;
        expect_reference(level, nv21, cn, "720p NV21 -> 416x416 BGRA nearest");
    }
}

TEST(ConvertLevels, ThreadsGiveTheSameBytesAtEveryLevel)
{
    const Frame fr = make_frame(ConvertFormat::I420, 1280, 720, 0, 9);
    ConvertConfig cfg = config_for(fr);
    cfg.dst_width = 500;
    cfg.dst_height = 333;
    cfg.letterbox = true;
    for (const auto& level : levels_here()) {
        std::string err;
        cfg.threads = 1;
        const auto one = run_level(level, fr, cfg, 0, err);
        ASSERT_EQ(err, "");
        cfg.threads = 2;
        const auto two = run_level(level, fr, cfg, 0, err);
        ASSERT_EQ(err, "");
        cfg.threads = 5;
        const auto five = run_level(level, fr, cfg, 0, err);
        ASSERT_EQ(err, "");
        EXPECT_EQ(one, two) << level;
        EXPECT_EQ(one, five) << level;
    }
}

// The fixed point in numbers: unnormalised f32 output against the double-precision
// reference, every matrix and range, at 1:1, down and up. Two lerps and the matrix in 16-bit
// arithmetic (samples in 1/32 of a level) stay within 0.15 of a level, where libyuv's 6-bit
// matrix is off by up to 16 levels.
TEST(ConvertLevels, FixedPointStaysWithinASeventhOfALevel)
{
    for (const auto& level : levels_here())
        for (const ConvertFormat fmt :
             {ConvertFormat::Nv12, ConvertFormat::I420, ConvertFormat::Yuy2, ConvertFormat::Nv24,
              ConvertFormat::Bgrx, ConvertFormat::Gray8})
            for (const ColorEncoding enc :
                 {ColorEncoding::Bt601, ColorEncoding::Bt709, ColorEncoding::Bt2020})
                for (const ColorRange range : {ColorRange::Limited, ColorRange::Full})
                    for (const size_t dw : {size_t(321), size_t(160), size_t(500)}) {
                        const Frame fr = make_frame(fmt, 321, 241, 0, 7);
                        ConvertConfig cfg = config_for(fr, enc, range);
                        cfg.dst_width = dw;
                        cfg.dst_height = dw * 3 / 4;
                        cfg.dtype = DType::F32;
                        cfg.layout = TensorLayout::Chw;
                        std::string err;
                        const auto out = run_level(level, fr, cfg, 0, err);
                        ASSERT_EQ(err, "");
                        const Errors e = compare(out, cfg, reference(fr, cfg));
                        const std::string what =
                            level + " " + std::string(convert_format_name(fmt)) + " " +
                            colorimetry_name(enc, range) + " to " + std::to_string(dw);
                        EXPECT_LE(e.max, 0.15) << what << ": " << e.describe();
                        EXPECT_LE(e.mean, 0.02) << what << ": " << e.describe();
                    }
}

} // namespace
} // namespace edgetensor::test
