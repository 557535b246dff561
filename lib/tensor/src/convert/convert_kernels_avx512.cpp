// SPDX-License-Identifier: MIT
//
// The AVX-512 level (F, BW, VL, DQ and VBMI, plus the FMA and F16C of the AVX2 level: Ice Lake,
// Zen 4 and later). One instruction AVX2 lacks does most of its work: vpermt2b, which picks
// any of 128 bytes into each of 64 lanes.
//  - Horizontal pass: 32 outputs' taps come from one, two or four 128-byte windows of the
//    source row, one permute per window, tap and component, each landing the tap in the low
//    byte of its int16 lane (the AVX2 level shuffles 4 outputs at a time out of 16-byte
//    windows).
//  - Interleaved bytes: 64 pixels' channels become C * 64 output bytes in two permutes per
//    output vector, which also undo the lane order the in-lane packs leave.
// The vertical and colour stages are convert_kernels_simd.inl on 32 lanes. What this level has
// no kernel for (interleaved floats, quantized bytes from a table, tap groups that four windows
// cannot cover) runs the AVX2 level's kernels, which every CPU with this level also runs; all
// levels compute the same integer function, so the mix is exact.
//
// Nothing here may use an inline function shared with other translation units (see
// convert_scalar.hpp): everything is intrinsics or internal to this file.

#include "convert_kernels.hpp"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), a self-initialised variable
// that -W(maybe-)uninitialized reports wherever they inline (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

// Everything defined below is compiled for this level (the intrinsics above carry their own
// target attributes). Only headers without function definitions are included before this.
#if defined(__clang__)
#pragma clang attribute push(                                                                      \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c"))),        \
    apply_to = function)
#elif defined(__GNUC__)
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx2,fma,f16c")
#endif

