// SPDX-License-Identifier: MIT
//
// Quantized outputs (ConvertConfig::quant) on every kernel level: each element equals the
// double-precision quantization of the engine's own sample, which the float run of the same
// frame and config exposes; the whole chain stays within the engine's tolerance of the
// reference; ties go to even and both ends saturate; the GL backend refuses quantization.

#include "convert/convert_quant.hpp"
#include "levels.hpp"
#include "reference.hpp"

#include <edgetensor/gl.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

/// The definition, written out here: saturate(round_half_even(((v - mean) / std) / scale) + zp)
/// in double precision, v in levels.
int32_t want_q(double v, float mean, float std, const Quantization& q, DType dtype)
{
    const double x = (v - double(mean)) / double(std);
    const double n = std::nearbyint(x / double(q.scale));
    const double lo = dtype == DType::I8 ? -128.0 : 0.0, hi = dtype == DType::I8 ? 127.0 : 255.0;
    return int32_t(std::clamp(n + double(q.zero_point), lo, hi));
}

int32_t byte_value(uint8_t b, DType dtype)
{
    return dtype == DType::I8 ? int32_t(int8_t(b)) : int32_t(b);
}

/// Element index of channel c at (x, y) in a tight output.
size_t index_of(const ConvertConfig& cfg, size_t dw, size_t dh, size_t c, size_t x, size_t y)
{
    const size_t channels = output_format_channels(cfg.dst_format);
    return cfg.layout == TensorLayout::Hwc ? (y * dw + x) * channels + c : (c * dh + y) * dw + x;
}

struct Case {
    std::string what;
    Frame frame;
    ConvertConfig cfg;
};

ConvertConfig quantized(const Frame& fr, OutputFormat f, TensorLayout l, DType d,
                        std::array<float, 4> mean, std::array<float, 4> std, Quantization q)
{
    ConvertConfig c = config_for(fr);
    c.dst_format = f;
    c.layout = l;
    c.dtype = d;
    c.mean = mean;
    c.std = std;
    c.quant = q;
    return c;
}

constexpr std::array<float, 4> kImagenetMean{123.675f, 116.28f, 103.53f, 10.f};
constexpr std::array<float, 4> kImagenetStd{58.395f, 57.12f, 57.375f, 64.f};
// A configuration no float multiply-add reproduces (see ConvertQuantizer): the table path.
constexpr std::array<float, 4> kOddMean{195.896667f, 195.896667f, 195.896667f, 195.896667f};
constexpr std::array<float, 4> kOddStd{44.7099762f, 44.7099762f, 44.7099762f, 44.7099762f};
constexpr Quantization kOddQuant{0.0141094513f, 0};

