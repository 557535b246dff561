// SPDX-License-Identifier: MIT
//
// The SSE4.1 level (compiled for SSE4.1): the AVX2 level's design on 128-bit vectors, for
// x86-64 CPUs without AVX2. The horizontal pass takes one block of 4 outputs per shuffle;
// half-precision output has no F16C here and is left to the portable loops.
//
// Nothing here may use an inline function shared with other translation units (see
// convert_scalar.hpp): everything is intrinsics or internal to this file.

#include "convert_kernels.hpp"

#include <smmintrin.h>

// Everything defined below is compiled for sse4.1 (the intrinsics above carry their own
// target attributes). Only headers without function definitions are included before this.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("sse4.1"))), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC target("sse4.1")
#endif

namespace edgetensor::detail::convert
{

namespace
{

#define ET_ALWAYS_INLINE inline __attribute__((always_inline))

struct V {
    using T = __m128i;
    static constexpr size_t N = 8;
    static T load(const int16_t* p) noexcept
    {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    }
    static void store(int16_t* p, T v) noexcept
    {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
    }
    static T set1(int16_t v) noexcept { return _mm_set1_epi16(v); }
    static T add(T a, T b) noexcept { return _mm_add_epi16(a, b); }
    static T sub(T a, T b) noexcept { return _mm_sub_epi16(a, b); }
    static T mulhrs(T a, T b) noexcept { return _mm_mulhrs_epi16(a, b); }
    static T shl2(T a) noexcept { return _mm_slli_epi16(a, 2); }
    static T min(T a, T b) noexcept { return _mm_min_epi16(a, b); }
    static T max(T a, T b) noexcept { return _mm_max_epi16(a, b); }
};

#include "convert_kernels_simd.inl"

inline __m128i load128(const void* p) noexcept
{
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

template <size_t K, uint32_t L, bool Lerp>
void hpass_t(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    const size_t quads = n / 16;
    // In locals: the compiler cannot tell the int16 stores from the tables' pointers.
    const int32_t* const win = g.win;
    const uint8_t* const masks = g.masks;
    const int16_t* const wts = g.w;
    int16_t* out[K];
#pragma GCC unroll 4
    for (size_t k = 0; k < K; ++k)
        out[k] = dst[k];
    for (size_t q = 0; q < quads; ++q) {
        __m128i r[K][4];
#pragma GCC unroll 4
        for (uint32_t l = 0; l < L; ++l) {
            const int32_t* w = win + (q * L + l) * 4;
            const uint8_t* m = masks + (q * L + l) * K * 64;
#pragma GCC unroll 4
            for (size_t s = 0; s < 4; ++s) {
                const __m128i v = load128(row + w[s]);
#pragma GCC unroll 4
                for (size_t k = 0; k < K; ++k) {
                    const __m128i t = _mm_shuffle_epi8(v, load128(m + k * 64 + s * 16));
                    r[k][s] = l == 0 ? t : _mm_or_si128(r[k][s], t);
                }
            }
        }
        const __m128i w0 = load128(wts + q * 16), w1 = load128(wts + q * 16 + 8);
#pragma GCC unroll 4
        for (size_t k = 0; k < K; ++k) {
            // Slots hold blocks 0, 2, 1, 3.
            const __m128i a0 = _mm_unpacklo_epi64(r[k][0], r[k][2]);
            const __m128i a1 = _mm_unpacklo_epi64(r[k][1], r[k][3]);
            __m128i h0 = _mm_slli_epi16(a0, 5), h1 = _mm_slli_epi16(a1, 5);
            if constexpr (Lerp) {
                const __m128i b0 = _mm_unpackhi_epi64(r[k][0], r[k][2]);
                const __m128i b1 = _mm_unpackhi_epi64(r[k][1], r[k][3]);
                h0 = _mm_add_epi16(h0,
                                   _mm_mulhrs_epi16(_mm_slli_epi16(_mm_sub_epi16(b0, a0), 5), w0));
                h1 = _mm_add_epi16(h1,
                                   _mm_mulhrs_epi16(_mm_slli_epi16(_mm_sub_epi16(b1, a1), 5), w1));
            }
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out[k] + q * 16), h0);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out[k] + q * 16 + 8), h1);
        }
    }
}

template <size_t K, bool Lerp>
void hpass_k(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    switch (g.loads) {
    case 1:
        hpass_t<K, 1, Lerp>(row, g, n, dst);
        break;
    case 2:
        hpass_t<K, 2, Lerp>(row, g, n, dst);
        break;
    default:
        hpass_t<K, 4, Lerp>(row, g, n, dst);
        break;
    }
}