namespace edgetensor::detail::convert
{

namespace
{

#define ET_ALWAYS_INLINE inline __attribute__((always_inline))

struct V {
    using T = __m512i;
    static constexpr size_t N = 32;
    static T load(const int16_t* p) noexcept { return _mm512_loadu_si512(p); }
    static void store(int16_t* p, T v) noexcept { _mm512_storeu_si512(p, v); }
    static T set1(int16_t v) noexcept { return _mm512_set1_epi16(v); }
    static T add(T a, T b) noexcept { return _mm512_add_epi16(a, b); }
    static T sub(T a, T b) noexcept { return _mm512_sub_epi16(a, b); }
    static T mulhrs(T a, T b) noexcept { return _mm512_mulhrs_epi16(a, b); }
    static T shl2(T a) noexcept { return _mm512_slli_epi16(a, 2); }
    static T min(T a, T b) noexcept { return _mm512_min_epi16(a, b); }
    static T max(T a, T b) noexcept { return _mm512_max_epi16(a, b); }
};

#include "convert_kernels_simd.inl"

inline __m512i load64(const void* p) noexcept
{
    return _mm512_loadu_si512(p);
}

// ---- horizontal pass ------------------------------------------------------------------------

/// The low bytes of the int16 lanes of outputs [w * 32 / W, (w + 1) * 32 / W): where window w
/// of W writes.
constexpr uint64_t window_lanes(uint32_t W, uint32_t w) noexcept
{
    const uint32_t bytes = 64 / W;
    const uint64_t range = bytes == 64 ? ~uint64_t(0) : ((uint64_t(1) << bytes) - 1) << (bytes * w);
    return range & 0x5555555555555555ull;
}

template <size_t K, uint32_t W, bool Lerp>
void hpass_t(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    const size_t blocks = n / 32;
    // In locals: the compiler cannot tell the int16 stores from the tables' pointers.
    const int32_t* const win = g.vwin;
    const uint8_t* const idx = g.vidx;
    const int16_t* const wts = g.w;
    int16_t* out[K];
#pragma GCC unroll 4
    for (size_t k = 0; k < K; ++k)
        out[k] = dst[k];
    for (size_t b = 0; b < blocks; ++b) {
        __m512i a[K], c[K];
#pragma GCC unroll 4
        for (uint32_t w = 0; w < W; ++w) {
            const uint8_t* p = row + win[b * W + w];
            const __m512i lo = load64(p), hi = load64(p + 64);
            const __mmask64 lanes = window_lanes(W, w);
#pragma GCC unroll 4
            for (size_t k = 0; k < K; ++k) {
                const uint8_t* ik = idx + (b * K + k) * 128;
                const __m512i ta = _mm512_maskz_permutex2var_epi8(lanes, lo, load64(ik), hi);
                a[k] = w == 0 ? ta : _mm512_or_si512(a[k], ta);
                if constexpr (Lerp) {
                    const __m512i tc =
                        _mm512_maskz_permutex2var_epi8(lanes, lo, load64(ik + 64), hi);
                    c[k] = w == 0 ? tc : _mm512_or_si512(c[k], tc);
                }
            }
        }
        const __m512i wt = load64(wts + b * 32);
#pragma GCC unroll 4
        for (size_t k = 0; k < K; ++k) {
            __m512i h = _mm512_slli_epi16(a[k], 5);
            if constexpr (Lerp)
                h = _mm512_add_epi16(
                    h, _mm512_mulhrs_epi16(_mm512_slli_epi16(_mm512_sub_epi16(c[k], a[k]), 5), wt));
            _mm512_storeu_si512(out[k] + b * 32, h);
        }
    }
}

template <size_t K, bool Lerp>
void hpass_k(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept
{
    switch (g.vwins) {
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
    if (!g.vwin)
        kAvx2Kernels.hpass(row, g, n, dst);
    else if (g.lerp)
        hpass_l<true>(row, g, n, dst);
    else
        hpass_l<false>(row, g, n, dst);
}

// ---- bytes ----------------------------------------------------------------------------------

/// Where vpackuswb(lo, hi) puts pixel i of the 64 (lo: 0-31, hi: 32-63): it packs within each
/// 128-bit lane, so the quadwords come out lo0 hi0 lo1 hi1 lo2 hi2 lo3 hi3.
constexpr uint8_t packed_pos(size_t i) noexcept
{
    return uint8_t(i < 32 ? (i / 8) * 16 + i % 8 : ((i - 32) / 8) * 16 + 8 + (i - 32) % 8);
}

/// Packed bytes back in pixel order (for planar stores).
inline __m512i in_order(__m512i packed) noexcept
{
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), packed);
}

/// Where the quantizer's vpackssdw then vpacksswb/vpackuswb (all within 128-bit lanes) put
/// sample i of the 64: lane (i % 16) / 4, then by i / 16, then i % 4.
constexpr uint8_t quant_pos(size_t i) noexcept
{
    return uint8_t(16 * ((i % 16) / 4) + 4 * (i / 16) + i % 4);
}

/// Byte orders a vector of 64 channel bytes arrives in.
enum class Order { Packed, Quant };

constexpr uint8_t pos_of(Order o, size_t i) noexcept
{
    return o == Order::Packed ? packed_pos(i) : quant_pos(i);
}

/// Interleaving C channel vectors of 64 bytes (in order O) into C output vectors: output byte
/// j of vector t is channel (64 t + j) % C of pixel (64 t + j) / C. `first` indexes the
/// concatenation of channels 0 and 1, `second` channel 2 alone (C = 3) or channels 2 and 3
/// (C = 4); `upper` marks the bytes taken from the second.
template <size_t C, Order O> struct Interleave {
    alignas(64) uint8_t first[C][64];
    alignas(64) uint8_t second[C][64];
    uint64_t upper[C];
    constexpr Interleave() : first{}, second{}, upper{}
    {
        for (size_t t = 0; t < C; ++t)
            for (size_t j = 0; j < 64; ++j) {
                const size_t p = 64 * t + j, ch = p % C;
                const uint8_t pos = pos_of(O, p / C);
                if (ch < 2) {
                    first[t][j] = uint8_t(pos + (ch == 1 ? 64 : 0));
                } else {
                    second[t][j] = uint8_t(pos + (ch == 3 ? 64 : 0));
                    upper[t] |= uint64_t(1) << j;
                }
            }
    }
};
template <size_t C, Order O> constexpr Interleave<C, O> kInterleave;

/// The quantizer's bytes back in sample order (for planar stores).
struct QuantInOrder {
    alignas(64) uint8_t idx[64];
    constexpr QuantInOrder() : idx{}
    {
        for (size_t i = 0; i < 64; ++i)
            idx[i] = quant_pos(i);
    }
};
constexpr QuantInOrder kQuantInOrder;

/// 64 pixels' channels (order O) to C * 64 interleaved bytes at d.
template <size_t C, Order O>
ET_ALWAYS_INLINE void store_interleaved(uint8_t* d, __m512i r, __m512i g, __m512i b,
                                        __m512i a) noexcept
{
    const Interleave<C, O>& il = kInterleave<C, O>;
#pragma GCC unroll 4
    for (size_t t = 0; t < C; ++t) {
        const __m512i rg = _mm512_permutex2var_epi8(r, load64(il.first[t]), g);
        __m512i o;
        if constexpr (C == 3)
            o = _mm512_mask_permutexvar_epi8(rg, il.upper[t], load64(il.second[t]), b);
        else
            o = _mm512_mask_blend_epi8(il.upper[t], rg,
                                       _mm512_permutex2var_epi8(b, load64(il.second[t]), a));
        _mm512_storeu_si512(d + 64 * t, o);
    }
}

/// 64 Q5 samples at s (32 when `half`, the rest zero) -> bytes in packed order:
/// (v + 16) >> 5, saturated, then the u8/i8 mask.
inline __m512i to_u8(const int16_t* s, bool half, __m512i mask) noexcept
{
    const __m512i bias = _mm512_set1_epi16(16);
    const __m512i lo = _mm512_srli_epi16(_mm512_add_epi16(load64(s), bias), 5);
    const __m512i hi = half ? _mm512_setzero_si512()
                            : _mm512_srli_epi16(_mm512_add_epi16(load64(s + 32), bias), 5);
    return _mm512_xor_si512(_mm512_packus_epi16(lo, hi), mask);
}

// ---- emit -----------------------------------------------------------------------------------

template <size_t C> void emit_u8_hwc(const EmitArgs& e, size_t n, uint8_t xor_mask) noexcept
{
    const __m512i mask = _mm512_set1_epi8(char(xor_mask));
    uint8_t* d = e.dst;
    size_t x = 0;
    auto block = [&](uint8_t* out, bool half) {
        const __m512i r = to_u8(e.ch[0] + x, half, mask);
        const __m512i g = to_u8(e.ch[1] + x, half, mask);
        const __m512i b = to_u8(e.ch[2] + x, half, mask);
        const __m512i a = C == 4 ? to_u8(e.ch[3] + x, half, mask) : r;
        store_interleaved<C, Order::Packed>(out, r, g, b, a);
    };
    for (; x + 64 <= n; x += 64)
        block(d + x * C, false);
    if (x < n) {
        // Rows hold whole multiples of 32 samples: the second 32 exist when any is needed.
        alignas(64) uint8_t tail[64 * C];
        block(tail, n - x <= 32);
        copy_bytes(d + x * C, tail, (n - x) * C);
    }
}

void emit_u8_plane(const int16_t* s, uint8_t* d, size_t n, uint8_t xor_mask) noexcept
{
    const __m512i mask = _mm512_set1_epi8(char(xor_mask));
    size_t x = 0;
    for (; x + 64 <= n; x += 64)
        _mm512_storeu_si512(d + x, in_order(to_u8(s + x, false, mask)));
    if (x < n) {
        alignas(64) uint8_t tail[64];
        _mm512_store_si512(tail, in_order(to_u8(s + x, n - x <= 32, mask)));
        copy_bytes(d + x, tail, n - x);
    }
}

/// 16 Q5 samples -> v * scale + bias, multiply then add (as the AVX2 level's emit rounds).
inline __m512 to_f32(__m256i v, __m512 scale, __m512 bias) noexcept
{
    return _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(v)), scale), bias);
}

