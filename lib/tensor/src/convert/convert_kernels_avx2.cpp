// SPDX-License-Identifier: MIT
//
// The AVX2 level (compiled for AVX2, FMA and F16C; run only where the CPU has all three).
//
// Horizontal pass: no gathers (slow on the CPUs we measured: a vpgatherdd costs about as much
// as eight scalar loads). Each block of 4 outputs takes its taps from one, two or four 16-byte
// windows of the source row with a byte shuffle built at create(); two blocks share a ymm, and
// the quad's slot order (blocks 0, 2, 1, 3) makes the in-lane 64-bit unpacks come out in
// column order.
//
// Nothing here may use an inline function shared with other translation units (see
// convert_scalar.hpp): everything is intrinsics or internal to this file.

#include "convert_kernels.hpp"

#include <immintrin.h>

// Everything defined below is compiled for avx2,fma,f16c (the intrinsics above carry their own
// target attributes). Only headers without function definitions are included before this.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#elif defined(__GNUC__)
#pragma GCC target("avx2,fma,f16c")
#endif

namespace edgetensor::detail::convert
{

namespace
{

#define ET_ALWAYS_INLINE inline __attribute__((always_inline))
#define ET_ALWAYS_INLINE_LAMBDA __attribute__((always_inline))

struct V {
    using T = __m256i;
    static constexpr size_t N = 16;
    static T load(const int16_t* p) noexcept
    {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
    static void store(int16_t* p, T v) noexcept
    {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    }
    static T set1(int16_t v) noexcept { return _mm256_set1_epi16(v); }
    static T add(T a, T b) noexcept { return _mm256_add_epi16(a, b); }
    static T sub(T a, T b) noexcept { return _mm256_sub_epi16(a, b); }
    static T mulhrs(T a, T b) noexcept { return _mm256_mulhrs_epi16(a, b); }
    static T shl2(T a) noexcept { return _mm256_slli_epi16(a, 2); }
    static T min(T a, T b) noexcept { return _mm256_min_epi16(a, b); }
    static T max(T a, T b) noexcept { return _mm256_max_epi16(a, b); }
};

#include "convert_kernels_simd.inl"

inline __m256i load2x128(const uint8_t* lo, const uint8_t* hi) noexcept
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lo))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi)), 1);
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
        __m256i r0[K], r1[K];
#pragma GCC unroll 4
        for (uint32_t l = 0; l < L; ++l) {
            const int32_t* w = win + (q * L + l) * 4;
            const __m256i v0 = load2x128(row + w[0], row + w[1]);
            const __m256i v1 = load2x128(row + w[2], row + w[3]);
            const uint8_t* m = masks + (q * L + l) * K * 64;
#pragma GCC unroll 4
            for (size_t k = 0; k < K; ++k) {
                const __m256i s0 = _mm256_shuffle_epi8(
                    v0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m + k * 64)));
                const __m256i s1 = _mm256_shuffle_epi8(
                    v1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m + k * 64 + 32)));
                r0[k] = l == 0 ? s0 : _mm256_or_si256(r0[k], s0);
                r1[k] = l == 0 ? s1 : _mm256_or_si256(r1[k], s1);
            }
        }
        const __m256i wt = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wts + q * 16));
#pragma GCC unroll 4
        for (size_t k = 0; k < K; ++k) {
            const __m256i a = _mm256_unpacklo_epi64(r0[k], r1[k]);
            __m256i h = _mm256_slli_epi16(a, 5);
            if constexpr (Lerp) {
                const __m256i b = _mm256_unpackhi_epi64(r0[k], r1[k]);
                h = _mm256_add_epi16(
                    h, _mm256_mulhrs_epi16(_mm256_slli_epi16(_mm256_sub_epi16(b, a), 5), wt));
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[k] + q * 16), h);
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

/// 32 Q5 samples -> 32 bytes in order ((v + 16) >> 5, then the u8/i8 mask).
inline __m256i to_u8(const int16_t* s, __m256i mask) noexcept
{
    const __m256i half = _mm256_set1_epi16(16);
    const __m256i lo = _mm256_srli_epi16(
        _mm256_add_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)), half), 5);
    const __m256i hi = _mm256_srli_epi16(
        _mm256_add_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 16)), half), 5);
    return _mm256_xor_si256(_mm256_permute4x64_epi64(_mm256_packus_epi16(lo, hi), 0xd8), mask);
}