std::vector<Case> cases()
{
    std::vector<Case> out;
    const Frame nv12 = make_frame(ConvertFormat::Nv12, 640, 360, 0, 11);
    ConvertConfig c = quantized(nv12, OutputFormat::Rgb, TensorLayout::Chw, DType::I8,
                                kImagenetMean, kImagenetStd, {0.0186584f, -14});
    c.dst_width = 320;
    c.dst_height = 320;
    c.letterbox = true;
    c.fill = {114, 114, 114, 255};
    out.push_back({"NV12 -> 320x320 RGB CHW i8 letterbox, ImageNet", nv12, c});

    const Frame yuy2 = make_frame(ConvertFormat::Yuy2, 322, 180, 6, 12);
    c = quantized(yuy2, OutputFormat::Rgba, TensorLayout::Hwc, DType::U8, {0, 0, 0, 0},
                  {255, 255, 255, 255}, {1.f / 255.f, 0});
    c.dst_width = 161;
    c.dst_height = 101;
    out.push_back({"YUY2 -> RGBA HWC u8, [0, 1] / (1/255)", yuy2, c});

    const Frame i420 = make_frame(ConvertFormat::I420, 300, 200, 0, 13);
    c = quantized(i420, OutputFormat::Bgra, TensorLayout::Chw, DType::I8,
                  {127.5f, 127.5f, 127.5f, 127.5f}, {127.5f, 127.5f, 127.5f, 127.5f},
                  {1.f / 128.f, -1});
    c.dst_width = 97;
    c.dst_height = 75;
    c.letterbox = true;
    c.fill = {0, 255, 30, 200};
    out.push_back({"I420 -> BGRA CHW i8 letterbox, [-1, 1] / (1/128)", i420, c});

    const Frame rgb = make_frame(ConvertFormat::Rgb, 203, 77, 3, 14);
    c = quantized(rgb, OutputFormat::Bgr, TensorLayout::Hwc, DType::I8, kImagenetMean, kImagenetStd,
                  {0.0186584f, -14});
    c.dst_width = 150;
    c.dst_height = 60;
    out.push_back({"RGB -> BGR HWC i8, ImageNet", rgb, c});

    const Frame gray = make_frame(ConvertFormat::Gray8, 190, 64, 0, 15);
    c = quantized(gray, OutputFormat::Gray, TensorLayout::Hwc, DType::U8, {0, 0, 0, 0},
                  {1, 1, 1, 1}, {1.f, 0});
    c.dst_width = 95;
    c.dst_height = 64;
    out.push_back({"GRAY8 -> GRAY u8, scale 1 (ties at every half level)", gray, c});

    const Frame nv21 = make_frame(ConvertFormat::Nv21, 256, 144, 0, 16);
    c = quantized(nv21, OutputFormat::Rgb, TensorLayout::Chw, DType::I8, kOddMean, kOddStd,
                  kOddQuant);
    c.dst_width = 200;
    c.dst_height = 120;
    out.push_back({"NV21 -> RGB CHW i8, no exact fast form (table)", nv21, c});

    const Frame bgrx = make_frame(ConvertFormat::Bgrx, 160, 90, 0, 17);
    c = quantized(bgrx, OutputFormat::Rgb, TensorLayout::Chw, DType::U8, kImagenetMean,
                  kImagenetStd, {0.0186584f, 114});
    c.dst_width = 131;
    c.dst_height = 70;
    c.method = ResizeMethod::Nearest;
    out.push_back({"BGRx -> RGB CHW u8 nearest, ImageNet", bgrx, c});
    return out;
}

/// Runs `cfg` quantized and as f32 on `level`; every quantized element must equal the
/// quantization of the sample the f32 run holds. Float rounding of the f32 value itself may
/// put it on the other side of a .5 than the sample; those (and only those) elements differ
/// from quantizing the float, by one.
void expect_float_run_quantized(const std::string& level, const Case& k)
{
    const ConvertConfig& cfg = k.cfg;
    ConvertConfig fcfg = cfg;
    fcfg.dtype = DType::F32;
    fcfg.quant.reset();
    std::string err;
    const auto q = run_level(level, k.frame, cfg, 3, err);
    ASSERT_EQ(err, "") << k.what;
    const auto f = run_level(level, k.frame, fcfg, 3, err);
    ASSERT_EQ(err, "") << k.what;
    const size_t dw = cfg.dst_width, dh = cfg.dst_height;
    const size_t channels = output_format_channels(cfg.dst_format);
    ASSERT_EQ(q.size(), dw * dh * channels);
    ASSERT_EQ(f.size(), q.size() * 4);
    const Quantization& qp = *cfg.quant;
    size_t mismatches = 0, literal_diffs = 0, far_diffs = 0;
    std::string first, first_far;
    for (size_t c = 0; c < channels; ++c)
        for (size_t y = 0; y < dh; ++y)
            for (size_t x = 0; x < dw; ++x) {
                const size_t i = index_of(cfg, dw, dh, c, x, y);
                float xf;
                std::memcpy(&xf, &f[i * 4], 4);
                // The engine's sample, in 1/32 of a level.
                const double v32 = (double(xf) * double(cfg.std[c]) + double(cfg.mean[c])) * 32.0;
                const double v = std::nearbyint(v32);
                ASSERT_LT(std::fabs(v32 - v), 0.01) << k.what << ": f32 holds no sample";
                ASSERT_GE(v, 0.0);
                ASSERT_LE(v, 8160.0);
                const int32_t want = want_q(v / 32.0, cfg.mean[c], cfg.std[c], qp, cfg.dtype);
                const int32_t got = byte_value(q[i], cfg.dtype);
                if (got != want && mismatches++ == 0)
                    first = "channel " + std::to_string(c) + " (" + std::to_string(x) + ", " +
                            std::to_string(y) + "): got " + std::to_string(got) + " want " +
                            std::to_string(want) + " (sample " + std::to_string(v) + "/32)";
                // Quantizing the float output itself, in double precision.
                const double t = double(xf) / double(qp.scale);
                const double nl = std::clamp(std::nearbyint(t) + qp.zero_point,
                                             cfg.dtype == DType::I8 ? -128.0 : 0.0,
                                             cfg.dtype == DType::I8 ? 127.0 : 255.0);
                if (int32_t(nl) != got) {
                    ++literal_diffs;
                    const bool near_tie = std::fabs(std::fabs(t - std::trunc(t)) - 0.5) < 1e-4;
                    if ((!near_tie || std::abs(int32_t(nl) - got) > 1) && far_diffs++ == 0)
                        first_far = "channel " + std::to_string(c) + " (" + std::to_string(x) +
                                    ", " + std::to_string(y) + "): got " + std::to_string(got) +
                                    ", the float quantizes to " + std::to_string(nl) + " (t " +
                                    std::to_string(t) + ")";
                }
            }
    EXPECT_EQ(mismatches, 0u) << level << " " << k.what << ": first " << first;
    EXPECT_EQ(far_diffs, 0u) << level << " " << k.what
                             << ": quantizing the float differs away from a .5: " << first_far;
    // Most elements are nowhere near a .5.
    EXPECT_LT(literal_diffs * 100, q.size()) << level << " " << k.what;
}

