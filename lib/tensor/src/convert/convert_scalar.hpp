// SPDX-License-Identifier: MIT
//
// Scalar helpers of the engine: the reference arithmetic the SIMD levels reproduce, and
// binary16 conversion. Only the portable level and the engine's setup include this: an inline
// function compiled into a translation unit built with -mavx2 could be the copy the linker
// keeps, and then run on a CPU without AVX2.

#pragma once

#include <cstdint>
#include <cstring>

namespace edgetensor::detail::convert
{

/// The scalar reference arithmetic every level reproduces.
inline int16_t mulhrs(int32_t x, int32_t w) noexcept
{
    return int16_t((x * w + 0x4000) >> 15);
}

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

} // namespace edgetensor::detail::convert