template <bool Lerp>
void hpass_l(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    switch (g.count) {
    case 1:
        hpass_k<1, Lerp>(row, g, n, dst);
        break;
    case 2:
        hpass_k<2, Lerp>(row, g, n, dst);
        break;
    case 3:
        hpass_k<3, Lerp>(row, g, n, dst);
        break;
    default:
        hpass_k<4, Lerp>(row, g, n, dst);
        break;
    }
}

void hpass(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    if (!g.win)
        kPortableKernels.hpass(row, g, n, dst);
    else if (g.lerp)
        hpass_l<true>(row, g, n, dst);
    else
        hpass_l<false>(row, g, n, dst);
}

// ---- emit ---------------------------------------------------------------------------------

/// 16 Q5 samples -> 16 bytes ((v + 16) >> 5, then the u8/i8 mask).
inline __m128i to_u8(const int16_t* s, __m128i mask) noexcept
{
    const __m128i half = _mm_set1_epi16(16);
    const __m128i lo = _mm_srli_epi16(_mm_add_epi16(load128(s), half), 5);
    const __m128i hi = _mm_srli_epi16(_mm_add_epi16(load128(s + 8), half), 5);
    return _mm_xor_si128(_mm_packus_epi16(lo, hi), mask);
}

struct Rgb3Masks {
    alignas(16) uint8_t m[3][3][16];
    constexpr Rgb3Masks() : m{}
    {
        for (int t = 0; t < 3; ++t)
            for (int c = 0; c < 3; ++c)
                for (int j = 0; j < 16; ++j) {
                    const int b = 16 * t + j;
                    m[t][c][j] = uint8_t(b % 3 == c ? b / 3 : 0x80);
                }
    }
};
constexpr Rgb3Masks kRgb3;

inline __m128i mask3(int t, int c) noexcept
{
    return _mm_load_si128(reinterpret_cast<const __m128i*>(kRgb3.m[t][c]));
}

ET_ALWAYS_INLINE void store_rgb16(uint8_t* out, __m128i r, __m128i g, __m128i b) noexcept
{
#pragma GCC unroll 4
    for (int t = 0; t < 3; ++t)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * t),
                         _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(r, mask3(t, 0)),
                                                   _mm_shuffle_epi8(g, mask3(t, 1))),
                                      _mm_shuffle_epi8(b, mask3(t, 2))));
}

ET_ALWAYS_INLINE void store_rgba16(uint8_t* out, __m128i r, __m128i g, __m128i b,
                                   __m128i a) noexcept
{
    const __m128i rg_lo = _mm_unpacklo_epi8(r, g), rg_hi = _mm_unpackhi_epi8(r, g);
    const __m128i ba_lo = _mm_unpacklo_epi8(b, a), ba_hi = _mm_unpackhi_epi8(b, a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_unpacklo_epi16(rg_lo, ba_lo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16), _mm_unpackhi_epi16(rg_lo, ba_lo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 32), _mm_unpacklo_epi16(rg_hi, ba_hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 48), _mm_unpackhi_epi16(rg_hi, ba_hi));
}

template <size_t C> void emit_u8_hwc(const EmitArgs& e, size_t n, uint8_t xor_mask) noexcept
{
    const __m128i mask = _mm_set1_epi8(char(xor_mask));
    uint8_t* d = e.dst;
    alignas(16) uint8_t tail[16 * C];
    for (size_t x = 0; x < n; x += 16) {
        uint8_t* out = n - x >= 16 ? d + x * C : tail;
        const __m128i r = to_u8(e.ch[0] + x, mask);
        const __m128i g = to_u8(e.ch[1] + x, mask);
        const __m128i b = to_u8(e.ch[2] + x, mask);
        if constexpr (C == 3)
            store_rgb16(out, r, g, b);
        else
            store_rgba16(out, r, g, b, to_u8(e.ch[3] + x, mask));
        if (out == tail)
            for (size_t i = 0; i < (n - x) * C; ++i)
                d[x * C + i] = tail[i];
    }
}

void emit_u8_plane(const int16_t* s, uint8_t* d, size_t n, uint8_t xor_mask) noexcept
{
    const __m128i mask = _mm_set1_epi8(char(xor_mask));
    size_t x = 0;
    for (; x + 16 <= n; x += 16)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + x), to_u8(s + x, mask));
    if (x < n) {
        alignas(16) uint8_t tail[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(tail), to_u8(s + x, mask));
        for (size_t i = 0; x + i < n; ++i)
            d[x + i] = tail[i];
    }
}