// In-lane shuffles interleaving 16 R, G and B bytes into 48: output vector t takes byte j of
// its 16 from channel (16 t + j) % 3, pixel (16 t + j) / 3.
struct Rgb3Masks {
    alignas(32) uint8_t m[3][3][32];
    constexpr Rgb3Masks() : m{}
    {
        for (int t = 0; t < 3; ++t)
            for (int c = 0; c < 3; ++c)
                for (int j = 0; j < 32; ++j) {
                    const int b = 16 * t + (j & 15);
                    m[t][c][j] = uint8_t(b % 3 == c ? b / 3 : 0x80);
                }
    }
};
constexpr Rgb3Masks kRgb3;

inline __m256i mask3(int t, int c) noexcept
{
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(kRgb3.m[t][c]));
}

ET_ALWAYS_INLINE void store_rgb32(uint8_t* d, __m256i r, __m256i g, __m256i b) noexcept
{
    // Written out: GCC -O2 keeps a loop over t here, with o[] round-tripping through the stack
    // (a third of the u8 kernel's time).
    auto part = [&](int t) ET_ALWAYS_INLINE_LAMBDA {
        return _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(r, mask3(t, 0)),
                                               _mm256_shuffle_epi8(g, mask3(t, 1))),
                               _mm256_shuffle_epi8(b, mask3(t, 2)));
    };
    const __m256i o[3] = {part(0), part(1), part(2)};
    // Lane 0 holds bytes 0..47 of the 96, lane 1 bytes 48..95.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_permute2x128_si256(o[0], o[1], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 32),
                        _mm256_permute2x128_si256(o[2], o[0], 0x30));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 64),
                        _mm256_permute2x128_si256(o[1], o[2], 0x31));
}

ET_ALWAYS_INLINE void store_rgba32(uint8_t* d, __m256i r, __m256i g, __m256i b, __m256i a) noexcept
{
    // r..a hold pixels 0..31 in order; the in-lane unpacks give lane-split quarters.
    const __m256i rg_lo = _mm256_unpacklo_epi8(r, g), rg_hi = _mm256_unpackhi_epi8(r, g);
    const __m256i ba_lo = _mm256_unpacklo_epi8(b, a), ba_hi = _mm256_unpackhi_epi8(b, a);
    const __m256i p0 = _mm256_unpacklo_epi16(rg_lo, ba_lo); // px 0-3   | 16-19
    const __m256i p1 = _mm256_unpackhi_epi16(rg_lo, ba_lo); // px 4-7   | 20-23
    const __m256i p2 = _mm256_unpacklo_epi16(rg_hi, ba_hi); // px 8-11  | 24-27
    const __m256i p3 = _mm256_unpackhi_epi16(rg_hi, ba_hi); // px 12-15 | 28-31
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_permute2x128_si256(p0, p1, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 32),
                        _mm256_permute2x128_si256(p2, p3, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 64),
                        _mm256_permute2x128_si256(p0, p1, 0x31));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 96),
                        _mm256_permute2x128_si256(p2, p3, 0x31));
}

template <size_t C> void emit_u8_hwc(const EmitArgs& e, size_t n, uint8_t xor_mask) noexcept
{
    const __m256i mask = _mm256_set1_epi8(char(xor_mask));
    uint8_t* d = e.dst;
    size_t x = 0;
    alignas(32) uint8_t tail[32 * C];
    for (; x < n; x += 32) {
        uint8_t* out = n - x >= 32 ? d + x * C : tail;
        const __m256i r = to_u8(e.ch[0] + x, mask);
        const __m256i g = to_u8(e.ch[1] + x, mask);
        const __m256i b = to_u8(e.ch[2] + x, mask);
        if constexpr (C == 3)
            store_rgb32(out, r, g, b);
        else
            store_rgba32(out, r, g, b, to_u8(e.ch[3] + x, mask));
        if (out == tail)
            for (size_t i = 0; i < (n - x) * C; ++i)
                d[x * C + i] = tail[i];
    }
}

