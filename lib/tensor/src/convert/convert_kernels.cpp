// SPDX-License-Identifier: MIT

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
// The project builds at -O2, whose vectoriser cost model ("very cheap") refuses loops with a
// scalar remainder, i.e. every row loop here. These kernels are the engine's hot path.
#pragma GCC optimize("O3")
#endif

#include "convert_kernels.hpp"

#include <algorithm>
#include <cstdlib>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
// AVX2 has hardware gathers for the resampling taps and twice the lanes elsewhere; the
// default clone keeps the library runnable on any x86-64.
#define ET_CONVERT_CLONES __attribute__((target_clones("default", "avx2")))
#else
#define ET_CONVERT_CLONES
#endif

namespace edgetensor::detail::kernels
{

namespace
{

inline float clamp255(float v) noexcept
{
    v = v < 0.f ? 0.f : v;
    return v > 255.f ? 255.f : v;
}

template <size_t C>
__attribute__((always_inline)) inline void hwc_f32(const float* const* ch, const float* mean,
                                                   const float* inv_std, float* __restrict dst,
                                                   size_t n) noexcept
{
    const float* __restrict s[C];
    float m[C], is[C];
    for (size_t c = 0; c < C; ++c) {
        s[c] = ch[c];
        m[c] = mean[c];
        is[c] = inv_std[c];
    }
    for (size_t x = 0; x < n; ++x)
        for (size_t c = 0; c < C; ++c)
            dst[x * C + c] = (s[c][x] - m[c]) * is[c];
}

template <size_t K, bool Lerp, typename T>
__attribute__((always_inline)) inline void taps(const T* __restrict src, const TapGroup& g,
                                                size_t n) noexcept
{
    const int32_t* __restrict o0 = g.o0;
    const int32_t* __restrict o1 = g.o1;
    const float* __restrict w = g.w;
    float* __restrict d[K];
    int32_t rel[K];
    for (size_t k = 0; k < K; ++k) {
        d[k] = g.dst[k];
        rel[k] = g.rel[k];
    }
    for (size_t x = 0; x < n; ++x) {
        const T* a = src + o0[x];
        if constexpr (Lerp) {
            const T* b = src + o1[x];
            const float f = w[x];
            for (size_t k = 0; k < K; ++k) {
                const float va = float(a[rel[k]]);
                d[k][x] = va + (float(b[rel[k]]) - va) * f;
            }
        } else {
            for (size_t k = 0; k < K; ++k)
                d[k][x] = float(a[rel[k]]);
        }
    }
}

// The tap count is a compile-time parameter of taps(); one switch picks it for every caller.
// Always inlined so each target_clones variant gets its own vectorised copy.
template <bool Lerp, typename T>
__attribute__((always_inline)) inline void taps_any(const T* __restrict src, const TapGroup& g,
                                                    size_t n) noexcept
{
    switch (g.count) {
    case 1:
        taps<1, Lerp>(src, g, n);
        break;
    case 2:
        taps<2, Lerp>(src, g, n);
        break;
    case 3:
        taps<3, Lerp>(src, g, n);
        break;
    default:
        taps<4, Lerp>(src, g, n);
        break;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define ET_CONVERT_AVX2_TAPS 1
// Hardware gathers for the resampling taps: the compiler will not emit them on its own (GCC's
// generic tuning distrusts gathers), and the taps are where the engine spends most of its time.
__attribute__((target("avx2,fma"))) void taps_avx2_f32(const float* src, const TapGroup& g,
                                                       size_t n) noexcept
{
    size_t x = 0;
    for (; x + 8 <= n; x += 8) {
        const __m256i i0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.o0 + x));
        const __m256i i1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.o1 + x));
        const __m256 w = _mm256_loadu_ps(g.w + x);
        for (size_t k = 0; k < g.count; ++k) {
            const float* base = src + g.rel[k];
            const __m256 a = _mm256_i32gather_ps(base, i0, 4);
            const __m256 b = _mm256_i32gather_ps(base, i1, 4);
            _mm256_storeu_ps(g.dst[k] + x, _mm256_fmadd_ps(_mm256_sub_ps(b, a), w, a));
        }
    }
    for (; x < n; ++x) {
        const float f = g.w[x];
        for (size_t k = 0; k < g.count; ++k) {
            const float a = src[g.o0[x] + g.rel[k]];
            g.dst[k][x] = a + (src[g.o1[x] + g.rel[k]] - a) * f;
        }
    }
}