/// Float vector stores; Stream: non-temporal, `d` aligned to the vector (stream_row()).
template <bool Stream> ET_ALWAYS_INLINE void put_ps(uint8_t* d, __m512 v) noexcept
{
    if constexpr (Stream)
        _mm512_stream_ps(reinterpret_cast<float*>(d), v);
    else
        _mm512_storeu_ps(d, v);
}

template <bool Stream> ET_ALWAYS_INLINE void put_ph(uint8_t* d, __m512 v) noexcept
{
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    if constexpr (Stream)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(d), h);
    else
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), h);
}

/// One vector of floats, or of halves with Half.
template <bool Half, bool Stream> ET_ALWAYS_INLINE void put(uint8_t* d, __m512 v) noexcept
{
    if constexpr (Half)
        put_ph<Stream>(d, v);
    else
        put_ps<Stream>(d, v);
}

template <bool Half, bool Stream>
void emit_float_plane(const int16_t* s, float sc, float bi, uint8_t* dst, size_t n) noexcept
{
    const __m512 scale = _mm512_set1_ps(sc), bias = _mm512_set1_ps(bi);
    alignas(64) uint8_t tail[64];
    constexpr size_t es = Half ? 2 : 4;
    for (size_t x = 0; x < n; x += 16) {
        const bool full = n - x >= 16;
        uint8_t* out = full ? dst + x * es : tail;
        const __m512 f =
            to_f32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + x)), scale, bias);
        if (full)
            put<Half, Stream>(out, f);
        else
            put<Half, false>(out, f); // the aligned scratch, copied out below
        if (out == tail)
            copy_bytes(dst + x * es, tail, (n - x) * es);
    }
}

