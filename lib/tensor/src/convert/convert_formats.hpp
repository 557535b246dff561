// SPDX-License-Identifier: MIT
//
// What the engine knows about each source format: planes, subsampling, and where every
// component of a pixel lives in memory.

#pragma once

#include "edgetensor/convert.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace edgetensor::detail::convert
{

enum class Family : uint8_t { Yuv, Rgb, Gray };

/// Where component `c` of luma column `a` lives: byte mul * (a >> hshift) + add of `plane`.
struct CompSpec {
    uint8_t plane;
    uint8_t hshift;
    uint8_t mul;
    uint8_t add;
};

struct FormatSpec {
    ConvertFormat format;
    std::string_view name;
    Family family;
    uint8_t planes;
    bool has_alpha;
    /// Per plane: vertical chroma shift, and bytes per `unit_px` pixels of a row.
    uint8_t vshift[3];
    uint8_t unit_bytes[3];
    uint8_t unit_px[3];
    /// YUV: Y, U, V. RGB: R, G, B (, A). Gray: Y.
    uint8_t ncomp;
    CompSpec comp[4];
};

/// The table entry of `f`; null for an unknown code.
const FormatSpec* spec_of(ConvertFormat f) noexcept;

/// Rows of plane `p` of a frame `height` luma rows tall.
inline size_t plane_rows(const FormatSpec& s, size_t p, size_t height) noexcept
{
    return (height + (size_t{1} << s.vshift[p]) - 1) >> s.vshift[p];
}

/// Bytes one row of plane `p` holds for a frame `width` pixels wide (no padding).
inline size_t plane_row_bytes(const FormatSpec& s, size_t p, size_t width) noexcept
{
    return (width + s.unit_px[p] - 1) / s.unit_px[p] * s.unit_bytes[p];
}

/// YUV -> RGB of one colorimetry: R = ys*(Y - y_off) + vr*V', G = ys*(Y - y_off) + ug*U' +
/// vg*V', B = ys*(Y - y_off) + ub*U' (U', V' centred on 128), as yuv_to_rgb() computes it. The
/// CPU engine and the GL shaders both take their coefficients from here, so they convert with
/// the same matrix.
struct YuvGains {
    double y_off, ys, vr, ug, vg, ub;
};

inline YuvGains yuv_gains(const Colorimetry& applied) noexcept
{
    double kr = 0.299, kb = 0.114;
    if (applied.encoding == ColorEncoding::Bt709) {
        kr = 0.2126;
        kb = 0.0722;
    } else if (applied.encoding == ColorEncoding::Bt2020) {
        kr = 0.2627;
        kb = 0.0593;
    }
    const bool full = applied.range == ColorRange::Full;
    const double ys = full ? 1.0 : 255.0 / 219.0;
    const double cs = full ? 1.0 : 255.0 / 224.0;
    const double kg = 1.0 - kr - kb;
    return {full ? 0.0 : 16.0,
            ys,
            cs * 2.0 * (1.0 - kr),
            -cs * 2.0 * kb * (1.0 - kb) / kg,
            -cs * 2.0 * kr * (1.0 - kr) / kg,
            cs * 2.0 * (1.0 - kb)};
}

/// The engine's YUV -> RGB function of one pixel: the bytes Y, U, V to unclamped R, G, B levels
/// (0..255 for colours inside the gamut), in float with the gains rounded to float. The CPU
/// kernels compute it in Q13 fixed point and the GL shader in float with the same constants;
/// the GL direct import's pixel check holds a driver's own conversion to it.
inline std::array<float, 3> yuv_to_rgb(const YuvGains& g, float y, float u, float v) noexcept
{
    const float yy = (y - float(g.y_off)) * float(g.ys);
    const float uu = u - 128.f, vv = v - 128.f;
    return {yy + float(g.vr) * vv, yy + float(g.ug) * uu + float(g.vg) * vv, yy + float(g.ub) * uu};
}

/// Byte offset in its plane's row of the component `c` of luma column `a`.
inline size_t comp_offset(const CompSpec& c, size_t a) noexcept
{
    return size_t{c.mul} * (a >> c.hshift) + c.add;
}

} // namespace edgetensor::detail::convert