void emit_u8_plane(const int16_t* s, uint8_t* d, size_t n, uint8_t xor_mask) noexcept
{
    const __m256i mask = _mm256_set1_epi8(char(xor_mask));
    size_t x = 0;
    for (; x + 32 <= n; x += 32)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + x), to_u8(s + x, mask));
    if (x < n) {
        alignas(32) uint8_t tail[32];
        _mm256_store_si256(reinterpret_cast<__m256i*>(tail), to_u8(s + x, mask));
        for (size_t i = 0; x + i < n; ++i)
            d[x + i] = tail[i];
    }
}

/// 8 Q5 samples -> v * scale + bias (multiply then add, as the portable level rounds).
inline __m256 to_f32(__m128i v, __m256 scale, __m256 bias) noexcept
{
    return _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(v)), scale), bias);
}

/// Float vector stores; Stream: non-temporal, `d` aligned to the vector (stream_row()).
template <bool Stream> ET_ALWAYS_INLINE void put_ps(uint8_t* d, __m256 v) noexcept
{
    if constexpr (Stream)
        _mm256_stream_ps(reinterpret_cast<float*>(d), v);
    else
        _mm256_storeu_ps(reinterpret_cast<float*>(d), v);
}

template <bool Stream> ET_ALWAYS_INLINE void put_ph(uint8_t* d, __m256 v) noexcept
{
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    if constexpr (Stream)
        _mm_stream_si128(reinterpret_cast<__m128i*>(d), h);
    else
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), h);
}

/// One vector of floats, or of halves with Half.
template <bool Half, bool Stream> ET_ALWAYS_INLINE void put(uint8_t* d, __m256 v) noexcept
{
    if constexpr (Half)
        put_ph<Stream>(d, v);
    else
        put_ps<Stream>(d, v);
}

template <bool Half, bool Stream>
void emit_float_plane(const int16_t* s, float sc, float bi, uint8_t* dst, size_t n) noexcept
{
    const __m256 scale = _mm256_set1_ps(sc), bias = _mm256_set1_ps(bi);
    alignas(32) uint8_t tail[32];
    const size_t es = Half ? 2 : 4;
    for (size_t x = 0; x < n; x += 8) {
        const bool full = n - x >= 8;
        uint8_t* out = full ? dst + x * es : tail;
        const __m256 f =
            to_f32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + x)), scale, bias);
        if (full)
            put<Half, Stream>(out, f);
        else
            put<Half, false>(out, f); // the aligned scratch, copied out below
        if (out == tail)
            for (size_t i = 0; i < (n - x) * es; ++i)
                dst[x * es + i] = tail[i];
    }
}

// ---- quantized bytes -------------------------------------------------------------------------

/// 16 Q5 samples -> round_half_even(t) + zero point, saturated to int16, in order; t is
/// v * a + b fused, or a multiply then an add (convert_quant.hpp's two forms).
template <bool Fused> inline __m256i quant16(__m256i v, __m256 a, __m256 b, __m256i zp) noexcept
{
    // Samples are never negative: widening is interleaving with zeros. Lanes: 0-3, 8-11 and
    // 4-7, 12-15, which the in-lane pack below puts back in order.
    const __m256i zero = _mm256_setzero_si256();
    const __m256 lo = _mm256_cvtepi32_ps(_mm256_unpacklo_epi16(v, zero));
    const __m256 hi = _mm256_cvtepi32_ps(_mm256_unpackhi_epi16(v, zero));
    __m256 tlo, thi;
    if constexpr (Fused) {
        tlo = _mm256_fmadd_ps(lo, a, b);
        thi = _mm256_fmadd_ps(hi, a, b);
    } else {
        tlo = _mm256_add_ps(_mm256_mul_ps(lo, a), b);
        thi = _mm256_add_ps(_mm256_mul_ps(hi, a), b);
    }
    return _mm256_adds_epi16(_mm256_packs_epi32(_mm256_cvtps_epi32(tlo), _mm256_cvtps_epi32(thi)),
                             zp);
}

