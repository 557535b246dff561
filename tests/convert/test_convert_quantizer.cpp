// SPDX-License-Identifier: MIT
//
// The quantizer's setup (lib/tensor/src/convert/convert_quant.*): its double-precision
// reference per sample value, and the search for a float multiply-add that reproduces the
// reference on every sample value (the kernels' fast form) or, failing that, the table.

#include "convert/convert_quant.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

namespace K = detail::convert;

constexpr K::QuantRange kI8{-128, 127};
constexpr K::QuantRange kU8{0, 255};

int32_t reference(int32_t v, float mean, float std, float scale, int32_t zp, K::QuantRange r)
{
    return K::quant_reference(v, mean, std, Quantization{scale, zp}, r);
}

TEST(ConvertQuantizer, ReferenceRoundsHalfToEvenThenAddsTheZeroPoint)
{
    // Samples are in 1/32 of a level: 16 is 0.5, 48 is 1.5, ...
    EXPECT_EQ(reference(16, 0, 1, 1, 0, kU8), 0);
    EXPECT_EQ(reference(48, 0, 1, 1, 0, kU8), 2);
    EXPECT_EQ(reference(80, 0, 1, 1, 0, kU8), 2);
    EXPECT_EQ(reference(112, 0, 1, 1, 0, kU8), 4);
    EXPECT_EQ(reference(17, 0, 1, 1, 0, kU8), 1);
    // The zero point comes after the rounding: 0.5 -> 0 -> 1, not round(1.5) = 2.
    EXPECT_EQ(reference(16, 0, 1, 1, 1, kU8), 1);
    // Negative ties: -0.5 -> 0, -1.5 -> -2.
    EXPECT_EQ(reference(16, 1, 1, 1, 0, kI8), 0);
    EXPECT_EQ(reference(16, 2, 1, 1, 0, kI8), -2);
    // Scale and std: (2 - 0) / 1 / 0.5 = 4.
    EXPECT_EQ(reference(64, 0, 1, 0.5f, 0, kI8), 4);
    EXPECT_EQ(reference(64, 0, -1, 0.5f, 0, kI8), -4);
}

TEST(ConvertQuantizer, ReferenceSaturatesToTheDtype)
{
    EXPECT_EQ(reference(8160, 0, 1, 1, 0, kI8), 127);
    EXPECT_EQ(reference(0, 255, 1, 1, 0, kI8), -128);
    EXPECT_EQ(reference(0, 128, 1, 1, 10, kU8), 0);
    EXPECT_EQ(reference(8160, 0, 1, 1, 10, kU8), 255);
    // Huge quotients stay saturated (no wrap through an integer conversion).
    EXPECT_EQ(reference(8160, 0, 1, 1e-30f, 0, kI8), 127);
    EXPECT_EQ(reference(0, 255, 1, 1e-30f, 0, kU8), 0);
}

struct Config {
    float mean, std, scale;
    int32_t zero_point;
    DType dtype;
    bool fused; // the fused form is exact too
    const char* what;
};

// What models declare: TFLite int8/uint8 inputs over [0, 1], [-1, 1], ImageNet statistics,
// raw pixels, and ties at every half level.
const Config kCommon[] = {
    {0, 255, 1.f / 255, -128, DType::I8, true, "[0, 1], 1/255, -128 (YOLO int8)"},
    {0, 255, 1.f / 255, 0, DType::U8, true, "[0, 1], 1/255, 0"},
    {127.5f, 127.5f, 1.f / 128, 0, DType::I8, true, "[-1, 1], 1/128, 0"},
    {127.5f, 127.5f, 0.0078125f, -1, DType::I8, true, "[-1, 1], 1/128, -1"},
    {123.675f, 58.395f, 0.0186584f, -14, DType::I8, true, "ImageNet R"},
    {116.28f, 57.12f, 0.0186584f, -14, DType::I8, true, "ImageNet G"},
    {103.53f, 57.375f, 0.0186584f, -14, DType::I8, true, "ImageNet B"},
    {0, 1, 1, -128, DType::I8, true, "raw, ties at every half level"},
    {0, 1, 1, 1, DType::U8, true, "raw, odd zero point"},
    {128, 1, 1, 0, DType::I8, true, "v - 128, round half even"},
    {0, 1, 0.5f, 0, DType::I8, true, "scale 0.5, saturating"},
    // Ties at v = 96k + 48, where v * RN(1/96) must round to exactly k + 0.5: the product's
    // own rounding does that, one fused rounding of v * a + b cannot for both parities of k.
    // Levels with FMA then run the multiply-then-add form.
    {0, 1, 3, 0, DType::U8, false, "scale 3"},
};

TEST(ConvertQuantizer, CommonModelInputsGetExactFastForms)
{
    for (const Config& c : kCommon) {
        const K::QuantRange r = K::quant_range(c.dtype);
        const Quantization q{c.scale, c.zero_point};
        const K::Quantizer z = K::build_quantizer(1, &c.mean, &c.std, q, c.dtype);
        ASSERT_TRUE(z.mul_add.exact) << c.what;
        ASSERT_EQ(z.fused.exact, c.fused) << c.what;
        ASSERT_EQ(z.table.size(), K::kQ5Count);
        for (int32_t v = 0; v <= K::kQ5Max; ++v) {
            // The reference is the definition, spelled out here once more.
            const double x = (double(v) / 32.0 - c.mean) / c.std;
            const int32_t want = int32_t(
                std::clamp(std::nearbyint(x / c.scale) + c.zero_point, double(r.lo), double(r.hi)));
            ASSERT_EQ(K::quant_reference(v, c.mean, c.std, q, r), want) << c.what << " " << v;
            ASSERT_EQ(z.table[size_t(v)], uint8_t(want)) << c.what << " " << v;
            ASSERT_EQ(K::quant_formula(v, z.mul_add.a[0], z.mul_add.b[0], c.zero_point, r), want)
                << c.what << " sample " << v;
            if (c.fused) {
                ASSERT_EQ(K::quant_formula(v, z.fused.a[0], z.fused.b[0], c.zero_point, r,
                                           K::QuantForm::Fused),
                          want)
                    << c.what << " sample " << v;
            }
        }
    }
}