__attribute__((target("avx2,fma"))) void taps_avx2_u8(const uint8_t* src, const TapGroup& g,
                                                      size_t n) noexcept
{
    const __m256i lo_byte = _mm256_set1_epi32(0xff);
    const size_t vec_n = std::min(n, g.dword_safe);
    size_t x = 0;
    for (; x + 8 <= vec_n; x += 8) {
        const __m256i i0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.o0 + x));
        const __m256i i1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.o1 + x));
        const __m256 w = _mm256_loadu_ps(g.w + x);
        for (size_t k = 0; k < g.count; ++k) {
            const int* base = reinterpret_cast<const int*>(src + g.rel[k]);
            const __m256 a =
                _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_i32gather_epi32(base, i0, 1), lo_byte));
            const __m256 b =
                _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_i32gather_epi32(base, i1, 1), lo_byte));
            _mm256_storeu_ps(g.dst[k] + x, _mm256_fmadd_ps(_mm256_sub_ps(b, a), w, a));
        }
    }
    for (; x < n; ++x) {
        const float f = g.w[x];
        for (size_t k = 0; k < g.count; ++k) {
            const float a = src[g.o0[x] + g.rel[k]];
            g.dst[k][x] = a + (float(src[g.o1[x] + g.rel[k]]) - a) * f;
        }
    }
}

// One instruction per 8 values instead of the bit manipulation of f32_to_f16().
__attribute__((target("f16c,avx"))) void f16c_row(const float* src, uint16_t* dst,
                                                  size_t n) noexcept
{
    size_t x = 0;
    for (; x + 8 <= n; x += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + x),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + x), _MM_FROUND_TO_NEAREST_INT));
    for (; x < n; ++x)
        dst[x] = f32_to_f16(src[x]);
}

// EDGETENSOR_CONVERT_PORTABLE=1 takes the portable paths on any CPU, so the tests cover them on
// a host that has AVX2 and F16C.
bool portable_only() noexcept
{
    static const bool yes = [] {
        const char* v = std::getenv("EDGETENSOR_CONVERT_PORTABLE");
        return v && v[0] == '1';
    }();
    return yes;
}

bool have_f16c() noexcept
{
    // clang 14's __builtin_cpu_supports does not know "f16c": read CPUID leaf 1 (ECX bit 29).
    static const bool yes = [] {
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        return !portable_only() && __builtin_cpu_supports("avx") &&
               __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
    }();
    return yes;
}

bool have_avx2() noexcept
{
    static const bool yes =
        !portable_only() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
}
#endif

} // namespace

ET_CONVERT_CLONES
void blend_rows(const uint8_t* __restrict a, const uint8_t* __restrict b, float w,
                float* __restrict dst, size_t n) noexcept
{
    for (size_t i = 0; i < n; ++i) {
        const float fa = a[i];
        dst[i] = fa + (float(b[i]) - fa) * w;
    }
}

ET_CONVERT_CLONES
void widen_row(const uint8_t* __restrict a, float* __restrict dst, size_t n) noexcept
{
    for (size_t i = 0; i < n; ++i)
        dst[i] = a[i];
}

ET_CONVERT_CLONES
void hlerp_f32(const float* __restrict src, const TapGroup& g, size_t n) noexcept
{
#ifdef ET_CONVERT_AVX2_TAPS
    if (have_avx2()) {
        taps_avx2_f32(src, g, n);
        return;
    }
#endif
    taps_any<true>(src, g, n);
}

ET_CONVERT_CLONES
void hlerp_u8(const uint8_t* __restrict src, const TapGroup& g, size_t n) noexcept
{
#ifdef ET_CONVERT_AVX2_TAPS
    if (have_avx2()) {
        taps_avx2_u8(src, g, n);
        return;
    }
#endif
    taps_any<true>(src, g, n);
}

ET_CONVERT_CLONES
void hpick_f32(const float* __restrict src, const TapGroup& g, size_t n) noexcept
{
    taps_any<false>(src, g, n);
}

