// SPDX-License-Identifier: MIT
//
// A straightforward double-precision model of what the converter must produce, independent of
// the engine (no libyuv, no tables): synthetic frames packed into every source format by hand,
// read back per pixel by hand, resampled with the documented convention (half-pixel centres,
// samples clamped to the crop, chroma replicated over its luma block), converted with the exact
// matrix, clamped, then normalised. The comparisons live in the tests.

#pragma once

#include <edgetensor/convert.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{

using Pixel = std::array<double, 4>; // Y U V (A) or R G B A

/// Deterministic texture: smooth gradients plus a hash so neighbouring pixels differ.
inline uint8_t pattern(size_t x, size_t y, size_t c, uint32_t seed)
{
    uint32_t h = uint32_t(x) * 0x9E3779B1u ^ uint32_t(y) * 0x85EBCA77u ^ uint32_t(c) * 0xC2B2AE3Du ^
                 seed * 0x27D4EB2Fu;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    const double smooth = 128.0 + 90.0 * std::sin(0.037 * double(x) + 0.023 * double(y) +
                                                  1.7 * double(c) + 0.3 * double(seed));
    return uint8_t(std::clamp(smooth + double(int(h % 41) - 20), 0.0, 255.0));
}

/// A frame in one ConvertFormat with explicit planes and strides (any padding).
struct Frame {
    ConvertFormat format;
    size_t width = 0, height = 0;
    std::array<std::vector<uint8_t>, 3> planes;
    std::array<size_t, 3> strides{};

    SourceFrame source() const
    {
        SourceFrame s;
        for (size_t p = 0; p < 3; ++p)
            if (!planes[p].empty())
                s.planes[p] = {planes[p].data(), strides[p]};
        return s;
    }

    bool has_alpha() const
    {
        return format == ConvertFormat::Rgba || format == ConvertFormat::Bgra;
    }

    /// Component c (Y/U/V, or R/G/B/A) of luma pixel (x, y), read straight from the planes.
    double at(size_t c, size_t x, size_t y) const
    {
        const auto& p0 = planes[0];
        const size_t s0 = strides[0];
        if (c == 3 && !has_alpha())
            return 255.0;
        switch (format) {
        case ConvertFormat::Nv12:
        case ConvertFormat::Nv21:
        case ConvertFormat::Nv16:
        case ConvertFormat::Nv24: {
            if (c == 0)
                return p0[y * s0 + x];
            const size_t cy =
                format == ConvertFormat::Nv12 || format == ConvertFormat::Nv21 ? y / 2 : y;
            const size_t cx = format == ConvertFormat::Nv24 ? x : x / 2;
            const bool swap = format == ConvertFormat::Nv21;
            const size_t idx = (c == 1) != swap ? 0 : 1;
            return planes[1][cy * strides[1] + cx * 2 + idx];
        }
        case ConvertFormat::I420:
            if (c == 0)
                return p0[y * s0 + x];
            return planes[c][(y / 2) * strides[c] + x / 2];
        case ConvertFormat::Yuy2:
        case ConvertFormat::Uyvy:
        case ConvertFormat::Vyuy: {
            const uint8_t* m = &p0[y * s0 + (x / 2) * 4]; // one macropixel, 2 luma pixels
            if (format == ConvertFormat::Yuy2)            // Y0 U Y1 V
                return c == 0 ? m[(x % 2) * 2] : c == 1 ? m[1] : m[3];
            if (format == ConvertFormat::Uyvy) // U Y0 V Y1
                return c == 0 ? m[1 + (x % 2) * 2] : c == 1 ? m[0] : m[2];
            return c == 0 ? m[1 + (x % 2) * 2] : c == 1 ? m[2] : m[0]; // V Y0 U Y1
        }
        case ConvertFormat::Rgb:
            return c < 3 ? p0[y * s0 + x * 3 + c] : 255.0;
        case ConvertFormat::Bgr:
            return c < 3 ? p0[y * s0 + x * 3 + (2 - c)] : 255.0;
        case ConvertFormat::Rgba:
            return p0[y * s0 + x * 4 + c];
        case ConvertFormat::Bgra:
            return p0[y * s0 + x * 4 + (c < 3 ? 2 - c : 3)];
        case ConvertFormat::Rgbx:
            return c < 3 ? p0[y * s0 + x * 4 + c] : 255.0;
        case ConvertFormat::Bgrx:
            return c < 3 ? p0[y * s0 + x * 4 + (2 - c)] : 255.0;
        case ConvertFormat::Gray8:
            return c < 3 ? p0[y * s0 + x] : 255.0;
        case ConvertFormat::PlanarRgb:
            return c < 3 ? planes[c][y * strides[c] + x] : 255.0;
        }
        return 0.0;
    }
};

