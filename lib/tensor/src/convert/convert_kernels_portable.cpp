// SPDX-License-Identifier: MIT
//
// The portable level: plain loops over restrict-qualified int16 rows, written for the
// auto-vectoriser (NEON on arm64, SSE2 on baseline x86-64). The horizontal pass is the only
// indexed load. This is also the reference the SIMD levels are tested against bit for bit.

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
// The project builds at -O2, whose vectoriser cost model ("very cheap") refuses loops with a
// scalar remainder, i.e. every row loop here.
#pragma GCC optimize("O3")
#endif

#include "convert_kernels.hpp"
#include "convert_quant.hpp"
#include "convert_scalar.hpp"

#include <algorithm>

namespace edgetensor::detail::convert
{

namespace
{

inline int32_t clamp_q5(int32_t v) noexcept
{
    return std::min<int32_t>(std::max<int32_t>(v, 0), kQ5Max);
}

inline int32_t lerp(int32_t a, int32_t b, int32_t w) noexcept
{
    return a + mulhrs(b - a, w);
}

template <size_t K, bool Lerp>
void hpass_t(const uint8_t* __restrict row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    const int32_t* __restrict o0 = g.o0;
    const int32_t* __restrict o1 = g.o1;
    const int16_t* __restrict w = g.w;
    int16_t* __restrict d[K];
    int32_t rel[K];
    for (size_t k = 0; k < K; ++k) {
        d[k] = dst[k];
        rel[k] = g.rel[k];
    }
    for (size_t x = 0; x < n; ++x) {
        const uint8_t* a = row + o0[x];
        for (size_t k = 0; k < K; ++k) {
            const int32_t va = int32_t(a[rel[k]]) << 5;
            if constexpr (Lerp) {
                const int32_t vb = int32_t(row[o1[x] + rel[k]]) << 5;
                d[k][x] = int16_t(lerp(va, vb, w[x]));
            } else {
                d[k][x] = int16_t(va);
            }
        }
    }
}

template <bool Lerp>
void hpass_k(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    switch (g.count) {
    case 1:
        hpass_t<1, Lerp>(row, g, n, dst);
        break;
    case 2:
        hpass_t<2, Lerp>(row, g, n, dst);
        break;
    case 3:
        hpass_t<3, Lerp>(row, g, n, dst);
        break;
    default:
        hpass_t<4, Lerp>(row, g, n, dst);
        break;
    }
}

void hpass(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    if (g.lerp)
        hpass_k<true>(row, g, n, dst);
    else
        hpass_k<false>(row, g, n, dst);
}

void vblend(const VIn& in, int16_t* __restrict out, size_t n) noexcept
{
    const int16_t* __restrict a = in.r0;
    const int16_t* __restrict b = in.r1;
    const int32_t w = in.w;
    for (size_t x = 0; x < n; ++x)
        out[x] = int16_t(lerp(a[x], b[x], w));
}

void yuv_rgb(const ComposeArgs& c, size_t n) noexcept
{
    const int16_t* __restrict y0 = c.in[0].r0;
    const int16_t* __restrict y1 = c.in[0].r1;
    const int16_t* __restrict u0 = c.in[1].r0;
    const int16_t* __restrict u1 = c.in[1].r1;
    const int16_t* __restrict v0 = c.in[2].r0;
    const int16_t* __restrict v1 = c.in[2].r1;
    int16_t* __restrict r = c.out[0];
    int16_t* __restrict g = c.out[1];
    int16_t* __restrict b = c.out[2];
    const int32_t wy = c.in[0].w, wu = c.in[1].w, wv = c.in[2].w;
    const int32_t yo = c.m.y_off, ys = c.m.ys, vr = c.m.vr, ug = c.m.ug, vg = c.m.vg, ub = c.m.ub;
    for (size_t x = 0; x < n; ++x) {
        const int32_t y4 = (lerp(y0[x], y1[x], wy) - yo) * 4;
        const int32_t u4 = (lerp(u0[x], u1[x], wu) - 4096) * 4;
        const int32_t v4 = (lerp(v0[x], v1[x], wv) - 4096) * 4;
        const int32_t yy = mulhrs(y4, ys);
        r[x] = int16_t(clamp_q5(yy + mulhrs(v4, vr)));
        g[x] = int16_t(clamp_q5(yy + mulhrs(u4, ug) + mulhrs(v4, vg)));
        b[x] = int16_t(clamp_q5(yy + mulhrs(u4, ub)));
    }
}

void yuv_gray(const ComposeArgs& c, size_t n) noexcept
{
    const int16_t* __restrict y0 = c.in[0].r0;
    const int16_t* __restrict y1 = c.in[0].r1;
    int16_t* __restrict o = c.out[0];
    const int32_t wy = c.in[0].w, yo = c.m.y_off, ys = c.m.ys;
    for (size_t x = 0; x < n; ++x)
        o[x] = int16_t(clamp_q5(mulhrs((lerp(y0[x], y1[x], wy) - yo) * 4, ys)));
}

void rgb_gray(const ComposeArgs& c, size_t n) noexcept
{
    const int16_t* __restrict r0 = c.in[0].r0;
    const int16_t* __restrict r1 = c.in[0].r1;
    const int16_t* __restrict g0 = c.in[1].r0;
    const int16_t* __restrict g1 = c.in[1].r1;
    const int16_t* __restrict b0 = c.in[2].r0;
    const int16_t* __restrict b1 = c.in[2].r1;
    int16_t* __restrict o = c.out[0];
    const int32_t wr = c.in[0].w, wg = c.in[1].w, wb = c.in[2].w;
    for (size_t x = 0; x < n; ++x)
        o[x] = int16_t(clamp_q5(mulhrs(lerp(r0[x], r1[x], wr), kGrayR) +
                                mulhrs(lerp(g0[x], g1[x], wg), kGrayG) +
                                mulhrs(lerp(b0[x], b1[x], wb), kGrayB)));
}

void compose(const ComposeArgs& c, size_t n) noexcept
{
    switch (c.mode) {
    case Compose::YuvRgb:
        yuv_rgb(c, n);
        break;
    case Compose::YuvGray:
        yuv_gray(c, n);
        break;
    case Compose::RgbGray:
        rgb_gray(c, n);
        break;
    }
}

inline uint8_t to_u8(int32_t v) noexcept
{
    return uint8_t((v + 16) >> 5);
}

template <size_t C> void emit_u8_hwc(const EmitArgs& e, size_t n, uint8_t mask) noexcept
{
    const int16_t* __restrict s[C];
    for (size_t c = 0; c < C; ++c)
        s[c] = e.ch[c];
    uint8_t* __restrict d = e.dst;
    for (size_t x = 0; x < n; ++x)
        for (size_t c = 0; c < C; ++c)
            d[x * C + c] = to_u8(s[c][x]) ^ mask;
}

void emit_u8_plane(const int16_t* __restrict s, uint8_t* __restrict d, size_t n,
                   uint8_t mask) noexcept
{
    for (size_t x = 0; x < n; ++x)
        d[x] = to_u8(s[x]) ^ mask;
}

template <size_t C, typename T, typename Conv>
void emit_float_hwc(const EmitArgs& e, size_t n, Conv conv) noexcept
{
    const int16_t* __restrict s[C];
    float sc[C], bi[C];
    for (size_t c = 0; c < C; ++c) {
        s[c] = e.ch[c];
        sc[c] = e.scale[c];
        bi[c] = e.bias[c];
    }
    T* __restrict d = reinterpret_cast<T*>(e.dst);
    for (size_t x = 0; x < n; ++x)
        for (size_t c = 0; c < C; ++c)
            d[x * C + c] = conv(float(s[c][x]) * sc[c] + bi[c]);
}

template <typename T, typename Conv>
void emit_float_plane(const int16_t* __restrict s, float sc, float bi, uint8_t* dst, size_t n,
                      Conv conv) noexcept
{
    T* __restrict d = reinterpret_cast<T*>(dst);
    for (size_t x = 0; x < n; ++x)
        d[x] = conv(float(s[x]) * sc + bi);
}

template <typename T, typename Conv>
void emit_float(const EmitArgs& e, size_t n, Conv conv) noexcept
{
    if (e.chw || e.channels == 1) {
        for (size_t c = 0; c < e.channels; ++c)
            emit_float_plane<T>(e.ch[c], e.scale[c], e.bias[c], e.dst + c * e.plane_stride, n,
                                conv);
        return;
    }
    if (e.channels == 3)
        emit_float_hwc<3, T>(e, n, conv);
    else
        emit_float_hwc<4, T>(e, n, conv);
}

/// Quantized bytes of one channel row: the fast form, or the table where it is not exact.
void emit_q_plane(const int16_t* __restrict s, size_t c, const EmitArgs& e, QuantRange r,
                  uint8_t* __restrict d, size_t step, size_t n) noexcept
{
    if (e.qtable) {
        const uint8_t* __restrict table = e.qtable + c * kQ5Count;
        for (size_t x = 0; x < n; ++x)
            d[x * step] = table[std::min<int32_t>(std::max<int32_t>(s[x], 0), kQ5Max)];
        return;
    }
    const float a = e.scale[c], b = e.bias[c];
    const int32_t zp = e.zero_point;
    if (e.qfused) {
        // Only the fill row of a converter whose level has FMA comes here.
        for (size_t x = 0; x < n; ++x)
            d[x * step] = uint8_t(quant_formula(s[x], a, b, zp, r, QuantForm::Fused));
        return;
    }
    for (size_t x = 0; x < n; ++x)
        d[x * step] = uint8_t(quant_formula(s[x], a, b, zp, r));
}

void emit_quant(const EmitArgs& e, size_t n) noexcept
{
    const QuantRange r = quant_range(e.type == EmitType::QI8 ? DType::I8 : DType::U8);
    const bool planar = e.chw || e.channels == 1;
    for (size_t c = 0; c < e.channels; ++c) {
        if (planar)
            emit_q_plane(e.ch[c], c, e, r, e.dst + c * e.plane_stride, 1, n);
        else
            emit_q_plane(e.ch[c], c, e, r, e.dst + c, e.channels, n);
    }
}

void emit(const EmitArgs& e, size_t n) noexcept
{
    switch (e.type) {
    case EmitType::QU8:
    case EmitType::QI8:
        emit_quant(e, n);
        break;
    case EmitType::U8:
    case EmitType::I8: {
        const uint8_t mask = e.type == EmitType::I8 ? 0x80 : 0x00;
        if (e.chw || e.channels == 1) {
            for (size_t c = 0; c < e.channels; ++c)
                emit_u8_plane(e.ch[c], e.dst + c * e.plane_stride, n, mask);
        } else if (e.channels == 3) {
            emit_u8_hwc<3>(e, n, mask);
        } else {
            emit_u8_hwc<4>(e, n, mask);
        }
        break;
    }
    case EmitType::F32:
        emit_float<float>(e, n, [](float v) { return v; });
        break;
    case EmitType::F16:
        emit_float<uint16_t>(e, n, [](float v) { return f32_to_f16(v); });
        break;
    }
}

/// YUV straight to interleaved bytes (the camera-to-RGB path), one pixel at a time so the
/// vectoriser can keep everything in registers (vst3/vst4 on NEON).
template <size_t C, bool Swap>
void yuv_u8_hwc(const ComposeArgs& c, const EmitArgs& e, size_t n, uint8_t mask) noexcept
{
    const int16_t* __restrict y0 = c.in[0].r0;
    const int16_t* __restrict y1 = c.in[0].r1;
    const int16_t* __restrict u0 = c.in[1].r0;
    const int16_t* __restrict u1 = c.in[1].r1;
    const int16_t* __restrict v0 = c.in[2].r0;
    const int16_t* __restrict v1 = c.in[2].r1;
    uint8_t* __restrict d = e.dst;
    const int32_t wy = c.in[0].w, wu = c.in[1].w, wv = c.in[2].w;
    const int32_t yo = c.m.y_off, ys = c.m.ys, vr = c.m.vr, ug = c.m.ug, vg = c.m.vg, ub = c.m.ub;
    for (size_t x = 0; x < n; ++x) {
        const int32_t y4 = (lerp(y0[x], y1[x], wy) - yo) * 4;
        const int32_t u4 = (lerp(u0[x], u1[x], wu) - 4096) * 4;
        const int32_t v4 = (lerp(v0[x], v1[x], wv) - 4096) * 4;
        const int32_t yy = mulhrs(y4, ys);
        const uint8_t r = to_u8(clamp_q5(yy + mulhrs(v4, vr))) ^ mask;
        const uint8_t g = to_u8(clamp_q5(yy + mulhrs(u4, ug) + mulhrs(v4, vg))) ^ mask;
        const uint8_t b = to_u8(clamp_q5(yy + mulhrs(u4, ub))) ^ mask;
        d[x * C + 0] = Swap ? b : r;
        d[x * C + 1] = g;
        d[x * C + 2] = Swap ? r : b;
        if constexpr (C == 4)
            d[x * C + 3] = 0xff ^ mask;
    }
}

bool yuv_emit(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    if ((e.type != EmitType::U8 && e.type != EmitType::I8) || e.chw || e.channels < 3)
        return false;
    const uint8_t mask = e.type == EmitType::I8 ? 0x80 : 0x00;
    const bool swap = e.order[0] == 2;
    if (e.channels == 3)
        swap ? yuv_u8_hwc<3, true>(c, e, n, mask) : yuv_u8_hwc<3, false>(c, e, n, mask);
    else
        swap ? yuv_u8_hwc<4, true>(c, e, n, mask) : yuv_u8_hwc<4, false>(c, e, n, mask);
    return true;
}

} // namespace

const KernelSet kPortableKernels = {"portable", hpass,    vblend, compose,
                                    emit,       yuv_emit, false,  false};

} // namespace edgetensor::detail::convert
