// SPDX-License-Identifier: MIT
//
// The direct YUV import's decisions without a GL (gl/direct_check.hpp), so they run on any
// host: when direct imports may be tried and the reason when not, the pixel check's tolerance,
// its judgement of a driver's RGB against the engine's function, and the table of driver
// models that says why a check failed. The real imports and probe readbacks run in the VM lane
// (test_gl_dmabuf.cpp).

#include "gl/direct_check.hpp"
#include "gl_test_util.hpp"

#include <edgetensor/convert.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace edgetensor::detail::gl
{
namespace
{

constexpr uint32_t kNv12 = 0x3231564e; // 'NV12'

Colorimetry colorimetry(ColorEncoding e, ColorRange r)
{
    return Colorimetry{ColorSpace::Unspecified, ColorTransfer::Unspecified, e, r};
}

// An NV12 1920x1080 BT.709 limited source to u8 RGB, 640x640 bilinear.
ShaderParams nv12_params()
{
    ShaderParams p;
    p.cfg.src_format = ConvertFormat::Nv12;
    p.cfg.src_width = 1920;
    p.cfg.src_height = 1080;
    p.cfg.dst_width = 640;
    p.cfg.dst_height = 640;
    p.src = convert::spec_of(p.cfg.src_format);
    p.applied = colorimetry(ColorEncoding::Bt709, ColorRange::Limited);
    p.channels = 3;
    return p;
}

using edgetensor::test::capable_gl;

struct FakeQuery {
    DmaBufFormatSupport answer{true, true, true, true, false};
    int asked = 0;
    FormatQuery fn()
    {
        return [this](uint32_t) {
            ++asked;
            return answer;
        };
    }
};

TEST(GlDirectPlan, TriedWhenEverythingAllowsItWithTheSourcesFourcc)
{
    FakeQuery q;
    q.answer.external_only = true;
    const DirectPlan plan = plan_direct(nv12_params(), capable_gl(), nullptr, q.fn());
    ASSERT_TRUE(plan.fourcc) << plan.off;
    EXPECT_EQ(*plan.fourcc, kNv12);
    EXPECT_TRUE(plan.off.empty());
    EXPECT_TRUE(plan.external_only);
    EXPECT_EQ(q.asked, 1);
}

// Each reason, in the order they are looked at; `driver` says whether it is logged as INFO.
TEST(GlDirectPlan, NegativeEachReasonNamedAndTheDisplayNotAskedBeforeItMatters)
{
    struct Case {
        const char* why;
        bool driver;
        void (*change)(ShaderParams&, GlInfo&);
        const char* env = nullptr;
    };
    const Case cases[] = {
        {"the source is not YUV", false,
         [](ShaderParams& p, GlInfo&) { p.cfg.src_format = ConvertFormat::Rgb; }},
        {"EDGETENSOR_GL_DIRECT=0", true, [](ShaderParams&, GlInfo&) {}, "0"},
        {"a software renderer (llvmpipe); EDGETENSOR_GL_DIRECT=1 tries it there", true,
         [](ShaderParams&, GlInfo& i) {
             i.software = true;
             i.renderer = "llvmpipe";
         }},
        {"a GRAY output reads the luma plane only", false,
         [](ShaderParams& p, GlInfo&) {
             p.cfg.dst_format = OutputFormat::Gray;
             p.channels = 1;
         }},
        {"the EGL display lacks EGL_EXT_image_dma_buf_import", false,
         [](ShaderParams&, GlInfo& i) { i.dma_buf_import = false; }},
        {"float output normalised by std < 25 is held to 1e-2, tighter than a driver's colour "
         "conversion can be checked to",
         false,
         [](ShaderParams& p, GlInfo&) {
             p.cfg.dtype = DType::F32;
             p.cfg.std = {58.f, 24.f, 57.f, 1.f};
         }},
        {"the GL lacks GL_OES_EGL_image_external_essl3", true,
         [](ShaderParams&, GlInfo& i) { i.yuv_external = false; }},
        {"an odd size with subsampled chroma", false,
         [](ShaderParams& p, GlInfo&) { p.cfg.src_height = 1081; }},
        {"the frame exceeds the texture size limit", true,
         [](ShaderParams&, GlInfo& i) { i.max_texture_size = 1024; }},
        {"the colorimetry is unresolved", false,
         [](ShaderParams& p, GlInfo&) { p.applied.range = ColorRange::Unspecified; }},
    };
    for (const Case& c : cases) {
        ShaderParams p = nv12_params();
        GlInfo info = capable_gl();
        c.change(p, info);
        FakeQuery q;
        const DirectPlan plan = plan_direct(p, info, c.env, q.fn());
        EXPECT_FALSE(plan.fourcc) << c.why;
        EXPECT_EQ(plan.off, c.why);
        EXPECT_EQ(plan.driver, c.driver) << c.why;
        EXPECT_EQ(q.asked, 0) << c.why;
    }
}

TEST(GlDirectPlan, NegativeWhatTheDisplaySaysOfTheFormat)
{
    struct Case {
        DmaBufFormatSupport fs;
        const char* why;
    };
    const Case cases[] = {
        {{false, false, false, false, false},
         "the display does not list its DMA-BUF formats (EGL_EXT_image_dma_buf_import_modifiers)"},
        {{true, false, false, false, false},
         "the driver does not list NV12 among its DMA-BUF import formats"},
        {{true, true, false, true, false}, "the driver offers no linear NV12 modifier"},
    };
    for (const Case& c : cases) {
        FakeQuery q;
        q.answer = c.fs;
        const DirectPlan plan = plan_direct(nv12_params(), capable_gl(), nullptr, q.fn());
        EXPECT_FALSE(plan.fourcc);
        EXPECT_EQ(plan.off, c.why);
        EXPECT_TRUE(plan.driver);
    }
    // No modifier listed at all: a linear import is what the driver takes.
    FakeQuery q;
    q.answer = {true, true, false, false, false};
    EXPECT_TRUE(plan_direct(nv12_params(), capable_gl(), nullptr, q.fn()).fourcc);
}

TEST(GlDirectPlan, WhatIsAllowedDespiteLookingLikeAReason)
{
    FakeQuery q;
    // EDGETENSOR_GL_DIRECT=1 tries it on a software renderer (the VM lane's kms_swrast).
    GlInfo sw = capable_gl();
    sw.software = true;
    EXPECT_TRUE(plan_direct(nv12_params(), sw, "1", q.fn()).fourcc);
    // Float output with every std >= 25; an odd width of a format without subsampling.
    ShaderParams f = nv12_params();
    f.cfg.dtype = DType::F16;
    f.cfg.std = {30.f, 26.f, 30.f, 0.001f}; // the fourth channel is not an output channel
    EXPECT_TRUE(plan_direct(f, capable_gl(), nullptr, q.fn()).fourcc);
    ShaderParams nv16 = nv12_params();
    nv16.cfg.src_format = ConvertFormat::Nv16;
    nv16.src = convert::spec_of(nv16.cfg.src_format);
    nv16.cfg.src_height = 1081; // NV16's chroma has every row
    EXPECT_TRUE(plan_direct(nv16, capable_gl(), nullptr, q.fn()).fourcc);
    nv16.cfg.src_width = 1921;
    EXPECT_EQ(plan_direct(nv16, capable_gl(), nullptr, q.fn()).off,
              "an odd size with subsampled chroma");
}

TEST(GlDirectCheck, ToleranceScalesWithStdForFloatsAndCanBeOverridden)
{
    ConvertConfig c;
    ProbeTolerance t = probe_tolerance(c, 3, std::nullopt);
    EXPECT_DOUBLE_EQ(t.max, 1.5);
    EXPECT_DOUBLE_EQ(t.mean, 0.5);
    c.dtype = DType::F32;
    c.std = {50.f, 60.f, 70.f, 1.f};
    t = probe_tolerance(c, 3, std::nullopt);
    EXPECT_DOUBLE_EQ(t.max, 0.75);
    EXPECT_DOUBLE_EQ(t.mean, 0.25);
    c.std = {255.f, 255.f, 255.f, 1.f};
    t = probe_tolerance(c, 3, std::nullopt);
    EXPECT_DOUBLE_EQ(t.max, 1.5); // never looser than for u8
    t = probe_tolerance(ConvertConfig{}, 3, 3.f);
    EXPECT_DOUBLE_EQ(t.max, 3.0);
    EXPECT_DOUBLE_EQ(t.mean, 0.5);
    t = probe_tolerance(ConvertConfig{}, 3, -1.f); // the tests' forced decline
    EXPECT_DOUBLE_EQ(t.max, -1.0);
    EXPECT_DOUBLE_EQ(t.mean, -1.0);
}

TEST(GlDirectCheck, OnlyBilinearResamplingBlends)
{
    ConvertConfig c;
    ConvertGeometry g;
    g.source = {0, 0, 1920, 1080};
    g.content = {0, 0, 640, 360};
    EXPECT_TRUE(output_blends(c, g));
    c.method = ResizeMethod::Nearest;
    EXPECT_FALSE(output_blends(c, g));
    c.method = ResizeMethod::Bilinear;
    g.content = {0, 140, 1920, 1080}; // 1:1, letterboxed
    EXPECT_FALSE(output_blends(c, g));
}

TEST(GlDirectCheck, ProbeGridReadsEachPixelsBytesAndTheDriversBits)
{
    // NV12 8x4: luma byte = 10 * row + column, chroma (U, V) = (100 + block, 200 + block).
    const size_t W = 8, H = 4;
    std::vector<uint8_t> y(W * H), uv(W * H / 2);
    for (size_t r = 0; r < H; ++r)
        for (size_t c = 0; c < W; ++c)
            y[r * W + c] = uint8_t(10 * r + c);
    for (size_t b = 0; b < W * H / 4; ++b) {
        uv[2 * b] = uint8_t(100 + b);
        uv[2 * b + 1] = uint8_t(200 + b);
    }
    const std::array<MappedPlane, 3> planes = {MappedPlane{y.data(), y.size(), W},
                                               MappedPlane{uv.data(), uv.size(), W},
                                               MappedPlane{y.data(), y.size(), W}};
    std::vector<uint32_t> bits(2 * 2 * 4);
    for (size_t k = 0; k < 4; ++k) {
        const float v[3] = {float(k) / 255.f, 0.5f, -0.25f};
        std::memcpy(&bits[4 * k], v, sizeof v);
    }
    const ProbeGrid g =
        probe_grid(*convert::spec_of(ConvertFormat::Nv12), planes, W, H, 2, 2, bits);
    ASSERT_EQ(g.samples.size(), 4u);
    // Probes at the corners: (0, 0), (7, 0), (0, 3), (7, 3).
    const ProbeSample& last = g.samples[3];
    EXPECT_EQ(last.x, 7u);
    EXPECT_EQ(last.y, 3u);
    EXPECT_FLOAT_EQ(last.yuv[0], 37.f);
    EXPECT_FLOAT_EQ(last.yuv[1], 107.f); // chroma block (3, 1) of 4 x 2
    EXPECT_FLOAT_EQ(last.yuv[2], 207.f);
    EXPECT_FLOAT_EQ(last.rgb[0], 3.f);
    EXPECT_FLOAT_EQ(last.rgb[1], 127.5f);
    EXPECT_FLOAT_EQ(last.rgb[2], -63.75f); // unclamped, as the driver gave it
    EXPECT_EQ(g.samples[1].x, 7u);
    EXPECT_EQ(g.samples[1].y, 0u);
    EXPECT_FLOAT_EQ(g.samples[1].yuv[1], 103.f);
}

// Probe pixels over the whole range, including colours outside the gamut (R > 255, B < 0)
// and U != V, so every model of the table gives other values than the others.
std::vector<std::array<float, 3>> probe_yuv()
{
    std::vector<std::array<float, 3>> v;
    for (float y : {0.f, 16.f, 81.f, 145.f, 235.f, 255.f})
        for (float u : {0.f, 60.f, 128.f, 240.f})
            for (float w : {16.f, 128.f, 200.f, 255.f})
                v.push_back({y, u, w});
    return v;
}

// A grid whose driver reads `driver(yuv)`.
template <typename F> ProbeGrid grid_of(F driver)
{
    const auto yuv = probe_yuv();
    ProbeGrid g{yuv.size(), 1, {}};
    for (size_t i = 0; i < yuv.size(); ++i)
        g.samples.push_back({i, 0, yuv[i], driver(yuv[i])});
    return g;
}

TEST(GlDirectCheck, DriverModelTableIsDataWithTheEnginesFunctionFirst)
{
    std::set<std::string> names;
    for (const DriverModel& m : kDriverModels)
        EXPECT_TRUE(names.insert(m.name).second) << m.name;
    const DriverModel& engine = kDriverModels[0];
    EXPECT_STREQ(engine.name, "the engine's function clamped to 0..255");
    EXPECT_FALSE(engine.bt601_limited || engine.swap_uv || engine.no_chroma || engine.zeros);
    EXPECT_TRUE(engine.clamp);
    // The engine's model is the engine's function: convert::yuv_to_rgb, clamped.
    const Colorimetry c = colorimetry(ColorEncoding::Bt2020, ColorRange::Full);
    for (const auto& v : probe_yuv()) {
        const auto want = convert::yuv_to_rgb(convert::yuv_gains(c), v[0], v[1], v[2]);
        const auto got = model_rgb(engine, c, v);
        for (size_t q = 0; q < 3; ++q)
            EXPECT_EQ(got[q], std::clamp(want[q], 0.f, 255.f));
    }
}

TEST(GlDirectCheck, EachDriverModelIsRecognisedAsTheClosest)
{
    const Colorimetry c = colorimetry(ColorEncoding::Bt709, ColorRange::Full);
    for (const DriverModel& m : kDriverModels) {
        // Blending outputs compare the driver unclamped, so clamped and unclamped models differ.
        const ProbeGrid g = grid_of([&](const auto& v) { return model_rgb(m, c, v); });
        const ModelFit fit = closest_driver_model(g, c, true);
        EXPECT_EQ(fit.model, &m) << m.name << " fitted as " << fit.model->name;
        EXPECT_EQ(fit.mean, 0.0) << m.name;
    }
}

TEST(GlDirectCheck, TheEnginesOwnFunctionPasses)
{
    const Colorimetry c = colorimetry(ColorEncoding::Bt601, ColorRange::Limited);
    for (const bool blends : {false, true}) {
        const ProbeGrid g = grid_of([&](const auto& v) {
            return convert::yuv_to_rgb(convert::yuv_gains(c), v[0], v[1], v[2]);
        });
        const ProbeJudgement j = judge_probe(g, c, blends, {1.5, 0.5});
        EXPECT_TRUE(j.pass) << j.text;
        EXPECT_EQ(j.text, "driver RGB vs the CPU engine over 96 probe pixels: max 0.000, mean "
                          "0.000 levels (tolerance 1.500, mean 0.500)");
    }
}

TEST(GlDirectCheck, NegativeADriverThatIgnoresTheHintsFailsAndIsNamed)
{
    const Colorimetry c = colorimetry(ColorEncoding::Bt709, ColorRange::Full);
    const DriverModel& ignores = kDriverModels[1];
    const ProbeGrid g = grid_of([&](const auto& v) { return model_rgb(ignores, c, v); });
    const ProbeJudgement j = judge_probe(g, c, false, {1.5, 0.5});
    EXPECT_FALSE(j.pass);
    EXPECT_EQ(j.text.rfind("driver RGB vs the CPU engine over 96 probe pixels: max ", 0), 0u)
        << j.text;
    EXPECT_NE(j.text.find("; worst: pixel ("), std::string::npos) << j.text;
    EXPECT_NE(j.text.find("where the CPU engine computes"), std::string::npos) << j.text;
    EXPECT_NE(j.text.find("; closest model of the driver: BT.601 limited clamped (the hints "
                          "ignored) (mean 0.000 levels)"),
              std::string::npos)
        << j.text;
    // Two sample pixels of the middle row (here the only one).
    EXPECT_NE(j.text.find("; pixel (0, 0) Y 0 U 0 V 16 reads "), std::string::npos) << j.text;
    EXPECT_NE(j.text.find("; pixel (1, 0) Y 0 U 0 V 128 reads "), std::string::npos) << j.text;
}

TEST(GlDirectCheck, NegativeAMeanBeyondItsToleranceFailsEvenWithinTheMaximum)
{
    const Colorimetry c = colorimetry(ColorEncoding::Bt601, ColorRange::Full);
    const ProbeGrid g = grid_of([&](const auto& v) {
        auto rgb = convert::yuv_to_rgb(convert::yuv_gains(c), v[0], v[1], v[2]);
        for (float& x : rgb)
            x = std::clamp(x, 0.f, 255.f) + (x < 128.f ? 1.f : -1.f); // 1 level off everywhere
        return rgb;
    });
    EXPECT_FALSE(judge_probe(g, c, false, {1.5, 0.5}).pass);
    EXPECT_TRUE(judge_probe(g, c, false, {1.5, 1.01}).pass);
    EXPECT_FALSE(judge_probe(g, c, false, {-1.0, -1.0}).pass); // the forced decline
}

TEST(GlDirectCheck, NegativeNotANumberIsTheWorstPossible)
{
    const Colorimetry c = colorimetry(ColorEncoding::Bt709, ColorRange::Limited);
    ProbeGrid g = grid_of([&](const auto& v) {
        return convert::yuv_to_rgb(convert::yuv_gains(c), v[0], v[1], v[2]);
    });
    g.samples[5].rgb[1] = std::nanf("");
    const ProbeJudgement j = judge_probe(g, c, true, {1e6, 1e6});
    EXPECT_FALSE(j.pass);
    EXPECT_NE(j.text.find("max 1000000000.000"), std::string::npos) << j.text;
}

// The check's reference is the engine's own function: the CPU engine converting the same
// pixels (1:1, u8) lands within rounding of convert::yuv_to_rgb, for every matrix and range.
TEST(GlDirectCheck, TheReferenceFormulaIsWhatTheCpuEngineComputes)
{
    const auto yuv = probe_yuv();
    const size_t W = yuv.size();
    // NV24: full-resolution chroma, so each pixel keeps its own U and V.
    std::vector<uint8_t> y(W), uv(2 * W), out(3 * W);
    for (size_t i = 0; i < W; ++i) {
        y[i] = uint8_t(yuv[i][0]);
        uv[2 * i] = uint8_t(yuv[i][1]);
        uv[2 * i + 1] = uint8_t(yuv[i][2]);
    }
    for (const ColorEncoding e :
         {ColorEncoding::Bt601, ColorEncoding::Bt709, ColorEncoding::Bt2020})
        for (const ColorRange r : {ColorRange::Limited, ColorRange::Full}) {
            ConvertConfig cfg;
            cfg.src_format = ConvertFormat::Nv24;
            cfg.src_width = W;
            cfg.src_height = 1;
            cfg.src_colorimetry = colorimetry(e, r);
            cfg.compute = ConvertCompute::Cpu;
            auto conv = Converter::create(cfg);
            ASSERT_TRUE(conv) << conv.error().message();
            SourceFrame src;
            src.planes[0] = {y.data(), W};
            src.planes[1] = {uv.data(), 2 * W};
            ASSERT_TRUE(conv->run(src, DestFrame{out.data(), 3 * W, 0}));
            const auto g = convert::yuv_gains(cfg.src_colorimetry);
            for (size_t i = 0; i < W; ++i) {
                const auto want = convert::yuv_to_rgb(g, yuv[i][0], yuv[i][1], yuv[i][2]);
                for (size_t q = 0; q < 3; ++q)
                    EXPECT_NEAR(double(out[3 * i + q]),
                                std::round(std::clamp(double(want[q]), 0.0, 255.0)), 1.0)
                        << "pixel " << i << " channel " << q << " encoding " << int(e) << " range "
                        << int(r);
            }
        }
}

} // namespace
} // namespace edgetensor::detail::gl