/// 32 Q5 samples (v0: 0-15, v1: 16-31) -> 32 quantized bytes in order, saturated to i8/u8.
template <bool Fused, bool Signed>
inline __m256i quant_bytes(__m256i v0, __m256i v1, __m256 a, __m256 b, __m256i zp) noexcept
{
    const __m256i p = quant16<Fused>(v0, a, b, zp), q = quant16<Fused>(v1, a, b, zp);
    const __m256i bytes = Signed ? _mm256_packs_epi16(p, q) : _mm256_packus_epi16(p, q);
    // Quadwords: samples 0-7, 16-23 | 8-15, 24-31.
    return _mm256_permute4x64_epi64(bytes, 0xd8);
}

/// C channels of 32 output pixels from x (fewer at the end of the row), interleaved or planar.
template <size_t C>
ET_ALWAYS_INLINE void store_pixels(const EmitArgs& e, size_t x, size_t n, const __m256i* v) noexcept
{
    const size_t left = n - x < 32 ? n - x : 32;
    if (e.chw || C == 1) {
#pragma GCC unroll 4
        for (size_t k = 0; k < C; ++k) {
            uint8_t* d = e.dst + k * e.plane_stride + x;
            if (left == 32) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), v[k]);
            } else {
                alignas(32) uint8_t tail[32];
                _mm256_store_si256(reinterpret_cast<__m256i*>(tail), v[k]);
                copy_bytes(d, tail, left);
            }
        }
        return;
    }
    uint8_t* d = e.dst + x * C;
    alignas(32) uint8_t tail[32 * 4];
    uint8_t* out = left == 32 ? d : tail;
    if constexpr (C == 3)
        store_rgb32(out, v[0], v[1], v[2]);
    else if constexpr (C == 4)
        store_rgba32(out, v[0], v[1], v[2], v[3]);
    if (out == tail)
        copy_bytes(d, tail, left * C);
}

/// Channel rows to quantized bytes (the fast form; table rows go to the portable emit).
template <bool Fused, bool Signed, size_t C> void emit_q(const EmitArgs& e, size_t n) noexcept
{
    const __m256i zp = _mm256_set1_epi16(e.zero_point);
    __m256 qa[C], qb[C];
    for (size_t k = 0; k < C; ++k) {
        qa[k] = _mm256_set1_ps(e.scale[k]);
        qb[k] = _mm256_set1_ps(e.bias[k]);
    }
    for (size_t x = 0; x < n; x += 32) {
        __m256i v[C];
#pragma GCC unroll 4
        for (size_t k = 0; k < C; ++k)
            v[k] = quant_bytes<Fused, Signed>(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.ch[k] + x)),
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.ch[k] + x + 16)), qa[k],
                qb[k], zp);
        store_pixels<C>(e, x, n, v);
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
    case EmitType::QU8:
    case EmitType::QI8:
        if (e.qtable || e.channels == 2)
            break;
        if (e.qfused)
            emit_q_typed<true>(e, n);
        else
            emit_q_typed<false>(e, n);
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
    case EmitType::F16: {
        if (!planar)
            break; // interleaved floats: rare, left to the portable loops
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
    }
    kPortableKernels.emit(e, n);
}

// ---- YUV straight to the output --------------------------------------------------------

/// Two vectors of Q5 + 16 -> 32 bytes in order (packus clamps to [0, 255]); i8 flips the top
/// bit. A template, not a runtime mask: u8 then pays no xor (2% of the 1080p RGB job).
template <bool Signed> inline __m256i q5_bytes(__m256i lo, __m256i hi) noexcept
{
    const __m256i b = _mm256_permute4x64_epi64(
        _mm256_packus_epi16(_mm256_srai_epi16(lo, 5), _mm256_srai_epi16(hi, 5)), 0xd8);
    if constexpr (Signed)
        return _mm256_xor_si256(b, _mm256_set1_epi8(char(0x80)));
    else
        return b;
}