// ---- quantized bytes ------------------------------------------------------------------------

/// 32 Q5 samples -> round_half_even(t) + zero point, saturated to int16, in the lane order
/// vpackssdw leaves; t is v * a + b fused, or a multiply then an add (convert_quant.hpp's two
/// forms), exactly as the AVX2 level computes it.
template <bool Fused> inline __m512i quant32(__m512i v, __m512 a, __m512 b, __m512i zp) noexcept
{
    // Samples are never negative: zero extension is the widening.
    const __m512 lo = _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)));
    const __m512 hi = _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)));
    __m512 tlo, thi;
    if constexpr (Fused) {
        tlo = _mm512_fmadd_ps(lo, a, b);
        thi = _mm512_fmadd_ps(hi, a, b);
    } else {
        tlo = _mm512_add_ps(_mm512_mul_ps(lo, a), b);
        thi = _mm512_add_ps(_mm512_mul_ps(hi, a), b);
    }
    return _mm512_adds_epi16(_mm512_packs_epi32(_mm512_cvtps_epi32(tlo), _mm512_cvtps_epi32(thi)),
                             zp);
}

/// 64 Q5 samples (v0: 0-31, v1: 32-63) -> 64 quantized bytes in Order::Quant, saturated to
/// i8/u8.
template <bool Fused, bool Signed>
inline __m512i quant_bytes(__m512i v0, __m512i v1, __m512 a, __m512 b, __m512i zp) noexcept
{
    const __m512i p = quant32<Fused>(v0, a, b, zp), q = quant32<Fused>(v1, a, b, zp);
    return Signed ? _mm512_packs_epi16(p, q) : _mm512_packus_epi16(p, q);
}

