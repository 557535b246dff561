// SPDX-License-Identifier: MIT
//
// Row kernels of the conversion engine: plain loops over restrict-qualified rows that the
// compiler vectorises (this directory builds with -O3, and on x86-64 each kernel also gets an
// AVX2 clone picked at load time). The only gathers are the horizontal resampling taps, whose
// indices come from tables built once per configuration.

#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace edgetensor::detail::kernels
{

struct YuvCoeffs {
    float y_scale;  ///< 255/219 (limited) or 1
    float y_offset; ///< 16 (limited) or 0
    float v_to_r;
    float u_to_g; ///< negative
    float v_to_g; ///< negative
    float u_to_b;
};

/// dst[i] = a[i] + (b[i] - a[i]) * w: vertical bilinear blend of two source rows.
void blend_rows(const uint8_t* a, const uint8_t* b, float w, float* dst, size_t n) noexcept;
/// dst[i] = a[i] (a row taken as is).
void widen_row(const uint8_t* a, float* dst, size_t n) noexcept;
/// A group of `count` (1..4) components interleaved in one row at fixed distances from each
/// other (U and V of NV12, R G B of packed RGB): one set of taps serves them all.
struct TapGroup {
    const int32_t* o0; ///< per output x: offset of the first tap of component 0
    const int32_t* o1; ///< per output x: offset of the second tap
    const float* w;    ///< per output x: weight of the second tap (bilinear only)
    int32_t rel[4];    ///< offset of component k relative to component 0
    float* dst[4];     ///< output row of component k
    size_t count;
    /// For u8 rows: how many leading outputs may load 4 bytes at each tap without reading past
    /// the row's last needed byte (the AVX2 path gathers dwords).
    size_t dword_safe;
};
/// Horizontal bilinear taps: dst[k][x] = lerp(src[o0[x] + rel[k]], src[o1[x] + rel[k]], w[x]).
void hlerp_f32(const float* src, const TapGroup& g, size_t n) noexcept;
void hlerp_u8(const uint8_t* src, const TapGroup& g, size_t n) noexcept;
/// Nearest taps: dst[k][x] = src[o0[x] + rel[k]].
void hpick_f32(const float* src, const TapGroup& g, size_t n) noexcept;
void hpick_u8(const uint8_t* src, const TapGroup& g, size_t n) noexcept;

/// Exact matrix, clamped to [0, 255].
void yuv_to_rgb(const float* y, const float* u, const float* v, const YuvCoeffs& k, float* r,
                float* g, float* b, size_t n) noexcept;
/// The same, rounded to bytes (the u8 fast path; xor_mask 0x80 gives i8).
void yuv_to_rgb_u8(const float* y, const float* u, const float* v, const YuvCoeffs& k, uint8_t* r,
                   uint8_t* g, uint8_t* b, size_t n, uint8_t xor_mask) noexcept;
/// Full-range luma from Y.
void luma_expand(const float* y, const YuvCoeffs& k, float* out, size_t n) noexcept;
/// 0.299 R + 0.587 G + 0.114 B.
void rgb_to_gray(const float* r, const float* g, const float* b, float* out, size_t n) noexcept;

/// Rounds values in [0, 255] to bytes, then XORs (0x80 turns u8 into i8 = v - 128).
void to_u8(const float* src, uint8_t* dst, size_t n, uint8_t xor_mask) noexcept;

/// (v - mean) * inv_std, one channel row.
void normalize_f32(const float* src, float mean, float inv_std, float* dst, size_t n) noexcept;
/// float -> binary16 (round to nearest even) over a row; F16C where the CPU has it.
void f32_to_f16_row(const float* src, uint16_t* dst, size_t n) noexcept;
/// Interleaved (HWC) normalisation of `channels` (1, 3 or 4) rows.
void normalize_hwc_f32(const float* const* ch, size_t channels, const float* mean,
                       const float* inv_std, float* dst, size_t n) noexcept;

inline uint32_t f32_bits(float f) noexcept
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
inline float bits_f32(uint32_t u) noexcept
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/// float -> binary16, round to nearest even, branch-free so loops over it vectorise
/// (after F. Giesen's float_to_half_fast3_rtne).
inline uint16_t f32_to_f16(float value) noexcept
{
    constexpr uint32_t f32_infty = 255u << 23;
    constexpr uint32_t f16_max = (127u + 16u) << 23;
    constexpr uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    uint32_t x = f32_bits(value);
    const uint32_t sign = x & 0x80000000u;
    x ^= sign;
    // Subnormal results: let the FPU align the mantissa by adding a magic number.
    const uint32_t denorm = f32_bits(bits_f32(x) + bits_f32(denorm_magic)) - denorm_magic;
    const uint32_t mant_odd = (x >> 13) & 1u;
    const uint32_t normal = (x + ((15u - 127u) << 23) + 0xfffu + mant_odd) >> 13;
    const uint32_t big = x > f32_infty ? 0x7e00u : 0x7c00u;
    const uint32_t out = x >= f16_max ? big : (x < (113u << 23) ? denorm : normal);
    return uint16_t(out | (sign >> 16));
}

inline float f16_to_f32(uint16_t h) noexcept
{
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        // Subnormal or zero: mant * 2^-24.
        const float f = float(mant) * (1.0f / 16777216.0f);
        return bits_f32(f32_bits(f) | sign);
    }
    if (exp == 31)
        return bits_f32(sign | 0x7f800000u | (mant << 13));
    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

} // namespace edgetensor::detail::kernels