/// 32 pixels of R, G, B bytes (B, G, R with Swap) from column x.
template <int Blend, bool Swap, bool Signed>
ET_ALWAYS_INLINE void yuv_bytes(const YuvSrc& src, size_t x, __m256i& r, __m256i& g,
                                __m256i& b) noexcept
{
    const __m256i bias = _mm256_set1_epi16(16);
    __m256i r0, g0, b0, r1, g1, b1;
    src.template rgb<Blend>(x, bias, r0, g0, b0);
    src.template rgb<Blend>(x + 16, bias, r1, g1, b1);
    r = q5_bytes<Signed>(Swap ? b0 : r0, Swap ? b1 : r1);
    g = q5_bytes<Signed>(g0, g1);
    b = q5_bytes<Signed>(Swap ? r0 : b0, Swap ? r1 : b1);
}

template <int Blend, size_t C, bool Swap, bool Signed>
void yuv_u8_hwc(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const YuvSrc src(c);
    const __m256i alpha = _mm256_set1_epi8(Signed ? char(0x7f) : char(0xff));
    uint8_t* d = e.dst;
    size_t x = 0;
    for (; x + 32 <= n; x += 32) {
        __m256i r, g, b;
        yuv_bytes<Blend, Swap, Signed>(src, x, r, g, b);
        if constexpr (C == 3)
            store_rgb32(d + x * C, r, g, b);
        else
            store_rgba32(d + x * C, r, g, b, alpha);
    }
    if (x < n) {
        alignas(32) uint8_t tail[32 * C];
        __m256i r, g, b;
        yuv_bytes<Blend, Swap, Signed>(src, x, r, g, b);
        if constexpr (C == 3)
            store_rgb32(tail, r, g, b);
        else
            store_rgba32(tail, r, g, b, alpha);
        copy_bytes(d + x * C, tail, (n - x) * C);
    }
}

template <int Blend, size_t C, bool Swap, bool Signed>
void yuv_u8_chw(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const YuvSrc src(c);
    const __m256i alpha = _mm256_set1_epi8(Signed ? char(0x7f) : char(0xff));
    uint8_t* const p0 = e.dst;
    uint8_t* const p1 = e.dst + e.plane_stride;
    uint8_t* const p2 = e.dst + 2 * e.plane_stride;
    uint8_t* const p3 = e.dst + 3 * e.plane_stride;
    size_t x = 0;
    for (; x + 32 <= n; x += 32) {
        __m256i r, g, b;
        yuv_bytes<Blend, Swap, Signed>(src, x, r, g, b);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p0 + x), r);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p1 + x), g);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p2 + x), b);
        if constexpr (C == 4)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(p3 + x), alpha);
    }
    if (x < n) {
        alignas(32) uint8_t tail[4][32];
        __m256i r, g, b;
        yuv_bytes<Blend, Swap, Signed>(src, x, r, g, b);
        _mm256_store_si256(reinterpret_cast<__m256i*>(tail[0]), r);
        _mm256_store_si256(reinterpret_cast<__m256i*>(tail[1]), g);
        _mm256_store_si256(reinterpret_cast<__m256i*>(tail[2]), b);
        _mm256_store_si256(reinterpret_cast<__m256i*>(tail[3]), alpha);
        copy_bytes(p0 + x, tail[0], n - x);
        copy_bytes(p1 + x, tail[1], n - x);
        copy_bytes(p2 + x, tail[2], n - x);
        if constexpr (C == 4)
            copy_bytes(p3 + x, tail[3], n - x);
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

template <int Blend, bool Signed>
void yuv_u8_channels(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    if (e.channels == 3)
        yuv_u8<Blend, 3, Signed>(c, e, n);
    else
        yuv_u8<Blend, 4, Signed>(c, e, n);
}

/// 16 Q5 samples -> 16 floats (or halves) at d: v * scale + bias.
template <bool Half, bool Stream = false>
inline void store_float16(uint8_t* d, __m256i v, __m256 scale, __m256 bias) noexcept
{
    const __m256 lo = _mm256_fmadd_ps(
        _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(v))), scale, bias);
    const __m256 hi = _mm256_fmadd_ps(
        _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(v, 1))), scale, bias);
    put<Half, Stream>(d, lo);
    put<Half, Stream>(d + (Half ? 16 : 32), hi);
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
    const __m256 sr = _mm256_set1_ps(e.scale[ch[0]]), br = _mm256_set1_ps(e.bias[ch[0]]);
    const __m256 sg = _mm256_set1_ps(e.scale[ch[1]]), bg = _mm256_set1_ps(e.bias[ch[1]]);
    const __m256 sb = _mm256_set1_ps(e.scale[ch[2]]), bb = _mm256_set1_ps(e.bias[ch[2]]);
    size_t x = 0;
    for (; x + 16 <= n; x += 16) {
        __m256i r, g, b;
        src.template rgb_q5<Blend>(x, r, g, b);
        store_float16<Half, Stream>(pr + x * es, r, sr, br);
        store_float16<Half, Stream>(pg + x * es, g, sg, bg);
        store_float16<Half, Stream>(pb + x * es, b, sb, bb);
    }
    if (x < n) {
        alignas(32) uint8_t tail[3][16 * es];
        __m256i r, g, b;
        src.template rgb_q5<Blend>(x, r, g, b);
        store_float16<Half>(tail[0], r, sr, br);
        store_float16<Half>(tail[1], g, sg, bg);
        store_float16<Half>(tail[2], b, sb, bb);
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
    const __m256i zp = _mm256_set1_epi16(e.zero_point);
    __m256 qa[C], qb[C];
    for (size_t k = 0; k < C; ++k) {
        qa[k] = _mm256_set1_ps(e.scale[k]);
        qb[k] = _mm256_set1_ps(e.bias[k]);
    }
    __m256i v[C];
    if constexpr (C == 4) {
        const __m256i opaque = _mm256_set1_epi16(kQ5Max);
        v[3] = quant_bytes<Fused, Signed>(opaque, opaque, qa[3], qb[3], zp);
    }
    for (size_t x = 0; x < n; x += 32) {
        __m256i r0, g0, b0, r1, g1, b1;
        src.template rgb_q5<Blend>(x, r0, g0, b0);
        src.template rgb_q5<Blend>(x + 16, r1, g1, b1);
        v[0] = quant_bytes<Fused, Signed>(Swap ? b0 : r0, Swap ? b1 : r1, qa[0], qb[0], zp);
        v[1] = quant_bytes<Fused, Signed>(g0, g1, qa[1], qb[1], zp);
        v[2] = quant_bytes<Fused, Signed>(Swap ? r0 : b0, Swap ? r1 : b1, qa[2], qb[2], zp);
        store_pixels<C>(e, x, n, v);
    }
}