/// C channels of 64 output pixels from x (fewer at the end of the row), interleaved or planar.
template <size_t C>
ET_ALWAYS_INLINE void store_quant(const EmitArgs& e, size_t x, size_t n, const __m512i* v) noexcept
{
    const size_t left = n - x < 64 ? n - x : 64;
    if (e.chw || C == 1) {
        const __m512i order = load64(kQuantInOrder.idx);
#pragma GCC unroll 4
        for (size_t k = 0; k < C; ++k) {
            uint8_t* d = e.dst + k * e.plane_stride + x;
            const __m512i bytes = _mm512_permutexvar_epi8(order, v[k]);
            if (left == 64) {
                _mm512_storeu_si512(d, bytes);
            } else {
                alignas(64) uint8_t tail[64];
                _mm512_store_si512(tail, bytes);
                copy_bytes(d, tail, left);
            }
        }
        return;
    }
    uint8_t* d = e.dst + x * C;
    alignas(64) uint8_t tail[64 * 4];
    uint8_t* out = left == 64 ? d : tail;
    store_interleaved<C, Order::Quant>(out, v[0], v[1], v[2], v[C == 4 ? 3 : 0]);
    if (out == tail)
        copy_bytes(d, tail, left * C);
}

/// Channel rows to quantized bytes (the fast form; table rows go to the portable emit).
template <bool Fused, bool Signed, size_t C> void emit_q(const EmitArgs& e, size_t n) noexcept
{
    const __m512i zp = _mm512_set1_epi16(e.zero_point);
    __m512 qa[C], qb[C];
    for (size_t k = 0; k < C; ++k) {
        qa[k] = _mm512_set1_ps(e.scale[k]);
        qb[k] = _mm512_set1_ps(e.bias[k]);
    }
    for (size_t x = 0; x < n; x += 64) {
        // Rows hold whole multiples of 32 samples: the second 32 exist when any is needed.
        const bool half = n - x <= 32;
        __m512i v[C];
#pragma GCC unroll 4
        for (size_t k = 0; k < C; ++k)
            v[k] = quant_bytes<Fused, Signed>(
                load64(e.ch[k] + x), half ? _mm512_setzero_si512() : load64(e.ch[k] + x + 32),
                qa[k], qb[k], zp);
        store_quant<C>(e, x, n, v);
    }
}

template <bool Fused, bool Signed> void emit_q_channels(const EmitArgs& e, size_t n) noexcept
{
    if (e.channels == 1)
        emit_q<Fused, Signed, 1>(e, n);
    else if (e.channels == 3)
        emit_q<Fused, Signed, 3>(e, n);
    else
        emit_q<Fused, Signed, 4>(e, n);
}

template <bool Fused> void emit_q_typed(const EmitArgs& e, size_t n) noexcept
{
    if (e.type == EmitType::QI8)
        emit_q_channels<Fused, true>(e, n);
    else
        emit_q_channels<Fused, false>(e, n);
}

void emit(const EmitArgs& e, size_t n) noexcept
{
    const bool planar = e.chw || e.channels == 1;
    switch (e.type) {
    case EmitType::U8:
    case EmitType::I8: {
        const uint8_t mask = e.type == EmitType::I8 ? 0x80 : 0x00;
        if (planar) {
            for (size_t c = 0; c < e.channels; ++c)
                emit_u8_plane(e.ch[c], e.dst + c * e.plane_stride, n, mask);
            return;
        }
        if (e.channels == 3) {
            emit_u8_hwc<3>(e, n, mask);
            return;
        }
        if (e.channels == 4) {
            emit_u8_hwc<4>(e, n, mask);
            return;
        }
        break;
    }
    case EmitType::F32:
    case EmitType::F16: {
        if (!planar)
            break;
        const bool nt = stream_row(e, e.channels);
        for (size_t c = 0; c < e.channels; ++c) {
            uint8_t* d = e.dst + c * e.plane_stride;
            if (e.type == EmitType::F16)
                nt ? emit_float_plane<true, true>(e.ch[c], e.scale[c], e.bias[c], d, n)
                   : emit_float_plane<true, false>(e.ch[c], e.scale[c], e.bias[c], d, n);
            else
                nt ? emit_float_plane<false, true>(e.ch[c], e.scale[c], e.bias[c], d, n)
                   : emit_float_plane<false, false>(e.ch[c], e.scale[c], e.bias[c], d, n);
        }
        return;
    }
    case EmitType::QU8:
    case EmitType::QI8:
        if (e.qtable || e.channels == 2)
            break;
        if (e.qfused)
            emit_q_typed<true>(e, n);
        else
            emit_q_typed<false>(e, n);
        return;
    }
    kAvx2Kernels.emit(e, n);
}