inline bool is_yuv(ConvertFormat f)
{
    switch (f) {
    case ConvertFormat::Nv12:
    case ConvertFormat::Nv21:
    case ConvertFormat::Nv16:
    case ConvertFormat::Nv24:
    case ConvertFormat::I420:
    case ConvertFormat::Yuy2:
    case ConvertFormat::Uyvy:
    case ConvertFormat::Vyuy:
        return true;
    default:
        return false;
    }
}

/// Builds a frame of the pattern. `pad` extra bytes per row (odd values make odd strides).
inline Frame make_frame(ConvertFormat f, size_t w, size_t h, size_t pad = 0, uint32_t seed = 1)
{
    Frame fr;
    fr.format = f;
    fr.width = w;
    fr.height = h;
    const size_t cw = (w + 1) / 2, ch = (h + 1) / 2;
    auto alloc = [&](size_t p, size_t row_bytes, size_t rows) {
        fr.strides[p] = row_bytes + pad;
        fr.planes[p].assign(fr.strides[p] * rows, 0xEE); // padding bytes poison
    };
    auto put = [&](size_t p, size_t off, uint8_t v) { fr.planes[p][off] = v; };
    switch (f) {
    case ConvertFormat::Nv12:
    case ConvertFormat::Nv21:
    case ConvertFormat::Nv16:
    case ConvertFormat::Nv24: {
        const bool v420 = f == ConvertFormat::Nv12 || f == ConvertFormat::Nv21;
        const size_t cols = f == ConvertFormat::Nv24 ? w : cw;
        const size_t rows = v420 ? ch : h;
        alloc(0, w, h);
        alloc(1, cols * 2, rows);
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < w; ++x)
                put(0, y * fr.strides[0] + x, pattern(x, y, 0, seed));
        for (size_t y = 0; y < rows; ++y)
            for (size_t x = 0; x < cols; ++x) {
                put(1, y * fr.strides[1] + 2 * x, pattern(x, y, 1, seed));
                put(1, y * fr.strides[1] + 2 * x + 1, pattern(x, y, 2, seed));
            }
        break;
    }
    case ConvertFormat::I420:
        alloc(0, w, h);
        alloc(1, cw, ch);
        alloc(2, cw, ch);
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < w; ++x)
                put(0, y * fr.strides[0] + x, pattern(x, y, 0, seed));
        for (size_t p = 1; p < 3; ++p)
            for (size_t y = 0; y < ch; ++y)
                for (size_t x = 0; x < cw; ++x)
                    put(p, y * fr.strides[p] + x, pattern(x, y, p, seed));
        break;
    case ConvertFormat::Yuy2:
    case ConvertFormat::Uyvy:
    case ConvertFormat::Vyuy:
        alloc(0, cw * 4, h);
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < cw * 4; ++x)
                put(0, y * fr.strides[0] + x, pattern(x, y, 0, seed));
        break;
    case ConvertFormat::Rgb:
    case ConvertFormat::Bgr:
        alloc(0, w * 3, h);
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < w * 3; ++x)
                put(0, y * fr.strides[0] + x, pattern(x, y, 0, seed));
        break;
    case ConvertFormat::Rgba:
    case ConvertFormat::Bgra:
    case ConvertFormat::Rgbx:
    case ConvertFormat::Bgrx:
        alloc(0, w * 4, h);
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < w * 4; ++x)
                put(0, y * fr.strides[0] + x, pattern(x, y, 0, seed));
        break;
    case ConvertFormat::Gray8:
        alloc(0, w, h);
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < w; ++x)
                put(0, y * fr.strides[0] + x, pattern(x, y, 0, seed));
        break;
    case ConvertFormat::PlanarRgb:
        for (size_t p = 0; p < 3; ++p) {
            alloc(p, w, h);
            for (size_t y = 0; y < h; ++y)
                for (size_t x = 0; x < w; ++x)
                    put(p, y * fr.strides[p] + x, pattern(x, y, p, seed));
        }
        break;
    }
    return fr;
}

/// The expected output as doubles: [channel][y][x] over the whole output (padding included),
/// before rounding or normalisation (values in 0..255).
struct Expected {
    size_t width = 0, height = 0, channels = 0;
    std::vector<double> v; // channel-major
    double& at(size_t c, size_t x, size_t y) { return v[(c * height + y) * width + x]; }
    double at(size_t c, size_t x, size_t y) const { return v[(c * height + y) * width + x]; }
};

