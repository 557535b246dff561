// SPDX-License-Identifier: MIT
//
// The row kernels of the conversion engine and how a converter picks them.
//
// Every level (AVX2, SSE4.1, portable) computes the same integer function, so their outputs
// are bit-identical for integer dtypes (the tests check it):
//  - Samples are int16 in "Q5": value * 32, so [0, 255] is [0, 8160]. Weights are Q15.
//  - lerp(a, b, w) = a + mulhrs(b - a, w), mulhrs(x, w) = (x * w + 2^14) >> 15 (x86's
//    pmulhrsw, NEON's vqrdmulh).
//  - Horizontal pass, once per source row a converter needs: h = lerp(a << 5, b << 5, w)
//    between the two taps of each output column (tables built at create()).
//  - Compose, once per output row: the vertical lerp of two horizontal rows, then the colour
//    matrix in Q13 (coefficient * 8192; terms mulhrs(x << 2, c)), clamped to [0, 8160].
//  - Emit: u8 = (v + 16) >> 5 (round half up), i8 = u8 ^ 0x80, floats v * scale + bias (the
//    normalisation folded into one multiply-add; F16 rounds to nearest even). Quantized u8/i8
//    (QU8/QI8): saturate(round_half_even(v * scale + bias) + zero_point), t a float multiply
//    then a float add (never contracted), or on a level with FMA one fused multiply-add, each
//    with constants convert_quant.hpp proved at create() to reproduce the reference for every
//    sample value; where no such constants exist, a table of the reference.
// Error against the exact double-precision matrix: below 0.1 of a level before the final
// rounding, whatever the matrix (BT.709/2020 chroma gains above 2 included).
//
// The kernels never allocate and never read past the tables' padded width (rows are padded to
// kPad columns) or past the last byte of a source row.

#pragma once

#include "edgetensor/convert.hpp"

#include <cstddef>
#include <cstdint>