// ---- YUV straight to the output -------------------------------------------------------------

/// Two vectors of Q5 + 16 -> 64 bytes in packed order (vpackuswb clamps to [0, 255]); i8 flips
/// the top bit.
template <bool Signed> inline __m512i q5_bytes(__m512i lo, __m512i hi) noexcept
{
    const __m512i b = _mm512_packus_epi16(_mm512_srai_epi16(lo, 5), _mm512_srai_epi16(hi, 5));
    if constexpr (Signed)
        return _mm512_xor_si512(b, _mm512_set1_epi8(char(0x80)));
    else
        return b;
}

/// 64 pixels of R, G, B bytes (B, G, R with Swap) from column x, in packed order; with `half`
/// only the first 32 are computed (the row may end there).
template <int Blend, bool Swap, bool Signed>
ET_ALWAYS_INLINE void yuv_bytes(const YuvSrc& src, size_t x, bool half, __m512i& r, __m512i& g,
                                __m512i& b) noexcept
{
    const __m512i bias = _mm512_set1_epi16(16);
    __m512i r0, g0, b0, r1, g1, b1;
    src.template rgb<Blend>(x, bias, r0, g0, b0);
    if (half)
        r1 = g1 = b1 = _mm512_setzero_si512();
    else
        src.template rgb<Blend>(x + 32, bias, r1, g1, b1);
    r = q5_bytes<Signed>(Swap ? b0 : r0, Swap ? b1 : r1);
    g = q5_bytes<Signed>(g0, g1);
    b = q5_bytes<Signed>(Swap ? r0 : b0, Swap ? r1 : b1);
}

template <int Blend, size_t C, bool Swap, bool Signed>
void yuv_u8_hwc(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const YuvSrc src(c);
    const __m512i alpha = _mm512_set1_epi8(Signed ? char(0x7f) : char(0xff));
    uint8_t* d = e.dst;
    size_t x = 0;
    for (; x + 64 <= n; x += 64) {
        __m512i r, g, b;
        yuv_bytes<Blend, Swap, Signed>(src, x, false, r, g, b);
        store_interleaved<C, Order::Packed>(d + x * C, r, g, b, alpha);
    }
    if (x < n) {
        alignas(64) uint8_t tail[64 * C];
        __m512i r, g, b;
        yuv_bytes<Blend, Swap, Signed>(src, x, n - x <= 32, r, g, b);
        store_interleaved<C, Order::Packed>(tail, r, g, b, alpha);
        copy_bytes(d + x * C, tail, (n - x) * C);
    }
}

template <int Blend, size_t C, bool Swap, bool Signed>
void yuv_u8_chw(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const YuvSrc src(c);
    const __m512i alpha = _mm512_set1_epi8(Signed ? char(0x7f) : char(0xff));
    uint8_t* const p[4] = {e.dst, e.dst + e.plane_stride, e.dst + 2 * e.plane_stride,
                           e.dst + 3 * e.plane_stride};
    size_t x = 0;
    for (; x + 64 <= n; x += 64) {
        __m512i r, g, b;
        yuv_bytes<Blend, Swap, Signed>(src, x, false, r, g, b);
        _mm512_storeu_si512(p[0] + x, in_order(r));
        _mm512_storeu_si512(p[1] + x, in_order(g));
        _mm512_storeu_si512(p[2] + x, in_order(b));
        if constexpr (C == 4)
            _mm512_storeu_si512(p[3] + x, alpha);
    }
    if (x < n) {
        alignas(64) uint8_t tail[4][64];
        __m512i r, g, b;
        yuv_bytes<Blend, Swap, Signed>(src, x, n - x <= 32, r, g, b);
        _mm512_store_si512(tail[0], in_order(r));
        _mm512_store_si512(tail[1], in_order(g));
        _mm512_store_si512(tail[2], in_order(b));
        _mm512_store_si512(tail[3], alpha);
        for (size_t k = 0; k < C; ++k)
            copy_bytes(p[k] + x, tail[k], n - x);
    }
}