template <int Blend, bool Fused, bool Signed>
bool yuv_q_channels(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    const bool swap = e.order[0] == 2;
    if (e.channels == 3)
        swap ? yuv_q<Blend, 3, true, Fused, Signed>(c, e, n)
             : yuv_q<Blend, 3, false, Fused, Signed>(c, e, n);
    else
        swap ? yuv_q<Blend, 4, true, Fused, Signed>(c, e, n)
             : yuv_q<Blend, 4, false, Fused, Signed>(c, e, n);
    return true;
}

template <int Blend, bool Fused>
bool yuv_q_typed(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    return e.type == EmitType::QI8 ? yuv_q_channels<Blend, Fused, true>(c, e, n)
                                   : yuv_q_channels<Blend, Fused, false>(c, e, n);
}

template <int Blend> bool yuv_emit_t(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept
{
    switch (e.type) {
    case EmitType::QU8:
    case EmitType::QI8:
        if (e.qtable || e.channels < 3)
            return false;
        return e.qfused ? yuv_q_typed<Blend, true>(c, e, n) : yuv_q_typed<Blend, false>(c, e, n);
    case EmitType::U8:
    case EmitType::I8: {
        if (e.channels < 3)
            return false;
        if (e.type == EmitType::I8)
            yuv_u8_channels<Blend, true>(c, e, n);
        else
            yuv_u8_channels<Blend, false>(c, e, n);
        return true;
    }
    case EmitType::F32:
    case EmitType::F16:
        if (!e.chw || e.channels != 3)
            return false;
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
    }
    return false;
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

const KernelSet kAvx2Kernels = {"avx2", hpass,    vblend_simd, compose_simd,
                                emit,   yuv_emit, true,        true};

} // namespace edgetensor::detail::convert

#if defined(__clang__)
#pragma clang attribute pop
#endif
