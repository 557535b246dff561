// SPDX-License-Identifier: MIT
//
// What the GL converter says it imports directly (GlDmaBufFormats): the filtering of a driver's
// eglQueryDmaBufFormatsEXT / eglQueryDmaBufModifiersEXT answer, fed as a fake so it runs on any
// host; the EDGETENSOR_GL_DMABUF_MODIFIERS replacement; gl_set_source_modifier's refusals naming
// the drm-format; and what this host's display really answers. Real tiled imports need a driver
// that lists them (the VM lane's kms_swrast lists linear only: test_gl_dmabuf.cpp).

#include "gl/dma_buf_formats.hpp"
#include "gl_test_util.hpp"
#include "log_capture.hpp"

#include <edgetensor/convert.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace edgetensor::detail::gl
{
namespace
{

constexpr uint32_t kNv12 = 0x3231564e; // 'NV12'
constexpr uint32_t kYuyv = 0x56595559; // 'YUYV'
constexpr uint64_t kLinear = 0;
constexpr uint64_t kXTiled = 0x0100000000000001ull;    // I915_FORMAT_MOD_X_TILED
constexpr uint64_t kYTiledCcs = 0x0100000000000004ull; // I915_FORMAT_MOD_Y_TILED_CCS
constexpr uint64_t kInvalid = 0x00ffffffffffffffull;   // DRM_FORMAT_MOD_INVALID

using edgetensor::test::capable_gl;

// A driver that lists NV12 with linear, X tiled and a compressed external-only modifier (and
// the "no modifier" placeholder), YUYV with nothing (linear only), and nothing else.
struct FakeDriver {
    bool queried = true;
    std::map<uint32_t, std::vector<DmaBufModifier>> formats = {
        {kNv12, {{kLinear, false}, {kXTiled, false}, {kYTiledCcs, true}, {kInvalid, false}}},
        {kYuyv, {}},
    };
    FormatQuery fn() const
    {
        return [this](uint32_t fc) {
            DmaBufFormatSupport s;
            s.queried = queried;
            auto it = formats.find(fc);
            if (!queried || it == formats.end())
                return s;
            s.listed = true;
            s.modifiers = it->second;
            s.modifiers_listed = !it->second.empty();
            s.linear = it->second.empty() ||
                       std::any_of(it->second.begin(), it->second.end(),
                                   [](const DmaBufModifier& m) { return m.modifier == kLinear; });
            return s;
        };
    }
};

const GlDmaBufFormat* find(const GlDmaBufFormats& f, uint32_t fourcc)
{
    for (const GlDmaBufFormat& d : f.formats)
        if (d.fourcc == fourcc)
            return &d;
    return nullptr;
}

TEST(GlDmaBufFormats, ListsEveryModifierTheDirectImportSamples)
{
    const FakeDriver driver;
    const GlDmaBufFormats f = importable_dma_buf_formats(capable_gl(), nullptr, driver.fn());
    EXPECT_TRUE(f.queried);
    EXPECT_EQ(f.note, "");
    const GlDmaBufFormat* nv12 = find(f, kNv12);
    ASSERT_NE(nv12, nullptr);
    // Linear first, the external-only compressed one too (samplerExternalOES), never INVALID.
    EXPECT_EQ(nv12->modifiers, (std::vector<uint64_t>{kLinear, kXTiled, kYTiledCcs}));
    // A format listed without modifiers is linear; formats the driver does not list are absent.
    const GlDmaBufFormat* yuyv = find(f, kYuyv);
    ASSERT_NE(yuyv, nullptr);
    EXPECT_EQ(yuyv->modifiers, (std::vector<uint64_t>{kLinear}));
    EXPECT_EQ(f.formats.size(), 2u);
    EXPECT_TRUE(f.lists(kNv12, kXTiled));
    EXPECT_FALSE(f.lists(kNv12, kInvalid));
    EXPECT_FALSE(f.lists(kYuyv, kXTiled));
    EXPECT_FALSE(f.lists(0x32315559 /* 'YU12' */, kLinear));
}

TEST(GlDmaBufFormats, TiledLeftOutWhereDirectImportsAreOff_Negative)
{
    const FakeDriver driver;
    GlInfo software = capable_gl();
    software.software = true;
    software.renderer = "llvmpipe";
    GlDmaBufFormats f = importable_dma_buf_formats(software, nullptr, driver.fn());
    ASSERT_NE(find(f, kNv12), nullptr);
    EXPECT_EQ(find(f, kNv12)->modifiers, (std::vector<uint64_t>{kLinear}));
    EXPECT_NE(f.note.find("software renderer (llvmpipe)"), std::string::npos) << f.note;
    // EDGETENSOR_GL_DIRECT=1 tries direct imports on a software renderer: tiled listed.
    f = importable_dma_buf_formats(software, "1", driver.fn());
    EXPECT_TRUE(f.lists(kNv12, kXTiled));
    // EDGETENSOR_GL_DIRECT=0 and no external sampler: linear only.
    f = importable_dma_buf_formats(capable_gl(), "0", driver.fn());
    EXPECT_FALSE(f.lists(kNv12, kXTiled));
    EXPECT_NE(f.note.find("EDGETENSOR_GL_DIRECT=0"), std::string::npos) << f.note;
    GlInfo no_external = capable_gl();
    no_external.yuv_external = false;
    f = importable_dma_buf_formats(no_external, nullptr, driver.fn());
    EXPECT_TRUE(f.lists(kNv12, kLinear));
    EXPECT_FALSE(f.lists(kNv12, kYTiledCcs));
    EXPECT_NE(f.note.find("GL_OES_EGL_image_external_essl3"), std::string::npos) << f.note;
}

TEST(GlDmaBufFormats, NotQueriedListsNothing_Negative)
{
    FakeDriver driver;
    driver.queried = false;
    GlDmaBufFormats f = importable_dma_buf_formats(capable_gl(), nullptr, driver.fn());
    EXPECT_FALSE(f.queried);
    EXPECT_TRUE(f.formats.empty());
    EXPECT_NE(f.note.find("EGL_EXT_image_dma_buf_import_modifiers"), std::string::npos) << f.note;
    GlInfo no_import = capable_gl();
    no_import.dma_buf_import = false;
    f = importable_dma_buf_formats(no_import, nullptr, FakeDriver{}.fn());
    EXPECT_FALSE(f.queried);
    EXPECT_TRUE(f.formats.empty());
    EXPECT_NE(f.note.find("EGL_EXT_image_dma_buf_import"), std::string::npos) << f.note;
}

TEST(GlDmaBufFormats, ParsesTheReplacement)
{
    auto f = parse_dma_buf_formats("NV12:0x0,0x0100000000000001; YUYV:0");
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_TRUE(f->queried);
    EXPECT_TRUE(f->lists(kNv12, kLinear));
    EXPECT_TRUE(f->lists(kNv12, kXTiled));
    EXPECT_TRUE(f->lists(kYuyv, kLinear));
    EXPECT_FALSE(f->lists(kYuyv, kXTiled));
    for (const char* bad : {"NV12", "NV12:", "NV12:zz", ":0x0", "TOOLONG:0x0", "NV12:0x0,x"}) {
        auto r = parse_dma_buf_formats(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
        EXPECT_NE(r.error().message().find("EDGETENSOR_GL_DMABUF_MODIFIERS"), std::string::npos);
    }
}

TEST(GlDmaBufFormats, DrmFormatStringIsGStreamers)
{
    EXPECT_EQ(drm_format_string(kNv12, kLinear), "NV12");
    EXPECT_EQ(drm_format_string(kNv12, kXTiled), "NV12:0x0100000000000001");
    EXPECT_EQ(drm_format_string(0x20203852 /* 'R8  ' */, kLinear), "R8  ");
}

ConvertConfig nv12_config(ConvertCompute compute)
{
    ConvertConfig cfg;
    cfg.src_format = ConvertFormat::Nv12;
    cfg.src_width = 64;
    cfg.src_height = 32;
    cfg.src_colorimetry = {ColorSpace::Unspecified, ColorTransfer::Unspecified,
                           ColorEncoding::Bt709, ColorRange::Limited};
    cfg.dst_width = 32;
    cfg.dst_height = 16;
    cfg.compute = compute;
    return cfg;
}

TEST(GlDmaBufFormats, CpuConverterRefusesTiled_Negative)
{
    auto conv = Converter::create(nv12_config(ConvertCompute::Cpu));
    ASSERT_TRUE(conv) << conv.error().message();
    EXPECT_TRUE(gl_set_source_modifier(*conv, kLinear));
    auto r = gl_set_source_modifier(*conv, kXTiled);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(r.error().message().find("NV12:0x0100000000000001"), std::string::npos)
        << r.error().message();
}

// What this host's display really answers, and a tiled modifier refused naming it. On the host
// (llvmpipe, surfaceless) nothing tiled is listed: the renderer is software.
TEST(GlDmaBufFormats, RealDisplayAndGlConverter)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    const GlInfo& info = ctx.info();
    const GlDmaBufFormats f = ctx.dma_buf_formats();
    std::string list;
    for (const GlDmaBufFormat& d : f.formats)
        for (uint64_t m : d.modifiers)
            list += drm_format_string(d.fourcc, m) + " ";
    std::printf("renderer %s: dma_buf_import %d, modifiers ext %d, queried %d: %s(%s)\n",
                info.renderer.c_str(), info.dma_buf_import, info.dma_buf_import_modifiers,
                f.queried, list.c_str(), f.note.c_str());
    if (!info.dma_buf_import || !info.dma_buf_import_modifiers) {
        EXPECT_FALSE(f.queried);
        EXPECT_TRUE(f.formats.empty());
    }
    if (info.software && !test::env_is("EDGETENSOR_GL_DIRECT", "1")) {
        for (const GlDmaBufFormat& d : f.formats)
            EXPECT_EQ(d.modifiers, (std::vector<uint64_t>{kLinear})) << list;
    }
    // Asked twice: the cached answer.
    EXPECT_EQ(ctx.dma_buf_formats().formats.size(), f.formats.size());

    auto conv = Converter::create(nv12_config(ConvertCompute::Gl));
    ASSERT_TRUE(conv) << conv.error().message();
    EXPECT_TRUE(gl_set_source_modifier(*conv, kLinear));
    if (!f.lists(kNv12, kXTiled)) {
        auto r = gl_set_source_modifier(*conv, kXTiled);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::NotSupported);
        EXPECT_NE(r.error().message().find("NV12:0x0100000000000001"), std::string::npos)
            << r.error().message();
    }
    // Listed by the replacement but direct imports off here (software): refused with the reason.
    if (info.software && !test::env_is("EDGETENSOR_GL_DIRECT", "1")) {
        test::ScopedEnv env("EDGETENSOR_GL_DMABUF_MODIFIERS", "NV12:0x0,0x0100000000000001");
        EXPECT_TRUE(ctx.dma_buf_formats().lists(kNv12, kXTiled));
        auto r = gl_set_source_modifier(*conv, kXTiled);
        ASSERT_FALSE(r);
        EXPECT_NE(r.error().message().find("NV12:0x0100000000000001"), std::string::npos)
            << r.error().message();
        EXPECT_NE(r.error().message().find("directly"), std::string::npos) << r.error().message();
    }
}

// The shared display's answer for callers holding no context (tensorconvert's caps queries):
// the same as a context's, the replacement honoured, an invalid replacement falling back to the
// driver's answer; and nothing listed, with the reason, where no context can be made.
TEST(GlDmaBufFormats, SharedDisplaysAnswerWithoutAContext)
{
    test::ScopedEnv none("EDGETENSOR_GL_DMABUF_MODIFIERS", nullptr);
    const GlDmaBufFormats first = GlContext::shared_dma_buf_formats();
    auto probed = GlContext::probe();
    if (!probed) {
        EXPECT_TRUE(first.formats.empty());
        EXPECT_FALSE(first.note.empty());
        if (test::gl_required())
            FAIL() << "EDGETENSOR_TEST_REQUIRE_GL=1 but no GL context: "
                   << probed.error().message();
        GTEST_SKIP() << "no GL context on this host: " << probed.error().message();
    }
    auto format_list = [](const GlDmaBufFormats& f) {
        std::string list;
        for (const GlDmaBufFormat& d : f.formats)
            for (uint64_t m : d.modifiers)
                list += drm_format_string(d.fourcc, m) + " ";
        return list;
    };
    // Asked again with no context alive: the kept answer, equal to a context's own.
    EXPECT_EQ(format_list(GlContext::shared_dma_buf_formats()), format_list(first));
    {
        ET_GL_CONTEXT_OR_SKIP(ctx);
        EXPECT_EQ(format_list(ctx.dma_buf_formats()), format_list(first));
    }
    {
        test::ScopedEnv env("EDGETENSOR_GL_DMABUF_MODIFIERS", "NV12:0x0,0x0100000000000001");
        const GlDmaBufFormats replaced = GlContext::shared_dma_buf_formats();
        EXPECT_TRUE(replaced.lists(kNv12, kXTiled)) << format_list(replaced);
        EXPECT_EQ(format_list(replaced), "NV12 NV12:0x0100000000000001 ");
    }
    {
        // Invalid: the driver's answer, and a warning naming the entry, once for this value
        // though every caps query asks (the answer comes from the cache without a word else).
        test::LogCapture log("gl", LogLevel::Warning);
        test::ScopedEnv env("EDGETENSOR_GL_DMABUF_MODIFIERS", "NV12:not-hex");
        EXPECT_EQ(format_list(GlContext::shared_dma_buf_formats()), format_list(first));
        EXPECT_EQ(format_list(GlContext::shared_dma_buf_formats()), format_list(first));
        std::vector<std::string> lines = log.take();
        ASSERT_EQ(lines.size(), 1u);
        EXPECT_NE(lines[0].find("EDGETENSOR_GL_DMABUF_MODIFIERS"), std::string::npos) << lines[0];
        EXPECT_NE(lines[0].find("NV12:not-hex"), std::string::npos) << lines[0];
        EXPECT_NE(lines[0].find("asking the driver"), std::string::npos) << lines[0];
        test::ScopedEnv other("EDGETENSOR_GL_DMABUF_MODIFIERS", "YUYV");
        EXPECT_EQ(format_list(GlContext::shared_dma_buf_formats()), format_list(first));
        EXPECT_EQ(log.take().size(), 1u) << "another invalid value, another warning";
    }
}

} // namespace
} // namespace edgetensor::detail::gl