template <int Blend, size_t C, bool Signed>
void yuv_u8(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const bool swap = e.order[0] == 2;
    if (e.chw)
        swap ? yuv_u8_chw<Blend, C, true, Signed>(c, e, n)
             : yuv_u8_chw<Blend, C, false, Signed>(c, e, n);
    else
        swap ? yuv_u8_hwc<Blend, C, true, Signed>(c, e, n)
             : yuv_u8_hwc<Blend, C, false, Signed>(c, e, n);
}

/// 32 Q5 samples -> 32 floats (or halves) at d: v * scale + bias, fused (as the AVX2 level's
/// YUV kernel rounds).
template <bool Half, bool Stream = false>
ET_ALWAYS_INLINE void store_float32(uint8_t* d, __m512i v, __m512 scale, __m512 bias) noexcept
{
    const __m512 lo = _mm512_fmadd_ps(
        _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm512_castsi512_si256(v))), scale, bias);
    const __m512 hi = _mm512_fmadd_ps(
        _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(v, 1))), scale, bias);
    put<Half, Stream>(d, lo);
    put<Half, Stream>(d + (Half ? 32 : 64), hi);
}

template <int Blend, bool Half, bool Stream>
void yuv_float_chw(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const YuvSrc src(c);
    constexpr size_t es = Half ? 2 : 4;
    // Colour j goes to the output channel whose order names it.
    size_t ch[3] = {};
    for (size_t k = 0; k < 3; ++k)
        ch[e.order[k]] = k;
    uint8_t* const pr = e.dst + ch[0] * e.plane_stride;
    uint8_t* const pg = e.dst + ch[1] * e.plane_stride;
    uint8_t* const pb = e.dst + ch[2] * e.plane_stride;
    const __m512 sr = _mm512_set1_ps(e.scale[ch[0]]), br = _mm512_set1_ps(e.bias[ch[0]]);
    const __m512 sg = _mm512_set1_ps(e.scale[ch[1]]), bg = _mm512_set1_ps(e.bias[ch[1]]);
    const __m512 sb = _mm512_set1_ps(e.scale[ch[2]]), bb = _mm512_set1_ps(e.bias[ch[2]]);
    size_t x = 0;
    for (; x + 32 <= n; x += 32) {
        __m512i r, g, b;
        src.template rgb_q5<Blend>(x, r, g, b);
        store_float32<Half, Stream>(pr + x * es, r, sr, br);
        store_float32<Half, Stream>(pg + x * es, g, sg, bg);
        store_float32<Half, Stream>(pb + x * es, b, sb, bb);
    }
    if (x < n) {
        alignas(64) uint8_t tail[3][32 * es];
        __m512i r, g, b;
        src.template rgb_q5<Blend>(x, r, g, b);
        store_float32<Half>(tail[0], r, sr, br);
        store_float32<Half>(tail[1], g, sg, bg);
        store_float32<Half>(tail[2], b, sb, bb);
        copy_bytes(pr + x * es, tail[0], (n - x) * es);
        copy_bytes(pg + x * es, tail[1], (n - x) * es);
        copy_bytes(pb + x * es, tail[2], (n - x) * es);
    }
}

