// SPDX-License-Identifier: MIT
//
// The vertical lerp and colour stages, written once over a vector of int16 lanes `V` that the
// including level defines (SSE4.1: 8 lanes, AVX2: 16, AVX-512: 32), and the scalar copy of a
// row's partial last vector that every level's emit shares. Included inside that level's
// anonymous namespace, so every instantiation is private to its translation unit and compiled
// for its instruction set. The level defines ET_ALWAYS_INLINE too. Same arithmetic as the
// portable level (convert_kernels_portable.cpp).

/// The bytes of a row's last partial vector, from the aligned scratch the kernels store it to.
inline void copy_bytes(uint8_t* d, const uint8_t* s, size_t n) noexcept
{
    for (size_t i = 0; i < n; ++i)
        d[i] = s[i];
}

/// Whether a row of `planes` planes takes non-temporal stores: asked for, and every plane's row
/// starts on a cache line, so that each full vector the kernels store is aligned (the partial
/// last one goes through copy_bytes as always).
inline bool stream_row(const EmitArgs& e, size_t planes) noexcept
{
    if (!e.stream)
        return false;
    for (size_t k = 0; k < planes; ++k)
        if (reinterpret_cast<uintptr_t>(e.dst + k * e.plane_stride) % 64 != 0)
            return false;
    return true;
}

template <bool Blend> inline typename V::T vlerp(const VIn& in, typename V::T w, size_t x) noexcept
{
    const typename V::T a = V::load(in.r0 + x);
    if constexpr (!Blend) {
        return a;
    } else {
        return V::add(a, V::mulhrs(V::sub(V::load(in.r1 + x), a), w));
    }
}

void vblend_simd(const VIn& in, int16_t* out, size_t n) noexcept
{
    const typename V::T w = V::set1(in.w);
    const int16_t* a = in.r0;
    const int16_t* b = in.r1;
    for (size_t x = 0; x < n; x += V::N) {
        const typename V::T va = V::load(a + x);
        V::store(out + x, V::add(va, V::mulhrs(V::sub(V::load(b + x), va), w)));
    }
}

/// Which of YuvSrc's rows blend: luma, chroma (U and V share their weight), both, neither.
/// Chroma alone does not occur (chroma rows differ only where luma rows do); it would run as
/// both.
inline constexpr int kBlendNone = 0, kBlendLuma = 1, kBlendChroma = 2, kBlendAll = 3;

/// The rows and constants of one output row's YUV -> RGB, for kernels that go on to emit
/// straight from registers.
struct YuvSrc {
    using T = typename V::T;
    const int16_t *y0, *y1, *u0, *u1, *v0, *v1;
    T wy, wu, wv, yo, mid, ys, vr, ug, vg, ub;

    explicit YuvSrc(const ComposeArgs& c) noexcept
        : y0(c.in[0].r0), y1(c.in[0].r1), u0(c.in[1].r0), u1(c.in[1].r1), v0(c.in[2].r0),
          v1(c.in[2].r1), wy(V::set1(c.in[0].w)), wu(V::set1(c.in[1].w)), wv(V::set1(c.in[2].w)),
          yo(V::set1(c.m.y_off)), mid(V::set1(4096)), ys(V::set1(c.m.ys)), vr(V::set1(c.m.vr)),
          ug(V::set1(c.m.ug)), vg(V::set1(c.m.vg)), ub(V::set1(c.m.ub))
    {
    }

    template <bool Blend>
    ET_ALWAYS_INLINE static T lerp(const int16_t* a, const int16_t* b, T w, size_t x) noexcept
    {
        const T va = V::load(a + x);
        if constexpr (!Blend)
            return va;
        else
            return V::add(va, V::mulhrs(V::sub(V::load(b + x), va), w));
    }