TEST(ConvertQuant, EveryElementIsTheQuantizationOfTheFloatRunsSample)
{
    for (const auto& level : levels_here())
        for (const Case& k : cases())
            expect_float_run_quantized(level, k);
}

/// Sets EDGETENSOR_CONVERT_QUANT_TABLE=1 for the converters created in its scope: every level
/// reads the reference's table instead of its fast form.
class TableScope
{
public:
    TableScope() { ::setenv("EDGETENSOR_CONVERT_QUANT_TABLE", "1", 1); }
    ~TableScope() { ::unsetenv("EDGETENSOR_CONVERT_QUANT_TABLE"); }
    TableScope(const TableScope&) = delete;
    TableScope& operator=(const TableScope&) = delete;
};

TEST(ConvertQuant, TheTableCaseHasNoExactMultiplyAdd)
{
    // What the table case above stands for: no float multiply-then-add reproduces the
    // reference, so levels without FMA read the table (AVX2 has an exact fused form).
    const auto z =
        detail::convert::build_quantizer(3, kOddMean.data(), kOddStd.data(), kOddQuant, DType::I8);
    EXPECT_FALSE(z.mul_add.exact);
    const auto common = detail::convert::build_quantizer(
        3, kImagenetMean.data(), kImagenetStd.data(), {0.0186584f, -14}, DType::I8);
    EXPECT_TRUE(common.mul_add.exact);
    EXPECT_TRUE(common.fused.exact);
}

TEST(ConvertQuant, LevelsAndTheTableGiveIdenticalBytes)
{
    for (const Case& k : cases()) {
        std::string err;
        const auto want = run_level("portable", k.frame, k.cfg, 5, err);
        ASSERT_EQ(err, "") << k.what;
        for (const auto& level : levels_here()) {
            const auto got = run_level(level, k.frame, k.cfg, 5, err);
            ASSERT_EQ(err, "") << k.what;
            EXPECT_EQ(got, want) << level << ": " << k.what;
            TableScope table;
            const auto from_table = run_level(level, k.frame, k.cfg, 5, err);
            ASSERT_EQ(err, "") << k.what;
            EXPECT_EQ(from_table, want) << level << " (table): " << k.what;
        }
    }
}