/// YUV straight to quantized bytes: output channel k takes colour k (R G B), or 2 - k with
/// Swap (B G R); alpha is the quantized opaque value.
template <int Blend, size_t C, bool Swap, bool Fused, bool Signed>
void yuv_q(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const YuvSrc src(c);
    const __m512i zp = _mm512_set1_epi16(e.zero_point);
    __m512 qa[C], qb[C];
    for (size_t k = 0; k < C; ++k) {
        qa[k] = _mm512_set1_ps(e.scale[k]);
        qb[k] = _mm512_set1_ps(e.bias[k]);
    }
    __m512i v[C];
    if constexpr (C == 4) {
        const __m512i opaque = _mm512_set1_epi16(kQ5Max);
        v[3] = quant_bytes<Fused, Signed>(opaque, opaque, qa[3], qb[3], zp);
    }
    const __m512i zero = _mm512_setzero_si512();
    for (size_t x = 0; x < n; x += 64) {
        __m512i r0, g0, b0, r1 = zero, g1 = zero, b1 = zero;
        src.template rgb_q5<Blend>(x, r0, g0, b0);
        if (n - x > 32)
            src.template rgb_q5<Blend>(x + 32, r1, g1, b1);
        v[0] = quant_bytes<Fused, Signed>(Swap ? b0 : r0, Swap ? b1 : r1, qa[0], qb[0], zp);
        v[1] = quant_bytes<Fused, Signed>(g0, g1, qa[1], qb[1], zp);
        v[2] = quant_bytes<Fused, Signed>(Swap ? r0 : b0, Swap ? r1 : b1, qa[2], qb[2], zp);
        store_quant<C>(e, x, n, v);
    }
}

template <int Blend, bool Fused, bool Signed>
void yuv_q_channels(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const bool swap = e.order[0] == 2;
    if (e.channels == 3)
        swap ? yuv_q<Blend, 3, true, Fused, Signed>(c, e, n)
             : yuv_q<Blend, 3, false, Fused, Signed>(c, e, n);
    else
        swap ? yuv_q<Blend, 4, true, Fused, Signed>(c, e, n)
             : yuv_q<Blend, 4, false, Fused, Signed>(c, e, n);
}

template <int Blend, bool Fused>
void yuv_q_typed(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    if (e.type == EmitType::QI8)
        yuv_q_channels<Blend, Fused, true>(c, e, n);
    else
        yuv_q_channels<Blend, Fused, false>(c, e, n);
}

template <int Blend> bool yuv_emit_t(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    switch (e.type) {
    case EmitType::U8:
    case EmitType::I8:
        if (e.channels != 3 && e.channels != 4)
            break;
        if (e.type == EmitType::I8)
            e.channels == 3 ? yuv_u8<Blend, 3, true>(c, e, n) : yuv_u8<Blend, 4, true>(c, e, n);
        else
            e.channels == 3 ? yuv_u8<Blend, 3, false>(c, e, n) : yuv_u8<Blend, 4, false>(c, e, n);
        return true;
    case EmitType::F32:
    case EmitType::F16:
        if (!e.chw || e.channels != 3)
            break;
        if (stream_row(e, 3)) {
            if (e.type == EmitType::F16)
                yuv_float_chw<Blend, true, true>(c, e, n);
            else
                yuv_float_chw<Blend, false, true>(c, e, n);
        } else if (e.type == EmitType::F16) {
            yuv_float_chw<Blend, true, false>(c, e, n);
        } else {
            yuv_float_chw<Blend, false, false>(c, e, n);
        }
        return true;
    case EmitType::QU8:
    case EmitType::QI8:
        if (e.qtable || e.channels < 3)
            break;
        e.qfused ? yuv_q_typed<Blend, true>(c, e, n) : yuv_q_typed<Blend, false>(c, e, n);
        return true;
    }
    return kAvx2Kernels.yuv_emit(c, e, n);
}

bool yuv_emit(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    // Half the rows of a 4:2:0 downscale have chroma weight 0 (both luma taps in one chroma
    // row): their U and V lerps are skipped.
    switch (blend_mode(c)) {
    case kBlendNone:
        return yuv_emit_t<kBlendNone>(c, e, n);
    case kBlendLuma:
        return yuv_emit_t<kBlendLuma>(c, e, n);
    default:
        return yuv_emit_t<kBlendAll>(c, e, n);
    }
}

} // namespace

const KernelSet kAvx512Kernels = {"avx512", hpass,    vblend_simd, compose_simd,
                                  emit,     yuv_emit, true,        true};

} // namespace edgetensor::detail::convert

#if defined(__clang__)
#pragma clang attribute pop
#endif
