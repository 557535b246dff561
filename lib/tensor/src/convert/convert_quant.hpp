// SPDX-License-Identifier: MIT
//
// Quantized outputs (ConvertConfig::quant): how a Q5 sample becomes a u8/i8 byte.
//
// The definition is a double-precision reference per sample value (quant_reference). A channel
// only ever sees kQ5Count sample values, so create() can afford to compare a fast form with the
// reference on every one of them: the kernels compute t = float(v) * a + b (a float multiply
// then a float add, or on a level with FMA one fused multiply-add), then round half to even,
// add the zero point and saturate. Where no (a, b) makes a level's form reproduce the
// reference everywhere (a sample that lands within float rounding of a .5 the reference sees
// on the other side), that level reads the reference from a table instead. Either way every
// level writes the reference's bytes.
//
// Only the engine's setup and the portable level include this file (see convert_scalar.hpp
// for why the SIMD levels must not share inline functions).

#pragma once

#include "edgetensor/convert.hpp"

#include "convert_kernels.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgetensor::detail::convert
{

/// Sample values a channel can take (0 .. kQ5Max).
inline constexpr size_t kQ5Count = size_t(kQ5Max) + 1;

/// |t| stays below this, so rounding by the magic constant below and the SIMD levels'
/// float -> int32 conversion are both exact round-half-even.
inline constexpr float kQuantTMax = 4194304.f; // 2^22
/// 1.5 * 2^23: (t + kQuantMagic) - kQuantMagic is t rounded half to even for |t| <= 2^22.
inline constexpr float kQuantMagic = 12582912.f;

/// The dtype's range: [-128, 127] for i8, [0, 255] for u8.
struct QuantRange {
    int32_t lo = 0;
    int32_t hi = 255;
};
QuantRange quant_range(DType dtype) noexcept;

/// The definition: saturate(round_half_even(((v / 32 - mean) / std) / scale) + zero_point)
/// for the Q5 sample v, every step in double precision.
int32_t quant_reference(int32_t v, float mean, float std, const Quantization& q,
                        QuantRange r) noexcept;

/// The kernels' two fast forms of t: RN(RN(float(v) * a) + b), a multiply then an add (every
/// level), or RN(float(v) * a + b), one fused multiply-add (levels with FMA). Each has its
/// own constants: one form may reproduce the reference where the other does not.
enum class QuantForm : uint8_t { MulAdd, Fused };

inline float quant_t(int32_t v, float a, float b, QuantForm form) noexcept
{
    if (form == QuantForm::Fused)
        return std::fma(float(v), a, b);
    const float p = float(v) * a;
    return p + b;
}

/// What the kernels write for sample v: round_half_even(t) + zero point, saturated.
inline int32_t quant_formula(int32_t v, float a, float b, int32_t zero_point, QuantRange r,
                             QuantForm form = QuantForm::MulAdd) noexcept
{
    const float t = (quant_t(v, a, b, form) + kQuantMagic) - kQuantMagic;
    const int32_t q = int32_t(t) + zero_point;
    return q < r.lo ? r.lo : q > r.hi ? r.hi : q;
}

/// One fast form's constants per output channel; `exact` when they reproduce the reference
/// for every sample value of every channel.
struct QuantConstants {
    float a[4] = {0, 0, 0, 0};
    float b[4] = {0, 0, 0, 0};
    bool exact = false;
};

/// One converter's quantizer.
struct Quantizer {
    QuantRange range;
    int32_t zero_point = 0;
    QuantConstants mul_add;
    QuantConstants fused;
    /// The reference per channel, [channel * kQ5Count + v], bytes as stored: what a level
    /// without an exact form reads (a converter drops it when its level has one).
    std::vector<uint8_t> table;
};

/// Builds the quantizer of `channels` output channels (mean/std per channel). Throws
/// std::bad_alloc.
Quantizer build_quantizer(size_t channels, const float* mean, const float* std,
                          const Quantization& q, DType dtype);

/// Constants of `form` for one channel, if any reproduce `reference` (kQ5Count values of
/// quant_reference) exactly; the search starts from the nominal slope and offset.
bool find_quant_formula(const int32_t* reference, double slope, double offset, int32_t zero_point,
                        QuantRange r, QuantForm form, float& a, float& b);

} // namespace edgetensor::detail::convert