void emit_f32_plane(const int16_t* s, float sc, float bi, uint8_t* dst, size_t n) noexcept
{
    const __m128 scale = _mm_set1_ps(sc), bias = _mm_set1_ps(bi);
    float* d = reinterpret_cast<float*>(dst);
    alignas(16) float tail[4];
    for (size_t x = 0; x < n; x += 4) {
        float* out = n - x >= 4 ? d + x : tail;
        const __m128i v =
            _mm_cvtepi16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + x)));
        _mm_storeu_ps(out, _mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(v), scale), bias));
        if (out == tail)
            for (size_t i = 0; x + i < n; ++i)
                d[x + i] = tail[i];
    }
}

// ---- quantized bytes -------------------------------------------------------------------------

/// 8 Q5 samples -> round_half_even(v * a + b) + zero point, saturated to int16 (a multiply
/// then an add, as convert_quant.hpp's reference form).
inline __m128i quant8(__m128i v, __m128 a, __m128 b, __m128i zp) noexcept
{
    // Samples are never negative: widening is interleaving with zeros.
    const __m128i zero = _mm_setzero_si128();
    const __m128 lo = _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, zero));
    const __m128 hi = _mm_cvtepi32_ps(_mm_unpackhi_epi16(v, zero));
    const __m128i nlo = _mm_cvtps_epi32(_mm_add_ps(_mm_mul_ps(lo, a), b));
    const __m128i nhi = _mm_cvtps_epi32(_mm_add_ps(_mm_mul_ps(hi, a), b));
    return _mm_adds_epi16(_mm_packs_epi32(nlo, nhi), zp);
}

/// 16 Q5 samples (v0: 0-7, v1: 8-15) -> 16 quantized bytes, saturated to i8/u8.
template <bool Signed>
inline __m128i quant_bytes(__m128i v0, __m128i v1, __m128 a, __m128 b, __m128i zp) noexcept
{
    const __m128i p = quant8(v0, a, b, zp), q = quant8(v1, a, b, zp);
    return Signed ? _mm_packs_epi16(p, q) : _mm_packus_epi16(p, q);
}

/// C channels of 16 output pixels from x (fewer at the end of the row), interleaved or planar.
template <size_t C>
ET_ALWAYS_INLINE void store_pixels(const EmitArgs& e, size_t x, size_t n, const __m128i* v) noexcept
{
    const size_t left = n - x < 16 ? n - x : 16;
    if (e.chw || C == 1) {
#pragma GCC unroll 4
        for (size_t k = 0; k < C; ++k) {
            uint8_t* d = e.dst + k * e.plane_stride + x;
            if (left == 16) {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d), v[k]);
            } else {
                alignas(16) uint8_t tail[16];
                _mm_store_si128(reinterpret_cast<__m128i*>(tail), v[k]);
                copy_bytes(d, tail, left);
            }
        }
        return;
    }
    uint8_t* d = e.dst + x * C;
    alignas(16) uint8_t tail[16 * 4];
    uint8_t* out = left == 16 ? d : tail;
    if constexpr (C == 3)
        store_rgb16(out, v[0], v[1], v[2]);
    else if constexpr (C == 4)
        store_rgba16(out, v[0], v[1], v[2], v[3]);
    if (out == tail)
        copy_bytes(d, tail, left * C);
}

/// Channel rows to quantized bytes (the fast form; table rows go to the portable emit).
template <bool Signed, size_t C> void emit_q(const EmitArgs& e, size_t n) noexcept
{
    const __m128i zp = _mm_set1_epi16(e.zero_point);
    __m128 qa[C], qb[C];
    for (size_t k = 0; k < C; ++k) {
        qa[k] = _mm_set1_ps(e.scale[k]);
        qb[k] = _mm_set1_ps(e.bias[k]);
    }
    for (size_t x = 0; x < n; x += 16) {
        __m128i v[C];
#pragma GCC unroll 4
        for (size_t k = 0; k < C; ++k)
            v[k] = quant_bytes<Signed>(load128(e.ch[k] + x), load128(e.ch[k] + x + 8), qa[k], qb[k],
                                       zp);
        store_pixels<C>(e, x, n, v);
    }
}