ET_CONVERT_CLONES
void hpick_u8(const uint8_t* __restrict src, const TapGroup& g, size_t n) noexcept
{
    taps_any<false>(src, g, n);
}

ET_CONVERT_CLONES
void yuv_to_rgb(const float* __restrict y, const float* __restrict u, const float* __restrict v,
                const YuvCoeffs& k, float* __restrict r, float* __restrict g, float* __restrict b,
                size_t n) noexcept
{
    const float ys = k.y_scale, yo = k.y_offset, vr = k.v_to_r, ug = k.u_to_g, vg = k.v_to_g,
                ub = k.u_to_b;
    for (size_t x = 0; x < n; ++x) {
        const float yy = (y[x] - yo) * ys;
        const float uu = u[x] - 128.f;
        const float vv = v[x] - 128.f;
        r[x] = clamp255(yy + vr * vv);
        g[x] = clamp255(yy + ug * uu + vg * vv);
        b[x] = clamp255(yy + ub * uu);
    }
}

ET_CONVERT_CLONES
void yuv_to_rgb_u8(const float* __restrict y, const float* __restrict u, const float* __restrict v,
                   const YuvCoeffs& k, uint8_t* __restrict r, uint8_t* __restrict g,
                   uint8_t* __restrict b, size_t n, uint8_t xor_mask) noexcept
{
    const float ys = k.y_scale, yo = k.y_offset, vr = k.v_to_r, ug = k.u_to_g, vg = k.v_to_g,
                ub = k.u_to_b;
    for (size_t x = 0; x < n; ++x) {
        const float yy = (y[x] - yo) * ys + 0.5f;
        const float uu = u[x] - 128.f;
        const float vv = v[x] - 128.f;
        r[x] = uint8_t(int32_t(clamp255(yy + vr * vv))) ^ xor_mask;
        g[x] = uint8_t(int32_t(clamp255(yy + ug * uu + vg * vv))) ^ xor_mask;
        b[x] = uint8_t(int32_t(clamp255(yy + ub * uu))) ^ xor_mask;
    }
}

ET_CONVERT_CLONES
void luma_expand(const float* __restrict y, const YuvCoeffs& k, float* __restrict out,
                 size_t n) noexcept
{
    const float ys = k.y_scale, yo = k.y_offset;
    for (size_t x = 0; x < n; ++x)
        out[x] = clamp255((y[x] - yo) * ys);
}

ET_CONVERT_CLONES
void rgb_to_gray(const float* __restrict r, const float* __restrict g, const float* __restrict b,
                 float* __restrict out, size_t n) noexcept
{
    for (size_t x = 0; x < n; ++x)
        out[x] = clamp255(0.299f * r[x] + 0.587f * g[x] + 0.114f * b[x]);
}

ET_CONVERT_CLONES
void to_u8(const float* __restrict src, uint8_t* __restrict dst, size_t n,
           uint8_t xor_mask) noexcept
{
    for (size_t x = 0; x < n; ++x)
        dst[x] = uint8_t(int32_t(src[x] + 0.5f)) ^ xor_mask;
}

ET_CONVERT_CLONES
void normalize_f32(const float* __restrict src, float mean, float inv_std, float* __restrict dst,
                   size_t n) noexcept
{
    for (size_t x = 0; x < n; ++x)
        dst[x] = (src[x] - mean) * inv_std;
}

ET_CONVERT_CLONES
void normalize_hwc_f32(const float* const* ch, size_t channels, const float* mean,
                       const float* inv_std, float* __restrict dst, size_t n) noexcept
{
    switch (channels) {
    case 1:
        hwc_f32<1>(ch, mean, inv_std, dst, n);
        break;
    case 3:
        hwc_f32<3>(ch, mean, inv_std, dst, n);
        break;
    default:
        hwc_f32<4>(ch, mean, inv_std, dst, n);
        break;
    }
}

ET_CONVERT_CLONES
void f32_to_f16_row(const float* __restrict src, uint16_t* __restrict dst, size_t n) noexcept
{
#ifdef ET_CONVERT_AVX2_TAPS
    if (have_f16c()) {
        f16c_row(src, dst, n);
        return;
    }
#endif
    for (size_t x = 0; x < n; ++x)
        dst[x] = f32_to_f16(src[x]);
}

} // namespace edgetensor::detail::kernels