struct Mapping {
    size_t i0, i1;
    double w;
};

/// Source index pair for output index `o` of `dst` along an axis of `src` samples.
inline Mapping map_axis(size_t o, size_t src, size_t dst, bool nearest)
{
    const double ratio = double(src) / double(dst);
    if (nearest) {
        const size_t i = std::min(size_t(std::floor((double(o) + 0.5) * ratio)), src - 1);
        return {i, i, 0.0};
    }
    const double s = std::clamp((double(o) + 0.5) * ratio - 0.5, 0.0, double(src - 1));
    const size_t i0 = size_t(std::floor(s));
    return {i0, std::min(i0 + 1, src - 1), s - std::floor(s)};
}

/// Kr, Kb of a matrix.
inline std::pair<double, double> kr_kb(ColorEncoding e)
{
    switch (e) {
    case ColorEncoding::Bt709:
        return {0.2126, 0.0722};
    case ColorEncoding::Bt2020:
        return {0.2627, 0.0593};
    default:
        return {0.299, 0.114};
    }
}

/// Reference conversion of `fr` under `cfg` (colorimetry must be fully specified for YUV).
inline Expected reference(const Frame& fr, const ConvertConfig& cfg)
{
    const Region crop = cfg.crop.value_or(Region{0, 0, fr.width, fr.height});
    const size_t dw = cfg.dst_width ? cfg.dst_width : crop.width;
    const size_t dh = cfg.dst_height ? cfg.dst_height : crop.height;
    const ConvertGeometry g = compute_convert_geometry(crop, dw, dh, cfg.letterbox);
    const size_t channels = output_format_channels(cfg.dst_format);
    Expected e;
    e.width = dw;
    e.height = dh;
    e.channels = channels;
    e.v.assign(channels * dw * dh, 0.0);

    const bool nearest = cfg.method == ResizeMethod::Nearest;
    const bool yuv = is_yuv(fr.format);
    const auto [kr, kb] = kr_kb(cfg.src_colorimetry.encoding);
    const bool full = cfg.src_colorimetry.range == ColorRange::Full;
    const double yoff = full ? 0.0 : 16.0, ys = full ? 1.0 : 255.0 / 219.0;
    const double cs = full ? 1.0 : 255.0 / 224.0;
    auto clamp255 = [](double v) { return std::clamp(v, 0.0, 255.0); };
    auto ordered = [&](const Pixel& rgba) {
        Pixel o{};
        switch (cfg.dst_format) {
        case OutputFormat::Rgb:
        case OutputFormat::Rgba:
            o = rgba;
            break;
        case OutputFormat::Bgr:
        case OutputFormat::Bgra:
            o = {rgba[2], rgba[1], rgba[0], rgba[3]};
            break;
        case OutputFormat::Gray:
            o = {0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2], 0, 0, 0};
            break;
        }
        return o;
    };

    for (size_t y = 0; y < dh; ++y)
        for (size_t x = 0; x < dw; ++x) {
            const bool inside = x >= g.content.x && x < g.content.x + g.content.width &&
                                y >= g.content.y && y < g.content.y + g.content.height;
            Pixel out{};
            if (!inside) {
                Pixel f{double(cfg.fill[0]), double(cfg.fill[1]), double(cfg.fill[2]),
                        double(cfg.fill[3])};
                out = ordered(f);
                if (cfg.dst_format == OutputFormat::Gray)
                    out[0] = std::round(out[0]);
            } else {
                const Mapping mx = map_axis(x - g.content.x, crop.width, g.content.width, nearest);
                const Mapping my =
                    map_axis(y - g.content.y, crop.height, g.content.height, nearest);
                Pixel s{};
                for (size_t c = 0; c < 4; ++c) {
                    auto v = [&](size_t i, size_t j) { return fr.at(c, crop.x + i, crop.y + j); };
                    const double top = v(mx.i0, my.i0) * (1 - mx.w) + v(mx.i1, my.i0) * mx.w;
                    const double bot = v(mx.i0, my.i1) * (1 - mx.w) + v(mx.i1, my.i1) * mx.w;
                    s[c] = (!yuv || c < 3) ? top * (1 - my.w) + bot * my.w : 255.0;
                }
                if (yuv) {
                    const double yy = (s[0] - yoff) * ys;
                    const double pb = (s[1] - 128.0) * cs, pr = (s[2] - 128.0) * cs;
                    if (cfg.dst_format == OutputFormat::Gray) {
                        out[0] = clamp255(yy);
                    } else {
                        const double r = yy + 2.0 * (1.0 - kr) * pr;
                        const double b = yy + 2.0 * (1.0 - kb) * pb;
                        const double gg = (yy - kr * r - kb * b) / (1.0 - kr - kb);
                        out = ordered({clamp255(r), clamp255(gg), clamp255(b), 255.0});
                    }
                } else {
                    out = ordered(s);
                }
            }
            for (size_t c = 0; c < channels; ++c)
                e.at(c, x, y) = out[c];
        }
    return e;
}