template <bool Signed> void emit_q_channels(const EmitArgs& e, size_t n) noexcept
{
    if (e.channels == 1)
        emit_q<Signed, 1>(e, n);
    else if (e.channels == 3)
        emit_q<Signed, 3>(e, n);
    else
        emit_q<Signed, 4>(e, n);
}

void emit(const EmitArgs& e, size_t n) noexcept
{
    const bool planar = e.chw || e.channels == 1;
    switch (e.type) {
    case EmitType::QU8:
    case EmitType::QI8:
        if (e.qtable || e.channels == 2)
            break;
        if (e.type == EmitType::QI8)
            emit_q_channels<true>(e, n);
        else
            emit_q_channels<false>(e, n);
        return;
    case EmitType::U8:
    case EmitType::I8: {
        const uint8_t mask = e.type == EmitType::I8 ? 0x80 : 0x00;
        if (planar) {
            for (size_t c = 0; c < e.channels; ++c)
                emit_u8_plane(e.ch[c], e.dst + c * e.plane_stride, n, mask);
        } else if (e.channels == 3) {
            emit_u8_hwc<3>(e, n, mask);
        } else {
            emit_u8_hwc<4>(e, n, mask);
        }
        return;
    }
    case EmitType::F32:
        if (!planar)
            break;
        for (size_t c = 0; c < e.channels; ++c)
            emit_f32_plane(e.ch[c], e.scale[c], e.bias[c], e.dst + c * e.plane_stride, n);
        return;
    case EmitType::F16:
        break;
    }
    kPortableKernels.emit(e, n);
}

// ---- YUV straight to the output --------------------------------------------------------

inline __m128i q5_bytes(__m128i lo, __m128i hi, __m128i mask) noexcept
{
    return _mm_xor_si128(_mm_packus_epi16(_mm_srai_epi16(lo, 5), _mm_srai_epi16(hi, 5)), mask);
}

template <bool Blend, size_t C, bool Swap>
void yuv_u8(const ComposeArgs& c, const EmitArgs& e, size_t n, __m128i mask) noexcept
{
    const YuvSrc src(c);
    const __m128i bias = _mm_set1_epi16(16);
    const __m128i alpha = _mm_xor_si128(_mm_set1_epi8(char(0xff)), mask);
    uint8_t* d = e.dst;
    uint8_t* plane[4];
    for (size_t k = 0; k < 4; ++k)
        plane[k] = e.dst + k * e.plane_stride;
    alignas(16) uint8_t tail[4][16 * 4];
    for (size_t x = 0; x < n; x += 16) {
        __m128i r0, g0, b0, r1, g1, b1;
        src.template rgb<(Blend ? kBlendAll : kBlendNone)>(x, bias, r0, g0, b0);
        src.template rgb<(Blend ? kBlendAll : kBlendNone)>(x + 8, bias, r1, g1, b1);
        __m128i r = q5_bytes(r0, r1, mask);
        const __m128i g = q5_bytes(g0, g1, mask);
        __m128i b = q5_bytes(b0, b1, mask);
        if constexpr (Swap) {
            const __m128i t = r;
            r = b;
            b = t;
        }
        const bool full = n - x >= 16;
        if (!e.chw) {
            uint8_t* out = full ? d + x * C : tail[0];
            if constexpr (C == 3)
                store_rgb16(out, r, g, b);
            else
                store_rgba16(out, r, g, b, alpha);
            if (!full)
                copy_bytes(d + x * C, tail[0], (n - x) * C);
        } else {
            const __m128i v[4] = {r, g, b, alpha};
#pragma GCC unroll 4
            for (size_t k = 0; k < C; ++k) {
                if (full) {
                    _mm_storeu_si128(reinterpret_cast<__m128i*>(plane[k] + x), v[k]);
                } else {
                    _mm_store_si128(reinterpret_cast<__m128i*>(tail[k]), v[k]);
                    copy_bytes(plane[k] + x, tail[k], n - x);
                }
            }
        }
    }
}