    /// R, G, B in Q5 of V::N pixels from column x, unclamped, plus `bias` (16 before a
    /// rounding shift to bytes, else 0). Blend says which rows a vertical lerp mixes (see
    /// blend_mode()); a lerp with weight 0 returns its first row exactly, so skipping it is the
    /// same function.
    template <int Blend>
    ET_ALWAYS_INLINE void rgb(size_t x, T bias, T& r, T& g, T& b) const noexcept
    {
        constexpr bool by = (Blend & kBlendLuma) != 0, bc = (Blend & kBlendChroma) != 0;
        const T y4 = V::shl2(V::sub(lerp<by>(y0, y1, wy, x), yo));
        const T u4 = V::shl2(V::sub(lerp<bc>(u0, u1, wu, x), mid));
        const T v4 = V::shl2(V::sub(lerp<bc>(v0, v1, wv, x), mid));
        const T yy = V::add(V::mulhrs(y4, ys), bias);
        r = V::add(yy, V::mulhrs(v4, vr));
        g = V::add(V::add(yy, V::mulhrs(u4, ug)), V::mulhrs(v4, vg));
        b = V::add(yy, V::mulhrs(u4, ub));
    }

    /// The same clamped to [0, kQ5Max] (what compose stores and floats start from).
    template <int Blend> ET_ALWAYS_INLINE void rgb_q5(size_t x, T& r, T& g, T& b) const noexcept
    {
        const T zero = V::set1(0), top = V::set1(kQ5Max);
        rgb<Blend>(x, zero, r, g, b);
        r = V::min(V::max(r, zero), top);
        g = V::min(V::max(g, zero), top);
        b = V::min(V::max(b, zero), top);
    }
};

inline int blend_mode(const ComposeArgs& c) noexcept
{
    if (c.in[1].w != 0 || c.in[2].w != 0)
        return kBlendAll;
    return c.in[0].w != 0 ? kBlendLuma : kBlendNone;
}

inline bool blends(const ComposeArgs& c) noexcept
{
    return c.in[0].w != 0 || c.in[1].w != 0 || c.in[2].w != 0;
}

template <bool Blend> void yuv_rgb_simd(const ComposeArgs& c, size_t n) noexcept
{
    const YuvSrc src(c);
    int16_t* ro = c.out[0];
    int16_t* go = c.out[1];
    int16_t* bo = c.out[2];
    for (size_t x = 0; x < n; x += V::N) {
        typename V::T r, g, b;
        src.template rgb_q5<(Blend ? kBlendAll : kBlendNone)>(x, r, g, b);
        V::store(ro + x, r);
        V::store(go + x, g);
        V::store(bo + x, b);
    }
}

template <bool Blend> void yuv_gray_simd(const ComposeArgs& c, size_t n) noexcept
{
    using T = typename V::T;
    const T wy = V::set1(c.in[0].w), yo = V::set1(c.m.y_off), ys = V::set1(c.m.ys);
    const T zero = V::set1(0), top = V::set1(kQ5Max);
    for (size_t x = 0; x < n; x += V::N) {
        const T l = V::mulhrs(V::shl2(V::sub(vlerp<Blend>(c.in[0], wy, x), yo)), ys);
        V::store(c.out[0] + x, V::min(V::max(l, zero), top));
    }
}

template <bool Blend> void rgb_gray_simd(const ComposeArgs& c, size_t n) noexcept
{
    using T = typename V::T;
    const T wr = V::set1(c.in[0].w), wg = V::set1(c.in[1].w), wb = V::set1(c.in[2].w);
    const T kr = V::set1(kGrayR), kg = V::set1(kGrayG), kb = V::set1(kGrayB);
    const T zero = V::set1(0), top = V::set1(kQ5Max);
    for (size_t x = 0; x < n; x += V::N) {
        const T l = V::add(V::add(V::mulhrs(vlerp<Blend>(c.in[0], wr, x), kr),
                                  V::mulhrs(vlerp<Blend>(c.in[1], wg, x), kg)),
                           V::mulhrs(vlerp<Blend>(c.in[2], wb, x), kb));
        V::store(c.out[0] + x, V::min(V::max(l, zero), top));
    }
}

template <bool Blend> void compose_t(const ComposeArgs& c, size_t n) noexcept
{
    switch (c.mode) {
    case Compose::YuvRgb:
        yuv_rgb_simd<Blend>(c, n);
        break;
    case Compose::YuvGray:
        yuv_gray_simd<Blend>(c, n);
        break;
    case Compose::RgbGray:
        rgb_gray_simd<Blend>(c, n);
        break;
    }
}

void compose_simd(const ComposeArgs& c, size_t n) noexcept
{
    // Rows whose vertical sample lands on a source row (nearest, integer ratios) skip the lerp.
    if (blends(c))
        compose_t<true>(c, n);
    else
        compose_t<false>(c, n);
}
