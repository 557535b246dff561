// SPDX-License-Identifier: MIT
//
// Output stores (ConvertConfig::stores): streaming (non-temporal) stores must write exactly the
// bytes cached stores write, on every level, on both float kernels (YUV straight to CHW, and the
// per-plane emit), for f32 and f16, with rows that start on a cache line and rows that do not
// (odd widths, letterbox content, an unaligned base), column tails, padded destinations whose
// padding stays untouched, and several threads. And the choice itself: Cached, Streaming, Auto
// against the last-level cache, the environment override, outputs that cannot stream.

#include "convert/convert_kernels.hpp"
#include "levels.hpp"
#include "reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

struct Case {
    ConvertFormat src;
    size_t sw, sh, dw, dh;
    OutputFormat out;
    DType dtype;
    bool letterbox;
    size_t threads;
    const char* what;
};

const Case kCases[] = {
    {ConvertFormat::Nv12, 1920, 1080, 640, 640, OutputFormat::Rgb, DType::F32, false, 1,
     "NV12 -> CHW f32 (YUV kernel, rows on lines)"},
    {ConvertFormat::Nv12, 1920, 1080, 640, 640, OutputFormat::Bgr, DType::F16, false, 1,
     "NV12 -> CHW f16, BGR"},
    {ConvertFormat::Nv12, 1280, 720, 300, 200, OutputFormat::Rgb, DType::F32, false, 1,
     "NV12 -> 300x200 f32 (rows of 1200 bytes: some on a line, tails of 12)"},
    {ConvertFormat::I420, 640, 480, 33, 17, OutputFormat::Rgb, DType::F16, false, 1,
     "I420 -> 33x17 f16 (one partial vector)"},
    {ConvertFormat::Rgb, 640, 480, 224, 224, OutputFormat::Rgb, DType::F32, false, 1,
     "RGB -> CHW f32 (per-plane emit)"},
    {ConvertFormat::Rgba, 500, 400, 250, 130, OutputFormat::Rgba, DType::F16, false, 1,
     "RGBA -> 4-plane CHW f16 (per-plane emit)"},
    {ConvertFormat::Nv12, 640, 480, 320, 240, OutputFormat::Gray, DType::F32, false, 1,
     "NV12 -> GRAY f32 (one plane)"},
    {ConvertFormat::Nv12, 1080, 1920, 640, 640, OutputFormat::Rgb, DType::F32, true, 1,
     "portrait NV12 -> 640x640 letterbox (content off the line)"},
    {ConvertFormat::Nv12, 1920, 1080, 640, 640, OutputFormat::Rgb, DType::F32, true, 1,
     "NV12 -> 640x640 letterbox (padding rows)"},
    {ConvertFormat::Nv12, 1920, 1080, 640, 640, OutputFormat::Rgb, DType::F32, false, 2,
     "NV12 -> CHW f32 on two threads"},
};

ConvertConfig config_of(const Case& c, OutputStores stores)
{
    ConvertConfig cfg;
    cfg.src_format = c.src;
    cfg.src_width = c.sw;
    cfg.src_height = c.sh;
    cfg.src_colorimetry.encoding = ColorEncoding::Bt709;
    cfg.src_colorimetry.range = ColorRange::Limited;
    cfg.dst_width = c.dw;
    cfg.dst_height = c.dh;
    cfg.dst_format = c.out;
    cfg.layout = TensorLayout::Chw;
    cfg.dtype = c.dtype;
    cfg.mean = {123.675f, 116.28f, 103.53f, 0.f};
    cfg.std = {58.395f, 57.12f, 57.375f, 1.f};
    cfg.letterbox = c.letterbox;
    cfg.fill = {114, 114, 114, 255};
    cfg.threads = c.threads;
    cfg.stores = stores;
    return cfg;
}

bool level_streams(const std::string& level)
{
    return level == "avx2" || level == "avx512";
}

struct AlignedFree {
    void operator()(uint8_t* p) const noexcept { std::free(p); }
};

