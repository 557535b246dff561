// SPDX-License-Identifier: MIT
//
// Running one converter on a chosen kernel level (EDGETENSOR_CONVERT_ISA), for the tests that
// compare the levels: which levels this CPU has, and a run into a destination with canary
// padding that must come back untouched.

#pragma once

#include "reference.hpp"

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::test
{

constexpr const char* kLevels[] = {"portable", "sse4.1", "avx2", "avx512"};

inline bool cpu_has(const std::string& level)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (level == "avx512")
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vbmi");
    if (level == "avx2")
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (level == "sse4.1")
        return __builtin_cpu_supports("sse4.1");
#endif
    return level == "portable";
}

/// Sets EDGETENSOR_CONVERT_ISA for the converters created in its scope.
class LevelScope
{
public:
    explicit LevelScope(const std::string& level)
    {
        ::setenv("EDGETENSOR_CONVERT_ISA", level.c_str(), 1);
        ::unsetenv("EDGETENSOR_CONVERT_PORTABLE");
    }
    ~LevelScope() { ::unsetenv("EDGETENSOR_CONVERT_ISA"); }
    LevelScope(const LevelScope&) = delete;
    LevelScope& operator=(const LevelScope&) = delete;
};

inline std::vector<std::string> levels_here()
{
    std::vector<std::string> out;
    for (const char* l : kLevels)
        if (cpu_has(l))
            out.emplace_back(l);
    return out;
}

constexpr uint8_t kCanary = 0x5A;

/// A converter made on `level`; nullopt with `err` set when it cannot be made or runs another
/// level than the one asked for.
inline std::optional<Converter> level_converter(const std::string& level, const ConvertConfig& cfg,
                                                std::string& err)
{
    LevelScope scope(level);
    auto conv = Converter::create(cfg);
    if (!conv) {
        err = conv.error().message();
        return std::nullopt;
    }
    if (conv->simd_level() != level) {
        err = "asked for " + level + ", converter runs " + std::string(conv->simd_level());
        return std::nullopt;
    }
    return std::move(*conv);
}

/// Output of one run into a destination whose rows and planes carry `pad` canary bytes,
/// which must come back untouched. Returns the tight image (padding stripped).
inline std::vector<uint8_t> run_level(const std::string& level, const Frame& fr,
                                      const ConvertConfig& cfg, size_t pad, std::string& err)
{
    auto conv = level_converter(level, cfg, err);
    if (!conv)
        return {};
    const size_t es = dtype_size(cfg.dtype);
    const size_t rb = conv->min_row_stride();
    const size_t rows = conv->dst_height();
    const bool chw = cfg.layout == TensorLayout::Chw;
    const size_t planes = chw ? output_format_channels(cfg.dst_format) : 1;
    const size_t row_stride = rb + pad * es;
    const size_t plane_stride = chw ? row_stride * rows + pad * es : 0;
    std::vector<uint8_t> buf(chw ? plane_stride * planes : row_stride * rows, kCanary);
    auto r = conv->run(fr.source(), DestFrame{buf.data(), row_stride, plane_stride});
    if (!r) {
        err = r.error().message();
        return {};
    }
    std::vector<uint8_t> tight;
    tight.reserve(rb * rows * planes);
    for (size_t p = 0; p < planes; ++p)
        for (size_t y = 0; y < rows; ++y) {
            const uint8_t* row = buf.data() + p * plane_stride + y * row_stride;
            tight.insert(tight.end(), row, row + rb);
            for (size_t i = rb; i < row_stride; ++i)
                if (row[i] != kCanary) {
                    err = level + ": row padding written at plane " + std::to_string(p) + " row " +
                          std::to_string(y) + " byte " + std::to_string(i);
                    return {};
                }
        }
    if (chw)
        for (size_t p = 0; p < planes; ++p)
            for (size_t i = row_stride * rows; i < plane_stride; ++i)
                if (buf[p * plane_stride + i] != kCanary) {
                    err = level + ": plane padding written after plane " + std::to_string(p);
                    return {};
                }
    return tight;
}

} // namespace edgetensor::test
