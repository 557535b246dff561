// SPDX-License-Identifier: MIT
//
// The converter's public face: geometry, colorimetry defaults, and run()'s argument checks.
// The engine itself is convert_engine.cpp; its row kernels convert_kernels_*.cpp.

#include "edgetensor/convert.hpp"

#include "convert_engine.hpp"
#include "gl/convert_hook.hpp"
#include "tensor_internal.hpp"

#include <algorithm>
#include <atomic>
#include <new>
#include <string>
#include <vector>

namespace edgetensor
{

using detail::convert::plane_row_bytes;
using detail::convert::plane_rows;

ConvertGeometry compute_convert_geometry(const Region& source, size_t dst_width, size_t dst_height,
                                         bool letterbox) noexcept
{
    ConvertGeometry g;
    g.source = source;
    const size_t sw = source.width, sh = source.height;
    if (sw == 0 || sh == 0 || dst_width == 0 || dst_height == 0)
        return g;
    size_t cw = dst_width, ch = dst_height;
    if (letterbox) {
        // Integer arithmetic so the limiting axis fills the output exactly and the other is
        // round(src * scale), never off by one through floating point.
        if (dst_width * sh <= dst_height * sw) {
            ch = std::clamp<size_t>((2 * sh * dst_width + sw) / (2 * sw), 1, dst_height);
            g.scale = double(dst_width) / double(sw);
        } else {
            cw = std::clamp<size_t>((2 * sw * dst_height + sh) / (2 * sh), 1, dst_width);
            g.scale = double(dst_height) / double(sh);
        }
    }
    g.pad_left = (dst_width - cw) / 2;
    g.pad_right = dst_width - cw - g.pad_left;
    g.pad_top = (dst_height - ch) / 2;
    g.pad_bottom = dst_height - ch - g.pad_top;
    g.content = Region{g.pad_left, g.pad_top, cw, ch};
    g.scale_x = double(cw) / double(sw);
    g.scale_y = double(ch) / double(sh);
    return g;
}

Colorimetry resolve_yuv_colorimetry(const Colorimetry& c, size_t /*width*/, size_t height,
                                    bool* guessed) noexcept
{
    Colorimetry r = c;
    bool filled = false;
    if (r.encoding == ColorEncoding::Unspecified) {
        filled = true;
        switch (r.space) {
        case ColorSpace::Bt709:
            r.encoding = ColorEncoding::Bt709;
            break;
        case ColorSpace::Bt2020:
            r.encoding = ColorEncoding::Bt2020;
            break;
        case ColorSpace::Smpte170m:
            r.encoding = ColorEncoding::Bt601;
            break;
        default:
            // gst_video_info_set_format(): SD (<= 576 lines) is BT.601, anything taller BT.709.
            r.encoding = height > 576 ? ColorEncoding::Bt709 : ColorEncoding::Bt601;
            break;
        }
    }
    if (r.range == ColorRange::Unspecified) {
        filled = true;
        r.range = ColorRange::Limited;
    }
    if (guessed)
        *guessed = filled;
    return r;
}

Converter::Converter(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Converter::Converter(Converter&&) noexcept = default;
Converter& Converter::operator=(Converter&&) noexcept = default;
Converter::~Converter() = default;

Result<Converter> Converter::create(const ConvertConfig& config)
{
    std::unique_ptr<Impl> impl;
    try {
        impl = std::make_unique<Impl>();
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed, "out of memory creating a converter");
    }
    auto r = impl->init(config);
    if (!r)
        return unexpected(std::move(r).error());
    Converter conv(std::move(impl));
    // The compute backend (config.compute): the GL backend attaches here when chosen.
    auto attached = detail::gl::ConverterHook::attach(conv);
    if (!attached)
        return unexpected(std::move(attached).error());
    return conv;
}

const ConvertConfig& Converter::config() const noexcept
{
    return impl_->cfg;
}
const ConvertGeometry& Converter::geometry() const noexcept
{
    return impl_->geo;
}
const Colorimetry& Converter::applied_colorimetry() const noexcept
{
    return impl_->applied;
}
size_t Converter::threads() const noexcept
{
    return impl_->pool->size();
}
std::string_view Converter::simd_level() const noexcept
{
    return impl_->kernels->name;
}
bool Converter::streaming_stores() const noexcept
{
    return compute_ == ConvertCompute::Cpu && impl_->stream;
}
size_t Converter::dst_width() const noexcept
{
    return impl_->dw;
}
size_t Converter::dst_height() const noexcept
{
    return impl_->dh;
}

Shape Converter::output_shape() const
{
    if (impl_->cfg.layout == TensorLayout::Hwc)
        return {impl_->dh, impl_->dw, impl_->channels};
    return {impl_->channels, impl_->dh, impl_->dw};
}

size_t Converter::min_row_stride() const noexcept
{
    return impl_->row_bytes();
}

size_t Converter::min_plane_stride() const noexcept
{
    return impl_->cfg.layout == TensorLayout::Chw ? impl_->row_bytes() * impl_->dh : 0;
}

Result<void> Converter::Impl::check_frames(const SourceFrame& src, const DestFrame& dst) const
{
    const auto& c = cfg;
    for (size_t p = 0; p < spec->planes; ++p) {
        const auto& sp = src.planes[p];
        if (!sp.data)
            return make_error(ErrorCode::InvalidArgument, "source plane " + std::to_string(p) +
                                                              " of the " + std::string(spec->name) +
                                                              " frame is null");
        const size_t need = plane_row_bytes(*spec, p, c.src_width);
        if (plane_rows(*spec, p, c.src_height) > 1 && sp.stride < need)
            return make_error(ErrorCode::InvalidArgument,
                              "source plane " + std::to_string(p) + " stride " +
                                  std::to_string(sp.stride) + " is shorter than its " +
                                  std::to_string(need) + "-byte rows");
    }
    if (!dst.data)
        return make_error(ErrorCode::InvalidArgument, "destination is null");
    if (reinterpret_cast<uintptr_t>(dst.data) % elem || dst.row_stride % elem ||
        dst.plane_stride % elem)
        return make_error(ErrorCode::InvalidArgument,
                          "destination pointer and pitches must be multiples of the " +
                              std::to_string(elem) + "-byte element size");
    const size_t rb = row_bytes();
    if (dh > 1 && dst.row_stride < rb)
        return make_error(ErrorCode::InvalidArgument,
                          "destination row stride " + std::to_string(dst.row_stride) +
                              " is shorter than a " + std::to_string(rb) + "-byte output row");
    if (c.layout == TensorLayout::Chw && channels > 1) {
        const size_t plane_extent = (dh - 1) * dst.row_stride + rb;
        if (dst.plane_stride < plane_extent)
            return make_error(ErrorCode::InvalidArgument,
                              "destination plane stride " + std::to_string(dst.plane_stride) +
                                  " is shorter than a " + std::to_string(plane_extent) +
                                  "-byte channel plane");
    }
    return {};
}

Result<void> Converter::run(const SourceFrame& src, const DestFrame& dst)
{
    if (!impl_)
        return make_error(ErrorCode::InvalidArgument, "run() on a moved-from Converter");
    Impl& m = *impl_;
    EDGETENSOR_TRY(m.check_frames(src, dst));
    if (gl_)
        return detail::gl::ConverterHook::run(*this, src, dst);

    if (m.pool->size() == 1) {
        m.begin_frame(m.scratch[0]);
        m.process_rows(src, dst, 0, m.dh, m.scratch[0]);
        return {};
    }
    // Bands handed out on demand rather than one per thread: a worker that wakes late, or
    // shares its core with another process, takes fewer of them. Each band start re-reads
    // at most two source rows per plane, so a band is kept some tens of rows tall.
    struct Ctx {
        Impl* impl;
        const SourceFrame* src;
        const DestFrame* dst;
        size_t band;
        std::atomic<size_t> next;
    } ctx{&m, &src, &dst, std::max<size_t>(16, m.dh / (m.pool->size() * 8)), {0}};
    m.pool->run(
        [](void* p, size_t t) {
            auto* x = static_cast<Ctx*>(p);
            const size_t h = x->impl->dh;
            x->impl->begin_frame(x->impl->scratch[t]);
            for (;;) {
                const size_t y0 = x->next.fetch_add(1, std::memory_order_relaxed) * x->band;
                if (y0 >= h)
                    break;
                x->impl->process_rows(*x->src, *x->dst, y0, std::min(y0 + x->band, h),
                                      x->impl->scratch[t]);
            }
        },
        &ctx);
    return {};
}

Result<void> Converter::Impl::check_source(const TensorDyn& src) const
{
    const auto& c = cfg;
    if (!src.is_valid() || !src.is_image())
        return make_error(ErrorCode::InvalidArgument, "the conversion source is not an image");
    const auto sf = convert_format_from_pixel_format(src.format());
    if (!sf)
        return make_error(ErrorCode::NotSupported,
                          "the converter cannot read " +
                              std::string(pixel_format_name(src.format())) + " images");
    if (*sf != c.src_format || src.width() != c.src_width || src.height() != c.src_height)
        return make_error(ErrorCode::InvalidArgument,
                          "source " + std::string(pixel_format_name(src.format())) + " " +
                              std::to_string(src.width()) + "x" + std::to_string(src.height()) +
                              " does not match the converter's " + std::string(spec->name) + " " +
                              std::to_string(c.src_width) + "x" + std::to_string(c.src_height));
    if (src.dtype() != DType::U8)
        return make_error(ErrorCode::NotSupported, "the converter reads u8 images only");
    // One buffer, [C, H, W]: channel planes one plane stride apart.
    const auto& st = src.strides();
    if (c.src_format == ConvertFormat::PlanarRgb && (st.size() != 3 || st[0] <= 0 || st[1] <= 0))
        return make_error(ErrorCode::InvalidShape, "planar RGB source must be [3, H, W]");
    return {};
}

Result<DestFrame> Converter::Impl::dest_layout(const TensorDyn& dst, const Shape& want) const
{
    const auto& c = cfg;
    if (!dst.is_valid())
        return make_error(ErrorCode::InvalidArgument, "the conversion destination is empty");
    if (dst.dtype() != c.dtype)
        return make_error(ErrorCode::DTypeMismatch,
                          "destination dtype " + std::string(dtype_name(dst.dtype())) +
                              " differs from the converter's " + std::string(dtype_name(c.dtype)));
    // Drop leading 1s (batch) and accept [H, W] for one channel.
    Shape shape = dst.shape();
    std::vector<ptrdiff_t> strides = dst.strides();
    while (shape.size() > 3 && shape.front() == 1) {
        shape.erase(shape.begin());
        strides.erase(strides.begin());
    }
    if (shape.size() == 2 && channels == 1) {
        shape.insert(c.layout == TensorLayout::Hwc ? shape.end() : shape.begin(), 1);
        strides.insert(c.layout == TensorLayout::Hwc ? strides.end() : strides.begin(),
                       ptrdiff_t(elem));
    }
    if (shape != want)
        return make_error(ErrorCode::InvalidShape,
                          "destination shape " + detail::shape_string(dst.shape()) +
                              " differs from the converter's output " + detail::shape_string(want));
    DestFrame df;
    const auto es = ptrdiff_t(elem);
    if (c.layout == TensorLayout::Hwc) {
        if (strides[2] != es || strides[1] != es * ptrdiff_t(channels) || strides[0] < 0)
            return make_error(ErrorCode::InvalidShape,
                              "destination pixels must be contiguous (HWC with padded rows only)");
        df.row_stride = size_t(strides[0]);
    } else {
        if (strides[2] != es || strides[1] < 0 || strides[0] < 0)
            return make_error(ErrorCode::InvalidShape,
                              "destination rows must be contiguous (CHW with padded rows only)");
        df.row_stride = size_t(strides[1]);
        df.plane_stride = size_t(strides[0]);
    }
    return df;
}

Result<void> Converter::run(const TensorDyn& src, const TensorDyn& dst)
{
    if (!impl_)
        return make_error(ErrorCode::InvalidArgument, "run() on a moved-from Converter");
    Impl& m = *impl_;
    const auto& c = m.cfg;
    EDGETENSOR_TRY(m.check_source(src));
    auto layout = m.dest_layout(dst, output_shape());
    if (!layout)
        return unexpected(std::move(layout).error());
    if (gl_)
        return detail::gl::ConverterHook::run(*this, src, dst, *layout);
    DestFrame df = *layout;

    auto smap = src.map_raw(CpuAccess::Read);
    if (!smap)
        return unexpected(std::move(smap).error());
    auto dmap = dst.map_raw(CpuAccess::Write);
    if (!dmap)
        return unexpected(std::move(dmap).error());
    df.data = dmap->bytes();

    SourceFrame sf_frame;
    const auto& st = src.strides();
    if (c.src_format == ConvertFormat::PlanarRgb) {
        for (size_t p = 0; p < 3; ++p)
            sf_frame.planes[p] = {smap->bytes() + p * size_t(st[0]), size_t(st[1])};
    } else {
        for (size_t p = 0; p < m.spec->planes && p < smap->plane_count(); ++p) {
            const MappedPlane& mp = smap->plane(p);
            size_t stride = mp.row_stride;
            if (stride == 0 && p == 0 && !st.empty() && st[0] > 0)
                stride = size_t(st[0]);
            sf_frame.planes[p] = {mp.data, stride};
        }
    }
    return run(sf_frame, df);
}

Result<TensorDyn> Converter::allocate_output(std::optional<TensorMemory> memory) const
{
    return TensorDyn::create(impl_->cfg.dtype, output_shape(), memory, "convert-output");
}

} // namespace edgetensor