/// One run into a 64-byte aligned buffer + `offset`, rows padded by `row_pad` bytes, planes
/// rounded up to a line and padded by `plane_pad` more, the padding canaried. Returns the whole
/// buffer from `offset` (padding included, so a write into it shows as a difference too);
/// `streamed` = the converter's streaming_stores().
std::vector<uint8_t> run_into(const std::string& level, const Frame& fr, const ConvertConfig& cfg,
                              size_t offset, size_t row_pad, size_t plane_pad, bool& streamed,
                              std::string& err)
{
    auto conv = level_converter(level, cfg, err);
    if (!conv)
        return {};
    streamed = conv->streaming_stores();
    const size_t rb = conv->min_row_stride();
    const size_t rows = conv->dst_height();
    const size_t planes = output_format_channels(cfg.dst_format);
    const size_t row_stride = rb + row_pad;
    const size_t plane_stride = (row_stride * rows + 63) / 64 * 64 + plane_pad;
    const size_t bytes = offset + plane_stride * planes;
    std::unique_ptr<uint8_t, AlignedFree> mem(
        static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    std::memset(mem.get(), kCanary, bytes);
    auto r = conv->run(fr.source(), DestFrame{mem.get() + offset, row_stride, plane_stride});
    if (!r) {
        err = r.error().message();
        return {};
    }
    return std::vector<uint8_t>(mem.get() + offset, mem.get() + bytes);
}

std::string first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b)
{
    if (a.size() != b.size())
        return "sizes differ";
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i])
            return "byte " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " +
                   std::to_string(b[i]);
    return {};
}

class ConvertStores : public ::testing::Test
{
protected:
    void SetUp() override { ::unsetenv("EDGETENSOR_CONVERT_STORES"); }
    void TearDown() override { ::unsetenv("EDGETENSOR_CONVERT_STORES"); }
};

TEST_F(ConvertStores, StreamingWritesWhatCachedWrites)
{
    struct Placement {
        size_t offset, row_pad, plane_pad;
        const char* what;
    };
    // Rows on a line (0, 64 bytes of row padding), every row off its line (an odd base), rows
    // alternately on and off (padding of 32).
    const Placement placements[] = {
        {0, 0, 0, "tight, base on a line"},
        {0, 64, 64, "rows and planes padded by a line"},
        {4, 0, 0, "base 4 bytes off a line"},
        {0, 32, 4, "rows padded by half a line, planes by 4 bytes"},
    };
    size_t streamed_cases = 0;
    for (const std::string& level : levels_here()) {
        for (const Case& c : kCases) {
            const Frame fr = make_frame(c.src, c.sw, c.sh, 8, 7);
            for (const Placement& p : placements) {
                SCOPED_TRACE(level + ": " + c.what + ", " + p.what);
                bool cached_streams = true, streams = false;
                std::string err;
                const auto cached = run_into(level, fr, config_of(c, OutputStores::Cached),
                                             p.offset, p.row_pad, p.plane_pad, cached_streams, err);
                ASSERT_TRUE(err.empty()) << err;
                const auto streamed = run_into(level, fr, config_of(c, OutputStores::Streaming),
                                               p.offset, p.row_pad, p.plane_pad, streams, err);
                ASSERT_TRUE(err.empty()) << err;
                EXPECT_FALSE(cached_streams);
                EXPECT_EQ(streams, level_streams(level));
                EXPECT_EQ(first_difference(cached, streamed), "");
                streamed_cases += streams ? 1 : 0;
            }
        }
    }
    if (streamed_cases == 0)
        GTEST_SKIP() << "no level here streams (AVX2 or AVX-512 needed): only the cached path ran";
}

TEST_F(ConvertStores, StreamingMatchesTheReference)
{
    // The streamed bytes are the right ones too, not only the cached path's: against the
    // double-precision reference, as the colour and resize suites check every level.
    const Case& c = kCases[0];
    const Frame fr = make_frame(c.src, c.sw, c.sh, 0, 3);
    for (const std::string& level : levels_here()) {
        SCOPED_TRACE(level);
        const ConvertConfig cfg = config_of(c, OutputStores::Streaming);
        bool streams = false;
        std::string err;
        // 640 x 4 bytes a row, 640 rows: tight planes, each on a line.
        const auto buf = run_into(level, fr, cfg, 0, 0, 0, streams, err);
        ASSERT_TRUE(err.empty()) << err;
        EXPECT_EQ(streams, level_streams(level));
        const Errors e = compare(buf, cfg, reference(fr, cfg));
        EXPECT_LE(e.max, 1e-2) << e.describe();
    }
}

