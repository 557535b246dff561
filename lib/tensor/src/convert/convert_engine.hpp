// SPDX-License-Identifier: MIT
//
// The converter's state: the tables create() builds once per configuration and the per-thread
// scratch run() works in. See convert_engine.cpp for the pass structure.

#pragma once

#include "edgetensor/convert.hpp"

#include "convert_formats.hpp"
#include "convert_kernels.hpp"
#include "convert_quant.hpp"
#include "thread_pool.hpp"

#include <memory>
#include <vector>

namespace edgetensor
{

namespace detail::convert
{

/// int16 rows aligned for vector loads, allocated once.
class RowBuffer
{
public:
    /// `rows` rows of `n` int16 each; throws std::bad_alloc.
    void allocate(size_t rows, size_t n);
    int16_t* row(size_t i) noexcept { return base_ + i * n_; }

private:
    std::vector<int16_t> mem_;
    int16_t* base_ = nullptr;
    size_t n_ = 0;
};

/// Tables of one tap group (HGroup points into them).
struct GroupTables {
    size_t plane = 0;
    uint8_t comps[4] = {};
    std::vector<int32_t> o0, o1, win, vwin;
    std::vector<int16_t> w;
    std::vector<uint8_t> masks, vidx;
    HGroup h;
};

/// The horizontal programs of a group's SIMD kernels from its taps (convert_programs.cpp):
/// HGroup::win/masks for the shuffle levels, HGroup::vwin/vidx for AVX-512. False, with
/// nothing built, when that program cannot serve the group (a row shorter than one window;
/// for the permutes also taps that four windows per 32 outputs do not cover).
bool build_shuffles(GroupTables& g, size_t npad, size_t row_bytes, bool lerp);
bool build_permutes(GroupTables& g, size_t npad, size_t row_bytes, bool lerp);

/// Per worker thread: the horizontal rows of the last two source rows of every plane (output
/// rows advance monotonically, so two slots catch every reuse) and the colour rows.
struct Scratch {
    int64_t key[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    int16_t* hrow[3][2][4] = {};
    int16_t* crow[4] = {};
    RowBuffer mem;
};

} // namespace detail::convert

struct Converter::Impl {
    ConvertConfig cfg;
    ConvertGeometry geo;
    Colorimetry applied;
    const detail::convert::FormatSpec* spec = nullptr;
    const detail::convert::KernelSet* kernels = nullptr;
    size_t dw = 0, dh = 0;
    size_t channels = 0;
    size_t elem = 1;
    bool gray_out = false;
    /// Content width rounded up to detail::convert::kPad.
    size_t npad = 0;
    bool comp_used[4] = {false, false, false, false};
    bool plane_used[3] = {false, false, false};
    /// Readable bytes of one source row per plane (the SIMD windows stay inside them).
    size_t plane_bytes[3] = {0, 0, 0};
    std::vector<detail::convert::GroupTables> groups;
    /// Vertical map per content row: absolute luma rows and the Q15 weight of the second.
    std::vector<int32_t> vy0, vy1;
    std::vector<int16_t> vw;
    detail::convert::YuvMatrix matrix;
    /// Output channel k takes colour row order[k] (0..2 = R, G, B; 3 = alpha).
    uint8_t order[4] = {0, 1, 2, 3};
    /// Opaque alpha in Q5, npad long (RGBA/BGRA output of sources without alpha).
    std::vector<int16_t> alpha_q5;
    /// Floats: the normalisation as one multiply-add on the Q5 sample. Quantized: the
    /// constants of the quantizer's fast form this level runs.
    float scale[4] = {0, 0, 0, 0};
    float bias[4] = {0, 0, 0, 0};
    detail::convert::EmitType emit_type = detail::convert::EmitType::U8;
    /// Planar float rows are written with non-temporal stores (ConvertConfig::stores resolved).
    bool stream = false;
    /// ConvertConfig::quant, prepared (unused without it); its table only where this level
    /// has no exact fast form.
    detail::convert::Quantizer quant;
    bool quant_fused = false;
    /// One output row of padding, already in the output dtype (CHW: channel rows back to back).
    std::vector<uint8_t> fill_row;
    std::vector<detail::convert::Scratch> scratch;
    std::unique_ptr<detail::ThreadPool> pool;

    size_t row_bytes() const noexcept
    {
        return cfg.layout == TensorLayout::Hwc ? dw * channels * elem : dw * elem;
    }

    Result<void> init(const ConvertConfig& c);
    /// run()'s argument checks, before any backend sees the arguments (CPU and GL refuse the
    /// same things with the same words).
    Result<void> check_frames(const SourceFrame& src, const DestFrame& dst) const;
    Result<void> check_source(const TensorDyn& src) const;
    /// The destination's row and plane strides (data left null), or why it cannot be written.
    Result<DestFrame> dest_layout(const TensorDyn& dst, const Shape& want) const;
    /// Forgets the rows a worker's scratch holds from the previous frame. Bands of one frame
    /// run in the same scratch keep them (a band that continues the last one reuses its rows).
    void begin_frame(detail::convert::Scratch& s) const noexcept;
    /// Output rows [y_begin, y_end) of one frame, in the scratch of one worker.
    void process_rows(const SourceFrame& src, const DestFrame& dst, size_t y_begin, size_t y_end,
                      detail::convert::Scratch& s) const noexcept;

private:
    Result<void> validate(const ConvertConfig& c);
    void build_colour();
    void build_groups(const std::vector<int32_t>& hx0, const std::vector<int32_t>& hx1,
                      const std::vector<float>& hw);
    void build_quant();
    void build_fill();
    /// The emit arguments every row of this converter shares.
    void emit_constants(detail::convert::EmitArgs& e) const noexcept;
    void allocate_scratch(size_t threads);
    /// Colour and emit of one content row: true when a fused kernel wrote it, else e.ch holds
    /// the Q5 channel rows for emit.
    bool emit_content(const detail::convert::VIn* in, detail::convert::EmitArgs& e,
                      detail::convert::Scratch& s) const noexcept;
    /// Makes sure scratch slot rows for source rows r0 and r1 of plane p exist; returns the slots.
    void fetch(const SourceFrame& src, size_t p, int64_t r0, int64_t r1,
               detail::convert::Scratch& s, size_t& s0, size_t& s1) const noexcept;
};

} // namespace edgetensor