// Against the double-precision model of the whole chain (reference.hpp): the sample is within
// 0.15 of a level of the model's value, so q is within 0.15 / (std * scale) of the model's
// before rounding.
TEST(ConvertQuant, WholeChainWithinTheEnginesTolerance)
{
    for (const auto& level : levels_here())
        for (const ConvertFormat fmt :
             {ConvertFormat::Nv12, ConvertFormat::I420, ConvertFormat::Yuy2, ConvertFormat::Bgrx})
            for (const DType dt : {DType::I8, DType::U8}) {
                const Frame fr = make_frame(fmt, 321, 241, 0, 21);
                ConvertConfig cfg =
                    quantized(fr, OutputFormat::Rgb, TensorLayout::Chw, dt, kImagenetMean,
                              kImagenetStd, {0.0186584f, dt == DType::I8 ? -14 : 114});
                cfg.dst_width = 160;
                cfg.dst_height = 120;
                std::string err;
                const auto out = run_level(level, fr, cfg, 0, err);
                ASSERT_EQ(err, "");
                const Expected e = reference(fr, cfg);
                double sum = 0.0;
                int32_t worst = 0;
                for (size_t c = 0; c < 3; ++c) {
                    const double span = double(cfg.std[c]) * double(cfg.quant->scale);
                    const int32_t tol = int32_t(std::floor(0.15 / span)) + 1;
                    for (size_t y = 0; y < e.height; ++y)
                        for (size_t x = 0; x < e.width; ++x) {
                            const int32_t got =
                                byte_value(out[index_of(cfg, e.width, e.height, c, x, y)], dt);
                            const int32_t want =
                                want_q(e.at(c, x, y), cfg.mean[c], cfg.std[c], *cfg.quant, dt);
                            const int32_t d = std::abs(got - want);
                            EXPECT_LE(d, tol) << level << " " << convert_format_name(fmt);
                            worst = std::max(worst, d);
                            sum += d;
                        }
                }
                const double mean = sum / double(3 * e.width * e.height);
                EXPECT_LE(mean, 0.05) << level << " " << convert_format_name(fmt) << " "
                                      << dtype_name(dt) << ", worst " << worst;
            }
}

/// A GRAY8 frame whose 2:1 bilinear downscale lands every output pixel k exactly on k + 0.5
/// levels: source pixels (k, k + 1), weights one half each.
Frame half_level_frame()
{
    Frame fr;
    fr.format = ConvertFormat::Gray8;
    fr.width = 510;
    fr.height = 2;
    fr.strides[0] = 510;
    fr.planes[0].resize(510 * 2);
    for (size_t y = 0; y < 2; ++y)
        for (size_t k = 0; k < 255; ++k) {
            fr.planes[0][y * 510 + 2 * k] = uint8_t(k);
            fr.planes[0][y * 510 + 2 * k + 1] = uint8_t(k + 1);
        }
    return fr;
}

/// round_half_even(num / den) for integers, den > 0: the tie rule spelled out.
int64_t rne_ratio(int64_t num, int64_t den)
{
    int64_t q = num / den, r = num % den;
    if (r < 0) {
        r += den;
        --q;
    }
    if (2 * r > den || (2 * r == den && (q & 1)))
        ++q;
    return q;
}