// A sample that float rounding of the product puts within reach of a .5 the reference sees on
// the other side: no multiply-then-add serves every sample value (the fused form, rounding
// once, does), and the table is the reference.
TEST(ConvertQuantizer, WithoutAnExactMultiplyAddTheTableIsTheReference)
{
    const float mean = 195.896667f, std = 44.7099762f;
    const Quantization q{0.0141094513f, 0};
    const K::Quantizer z = K::build_quantizer(1, &mean, &std, q, DType::I8);
    ASSERT_FALSE(z.mul_add.exact);
    EXPECT_TRUE(z.fused.exact);
    ASSERT_EQ(z.table.size(), K::kQ5Count);
    for (int32_t v = 0; v <= K::kQ5Max; ++v)
        ASSERT_EQ(int32_t(int8_t(z.table[size_t(v)])), K::quant_reference(v, mean, std, q, kI8))
            << "sample " << v;
}

TEST(ConvertQuantizer, TheFormsRoundDifferently)
{
    // 3 * (1/3 rounded to float) is 1 + 2^-25 exactly: one rounding keeps the 2^-25, two
    // lose it.
    const float a = 1.f / 3.f, b = -1.f;
    EXPECT_EQ(K::quant_t(3, a, b, K::QuantForm::MulAdd), 0.f);
    EXPECT_NE(K::quant_t(3, a, b, K::QuantForm::Fused), 0.f);
}

TEST(ConvertQuantizer, NegativeAStepFunctionNoMultiplyAddFollowsIsRefused)
{
    std::vector<int32_t> ref(K::kQ5Count);
    float a = 0.f, b = 0.f;
    for (const K::QuantForm f : {K::QuantForm::MulAdd, K::QuantForm::Fused}) {
        // Alternating values are no rounding of any line.
        for (size_t v = 0; v < ref.size(); ++v)
            ref[v] = int32_t(v % 2);
        EXPECT_FALSE(K::find_quant_formula(ref.data(), 1.0 / 32.0, 0.0, 0, kU8, f, a, b));
        // Nor is a line that is not finite.
        for (size_t v = 0; v < ref.size(); ++v)
            ref[v] = int32_t(v / 32);
        EXPECT_FALSE(K::find_quant_formula(ref.data(), INFINITY, 0.0, 0, kU8, f, a, b));
        // The line itself is found.
        EXPECT_TRUE(K::find_quant_formula(ref.data(), 1.0 / 32.0, -0.49, 0, kU8, f, a, b));
    }
}

TEST(ConvertQuantizer, ChannelsKeepTheirOwnConstants)
{
    const float mean[3] = {123.675f, 116.28f, 103.53f};
    const float std[3] = {58.395f, 57.12f, 57.375f};
    const Quantization q{0.0186584f, -14};
    const K::Quantizer z = K::build_quantizer(3, mean, std, q, DType::I8);
    ASSERT_TRUE(z.mul_add.exact);
    EXPECT_EQ(z.zero_point, -14);
    EXPECT_NE(z.mul_add.b[0], z.mul_add.b[1]);
    ASSERT_EQ(z.table.size(), 3 * K::kQ5Count);
    for (size_t c = 0; c < 3; ++c)
        for (int32_t v = 0; v <= K::kQ5Max; v += 7) {
            const int32_t want = K::quant_reference(v, mean[c], std[c], q, kI8);
            EXPECT_EQ(K::quant_formula(v, z.mul_add.a[c], z.mul_add.b[c], -14, kI8), want);
            EXPECT_EQ(int32_t(int8_t(z.table[c * K::kQ5Count + size_t(v)])), want);
        }
}

// The fast forms are the rule, the table the exception: nearly every configuration drawn at
// random from model-like ranges gets both.
TEST(ConvertQuantizer, RandomConfigurationsMostlyGetTheFastForms)
{
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> mean(0.f, 200.f), stdd(20.f, 80.f), sc(0.005f, 0.03f);
    size_t mul_add = 0, fused = 0;
    constexpr size_t kDraws = 500;
    for (size_t i = 0; i < kDraws; ++i) {
        const float m = mean(rng), s = stdd(rng);
        const Quantization q{sc(rng), int32_t(i % 256) - 128};
        const K::Quantizer z = K::build_quantizer(1, &m, &s, q, DType::I8);
        mul_add += z.mul_add.exact ? 0 : 1;
        fused += z.fused.exact ? 0 : 1;
    }
    EXPECT_LE(mul_add, kDraws / 50) << mul_add << " of " << kDraws << " without a multiply-add";
    EXPECT_LE(fused, kDraws / 50) << fused << " of " << kDraws << " without a fused form";
}

} // namespace
} // namespace edgetensor::test