namespace edgetensor::detail::convert
{

/// Rows and tables are padded to a multiple of this many columns, so the SIMD kernels of the
/// horizontal and compose stages never need a scalar tail.
inline constexpr size_t kPad = 32;

/// Q5 of 255 (the largest sample value).
inline constexpr int16_t kQ5Max = 255 * 32;

/// Luma of RGB sources, 0.299 R + 0.587 G + 0.114 B, in Q15.
inline constexpr int16_t kGrayR = 9798;
inline constexpr int16_t kGrayG = 19235;
inline constexpr int16_t kGrayB = 3736;

/// The horizontal taps of one group of components that share sample positions in one plane
/// (U and V of NV12, R G B of packed RGB, luma alone): one set of tables serves them all.
struct HGroup {
    size_t count = 0;            ///< components in the group (1..4)
    int32_t rel[4] = {};         ///< byte offset of component k from component 0
    const int32_t* o0 = nullptr; ///< [n] byte offset in the row of component 0's first tap
    const int32_t* o1 = nullptr; ///< [n] ... and of its second tap
    const int16_t* w = nullptr;  ///< [n] Q15 weight of the second tap
    bool lerp = false;           ///< some weight is non-zero (else the first tap is the value)
    /// The shuffle program of the SIMD levels: for each block of 4 outputs, `loads` 16-byte
    /// windows of the row (win) and a byte shuffle per window and component (masks) that
    /// gathers each output's two taps as int16. Blocks go in quads of 16 outputs whose slots
    /// hold blocks 0, 2, 1, 3 (what AVX2's in-lane unpacks put back in order):
    /// win[quad][load][slot], masks[quad][load][component][slot][16]. Null when the row is
    /// shorter than one window; then every level runs the portable pass.
    uint32_t loads = 0;
    const int32_t* win = nullptr;
    const uint8_t* masks = nullptr;
    /// The byte-permute program of the AVX-512 level (two-table vpermt2b, VBMI): per block of
    /// 32 outputs, `vwins` (1, 2 or 4) 128-byte windows of the row, window w serving outputs
    /// [w * 32 / vwins, (w + 1) * 32 / vwins) of the block (vwin[block][w], byte offsets), and
    /// per component the index of each output's first and second tap in its window, in the
    /// low byte of the output's int16 lane: vidx[block][component][tap][64]. Null when the row
    /// is shorter than a window or 4 windows per block do not cover the taps (steeper than
    /// about 1:17 on luma); then the level runs the shuffle program above.
    uint32_t vwins = 0;
    const int32_t* vwin = nullptr;
    const uint8_t* vidx = nullptr;
};

/// One component's two horizontal rows and the vertical weight of the second (Q15).
struct VIn {
    const int16_t* r0 = nullptr;
    const int16_t* r1 = nullptr;
    int16_t w = 0;
};

/// The colour matrix in fixed point: Y offset in Q5 (16 * 32 or 0), coefficients in Q13.
struct YuvMatrix {
    int16_t y_off = 0;
    int16_t ys = 8192; ///< luma gain (255/219 limited, 1 full)
    int16_t vr = 0;    ///< V -> R
    int16_t ug = 0;    ///< U -> G (negative)
    int16_t vg = 0;    ///< V -> G (negative)
    int16_t ub = 0;    ///< U -> B
};

enum class Compose : uint8_t {
    YuvRgb,  ///< in Y U V -> out R G B
    YuvGray, ///< in Y -> out full-range luma
    RgbGray, ///< in R G B -> out 0.299 R + 0.587 G + 0.114 B
};

struct ComposeArgs {
    Compose mode = Compose::YuvRgb;
    VIn in[3];
    int16_t* out[3] = {};
    YuvMatrix m;
};

enum class EmitType : uint8_t { U8, I8, F16, F32, QU8, QI8 };

/// Q5 channel rows (output channel order) to `n` output pixels.
struct EmitArgs {
    const int16_t* ch[4] = {};
    size_t channels = 0;
    bool chw = false;
    EmitType type = EmitType::U8;
    uint8_t* dst = nullptr;  ///< first output pixel (HWC) or first pixel of channel 0 (CHW)
    size_t plane_stride = 0; ///< CHW: bytes between channel planes
    float scale[4] = {};     ///< floats: out = v * scale + bias (v in Q5); QU8/QI8: t
    float bias[4] = {};
    int16_t zero_point = 0; ///< QU8/QI8
    /// QU8/QI8: t is one fused multiply-add (only for a level with quant_fma), else a multiply
    /// then an add.
    bool qfused = false;
    /// QU8/QI8 without an exact fast form: the output byte of every sample value,
    /// [channel * (kQ5Max + 1) + v]; the SIMD levels hand such rows to the portable emit.
    const uint8_t* qtable = nullptr;
    /// yuv_emit only: output channel k is colour order[k] (0..2 = R, G, B; 3 = opaque alpha).
    uint8_t order[4] = {0, 1, 2, 3};
    /// Planar float rows (F32, F16) whose every plane starts on a cache line are written with
    /// non-temporal stores, on levels with KernelSet::streams (others ignore it). The caller
    /// fences after each band of rows (fence_streaming_stores()).
    bool stream = false;
};

struct KernelSet {
    const char* name;
    /// Horizontal pass of one source row for one group: dst[k][x] for x < n (n padded).
    void (*hpass)(const uint8_t* row, const HGroup& g, size_t n, int16_t* const* dst) noexcept;
    /// out[x] = lerp(in.r0[x], in.r1[x], in.w) for x < n (n padded).
    void (*vblend)(const VIn& in, int16_t* out, size_t n) noexcept;
    /// Vertical lerp and colour, x < n (n padded).
    void (*compose)(const ComposeArgs& a, size_t n) noexcept;
    /// Exactly n pixels (no padding in the destination).
    void (*emit)(const EmitArgs& a, size_t n) noexcept;
    /// Compose (YuvRgb) and emit in one pass, from registers, for the outputs a level has a
    /// kernel for; false (nothing written) for the others, which then take compose + emit.
    bool (*yuv_emit)(const ComposeArgs& c, const EmitArgs& e, size_t n) noexcept;
    /// emit and yuv_emit take quantized rows in the fused form too (EmitArgs::qfused).
    bool quant_fma;
    /// emit and yuv_emit honour EmitArgs::stream for planar float rows.
    bool streams;
};

/// Orders the non-temporal stores this thread made before anything after it (a no-op where
/// no level streams): one call after each band of rows, before the frame is handed on.
void fence_streaming_stores() noexcept;

/// The last-level cache's size in bytes: the highest cache level sysfs lists for CPU 0, else
/// sysconf's; 8 MiB when neither says. Read once.
size_t last_level_cache_bytes() noexcept;

/// ConvertConfig::stores resolved for one converter: EDGETENSOR_CONVERT_STORES (auto, cached,
/// streaming) if set, else `stores`; Auto streams when `buffer_bytes` is at least half the
/// last-level cache. Always false where the output is not planar float or `k` cannot stream.
bool resolve_streaming(OutputStores stores, const KernelSet& k, bool planar_float,
                       size_t buffer_bytes) noexcept;

extern const KernelSet kPortableKernels;
#if defined(__x86_64__)
extern const KernelSet kSse41Kernels;
extern const KernelSet kAvx2Kernels;
extern const KernelSet kAvx512Kernels;
#endif

/// The best level this CPU runs, at most the one EDGETENSOR_CONVERT_ISA names (portable,
/// sse4.1, avx2, avx512); EDGETENSOR_CONVERT_PORTABLE=1 means portable. Read on every call so
/// tests can switch between converters.
const KernelSet& select_kernels() noexcept;

} // namespace edgetensor::detail::convert
