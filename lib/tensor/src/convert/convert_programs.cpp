// SPDX-License-Identifier: MIT
//
// The horizontal programs of the SIMD levels, built once per tap group at create() from the
// group's taps: where in a source row each block of outputs loads its windows, and the byte
// shuffles (SSE4.1, AVX2) or two-table byte permutes (AVX-512) that land each output's two
// taps in its int16 lane. The kernels only follow them (convert_kernels.hpp, HGroup).

#include "convert_engine.hpp"

#include <algorithm>
#include <limits>

namespace edgetensor::detail::convert
{

namespace
{

/// Slots of a quad (16 outputs) hold blocks 0, 2, 1, 3: see HGroup.
constexpr size_t kSlotBlock[4] = {0, 2, 1, 3};

/// The bytes of the row output x needs, inclusive: from its first tap of the group's lowest
/// component to its last tap of the highest. Both grow with x (the first tap is never after
/// the second).
class TapSpan
{
public:
    TapSpan(const GroupTables& g, bool lerp) noexcept : g_(g), lerp_(lerp)
    {
        rel_lo_ = rel_hi_ = g.h.rel[0];
        for (size_t k = 0; k < g.h.count; ++k) {
            rel_lo_ = std::min(rel_lo_, g.h.rel[k]);
            rel_hi_ = std::max(rel_hi_, g.h.rel[k]);
        }
    }
    int32_t lo(size_t x) const noexcept { return g_.o0[x] + rel_lo_; }
    int32_t hi(size_t x) const noexcept { return (lerp_ ? g_.o1[x] : g_.o0[x]) + rel_hi_; }

private:
    const GroupTables& g_;
    bool lerp_;
    int32_t rel_lo_ = 0, rel_hi_ = 0;
};

} // namespace

/// The SIMD shuffle program of a group (HGroup::win/masks), or false when a row is too short
/// for a 16-byte window.
bool build_shuffles(GroupTables& g, size_t npad, size_t row_bytes, bool lerp)
{
    if (row_bytes < 16)
        return false;
    const size_t count = g.h.count;
    const int32_t* rel = g.h.rel;
    const TapSpan span(g, lerp);
    // Fewest windows per block of 4 outputs such that each window's outputs span <= 16 bytes.
    uint32_t loads = 1;
    for (; loads < 4; loads *= 2) {
        const size_t per = 4 / loads;
        bool fits = true;
        for (size_t x0 = 0; x0 < npad && fits; x0 += per) {
            int32_t lo = std::numeric_limits<int32_t>::max(), hi = 0;
            for (size_t x = x0; x < x0 + per; ++x) {
                lo = std::min(lo, span.lo(x));
                hi = std::max(hi, span.hi(x));
            }
            fits = hi - lo <= 15;
        }
        if (fits)
            break;
    }
    const size_t quads = npad / 16, per = 4 / loads;
    g.h.loads = loads;
    g.win.assign(quads * loads * 4, 0);
    g.masks.assign(quads * loads * count * 64, 0x80);
    for (size_t q = 0; q < quads; ++q)
        for (size_t l = 0; l < loads; ++l)
            for (size_t s = 0; s < 4; ++s) {
                const size_t x0 = (q * 4 + kSlotBlock[s]) * 4 + l * per;
                int32_t lo = std::numeric_limits<int32_t>::max();
                for (size_t x = x0; x < x0 + per; ++x)
                    lo = std::min(lo, span.lo(x));
                // Near the end of a row the window slides left so it never reads past it.
                const int32_t base = std::min<int32_t>(lo, int32_t(row_bytes) - 16);
                g.win[(q * loads + l) * 4 + s] = base;
                for (size_t k = 0; k < count; ++k) {
                    uint8_t* m = &g.masks[(((q * loads + l) * count + k) * 4 + s) * 16];
                    for (size_t x = x0; x < x0 + per; ++x) {
                        const size_t i = x % 4;
                        m[2 * i] = uint8_t(g.o0[x] + rel[k] - base);
                        if (lerp)
                            m[8 + 2 * i] = uint8_t(g.o1[x] + rel[k] - base);
                    }
                }
            }
    return true;
}

/// The AVX-512 level's permute program of a group (HGroup::vwin/vidx), or false when a row
/// is shorter than a 128-byte window or four windows per block of 32 outputs do not suffice.
bool build_permutes(GroupTables& g, size_t npad, size_t row_bytes, bool lerp)
{
    constexpr size_t kBlock = 32, kWindow = 128;
    if (row_bytes < kWindow)
        return false;
    const size_t count = g.h.count;
    const int32_t* rel = g.h.rel;
    const TapSpan span(g, lerp);
    // A window near the end of the row slides back so it never reads past it; it still covers
    // its outputs when their taps span at most a window, since taps never pass the row's end.
    const int32_t last_base = int32_t(row_bytes - kWindow);
    auto base_of = [&](size_t x0) { return std::min(span.lo(x0), last_base); };
    const size_t blocks = npad / kBlock;
    // Fewest windows per block such that each window covers its outputs' taps.
    auto fits = [&](size_t per) {
        for (size_t x0 = 0; x0 < npad; x0 += per)
            if (span.hi(x0 + per - 1) - base_of(x0) >= int32_t(kWindow))
                return false;
        return true;
    };
    uint32_t wins = 1;
    while (!fits(kBlock / wins)) {
        if (wins == 4)
            return false;
        wins *= 2;
    }
    const size_t per = kBlock / wins;
    g.h.vwins = wins;
    g.vwin.assign(blocks * wins, 0);
    g.vidx.assign(blocks * count * 2 * 64, 0);
    for (size_t b = 0; b < blocks; ++b)
        for (size_t w = 0; w < wins; ++w) {
            const size_t x0 = b * kBlock + w * per;
            const int32_t base = base_of(x0);
            g.vwin[b * wins + w] = base;
            for (size_t k = 0; k < count; ++k) {
                uint8_t* first = &g.vidx[((b * count + k) * 2) * 64];
                uint8_t* second = first + 64;
                for (size_t x = x0; x < x0 + per; ++x) {
                    const size_t i = x - b * kBlock;
                    first[2 * i] = uint8_t(g.o0[x] + rel[k] - base);
                    second[2 * i] = uint8_t((lerp ? g.o1[x] : g.o0[x]) + rel[k] - base);
                }
            }
        }
    return true;
}

} // namespace edgetensor::detail::convert