TEST(ConvertQuant, TiesGoToEvenAndBothEndsSaturate)
{
    const Frame fr = half_level_frame();
    struct Tie {
        DType dtype;
        int32_t mean;
        int32_t scale;
        int32_t zero_point;
        bool low, high; // saturates at the bottom / top of the dtype
        const char* what;
    };
    const Tie ties[] = {
        {DType::U8, 0, 1, 0, false, false, "u8: k + 0.5 to even"},
        {DType::U8, 0, 1, 1, false, true, "u8, odd zero point: added after rounding"},
        {DType::I8, 0, 1, 0, false, true, "i8: saturates at 127"},
        {DType::I8, 200, 1, 0, true, false, "i8, mean 200: saturates at -128"},
        {DType::U8, 0, 1, 100, false, true, "u8, zero point 100: saturates at 255"},
        {DType::U8, 128, 1, 0, true, false, "u8, mean 128: saturates at 0"},
        {DType::I8, 0, 3, -128, false, false, "i8, scale 3: ties where k = 3m + 1"},
    };
    const std::pair<OutputFormat, TensorLayout> outputs[] = {
        {OutputFormat::Gray, TensorLayout::Hwc},
        {OutputFormat::Rgb, TensorLayout::Chw},
        {OutputFormat::Bgra, TensorLayout::Hwc},
    };
    for (const auto& level : levels_here())
        for (const Tie& t : ties)
            for (const auto& [fmt, layout] : outputs) {
                ConvertConfig cfg = config_for(fr);
                cfg.dst_width = 255;
                cfg.dst_height = 2;
                cfg.dst_format = fmt;
                cfg.layout = layout;
                cfg.dtype = t.dtype;
                const float m = float(t.mean);
                cfg.mean = {m, m, m, m};
                cfg.quant = Quantization{float(t.scale), t.zero_point};
                std::string err;
                const auto out = run_level(level, fr, cfg, 1, err);
                ASSERT_EQ(err, "") << t.what;
                const int64_t lo = t.dtype == DType::I8 ? -128 : 0;
                const int64_t hi = t.dtype == DType::I8 ? 127 : 255;
                const size_t channels = output_format_channels(fmt);
                bool low = false, high = false, tie_even = false, tie_odd = false;
                for (size_t k = 0; k < 255; ++k)
                    for (size_t c = 0; c < channels; ++c) {
                        // ((k + 0.5 - mean) / scale) = (2k + 1 - 2 mean) / (2 scale); alpha 255.
                        const int64_t num =
                            c == 3 ? 2 * (255 - t.mean) : int64_t(2 * k + 1) - 2 * t.mean;
                        const int64_t n = rne_ratio(num, 2 * t.scale);
                        const int64_t want = std::clamp<int64_t>(n + t.zero_point, lo, hi);
                        if (c < 3 && num % (2 * t.scale) == t.scale) {
                            (rne_ratio(num - t.scale, 2 * t.scale) & 1 ? tie_odd : tie_even) = true;
                        }
                        low = low || want == lo;
                        high = high || want == hi;
                        for (size_t y = 0; y < 2; ++y) {
                            const int32_t got =
                                byte_value(out[index_of(cfg, 255, 2, c, k, y)], t.dtype);
                            ASSERT_EQ(got, want)
                                << level << " " << t.what << " " << output_format_name(fmt)
                                << " channel " << c << " k " << k;
                        }
                    }
                EXPECT_TRUE(tie_even && tie_odd) << t.what << ": ties on both sides";
                EXPECT_TRUE(high || !t.high) << t.what << ": saturates at the top";
                EXPECT_TRUE(low || !t.low) << t.what << ": saturates at the bottom";
            }
}

// Without quantization nothing changed: integer outputs round half up, i8 is v - 128.
TEST(ConvertQuant, AbsentQuantizationKeepsRoundHalfUp)
{
    EXPECT_FALSE(ConvertConfig{}.quant);
    const Frame fr = half_level_frame();
    for (const DType dt : {DType::U8, DType::I8}) {
        ConvertConfig cfg = config_for(fr);
        cfg.dst_width = 255;
        cfg.dst_height = 2;
        cfg.dst_format = OutputFormat::Gray;
        cfg.dtype = dt;
        std::vector<uint8_t> out;
        ASSERT_EQ(run_tight(fr, cfg, out), "");
        for (size_t k = 0; k < 255; ++k)
            EXPECT_EQ(byte_value(out[k], dt), int32_t(k + 1) - (dt == DType::I8 ? 128 : 0))
                << dtype_name(dt) << " k " << k;
    }
}

TEST(ConvertQuant, NegativeGlRefusesQuantizationAndAutoStaysOnTheCpu)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 64, 48);
    ConvertConfig cfg = config_for(fr);
    cfg.dtype = DType::I8;
    cfg.quant = Quantization{0.02f, 3};
    cfg.compute = ConvertCompute::Gl;
    auto gl = Converter::create(cfg);
    ASSERT_FALSE(gl);
    EXPECT_EQ(gl.error().code(), ErrorCode::NotSupported);
    if (gl_built()) {
        EXPECT_NE(gl.error().message().find("quantized"), std::string::npos)
            << gl.error().message();
    }
    cfg.compute = ConvertCompute::Auto;
    auto autod = Converter::create(cfg);
    ASSERT_TRUE(autod) << autod.error().message();
    EXPECT_EQ(autod->compute(), ConvertCompute::Cpu);
    if (gl_built()) {
        EXPECT_NE(autod->compute_reason().find("quantized"), std::string::npos)
            << autod->compute_reason();
    }
}

} // namespace
} // namespace edgetensor::test
