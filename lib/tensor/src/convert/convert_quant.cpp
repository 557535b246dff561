// SPDX-License-Identifier: MIT
//
// The quantizer's setup: the double-precision reference of every sample value, and the search
// for float constants (a, b) whose multiply-add reproduces it on all of them.
//
// For each sample value v the reference fixes which rounded t = RN(RN(v * a) + b) are right,
// an interval [L, U] of floats (round half to even decides whether a .5 end belongs to it;
// saturated values leave one side open). With p = RN(v * a), any b with p + b inside [L, U]
// (exactly, so also once rounded) is right for v; intersecting over every v gives the b that
// are right for all, for this a (for the fused form p is the exact product). The nominal slope
// rounded to float, and its neighbours a few units in the last place away, are tried in turn;
// the b nearest the nominal offset is taken; and the pair is checked once more, value by value,
// with the very arithmetic the kernels run.

#include "convert_quant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edgetensor::detail::convert
{

namespace
{

struct TBounds {
    float lo;
    float hi;
};

/// The floats t whose round-half-even n gives saturate(n + zero_point) == q.
TBounds allowed_t(int32_t q, int32_t zero_point, QuantRange r) noexcept
{
    const int32_t n = q - zero_point;
    TBounds t{-kQuantTMax, kQuantTMax};
    // n - 0.5 rounds to n only when n is even; likewise n + 0.5.
    if (q > r.lo) {
        t.lo = float(n) - 0.5f;
        if (n & 1)
            t.lo = std::nextafter(t.lo, std::numeric_limits<float>::infinity());
    }
    if (q < r.hi) {
        t.hi = float(n) + 0.5f;
        if (n & 1)
            t.hi = std::nextafter(t.hi, -std::numeric_limits<float>::infinity());
    }
    return t;
}

/// The form equals the reference for every sample value, with |t| inside the range where
/// every level rounds it the same way.
bool reproduces(const int32_t* reference, float a, float b, int32_t zero_point, QuantRange r,
                QuantForm form) noexcept
{
    for (size_t v = 0; v < kQ5Count; ++v) {
        if (!(std::fabs(quant_t(int32_t(v), a, b, form)) <= kQuantTMax))
            return false;
        if (quant_formula(int32_t(v), a, b, zero_point, r, form) != reference[v])
            return false;
    }
    return true;
}

/// The b for slope `a`, nearest `offset`, or false when no float b serves every sample value.
bool offset_for(const int32_t* reference, float a, double offset, int32_t zero_point, QuantRange r,
                QuantForm form, float& b) noexcept
{
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    for (size_t v = 0; v < kQ5Count && lo <= hi; ++v) {
        // What b is added to: the rounded product, or (fused) the exact one, which a double
        // holds (13 by 24 bits).
        const double p = form == QuantForm::Fused ? double(v) * double(a) : double(float(v) * a);
        const TBounds t = allowed_t(reference[v], zero_point, r);
        // At the magnitudes here these differences are exact in double; the check afterwards
        // has the last word anyway.
        lo = std::max(lo, double(t.lo) - p);
        hi = std::min(hi, double(t.hi) - p);
    }
    if (!(lo <= hi))
        return false;
    float c = float(std::clamp(offset, lo, hi));
    while (double(c) < lo)
        c = std::nextafter(c, std::numeric_limits<float>::infinity());
    while (double(c) > hi)
        c = std::nextafter(c, -std::numeric_limits<float>::infinity());
    if (double(c) < lo)
        return false; // no float inside [lo, hi]
    b = c;
    return true;
}

} // namespace

QuantRange quant_range(DType dtype) noexcept
{
    return dtype == DType::I8 ? QuantRange{-128, 127} : QuantRange{0, 255};
}

int32_t quant_reference(int32_t v, float mean, float std, const Quantization& q,
                        QuantRange r) noexcept
{
    const double x = (double(v) / 32.0 - double(mean)) / double(std);
    const double n = std::nearbyint(x / double(q.scale)); // the default mode: half to even
    const double s = std::clamp(n + double(q.zero_point), double(r.lo), double(r.hi));
    return int32_t(s);
}

bool find_quant_formula(const int32_t* reference, double slope, double offset, int32_t zero_point,
                        QuantRange r, QuantForm form, float& a, float& b)
{
    const float a0 = float(slope);
    if (!std::isfinite(a0) || !std::isfinite(offset))
        return false;
    // The nominal slope first, then its neighbours: which float a lets one b serve every
    // sample value depends on where the reference's steps fall between float rounding points.
    constexpr size_t kUlps = 3;
    float cands[1 + 2 * kUlps] = {a0};
    float up = a0, down = a0;
    for (size_t i = 1; i <= kUlps; ++i) {
        up = std::nextafter(up, std::numeric_limits<float>::infinity());
        down = std::nextafter(down, -std::numeric_limits<float>::infinity());
        cands[2 * i - 1] = up;
        cands[2 * i] = down;
    }
    for (const float ca : cands) {
        float cb = 0.f;
        if (offset_for(reference, ca, offset, zero_point, r, form, cb) &&
            reproduces(reference, ca, cb, zero_point, r, form)) {
            a = ca;
            b = cb;
            return true;
        }
    }
    return false;
}

Quantizer build_quantizer(size_t channels, const float* mean, const float* std,
                          const Quantization& q, DType dtype)
{
    Quantizer z;
    z.range = quant_range(dtype);
    z.zero_point = q.zero_point;
    z.mul_add.exact = z.fused.exact = true;
    z.table.resize(channels * kQ5Count);
    std::vector<int32_t> reference(kQ5Count);
    for (size_t c = 0; c < channels; ++c) {
        for (size_t v = 0; v < kQ5Count; ++v) {
            reference[v] = quant_reference(int32_t(v), mean[c], std[c], q, z.range);
            z.table[c * kQ5Count + v] = uint8_t(reference[v]);
        }
        // Nominal t = v * slope + offset: ((v / 32 - mean) / std) / scale.
        const double d = double(std[c]) * double(q.scale);
        const double slope = 1.0 / (32.0 * d), offset = -double(mean[c]) / d;
        for (const QuantForm form : {QuantForm::MulAdd, QuantForm::Fused}) {
            QuantConstants& k = form == QuantForm::Fused ? z.fused : z.mul_add;
            if (k.exact && !find_quant_formula(reference.data(), slope, offset, q.zero_point,
                                               z.range, form, k.a[c], k.b[c]))
                k.exact = false;
        }
    }
    return z;
}

} // namespace edgetensor::detail::convert
