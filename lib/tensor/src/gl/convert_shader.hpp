// SPDX-License-Identifier: MIT
//
// The GL converter's shaders. One fragment shader per converter configuration, with the
// geometry, the colour matrix and the output encoding baked in as constants. It computes the
// CPU engine's function (convert.hpp's sampling convention, matrices and rounding) per output
// byte: the render target is the destination seen as rows of bytes, `unit` (1 or 4) bytes per
// texel, so one shader serves every layout (HWC, CHW) and dtype (u8, i8, f16, f32) and
// glReadPixels with a row length (or an imported DMA-BUF) lays the bytes out exactly.

#pragma once

#include "convert/convert_formats.hpp"
#include "edgetensor/convert.hpp"

#include <cstdint>
#include <string>

namespace edgetensor::detail::gl
{

// A source format's memory layout, as the shader reads it: the CPU engine's own format table
// (convert_formats.hpp), so the two backends cannot disagree on where a component lives.
using convert::CompSpec;
using convert::Family;
using SourceLayout = convert::FormatSpec;

/// Everything the fragment shader bakes in.
struct ShaderParams {
    const SourceLayout* src = nullptr;
    ConvertConfig cfg;
    ConvertGeometry geo;
    Colorimetry applied;
    size_t dst_width = 0;
    size_t dst_height = 0;
    size_t channels = 0;
    int unit = 4; ///< bytes per render-target texel (1: R8, 4: RGBA8)
    /// A YUV source sampled as one external image (samplerExternalOES u_tex0, RGB from the
    /// driver) instead of byte planes; colour outputs only.
    bool direct = false;
};

std::string vertex_shader_source();
std::string fragment_shader_source(const ShaderParams& p);
/// The direct import's check: texel (i, j) of a px x py RGBA32UI target holds the float bits
/// of the external image's RGB (0..1, unclamped as the driver gives it) at source pixel
/// (probe_coord(i, px, width), probe_coord(j, py, height)).
std::string probe_shader_source(size_t width, size_t height, size_t px, size_t py);
inline size_t probe_coord(size_t i, size_t n, size_t len) noexcept
{
    return n > 1 ? i * (len - 1) / (n - 1) : 0;
}

} // namespace edgetensor::detail::gl
