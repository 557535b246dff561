// SPDX-License-Identifier: MIT
//
// The conversion engine: one fused pass per output row, nothing frame-sized in between.
//
//  1. Horizontal: each source row an output row needs is resampled to the content width once
//     (kernels' hpass), straight from the frame's bytes into int16 Q5 rows, with taps and
//     weights from tables built here. Output rows advance monotonically, so a two-slot cache
//     per plane serves every source row to both output rows that use it.
//  2. Compose: the vertical lerp of the two cached rows of each component, then the colour
//     matrix (YUV sources), still on content-width rows.
//  3. Emit: round, or normalise, and interleave into the destination row; letterbox padding
//     comes from one row prepared at create(), so every output byte is written once per frame.
// Resampling the YUV planes before the matrix converts only output pixels. Everything a run
// needs is allocated here; run() allocates nothing.

#include "convert_engine.hpp"

#include "convert_scalar.hpp"
#include "log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <thread>

namespace edgetensor
{

using detail::convert::Family;
namespace K = detail::convert;

namespace
{

constexpr const char* kLogCat = "convert";

std::string num(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

std::string region_str(const Region& r)
{
    return std::to_string(r.width) + "x" + std::to_string(r.height) + "+" + std::to_string(r.x) +
           "+" + std::to_string(r.y);
}

/// One axis of the resampling map: for each output index, the two source indices (absolute,
/// clamped to [origin, origin + src_len)) and the weight of the second.
void build_axis(size_t origin, size_t src_len, size_t dst_len, bool nearest,
                std::vector<int32_t>& i0, std::vector<int32_t>& i1, std::vector<float>& w)
{
    i0.resize(dst_len);
    i1.resize(dst_len);
    w.resize(dst_len);
    const double ratio = double(src_len) / double(dst_len);
    const double last = double(src_len - 1);
    for (size_t x = 0; x < dst_len; ++x) {
        double s0, frac = 0.0;
        if (nearest) {
            s0 = std::min(std::floor((double(x) + 0.5) * ratio), last);
        } else {
            const double s = std::clamp((double(x) + 0.5) * ratio - 0.5, 0.0, last);
            s0 = std::floor(s);
            frac = s - s0;
        }
        const size_t j0 = size_t(s0);
        const size_t j1 = frac > 0.0 ? std::min(j0 + 1, src_len - 1) : j0;
        i0[x] = int32_t(origin + j0);
        i1[x] = int32_t(origin + j1);
        w[x] = j1 == j0 ? 0.f : float(frac);
    }
}

int16_t q15(double w) noexcept
{
    return int16_t(std::clamp<long>(std::lround(w * 32768.0), 0, 32767));
}

int16_t q13(double c) noexcept
{
    return int16_t(std::lround(c * 8192.0));
}

} // namespace

namespace detail::convert
{

void RowBuffer::allocate(size_t rows, size_t n)
{
    constexpr size_t kAlign = 64 / sizeof(int16_t);
    n_ = (n + kAlign - 1) / kAlign * kAlign;
    mem_.assign(rows * n_ + kAlign, 0);
    const auto addr = reinterpret_cast<uintptr_t>(mem_.data());
    base_ = mem_.data() + ((64 - addr % 64) % 64) / sizeof(int16_t);
}

} // namespace detail::convert

Result<void> Converter::Impl::validate(const ConvertConfig& c)
{
    cfg = c;
    spec = K::spec_of(c.src_format);
    if (!spec)
        return make_error(ErrorCode::InvalidArgument,
                          "unknown source format code " +
                              std::to_string(static_cast<uint32_t>(c.src_format)));
    if (c.src_width == 0 || c.src_height == 0)
        return make_error(ErrorCode::InvalidArgument, "source size " + std::to_string(c.src_width) +
                                                          "x" + std::to_string(c.src_height) +
                                                          " has a zero dimension");
    constexpr size_t kMaxDim = size_t{1} << 15;
    if (c.src_width > kMaxDim || c.src_height > kMaxDim || c.dst_width > kMaxDim ||
        c.dst_height > kMaxDim)
        return make_error(ErrorCode::InvalidArgument,
                          "frame dimensions above 32768 pixels are not supported");
    channels = output_format_channels(c.dst_format);
    if (channels == 0)
        return make_error(ErrorCode::InvalidArgument,
                          "unknown output format code " +
                              std::to_string(static_cast<uint32_t>(c.dst_format)));
    if (c.layout != TensorLayout::Hwc && c.layout != TensorLayout::Chw)
        return make_error(ErrorCode::InvalidArgument, "unknown tensor layout code");
    if (c.method != ResizeMethod::Nearest && c.method != ResizeMethod::Bilinear)
        return make_error(ErrorCode::InvalidArgument, "unknown resize method code");
    if (output_stores_name(c.stores) == "unknown")
        return make_error(ErrorCode::InvalidArgument,
                          "unknown output stores code " +
                              std::to_string(static_cast<uint32_t>(c.stores)));
    switch (c.dtype) {
    case DType::U8:
        emit_type = c.quant ? K::EmitType::QU8 : K::EmitType::U8;
        break;
    case DType::I8:
        emit_type = c.quant ? K::EmitType::QI8 : K::EmitType::I8;
        break;
    case DType::F16:
        emit_type = K::EmitType::F16;
        break;
    case DType::F32:
        emit_type = K::EmitType::F32;
        break;
    default:
        return make_error(ErrorCode::NotSupported,
                          "output dtype " + std::string(dtype_name(c.dtype)) +
                              " is not supported (use u8, i8, f16 or f32)");
    }
    elem = dtype_size(c.dtype);
    if (c.quant) {
        const Quantization& q = *c.quant;
        if (c.dtype != DType::U8 && c.dtype != DType::I8)
            return make_error(ErrorCode::InvalidArgument,
                              "quantization (scale " + num(q.scale) + ", zero point " +
                                  std::to_string(q.zero_point) + ") needs a u8 or i8 output, not " +
                                  std::string(dtype_name(c.dtype)));
        if (!std::isfinite(q.scale))
            return make_error(ErrorCode::InvalidArgument,
                              "quantization scale " + num(q.scale) +
                                  " is not finite: give the model's input scale, a number > 0");
        if (!(q.scale > 0.f))
            return make_error(ErrorCode::InvalidArgument,
                              "quantization scale " + num(q.scale) +
                                  " is not positive: give the model's input scale, a number > 0");
        const K::QuantRange r = K::quant_range(c.dtype);
        if (q.zero_point < r.lo || q.zero_point > r.hi)
            return make_error(ErrorCode::InvalidArgument,
                              "quantization zero point " + std::to_string(q.zero_point) +
                                  " is outside " + std::string(dtype_name(c.dtype)) + "'s range " +
                                  std::to_string(r.lo) + ".." + std::to_string(r.hi));
    }

    const Region full{0, 0, c.src_width, c.src_height};
    const Region crop = c.crop.value_or(full);
    if (crop.width == 0 || crop.height == 0)
        return make_error(ErrorCode::InvalidArgument,
                          "crop " + region_str(crop) + " has a zero dimension");
    if (crop.x >= c.src_width || crop.y >= c.src_height || crop.width > c.src_width - crop.x ||
        crop.height > c.src_height - crop.y)
        return make_error(ErrorCode::RegionOutOfBounds,
                          "crop " + region_str(crop) + " is outside the " +
                              std::to_string(c.src_width) + "x" + std::to_string(c.src_height) +
                              " source");
    dw = c.dst_width ? c.dst_width : crop.width;
    dh = c.dst_height ? c.dst_height : crop.height;
    geo = compute_convert_geometry(crop, dw, dh, c.letterbox);

    const bool is_float = c.dtype == DType::F16 || c.dtype == DType::F32;
    for (size_t k = 0; k < channels; ++k) {
        if (!std::isfinite(c.mean[k]) || !std::isfinite(c.std[k]) || c.std[k] == 0.f)
            return make_error(ErrorCode::InvalidArgument,
                              "mean/std of channel " + std::to_string(k) +
                                  " must be finite with a non-zero std");
        if (!is_float && !c.quant && (c.mean[k] != 0.f || c.std[k] != 1.f))
            return make_error(ErrorCode::NotSupported,
                              "mean/std normalisation needs a float dtype (f16 or f32), not " +
                                  std::string(dtype_name(c.dtype)) +
                                  ", or quantization (a scale and zero point)");
        // (v / 32 - mean) / std as one multiply-add on the Q5 sample.
        const float inv_std = 1.f / c.std[k];
        scale[k] = inv_std / 32.f;
        bias[k] = -c.mean[k] * inv_std;
    }
    return {};
}

void Converter::Impl::build_colour()
{
    const auto& c = cfg;
    gray_out = c.dst_format == OutputFormat::Gray;
    if (c.dst_format == OutputFormat::Bgr || c.dst_format == OutputFormat::Bgra) {
        order[0] = 2;
        order[2] = 0;
    }
    if (spec->family == Family::Yuv) {
        // The matrix, logged once per converter when the caps left it to us.
        bool guessed = false;
        applied = resolve_yuv_colorimetry(c.src_colorimetry, c.src_width, c.src_height, &guessed);
        if (guessed)
            ET_LOG_INFO(kLogCat,
                        "%s %zux%zu: colorimetry '%s' is incomplete; using %s (GStreamer's "
                        "default for this frame size)",
                        std::string(spec->name).c_str(), c.src_width, c.src_height,
                        c.src_colorimetry.to_string().c_str(), applied.to_string().c_str());
        const auto g = K::yuv_gains(applied);
        matrix.y_off = int16_t(g.y_off * 32); // Q5, as the rows are held
        matrix.ys = q13(g.ys);
        matrix.vr = q13(g.vr);
        matrix.ub = q13(g.ub);
        matrix.ug = q13(g.ug);
        matrix.vg = q13(g.vg);
    }
    // Components read: gray output from YUV needs luma only; alpha only into an alpha channel.
    for (size_t k = 0; k < spec->ncomp; ++k)
        comp_used[k] = !(gray_out && spec->family == Family::Yuv && k > 0);
    if (spec->has_alpha && (gray_out || channels == 3))
        comp_used[3] = false;
}

void Converter::Impl::build_groups(const std::vector<int32_t>& hx0, const std::vector<int32_t>& hx1,
                                   const std::vector<float>& hw)
{
    const size_t cw = geo.content.width;
    for (size_t p = 0; p < spec->planes; ++p) {
        for (size_t k = 0; k < spec->ncomp; ++k)
            plane_used[p] = plane_used[p] || (comp_used[k] && spec->comp[k].plane == p);
        plane_bytes[p] = K::plane_row_bytes(*spec, p, cfg.src_width);
    }
    // Components interleaved in one plane at fixed distances share their taps.
    for (size_t k = 0; k < spec->ncomp; ++k) {
        if (!comp_used[k])
            continue;
        const K::CompSpec& cs = spec->comp[k];
        K::GroupTables* g = nullptr;
        for (auto& cand : groups) {
            const K::CompSpec& first = spec->comp[cand.comps[0]];
            if (first.plane == cs.plane && first.hshift == cs.hshift && first.mul == cs.mul)
                g = &cand;
        }
        if (!g) {
            g = &groups.emplace_back();
            g->plane = cs.plane;
            g->o0.resize(npad);
            g->o1.resize(npad);
            g->w.resize(npad);
            // Columns past the content repeat the last one, so padded lanes read valid bytes.
            for (size_t x = 0; x < npad; ++x) {
                const size_t xs = std::min(x, cw - 1);
                g->o0[x] = int32_t(K::comp_offset(cs, size_t(hx0[xs])));
                g->o1[x] = int32_t(K::comp_offset(cs, size_t(hx1[xs])));
                // Subsampled chroma: both taps in one chroma sample means no interpolation.
                g->w[x] = g->o0[x] == g->o1[x] ? 0 : q15(hw[xs]);
                g->h.lerp = g->h.lerp || g->w[x] != 0;
            }
        }
        g->comps[g->h.count] = uint8_t(k);
        g->h.rel[g->h.count] = int32_t(cs.add) - int32_t(spec->comp[g->comps[0]].add);
        ++g->h.count;
    }
    for (auto& g : groups) {
        const bool shuffled = K::build_shuffles(g, npad, plane_bytes[g.plane], g.h.lerp);
        g.h.o0 = g.o0.data();
        g.h.o1 = g.o1.data();
        g.h.w = g.w.data();
        g.h.win = shuffled ? g.win.data() : nullptr;
        g.h.masks = shuffled ? g.masks.data() : nullptr;
        const bool permuted = K::build_permutes(g, npad, plane_bytes[g.plane], g.h.lerp);
        g.h.vwin = permuted ? g.vwin.data() : nullptr;
        g.h.vidx = permuted ? g.vidx.data() : nullptr;
    }
}

void Converter::Impl::allocate_scratch(size_t threads)
{
    scratch.resize(threads);
    size_t comps_in[3] = {0, 0, 0};
    for (size_t k = 0; k < 4; ++k)
        if (comp_used[k])
            ++comps_in[spec->comp[k].plane];
    for (auto& s : scratch) {
        s.mem.allocate(2 * (comps_in[0] + comps_in[1] + comps_in[2]) + 4, npad);
        size_t next = 0;
        for (size_t k = 0; k < 4; ++k) {
            if (!comp_used[k])
                continue;
            const size_t p = spec->comp[k].plane;
            s.hrow[p][0][k] = s.mem.row(next++);
            s.hrow[p][1][k] = s.mem.row(next++);
        }
        for (size_t k = 0; k < 4; ++k)
            s.crow[k] = s.mem.row(next++);
    }
}

void Converter::Impl::build_quant()
{
    const Quantization& q = *cfg.quant;
    quant = K::build_quantizer(channels, cfg.mean.data(), cfg.std.data(), q, cfg.dtype);
    // The level's form: fused where it has FMA and that form is exact, else multiply-then-add,
    // else the table (every level reads the same one).
    // EDGETENSOR_CONVERT_QUANT_TABLE=1 takes the table anyway (the tests compare the two).
    const char* table_only = std::getenv("EDGETENSOR_CONVERT_QUANT_TABLE");
    const char* how = "a table of the reference (no float multiply-add reproduces it)";
    const K::QuantConstants* k = nullptr;
    if (table_only && table_only[0] == '1') {
        how = "a table of the reference (EDGETENSOR_CONVERT_QUANT_TABLE=1)";
    } else if (kernels->quant_fma && quant.fused.exact) {
        k = &quant.fused;
        quant_fused = true;
        how = "one fused multiply-add per value, exact for every sample value";
    } else if (quant.mul_add.exact) {
        k = &quant.mul_add;
        how = "a multiply and an add per value, exact for every sample value";
    }
    if (k && !quant.table.empty())
        std::vector<uint8_t>().swap(quant.table);
    for (size_t c = 0; k && c < channels; ++c) {
        scale[c] = k->a[c];
        bias[c] = k->b[c];
    }
    ET_LOG_DEBUG(kLogCat, "quantized %s, scale %s, zero point %d: %s",
                 std::string(dtype_name(cfg.dtype)).c_str(), num(q.scale).c_str(),
                 int(q.zero_point), how);
}

void Converter::Impl::emit_constants(K::EmitArgs& e) const noexcept
{
    e.channels = channels;
    e.chw = cfg.layout == TensorLayout::Chw;
    e.type = emit_type;
    for (size_t k = 0; k < channels; ++k) {
        e.scale[k] = scale[k];
        e.bias[k] = bias[k];
        e.order[k] = order[k];
    }
    e.zero_point = int16_t(quant.zero_point);
    e.qfused = quant_fused;
    e.qtable = quant.table.empty() ? nullptr : quant.table.data();
    e.stream = stream;
}

void Converter::Impl::build_fill()
{
    // Constant Q5 rows of the fill colour through the same emit the picture takes.
    const auto& f = cfg.fill;
    std::vector<int16_t> rows[4];
    K::EmitArgs e;
    emit_constants(e);
    for (size_t k = 0; k < channels; ++k) {
        int v;
        if (gray_out)
            v = int(
                std::lround(std::clamp(0.299 * f[0] + 0.587 * f[1] + 0.114 * f[2], 0.0, 255.0)));
        else
            v = f[order[k]];
        rows[k].assign(dw, int16_t(v * 32));
        e.ch[k] = rows[k].data();
    }
    e.dst = fill_row.data();
    e.plane_stride = row_bytes();
    K::kPortableKernels.emit(e, dw);
}

Result<void> Converter::Impl::init(const ConvertConfig& c)
{
    auto v = validate(c);
    if (!v)
        return v;
    build_colour();
    kernels = &K::select_kernels();
    {
        const bool planar_float =
            (emit_type == K::EmitType::F32 || emit_type == K::EmitType::F16) &&
            (c.layout == TensorLayout::Chw || channels == 1);
        const size_t out_bytes = dw * dh * channels * elem;
        stream = K::resolve_streaming(c.stores, *kernels, planar_float,
                                      std::max(out_bytes, c.dest_buffer_bytes));
    }

    const size_t cw = geo.content.width, chh = geo.content.height;
    const bool nearest = c.method == ResizeMethod::Nearest;
    npad = (cw + K::kPad - 1) / K::kPad * K::kPad;
    size_t threads = c.threads;
    if (threads == 0)
        threads = std::max<unsigned>(1, std::thread::hardware_concurrency());
    threads = std::min(threads, dh);
    try {
        if (c.quant)
            build_quant();
        std::vector<int32_t> hx0, hx1;
        std::vector<float> hw, vwf;
        build_axis(geo.source.x, geo.source.width, cw, nearest, hx0, hx1, hw);
        build_axis(geo.source.y, geo.source.height, chh, nearest, vy0, vy1, vwf);
        vw.resize(chh);
        for (size_t y = 0; y < chh; ++y)
            vw[y] = vy0[y] == vy1[y] ? 0 : q15(vwf[y]);
        build_groups(hx0, hx1, hw);
        alpha_q5.assign(npad, K::kQ5Max);
        allocate_scratch(threads);
        fill_row.resize(c.layout == TensorLayout::Hwc ? row_bytes() : row_bytes() * channels);
        build_fill();
        auto pool_r = detail::ThreadPool::create(threads);
        if (!pool_r)
            return unexpected(std::move(pool_r).error());
        pool = std::move(*pool_r);
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed,
                          "out of memory preparing the converter's tables");
    }
    ET_LOG_DEBUG(
        kLogCat,
        "converter %s %zux%zu crop %s -> %s %s %s %zux%zu content %s, %s, %zu thread(s), "
        "%s kernels, %s stores",
        std::string(spec->name).c_str(), c.src_width, c.src_height, region_str(geo.source).c_str(),
        std::string(output_format_name(c.dst_format)).c_str(),
        std::string(tensor_layout_name(c.layout)).c_str(), std::string(dtype_name(c.dtype)).c_str(),
        dw, dh, region_str(geo.content).c_str(), std::string(resize_method_name(c.method)).c_str(),
        pool->size(), kernels->name, stream ? "streaming" : "cached");
    return {};
}

void Converter::Impl::fetch(const SourceFrame& src, size_t p, int64_t r0, int64_t r1, K::Scratch& s,
                            size_t& s0, size_t& s1) const noexcept
{
    auto find = [&](int64_t r) -> int { return s.key[p][0] == r ? 0 : s.key[p][1] == r ? 1 : -1; };
    auto fill = [&](size_t slot, int64_t r) {
        const SourcePlane& sp = src.planes[p];
        const uint8_t* row = sp.data + size_t(r) * sp.stride;
        for (const auto& g : groups) {
            if (g.plane != p)
                continue;
            int16_t* dst[4];
            for (size_t i = 0; i < g.h.count; ++i)
                dst[i] = s.hrow[p][slot][g.comps[i]];
            kernels->hpass(row, g.h, npad, dst);
        }
        s.key[p][slot] = r;
    };
    int a = find(r0);
    int b = r1 == r0 ? a : find(r1);
    if (a < 0) {
        a = b == 0 ? 1 : 0;
        fill(size_t(a), r0);
        if (r1 == r0)
            b = a;
    }
    if (b < 0) {
        b = 1 - a;
        fill(size_t(b), r1);
    }
    s0 = size_t(a);
    s1 = size_t(b);
}

bool Converter::Impl::emit_content(const K::VIn* in, K::EmitArgs& e, K::Scratch& s) const noexcept
{
    const size_t cw = geo.content.width;
    // Colour rows R, G, B, A (or the one gray row).
    const int16_t* colour[4] = {nullptr, nullptr, nullptr, alpha_q5.data()};
    auto blended = [&](size_t k) -> const int16_t* {
        if (in[k].w == 0)
            return in[k].r0;
        kernels->vblend(in[k], s.crow[k], npad);
        return s.crow[k];
    };
    if (spec->family == Family::Yuv || (gray_out && spec->family == Family::Rgb)) {
        K::ComposeArgs ca;
        ca.m = matrix;
        if (spec->family == Family::Rgb)
            ca.mode = K::Compose::RgbGray;
        else
            ca.mode = gray_out ? K::Compose::YuvGray : K::Compose::YuvRgb;
        const size_t n_in = ca.mode == K::Compose::YuvGray ? 1 : 3;
        for (size_t k = 0; k < n_in; ++k)
            ca.in[k] = in[k];
        // The common camera path: no colour rows at all when the level has a fused kernel.
        if (ca.mode == K::Compose::YuvRgb && kernels->yuv_emit(ca, e, cw))
            return true;
        for (size_t k = 0; k < 3; ++k) {
            ca.out[k] = s.crow[k];
            colour[k] = s.crow[k];
        }
        kernels->compose(ca, npad);
    } else if (spec->family == Family::Rgb) {
        for (size_t k = 0; k < 4; ++k)
            if (comp_used[k])
                colour[k] = blended(k);
    } else {
        colour[0] = colour[1] = colour[2] = blended(0);
    }
    if (gray_out) {
        e.ch[0] = colour[0];
    } else {
        for (size_t k = 0; k < channels; ++k)
            e.ch[k] = colour[order[k]];
    }
    return false;
}

void Converter::Impl::begin_frame(K::Scratch& s) const noexcept
{
    for (auto& k : s.key)
        k[0] = k[1] = -1;
}

void Converter::Impl::process_rows(const SourceFrame& src, const DestFrame& dst, size_t y_begin,
                                   size_t y_end, K::Scratch& s) const noexcept
{
    const bool hwc = cfg.layout == TensorLayout::Hwc;
    const size_t px = hwc ? channels * elem : elem;
    const size_t rb = row_bytes();
    const size_t planes = hwc ? 1 : channels;
    const size_t top = geo.content.y, bottom = top + geo.content.height;
    const size_t left = geo.content.x, cw = geo.content.width;
    const size_t right_bytes = (dw - left - cw) * px;
    K::EmitArgs e;
    emit_constants(e);
    e.plane_stride = dst.plane_stride;
    for (size_t y = y_begin; y < y_end; ++y) {
        uint8_t* row = dst.data + y * dst.row_stride;
        if (y < top || y >= bottom) {
            for (size_t k = 0; k < planes; ++k)
                std::memcpy(row + k * dst.plane_stride, fill_row.data() + k * rb, rb);
            continue;
        }
        const size_t cy = y - top;
        // Per component: its two horizontal rows and the vertical weight.
        K::VIn in[4];
        for (size_t p = 0; p < spec->planes; ++p) {
            if (!plane_used[p])
                continue;
            const uint8_t vs = spec->vshift[p];
            const int64_t r0 = vy0[cy] >> vs;
            int64_t r1 = vy1[cy] >> vs;
            const int16_t w = r1 != r0 ? vw[cy] : int16_t(0);
            if (w == 0)
                r1 = r0;
            size_t s0, s1;
            fetch(src, p, r0, r1, s, s0, s1);
            for (size_t k = 0; k < 4; ++k)
                if (comp_used[k] && spec->comp[k].plane == p)
                    in[k] = {s.hrow[p][s0][k], s.hrow[p][s1][k], w};
        }
        e.dst = row + left * px;
        if (!emit_content(in, e, s))
            kernels->emit(e, cw);
        for (size_t k = 0; k < planes; ++k) {
            uint8_t* r = row + k * dst.plane_stride;
            const uint8_t* f = fill_row.data() + k * rb;
            if (left)
                std::memcpy(r, f, left * px);
            if (right_bytes)
                std::memcpy(r + (left + cw) * px, f + (left + cw) * px, right_bytes);
        }
    }
    // Streaming stores are weakly ordered: complete them before this thread reports its rows
    // done (the pool's hand-off) and the caller hands the frame on. Once per band of at least
    // 16 rows; a fence per row cost 20% (convert-engine.md).
    if (stream)
        K::fence_streaming_stores();
}

} // namespace edgetensor