TEST_F(ConvertStores, WhatStreams)
{
    Case c = kCases[0];
    auto streams = [&](const ConvertConfig& cfg) {
        auto conv = Converter::create(cfg);
        EXPECT_TRUE(conv.has_value()) << (conv ? "" : conv.error().message());
        return conv && conv->streaming_stores();
    };
    const bool can = level_streams(std::string(detail::convert::select_kernels().name));

    ConvertConfig cfg = config_of(c, OutputStores::Streaming);
    EXPECT_EQ(streams(cfg), can);
    cfg.stores = OutputStores::Cached;
    EXPECT_FALSE(streams(cfg));

    // Outputs no level streams: interleaved floats, integer dtypes (quantized or not).
    cfg = config_of(c, OutputStores::Streaming);
    cfg.layout = TensorLayout::Hwc;
    EXPECT_FALSE(streams(cfg));
    cfg = config_of(c, OutputStores::Streaming);
    cfg.dtype = DType::U8;
    cfg.mean = {0, 0, 0, 0};
    cfg.std = {1, 1, 1, 1};
    EXPECT_FALSE(streams(cfg));
    cfg.dtype = DType::I8;
    cfg.mean = {123.675f, 116.28f, 103.53f, 0.f};
    cfg.std = {58.395f, 57.12f, 57.375f, 1.f};
    cfg.quant = Quantization{0.0186584f, -14};
    EXPECT_FALSE(streams(cfg));

    // Auto: one 640x640x3 f32 output (4.9 MB) against half the last-level cache; a batch tensor
    // (dest_buffer_bytes) that large or larger always.
    const size_t llc = detail::convert::last_level_cache_bytes();
    ASSERT_GT(llc, 0u);
    const size_t one = 3 * 640 * 640 * 4;
    cfg = config_of(c, OutputStores::Auto);
    EXPECT_EQ(streams(cfg), can && one >= llc / 2);
    cfg.dest_buffer_bytes = std::max(llc / 2, one);
    EXPECT_EQ(streams(cfg), can);
    cfg.dest_buffer_bytes = llc / 2 - 1;
    EXPECT_EQ(streams(cfg), can && one >= llc / 2);
    // A small output in a buffer below the threshold: cached.
    c.dw = 64;
    c.dh = 64;
    cfg = config_of(c, OutputStores::Auto);
    cfg.dest_buffer_bytes = 16 * 3 * 64 * 64 * 4;
    EXPECT_EQ(streams(cfg), can && cfg.dest_buffer_bytes >= llc / 2);
}

TEST_F(ConvertStores, EnvironmentOverridesTheConfig)
{
    const Case& c = kCases[0];
    const bool can = level_streams(std::string(detail::convert::select_kernels().name));
    auto streams = [&](OutputStores s) {
        auto conv = Converter::create(config_of(c, s));
        EXPECT_TRUE(conv.has_value());
        return conv && conv->streaming_stores();
    };
    ::setenv("EDGETENSOR_CONVERT_STORES", "cached", 1);
    EXPECT_FALSE(streams(OutputStores::Streaming));
    ::setenv("EDGETENSOR_CONVERT_STORES", "streaming", 1);
    EXPECT_EQ(streams(OutputStores::Cached), can);
    // Not a name: ignored (with a warning), the config's choice stands.
    ::setenv("EDGETENSOR_CONVERT_STORES", "sometimes", 1);
    EXPECT_EQ(streams(OutputStores::Streaming), can);
    EXPECT_FALSE(streams(OutputStores::Cached));
}

TEST_F(ConvertStores, NamesAndBadValues)
{
    for (OutputStores s : {OutputStores::Auto, OutputStores::Cached, OutputStores::Streaming}) {
        const auto name = output_stores_name(s);
        auto back = output_stores_from_name(name);
        ASSERT_TRUE(back.has_value()) << name;
        EXPECT_EQ(*back, s);
    }
    EXPECT_EQ(output_stores_name(OutputStores::Streaming), "streaming");
    EXPECT_FALSE(output_stores_from_name("Streaming").has_value());
    EXPECT_FALSE(output_stores_from_name("").has_value());

    ConvertConfig cfg = config_of(kCases[0], static_cast<OutputStores>(7));
    auto conv = Converter::create(cfg);
    ASSERT_FALSE(conv.has_value());
    EXPECT_EQ(conv.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(conv.error().message().find("output stores"), std::string::npos)
        << conv.error().message();
}

} // namespace
} // namespace edgetensor::test