template <bool Blend> void yuv_f32_chw(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const YuvSrc src(c);
    float* plane[3] = {};
    __m128 scale[3], bias[3];
    for (size_t k = 0; k < 3; ++k) {
        const size_t j = e.order[k];
        plane[j] = reinterpret_cast<float*>(e.dst + k * e.plane_stride);
        scale[j] = _mm_set1_ps(e.scale[k]);
        bias[j] = _mm_set1_ps(e.bias[k]);
    }
    alignas(16) float tail[8];
    for (size_t x = 0; x < n; x += 8) {
        __m128i v[3];
        src.template rgb_q5<(Blend ? kBlendAll : kBlendNone)>(x, v[0], v[1], v[2]);
        const bool full = n - x >= 8;
        for (size_t j = 0; j < 3; ++j) {
            float* out = full ? plane[j] + x : tail;
            const __m128i lo = _mm_cvtepi16_epi32(v[j]);
            const __m128i hi = _mm_cvtepi16_epi32(_mm_srli_si128(v[j], 8));
            _mm_storeu_ps(out, _mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(lo), scale[j]), bias[j]));
            _mm_storeu_ps(out + 4, _mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(hi), scale[j]), bias[j]));
            if (!full)
                for (size_t i = 0; x + i < n; ++i)
                    plane[j][x + i] = tail[i];
        }
    }
}

/// YUV straight to quantized bytes: output channel k takes colour k (R G B), or 2 - k with
/// Swap (B G R); alpha is the quantized opaque value.
template <bool Blend, size_t C, bool Swap, bool Signed>
void yuv_q(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const YuvSrc src(c);
    const __m128i zp = _mm_set1_epi16(e.zero_point);
    __m128 qa[C], qb[C];
    for (size_t k = 0; k < C; ++k) {
        qa[k] = _mm_set1_ps(e.scale[k]);
        qb[k] = _mm_set1_ps(e.bias[k]);
    }
    __m128i v[C];
    if constexpr (C == 4) {
        const __m128i opaque = _mm_set1_epi16(kQ5Max);
        v[3] = quant_bytes<Signed>(opaque, opaque, qa[3], qb[3], zp);
    }
    for (size_t x = 0; x < n; x += 16) {
        __m128i r0, g0, b0, r1, g1, b1;
        src.template rgb_q5<(Blend ? kBlendAll : kBlendNone)>(x, r0, g0, b0);
        src.template rgb_q5<(Blend ? kBlendAll : kBlendNone)>(x + 8, r1, g1, b1);
        v[0] = quant_bytes<Signed>(Swap ? b0 : r0, Swap ? b1 : r1, qa[0], qb[0], zp);
        v[1] = quant_bytes<Signed>(g0, g1, qa[1], qb[1], zp);
        v[2] = quant_bytes<Signed>(Swap ? r0 : b0, Swap ? r1 : b1, qa[2], qb[2], zp);
        store_pixels<C>(e, x, n, v);
    }
}

template <bool Blend, bool Signed>
bool yuv_q_channels(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const bool swap = e.order[0] == 2;
    if (e.channels == 3)
        swap ? yuv_q<Blend, 3, true, Signed>(c, e, n) : yuv_q<Blend, 3, false, Signed>(c, e, n);
    else
        swap ? yuv_q<Blend, 4, true, Signed>(c, e, n) : yuv_q<Blend, 4, false, Signed>(c, e, n);
    return true;
}

template <bool Blend> bool yuv_emit_t(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const bool swap = e.order[0] == 2;
    switch (e.type) {
    case EmitType::QU8:
    case EmitType::QI8:
        if (e.qtable || e.channels < 3)
            return false;
        return e.type == EmitType::QI8 ? yuv_q_channels<Blend, true>(c, e, n)
                                       : yuv_q_channels<Blend, false>(c, e, n);
    case EmitType::U8:
    case EmitType::I8: {
        if (e.channels < 3)
            return false;
        const __m128i mask = _mm_set1_epi8(e.type == EmitType::I8 ? char(0x80) : 0);
        if (e.channels == 3)
            swap ? yuv_u8<Blend, 3, true>(c, e, n, mask) : yuv_u8<Blend, 3, false>(c, e, n, mask);
        else
            swap ? yuv_u8<Blend, 4, true>(c, e, n, mask) : yuv_u8<Blend, 4, false>(c, e, n, mask);
        return true;
    }
    case EmitType::F32:
        if (!e.chw || e.channels != 3)
            return false;
        yuv_f32_chw<Blend>(c, e, n);
        return true;
    case EmitType::F16:
        return false;
    }
    return false;
}

bool yuv_emit(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    return blends(c) ? yuv_emit_t<true>(c, e, n) : yuv_emit_t<false>(c, e, n);
}

} // namespace

const KernelSet kSse41Kernels = {"sse4.1", hpass,    vblend_simd, compose_simd,
                                 emit,     yuv_emit, false,       false};

} // namespace edgetensor::detail::convert

#if defined(__clang__)
#pragma clang attribute pop
#endif
