// SPDX-License-Identifier: MIT
//
// Images: allocation with the row-stride rule, reconfiguration of pooled tensors, and
// imports of foreign (possibly multi-buffer) planes.

#include "edgetensor/tensor_dyn.hpp"

#include "android/ahb_layout.hpp"
#include "log.hpp"
#include "platform_buffer.hpp"
#include "tensor_internal.hpp"

#include <limits>

namespace edgetensor
{

using detail::shape_string;
using detail::TensorAccess;

namespace
{

struct ImageGeometry {
    PixelFormatInfo info;
    size_t row_stride;
    size_t total_bytes;
    size_t chroma_offset; // semi-planar only
    size_t chroma_stride;
};

Result<PixelFormatInfo> check_image_args(size_t width, size_t height, PixelFormat format,
                                         DType dtype)
{
    const auto info = pixel_format_info(format);
    if (!info)
        return make_error(ErrorCode::InvalidArgument, "pixel format code " +
                                                          std::to_string(uint32_t(format)) +
                                                          " is not an image format");
    if (width == 0 || height == 0)
        return make_error(ErrorCode::InvalidShape, "image size " + std::to_string(width) + "x" +
                                                       std::to_string(height) +
                                                       " has a zero dimension");
    // 2^24 pixels a side keeps every stride * rows product far from overflow.
    if (width > (1u << 24) || height > (1u << 24))
        return make_error(ErrorCode::InvalidShape, "image size " + std::to_string(width) + "x" +
                                                       std::to_string(height) + " is too large");
    const bool yuv = info->layout == PixelLayout::SemiPlanar || format == PixelFormat::Yuyv ||
                     format == PixelFormat::Vyuy;
    if (yuv && dtype != DType::U8)
        return make_error(ErrorCode::NotSupported, std::string(info->name) +
                                                       " images hold u8 samples, not " +
                                                       std::string(dtype_name(dtype)));
    return *info;
}

ImageGeometry geometry(const PixelFormatInfo& info, size_t height, size_t row_stride)
{
    ImageGeometry g{info, row_stride, row_stride * image_total_rows(info.format, height), 0, 0};
    if (info.layout == PixelLayout::SemiPlanar) {
        g.chroma_offset = row_stride * height;
        g.chroma_stride = row_stride; // one pitch for both planes
    }
    return g;
}

size_t chroma_rows(const PixelFormatInfo& info, size_t height)
{
    return (height + info.chroma_v_sub - 1) / info.chroma_v_sub;
}

size_t chroma_row_bytes(const PixelFormatInfo& info, size_t width)
{
    return 2 * ((width + info.chroma_h_sub - 1) / info.chroma_h_sub);
}

} // namespace

Result<TensorDyn> TensorDyn::image(size_t width, size_t height, PixelFormat format, DType dtype,
                                   CpuAccess access, std::optional<TensorMemory> memory,
                                   std::string_view name)
{
    return image(width, height, format, dtype, access, Compression::none(), memory, name);
}

namespace
{

// The platform buffer (Android AHardwareBuffer) as the Dma backend of an image: the platform
// chose the pitch, so the 64-byte rule is gralloc's business (EGL imports the buffer, not a
// pitch).
Result<TensorDyn> platform_image(const detail::PlatformBufferOps& ops, size_t width, size_t height,
                                 PixelFormat format, DType dtype, CpuAccess access,
                                 Compression compression, std::string_view name)
{
    auto img = ops.allocate_image({width, height, format, dtype, access, compression, name});
    if (!img)
        return unexpected(std::move(img).error());
    const size_t elem = dtype_size(dtype);
    TensorDyn t =
        TensorAccess::wrap(std::move(img->storage), dtype, image_shape(format, width, height),
                           detail::image_strides(format, height, img->row_stride, elem), 0, name);
    TensorAccess::set_image(t, format, width, height, access);
    detail::intern_platform_identity(t);
    return t;
}

} // namespace

Result<TensorDyn> TensorDyn::image(size_t width, size_t height, PixelFormat format, DType dtype,
                                   CpuAccess access, Compression compression,
                                   std::optional<TensorMemory> memory, std::string_view name)
{
    auto info = check_image_args(width, height, format, dtype);
    if (!info)
        return unexpected(std::move(info).error());
    EDGETENSOR_TRY(detail::ahb::check_compression_request(compression, access));
    const size_t elem = dtype_size(dtype);

    const bool platform_may = memory ? *memory == TensorMemory::Dma : !detail::force_mem();
    if (const detail::PlatformBufferOps* ops = detail::platform_buffer_ops(); ops && platform_may) {
        auto t = platform_image(*ops, width, height, format, dtype, access, compression, name);
        if (t || memory || compression.kind == Compression::Kind::Scheme)
            return t;
        ET_LOG_DEBUG("alloc", "no %.*s for a %zux%zu %s image (%s); using heap",
                     int(ops->name.size()), ops->name.data(), width, height,
                     std::string(info->name).c_str(), t.error().message().c_str());
        memory = TensorMemory::Mem;
    }
    if (compression.kind == Compression::Kind::Scheme)
        return make_error(ErrorCode::NotSupported,
                          std::string(compression_scheme_name(compression.scheme)) +
                              " compression was requested, but this platform has no vendor tile "
                              "compression (Linux DMA-BUF and heap images are linear)");
    if (compression.kind == Compression::Kind::Any)
        detail::note_compression_fallback();

    // The stride depends on the backend, which is only known once something allocated: try
    // the DMA geometry first (when DMA is allowed), then the host geometry.
    const ImageGeometry dma_geo =
        geometry(*info, height, image_row_stride(format, width, StridePolicy::Dma, elem));
    const ImageGeometry host_geo =
        geometry(*info, height, image_row_stride(format, width, StridePolicy::Host, elem));

    std::shared_ptr<detail::Storage> storage;
    ImageGeometry geo = host_geo;
    // EDGETENSOR_FORCE_MEM=1 short-circuits auto-selection only; an explicit request wins.
    const bool may_dma = memory ? *memory == TensorMemory::Dma : !detail::force_mem();
    if (may_dma) {
        auto r =
            detail::allocate_storage({dma_geo.total_bytes, name, access}, TensorMemory::Dma, true);
        if (r) {
            storage = std::move(*r);
            geo = dma_geo;
        } else if (memory) {
            return unexpected(std::move(r).error());
        }
    }
    if (!storage) {
        // Auto-selection for images skips Shm: it buys an image nothing Mem does not.
        auto r = detail::allocate_storage({host_geo.total_bytes, name, access},
                                          memory ? memory : std::optional(TensorMemory::Mem), true);
        if (!r)
            return unexpected(std::move(r).error());
        storage = std::move(*r);
    }
    if (storage->memory() == TensorMemory::Dma && geo.row_stride % kDmaRowAlignment != 0)
        return make_error(ErrorCode::AllocationFailed, "internal: DMA image without an aligned "
                                                       "stride");

    TensorDyn t =
        TensorAccess::wrap(std::move(storage), dtype, image_shape(format, width, height),
                           detail::image_strides(format, height, geo.row_stride, elem), 0, name);
    TensorAccess::set_image(t, format, width, height, access, geo.chroma_offset, geo.chroma_stride);
    return t;
}

Result<void> TensorDyn::configure_image(size_t width, size_t height, PixelFormat format)
{
    if (!storage_)
        return make_error(ErrorCode::InvalidArgument, "configure_image of an empty tensor");
    if (is_view_ || offset_ != 0)
        return make_error(ErrorCode::NotSupported,
                          "configure_image re-points a whole allocation; this tensor is a view");
    if (chroma_ && chroma_->storage != storage_)
        return make_error(ErrorCode::NotSupported,
                          "configure_image of a two-buffer image (from_planes) is not defined");
    auto info = check_image_args(width, height, format, dtype_);
    if (!info)
        return unexpected(std::move(info).error());

    const size_t elem = dtype_size(dtype_);
    const bool dma = memory() == TensorMemory::Dma;
    const StridePolicy policy = dma ? StridePolicy::Dma : StridePolicy::Host;
    const size_t rows = image_total_rows(format, height);
    const size_t natural = natural_row_bytes(format, width, elem);
    size_t stride = image_row_stride(format, width, policy, elem);

    // A recycled tensor may keep its previous pitch, but only when the rule would still accept
    // it: aligned (where alignment is required), wide enough, and inside the allocation.
    const bool aligned_rule = dma || info->layout == PixelLayout::SemiPlanar;
    if (const auto prior = row_stride(); prior && aligned_rule) {
        if (*prior % kDmaRowAlignment == 0 && *prior >= natural &&
            *prior <= capacity_bytes() / rows)
            stride = *prior;
    }
    if (stride > std::numeric_limits<size_t>::max() / rows || stride * rows > capacity_bytes())
        return make_error(ErrorCode::InsufficientCapacity,
                          std::string(info->name) + " " + std::to_string(width) + "x" +
                              std::to_string(height) + " needs " + std::to_string(rows) +
                              " rows of " + std::to_string(stride) + " bytes but tensor '" + name_ +
                              "' holds " + std::to_string(capacity_bytes()) + " bytes");

    const ImageGeometry geo = geometry(*info, height, stride);
    shape_ = image_shape(format, width, height);
    strides_ = detail::image_strides(format, height, stride, elem);
    TensorAccess::set_image(*this, format, width, height, access_, geo.chroma_offset,
                            geo.chroma_stride);
    return {};
}

namespace
{

struct ImagePlan {
    size_t off0 = 0;
    size_t stride0 = 0;
    size_t chroma_off = 0;
    size_t chroma_stride = 0;
};

// Where each plane of a described image lies in a buffer of `capacity` bytes. Offsets and
// strides come from foreign producers (caps, video meta, descriptors): every product and sum
// is overflow-checked, and nothing outside the buffer is accepted.
Result<ImagePlan> plan_image(const PixelFormatInfo& info, size_t width, size_t height, size_t elem,
                             std::span<const PlaneLayout> planes, size_t capacity)
{
    const bool semi = info.layout == PixelLayout::SemiPlanar;
    const size_t max_planes = semi ? 2 : 1;
    if (planes.size() > max_planes)
        return make_error(ErrorCode::InvalidArgument,
                          std::string(info.name) + " has " + std::to_string(max_planes) +
                              " plane(s); " + std::to_string(planes.size()) + " were described");
    ImagePlan p;
    const size_t row_bytes = natural_row_bytes(info.format, width, elem);
    const size_t luma_row_bytes = semi ? width : row_bytes;
    p.off0 = planes.empty() ? 0 : planes[0].offset;
    p.stride0 = planes.empty() || planes[0].stride == 0 ? row_bytes : planes[0].stride;
    if (p.stride0 < luma_row_bytes)
        return make_error(ErrorCode::InvalidArgument,
                          "plane 0 stride " + std::to_string(p.stride0) + " is narrower than a " +
                              std::to_string(width) + "-pixel row (" +
                              std::to_string(luma_row_bytes) + " bytes)");
    const size_t rows0 = info.layout == PixelLayout::Planar ? height * info.channels : height;
    size_t end0 = 0, end1 = 0, tmp = 0;
    bool overflow = __builtin_mul_overflow(rows0 - 1, p.stride0, &tmp) ||
                    __builtin_add_overflow(tmp, p.off0, &tmp) ||
                    __builtin_add_overflow(tmp, luma_row_bytes, &end0);
    if (semi && !overflow) {
        const size_t crow = chroma_row_bytes(info, width);
        if (planes.size() == 2)
            p.chroma_off = planes[1].offset;
        else
            overflow = __builtin_mul_overflow(p.stride0, height, &tmp) ||
                       __builtin_add_overflow(tmp, p.off0, &p.chroma_off);
        p.chroma_stride = planes.size() == 2 && planes[1].stride ? planes[1].stride : p.stride0;
        if (p.chroma_stride < crow)
            return make_error(ErrorCode::InvalidArgument, "chroma stride " +
                                                              std::to_string(p.chroma_stride) +
                                                              " is narrower than a chroma row (" +
                                                              std::to_string(crow) + " bytes)");
        overflow = overflow ||
                   __builtin_mul_overflow(chroma_rows(info, height) - 1, p.chroma_stride, &tmp) ||
                   __builtin_add_overflow(tmp, p.chroma_off, &tmp) ||
                   __builtin_add_overflow(tmp, crow, &end1);
    }
    if (overflow || end0 > capacity || end1 > capacity)
        return make_error(ErrorCode::InsufficientCapacity,
                          std::string(info.name) + " " + std::to_string(width) + "x" +
                              std::to_string(height) +
                              " with the given offsets and strides needs " +
                              (overflow ? std::string("more bytes than size_t holds")
                                        : std::to_string(end0 > end1 ? end0 : end1) + " bytes") +
                              " but the buffer holds " + std::to_string(capacity));
    return p;
}

} // namespace

Result<TensorDyn> TensorDyn::from_fd_image(UniqueFd fd, size_t width, size_t height,
                                           PixelFormat format, std::span<const PlaneLayout> planes,
                                           DType dtype, CpuAccess access, std::string_view name)
{
    auto info = check_image_args(width, height, format, dtype);
    if (!info)
        return unexpected(std::move(info).error());
    if (!fd)
        return make_error(ErrorCode::InvalidArgument, "from_fd_image: the fd is not valid");

    auto storage = detail::import_storage(std::move(fd), access);
    if (!storage)
        return unexpected(std::move(storage).error());
    const size_t elem = dtype_size(dtype);
    auto plan = plan_image(*info, width, height, elem, planes, (*storage)->capacity());
    if (!plan)
        return unexpected(std::move(plan).error());

    TensorDyn t = TensorAccess::wrap(std::move(*storage), dtype, image_shape(format, width, height),
                                     detail::image_strides(format, height, plan->stride0, elem),
                                     plan->off0, name);
    TensorAccess::set_image(t, format, width, height, access, plan->chroma_off,
                            plan->chroma_stride);
    return t;
}

Result<TensorDyn> TensorDyn::as_image(size_t width, size_t height, PixelFormat format,
                                      std::span<const PlaneLayout> planes,
                                      std::optional<CpuAccess> access) const
{
    if (!storage_)
        return make_error(ErrorCode::InvalidArgument, "as_image of an empty tensor");
    if (chroma_ && chroma_->storage != storage_)
        return make_error(ErrorCode::NotSupported,
                          "as_image of a two-buffer image (from_planes) is not defined");
    auto info = check_image_args(width, height, format, dtype_);
    if (!info)
        return unexpected(std::move(info).error());
    const size_t elem = dtype_size(dtype_);
    auto plan = plan_image(*info, width, height, elem, planes, capacity_bytes());
    if (!plan)
        return unexpected(std::move(plan).error());

    // Same storage, same identity: a reinterpretation of the bytes, like reshape().
    TensorDyn t = *this;
    t.offset_ = offset_ + plan->off0;
    t.shape_ = image_shape(format, width, height);
    t.strides_ = detail::image_strides(format, height, plan->stride0, elem);
    TensorAccess::set_image(t, format, width, height, access.value_or(access_),
                            offset_ + plan->chroma_off, plan->chroma_stride);
    return t;
}

Result<TensorDyn> TensorDyn::from_planes(const TensorDyn& luma, const TensorDyn& chroma,
                                         PixelFormat format)
{
    const auto info = pixel_format_info(format);
    if (!info || info->layout != PixelLayout::SemiPlanar)
        return make_error(ErrorCode::InvalidArgument,
                          "from_planes composes semi-planar images (NV12, NV16, NV24), not " +
                              std::string(pixel_format_name(format)));
    if (!luma.storage_ || !chroma.storage_)
        return make_error(ErrorCode::InvalidArgument, "from_planes: a plane tensor is empty");
    if (luma.dtype_ != DType::U8 || chroma.dtype_ != DType::U8)
        return make_error(ErrorCode::NotSupported, "from_planes: planes must hold u8 samples");
    if (luma.chroma_ || chroma.chroma_)
        return make_error(ErrorCode::InvalidArgument,
                          "from_planes: each plane must be a single-plane tensor");

    const Shape& ls = luma.shape_;
    if (!(ls.size() == 2 || (ls.size() == 3 && ls[2] == 1)) || luma.strides_.back() != 1)
        return make_error(ErrorCode::InvalidShape, "luma plane must be [H, W] or [H, W, 1] u8 "
                                                   "with unit column stride, not " +
                                                       shape_string(ls));
    const size_t height = ls[0], width = ls[1];
    const size_t rows = chroma_rows(*info, height);
    const size_t crow = chroma_row_bytes(*info, width);
    const Shape& cs = chroma.shape_;
    const bool flat = cs.size() == 2 && cs[0] == rows && cs[1] == crow;
    const bool pairs = cs.size() == 3 && cs[0] == rows && cs[1] * 2 == crow && cs[2] == 2;
    if (!(flat || pairs) || chroma.strides_.back() != 1)
        return make_error(ErrorCode::InvalidShape,
                          std::string(info->name) + " " + std::to_string(width) + "x" +
                              std::to_string(height) + " needs a chroma plane of [" +
                              std::to_string(rows) + ", " + std::to_string(crow) + "] (or [" +
                              std::to_string(rows) + ", " + std::to_string(crow / 2) +
                              ", 2]), not " + shape_string(cs));

    TensorDyn t = luma;
    TensorAccess::renew_identity(t);
    t.shape_ = image_shape(format, width, height);
    t.strides_ = {luma.strides_[0], 1};
    t.is_view_ = false;
    t.format_ = format;
    t.width_ = width;
    t.height_ = height;
    t.chroma_ = ChromaPlane{chroma.storage_, chroma.offset_, size_t(chroma.strides_[0])};
    t.colorimetry_ = luma.colorimetry_;
    return t;
}

} // namespace edgetensor