/// Reads output channel c at (x, y) from a tight output buffer of the converter as double
/// (u8 as is, i8 + 128, floats de-normalised is NOT applied: raw values).
inline double read_raw(const std::vector<uint8_t>& buf, const ConvertConfig& cfg, size_t dw,
                       size_t dh, size_t c, size_t x, size_t y)
{
    const size_t channels = output_format_channels(cfg.dst_format);
    const size_t es = dtype_size(cfg.dtype);
    const size_t idx =
        cfg.layout == TensorLayout::Hwc ? (y * dw + x) * channels + c : (c * dh + y) * dw + x;
    const uint8_t* p = buf.data() + idx * es;
    switch (cfg.dtype) {
    case DType::U8:
        return *p;
    case DType::I8:
        return double(int8_t(*p));
    case DType::F16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        // Independent decoder (not the library's half_to_float).
        const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
        const double sign = (h & 0x8000) ? -1.0 : 1.0;
        if (exp == 0)
            return sign * std::ldexp(double(mant), -24);
        if (exp == 31)
            return mant ? NAN : sign * INFINITY;
        return sign * std::ldexp(1.0 + double(mant) / 1024.0, exp - 15);
    }
    case DType::F32: {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    default:
        return NAN;
    }
}

struct Errors {
    double max = 0.0, mean = 0.0;
    size_t worst_x = 0, worst_y = 0, worst_c = 0;
    double got = 0.0, want = 0.0;
    std::string describe() const
    {
        return "max " + std::to_string(max) + " at (" + std::to_string(worst_x) + ", " +
               std::to_string(worst_y) + ") channel " + std::to_string(worst_c) + ": got " +
               std::to_string(got) + " want " + std::to_string(want) + "; mean " +
               std::to_string(mean);
    }
};

/// Compares a tight converter output with the reference, in the output's own units: u8 in
/// levels, i8 as v - 128, floats after normalisation ((v - mean) / std).
inline Errors compare(const std::vector<uint8_t>& buf, const ConvertConfig& cfg, const Expected& e)
{
    Errors r;
    double sum = 0.0;
    size_t n = 0;
    for (size_t c = 0; c < e.channels; ++c)
        for (size_t y = 0; y < e.height; ++y)
            for (size_t x = 0; x < e.width; ++x) {
                double want = e.at(c, x, y);
                switch (cfg.dtype) {
                case DType::I8:
                    want -= 128.0;
                    break;
                case DType::F16:
                case DType::F32:
                    want = (want - cfg.mean[c]) / cfg.std[c];
                    break;
                default:
                    break;
                }
                const double got = read_raw(buf, cfg, e.width, e.height, c, x, y);
                const double err = std::isnan(got) ? INFINITY : std::fabs(got - want);
                sum += err;
                ++n;
                if (err > r.max || (n == 1)) {
                    r.max = err;
                    r.worst_x = x;
                    r.worst_y = y;
                    r.worst_c = c;
                    r.got = got;
                    r.want = want;
                }
            }
    r.mean = n ? sum / double(n) : 0.0;
    return r;
}

/// Runs the converter into a tight buffer. Returns the error message on failure, "" on success.
inline std::string run_tight(const Frame& fr, const ConvertConfig& cfg, std::vector<uint8_t>& out)
{
    auto conv = Converter::create(cfg);
    if (!conv)
        return conv.error().message();
    const size_t rows = conv->config().layout == TensorLayout::Hwc
                            ? conv->dst_height()
                            : conv->dst_height() * output_format_channels(cfg.dst_format);
    out.assign(conv->min_row_stride() * rows, 0xCD);
    auto r = conv->run(fr.source(),
                       DestFrame{out.data(), conv->min_row_stride(), conv->min_plane_stride()});
    if (!r)
        return r.error().message();
    return {};
}

inline ConvertConfig config_for(const Frame& fr, ColorEncoding enc = ColorEncoding::Bt709,
                                ColorRange range = ColorRange::Limited)
{
    ConvertConfig c;
    c.src_format = fr.format;
    c.src_width = fr.width;
    c.src_height = fr.height;
    c.src_colorimetry.encoding = enc;
    c.src_colorimetry.range = range;
    return c;
}

} // namespace edgetensor::test
