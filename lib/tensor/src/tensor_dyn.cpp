// SPDX-License-Identifier: MIT
//
// TensorDyn: allocation, identity, and the zero-copy view operations (view, batch, reshape,
// set_logical_shape). Image construction lives in tensor_image.cpp, fd import in
// tensor_import.cpp, CPU maps in tensor_map.cpp.

#include "edgetensor/tensor_dyn.hpp"

#include "fd_identity.hpp"
#include "log.hpp"
#include "platform_buffer.hpp"
#include "tensor_internal.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace edgetensor
{
namespace detail
{
namespace
{

std::atomic<uint64_t> g_next_identity{1};

} // namespace

std::shared_ptr<const IdentityToken> mint_identity()
{
    return std::make_shared<const IdentityToken>(
        IdentityToken{g_next_identity.fetch_add(1, std::memory_order_relaxed)});
}

bool force_mem() noexcept
{
    const char* v = std::getenv("EDGETENSOR_FORCE_MEM");
    return v && std::strcmp(v, "1") == 0;
}

std::optional<size_t> checked_len(const Shape& shape)
{
    if (shape.empty())
        return std::nullopt;
    size_t n = 1;
    for (size_t d : shape) {
        if (d == 0 || n > std::numeric_limits<size_t>::max() / d)
            return std::nullopt;
        n *= d;
    }
    return n;
}

std::vector<ptrdiff_t> contiguous_strides(const Shape& shape, size_t elem)
{
    std::vector<ptrdiff_t> s(shape.size());
    ptrdiff_t acc = static_cast<ptrdiff_t>(elem);
    for (size_t i = shape.size(); i-- > 0;) {
        s[i] = acc;
        acc *= static_cast<ptrdiff_t>(shape[i]);
    }
    return s;
}

size_t strided_extent(const Shape& shape, const std::vector<ptrdiff_t>& strides, size_t elem)
{
    if (shape.empty())
        return 0;
    size_t extent = elem;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0)
            return 0;
        extent += (shape[i] - 1) * static_cast<size_t>(strides[i]);
    }
    return extent;
}

std::string shape_string(const Shape& shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i)
            s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

std::vector<ptrdiff_t> image_strides(PixelFormat format, size_t height, size_t row_stride,
                                     size_t elem)
{
    const auto info = pixel_format_info(format);
    const auto rs = static_cast<ptrdiff_t>(row_stride);
    const auto e = static_cast<ptrdiff_t>(elem);
    switch (info->layout) {
    case PixelLayout::Packed:
        return {rs, static_cast<ptrdiff_t>(info->bytes_per_pixel_plane0) * e, e};
    case PixelLayout::Planar:
        return {rs * static_cast<ptrdiff_t>(height), rs, e};
    case PixelLayout::SemiPlanar:
        return {rs, e};
    }
    return {};
}

namespace
{
// TensorMemory::Dma is the platform buffer where a platform provider exists (Android), else
// the Linux DMA-BUF chain.
StorageResult allocate_dma_or_platform(const AllocRequest& req)
{
    if (const PlatformBufferOps* ops = platform_buffer_ops())
        return ops->allocate_bytes(req);
    return allocate_dma(req);
}
} // namespace

StorageResult allocate_storage(const AllocRequest& req, std::optional<TensorMemory> memory,
                               bool image)
{
    if (memory) {
        switch (*memory) {
        case TensorMemory::Mem:
            return allocate_mem(req);
        case TensorMemory::Shm:
            return allocate_shm(req);
        case TensorMemory::Dma: {
            auto r = allocate_dma_or_platform(req);
            if (!r)
                return make_error(r.error().code(),
                                  "TensorMemory::Dma was requested: " + r.error().message());
            return r;
        }
        case TensorMemory::Pbo:
            return make_error(ErrorCode::NotSupported,
                              "TensorMemory::Pbo tensors are created by a GL backend, not "
                              "allocated by the core");
        }
        return make_error(ErrorCode::InvalidArgument, "unknown TensorMemory value");
    }
    if (force_mem()) {
        ET_LOG_DEBUG("alloc", "EDGETENSOR_FORCE_MEM=1: using heap memory");
        return allocate_mem(req);
    }
    auto dma = allocate_dma_or_platform(req);
    if (dma)
        return dma;
    ET_LOG_DEBUG("alloc", "no DMA-BUF for %zu bytes (%s)", req.bytes,
                 dma.error().message().c_str());
    if (!image) {
        auto shm = allocate_shm(req);
        if (shm)
            return shm;
        ET_LOG_DEBUG("alloc", "no shared memory (%s); using heap", shm.error().message().c_str());
    }
    return allocate_mem(req);
}

TensorDyn TensorAccess::wrap(std::shared_ptr<Storage> storage, DType dtype, Shape shape,
                             std::vector<ptrdiff_t> strides, size_t offset, std::string_view name)
{
    TensorDyn t;
    t.identity_ = mint_identity();
    t.access_ = storage->declared_access();
    t.storage_ = std::move(storage);
    t.dtype_ = dtype;
    t.strides_ =
        strides.empty() ? contiguous_strides(shape, dtype_size(dtype)) : std::move(strides);
    t.shape_ = std::move(shape);
    t.offset_ = offset;
    t.name_ = name.empty() ? "tensor-" + std::to_string(t.identity_->id) : std::string(name);
    return t;
}

void TensorAccess::renew_identity(TensorDyn& t)
{
    t.identity_ = mint_identity();
}

void TensorAccess::adopt_identity(TensorDyn& t, std::shared_ptr<const IdentityToken> token)
{
    t.identity_ = std::move(token);
}

void TensorAccess::set_image(TensorDyn& t, PixelFormat format, size_t width, size_t height,
                             CpuAccess access, size_t chroma_offset, size_t chroma_stride)
{
    t.format_ = format;
    t.width_ = width;
    t.height_ = height;
    t.access_ = access;
    const auto info = pixel_format_info(format);
    if (info && info->layout == PixelLayout::SemiPlanar)
        t.chroma_ = TensorDyn::ChromaPlane{t.storage_, chroma_offset, chroma_stride};
    else
        t.chroma_.reset();
}

} // namespace detail

using detail::checked_len;
using detail::shape_string;

Result<TensorDyn> TensorDyn::create(DType dtype, const Shape& shape,
                                    std::optional<TensorMemory> memory, std::string_view name)
{
    const auto n = checked_len(shape);
    if (!n)
        return make_error(ErrorCode::InvalidShape,
                          "tensor shape " + shape_string(shape) +
                              " is invalid: it must be non-empty, without zero dimensions, and "
                              "its element count must fit in size_t");
    const size_t elem = dtype_size(dtype);
    if (*n > std::numeric_limits<size_t>::max() / elem)
        return make_error(ErrorCode::InvalidShape,
                          "tensor shape " + shape_string(shape) + " overflows size_t bytes");
    auto storage = detail::allocate_storage({*n * elem, name, CpuAccess::ReadWrite}, memory, false);
    if (!storage)
        return unexpected(std::move(storage).error());
    TensorDyn t = detail::TensorAccess::wrap(std::move(*storage), dtype, shape, {}, 0, name);
    detail::intern_platform_identity(t);
    return t;
}

TensorMemory TensorDyn::memory() const noexcept
{
    return storage_ ? storage_->memory() : TensorMemory::Mem;
}

std::string_view TensorDyn::provider() const noexcept
{
    return storage_ ? storage_->provider() : std::string_view("none");
}

size_t TensorDyn::len() const noexcept
{
    if (shape_.empty())
        return 0;
    size_t n = 1;
    for (size_t d : shape_)
        n *= d;
    return n;
}

size_t TensorDyn::capacity_bytes() const noexcept
{
    if (!storage_ || storage_->capacity() < offset_)
        return 0;
    return storage_->capacity() - offset_;
}

bool TensorDyn::is_contiguous() const noexcept
{
    return strides_ == detail::contiguous_strides(shape_, dtype_size(dtype_));
}

std::optional<size_t> TensorDyn::row_stride() const noexcept
{
    if (!is_image() || strides_.empty())
        return std::nullopt;
    const auto info = pixel_format_info(format_);
    const size_t row_dim = info->layout == PixelLayout::Planar ? 1 : 0;
    return static_cast<size_t>(strides_[row_dim]);
}

Result<PlaneLayout> TensorDyn::plane_layout(size_t i) const
{
    if (i == 0)
        return PlaneLayout{offset_,
                           row_stride().value_or(strides_.empty() ? 0 : size_t(strides_[0]))};
    if (i == 1 && chroma_)
        return PlaneLayout{chroma_->offset, chroma_->stride};
    return make_error(ErrorCode::InvalidArgument, "tensor has no plane " + std::to_string(i) +
                                                      " (it has " + std::to_string(plane_count()) +
                                                      ")");
}

int TensorDyn::plane_fd(size_t i) const noexcept
{
    if (i == 0)
        return storage_ ? storage_->fd() : -1;
    if (i == 1 && chroma_ && chroma_->storage)
        return chroma_->storage->fd();
    return -1;
}

BufferIdentity TensorDyn::buffer_identity() const noexcept
{
    if (!identity_)
        return BufferIdentity();
    return BufferIdentity(identity_->id, std::weak_ptr<const void>(identity_));
}

Result<UniqueFd> TensorDyn::clone_fd() const
{
    const int fd = plane_fd(0);
    if (fd < 0)
        return make_error(ErrorCode::NotSupported,
                          "tensor '" + name_ + "' lives in " + std::string(memory_name(memory())) +
                              " memory, which has no fd; allocate it with TensorMemory::Shm or "
                              "TensorMemory::Dma to share it");
    UniqueFd dup = UniqueFd::dup(fd);
    if (!dup)
        return unexpected(Error::io(errno, "duplicating the tensor's fd failed"));
    return dup;
}

Result<std::pair<uint64_t, uint64_t>> TensorDyn::stat_identity(size_t plane) const
{
    const int fd = plane_fd(plane);
    if (fd < 0)
        return make_error(ErrorCode::NotSupported, "plane " + std::to_string(plane) +
                                                       " of tensor '" + name_ +
                                                       "' has no fd, so no kernel identity");
    auto id = detail::fd_identity(fd);
    if (!id)
        return unexpected(std::move(id).error());
    return std::pair<uint64_t, uint64_t>{id->dev, id->ino};
}

Result<TensorDyn> TensorDyn::view(const Region& r) const
{
    if (!storage_)
        return make_error(ErrorCode::InvalidArgument, "view of an empty tensor");
    if (r.width == 0 || r.height == 0)
        return make_error(ErrorCode::InvalidArgument, "view region has zero width or height");

    size_t frame_w = 0, frame_h = 0;
    if (is_image()) {
        frame_w = width_;
        frame_h = height_;
    } else {
        if (shape_.size() < 2)
            return make_error(ErrorCode::InvalidShape,
                              "view needs a tensor of rank >= 2 (rows, columns, ...); this one "
                              "has shape " +
                                  shape_string(shape_));
        frame_h = shape_[0];
        frame_w = shape_[1];
    }
    // Subtraction form: x + width can overflow, never clamp.
    if (r.x >= frame_w || r.width > frame_w - r.x || r.y >= frame_h || r.height > frame_h - r.y)
        return make_error(ErrorCode::RegionOutOfBounds,
                          "region {x=" + std::to_string(r.x) + ", y=" + std::to_string(r.y) +
                              ", w=" + std::to_string(r.width) + ", h=" + std::to_string(r.height) +
                              "} does not fit in the " + std::to_string(frame_w) + "x" +
                              std::to_string(frame_h) + " frame");

    TensorDyn v = *this;
    v.is_view_ = true;
    if (!is_image()) {
        v.offset_ += r.y * size_t(strides_[0]) + r.x * size_t(strides_[1]);
        v.shape_[0] = r.height;
        v.shape_[1] = r.width;
        return v;
    }

    const auto info = pixel_format_info(format_);
    switch (info->layout) {
    case PixelLayout::Packed:
        if (r.x % info->chroma_h_sub != 0 || r.width % info->chroma_h_sub != 0)
            return make_error(
                ErrorCode::InvalidArgument,
                std::string(info->name) +
                    " views must start and end on a 2-pixel boundary (shared chroma)");
        v.offset_ += r.y * size_t(strides_[0]) + r.x * size_t(strides_[1]);
        v.shape_ = {r.height, r.width, shape_[2]};
        break;
    case PixelLayout::Planar:
        v.offset_ += r.y * size_t(strides_[1]) + r.x * size_t(strides_[2]);
        v.shape_ = {shape_[0], r.height, r.width};
        break;
    case PixelLayout::SemiPlanar:
        if (r.x % info->chroma_h_sub != 0 || r.y % info->chroma_v_sub != 0)
            return make_error(ErrorCode::InvalidArgument,
                              std::string(info->name) + " views must start on a chroma sample (x " +
                                  (info->chroma_h_sub == 2 ? "even" : "any") + ", y " +
                                  (info->chroma_v_sub == 2 ? "even" : "any") + ")");
        v.offset_ += r.y * size_t(strides_[0]) + r.x;
        v.chroma_->offset +=
            (r.y / info->chroma_v_sub) * chroma_->stride + (r.x / info->chroma_h_sub) * 2;
        v.shape_ = image_shape(format_, r.width, r.height);
        break;
    }
    v.width_ = r.width;
    v.height_ = r.height;
    return v;
}

Result<TensorDyn> TensorDyn::batch(size_t n) const
{
    if (!storage_)
        return make_error(ErrorCode::InvalidArgument, "batch of an empty tensor");
    if (shape_.size() < 2)
        return make_error(ErrorCode::InvalidShape, "batch needs a leading N dimension; shape " +
                                                       shape_string(shape_) + " has rank " +
                                                       std::to_string(shape_.size()));
    if (chroma_)
        return make_error(ErrorCode::NotSupported,
                          "batch of a semi-planar image is not defined; use view()");
    if (n >= shape_[0])
        return make_error(ErrorCode::BatchIndexOutOfBounds,
                          "batch index " + std::to_string(n) +
                              " is out of bounds for N = " + std::to_string(shape_[0]));
    TensorDyn b = *this;
    b.offset_ += n * size_t(strides_[0]);
    b.shape_.erase(b.shape_.begin());
    b.strides_.erase(b.strides_.begin());
    b.is_view_ = true;
    b.format_ = PixelFormat::None;
    b.width_ = b.height_ = 0;
    return b;
}

Result<void> TensorDyn::reshape(const Shape& shape)
{
    if (!storage_)
        return make_error(ErrorCode::InvalidArgument, "reshape of an empty tensor");
    const auto n = checked_len(shape);
    if (!n || *n != len())
        return make_error(ErrorCode::InvalidShape, "cannot reshape " + shape_string(shape_) + " (" +
                                                       std::to_string(len()) + " elements) to " +
                                                       shape_string(shape) +
                                                       ": the element count must stay the same");
    if (!is_contiguous() || (chroma_ && chroma_->storage != storage_))
        return make_error(ErrorCode::NotSupported,
                          "reshape needs a contiguous tensor; " + shape_string(shape_) +
                              " has padded or strided rows (use set_logical_shape on the whole "
                              "allocation instead)");
    shape_ = shape;
    strides_ = detail::contiguous_strides(shape_, dtype_size(dtype_));
    format_ = PixelFormat::None;
    width_ = height_ = 0;
    chroma_.reset();
    return {};
}

Result<void> TensorDyn::set_logical_shape(const Shape& shape)
{
    if (!storage_)
        return make_error(ErrorCode::InvalidArgument, "set_logical_shape of an empty tensor");
    const auto n = checked_len(shape);
    if (!n || *n > std::numeric_limits<size_t>::max() / dtype_size(dtype_))
        return make_error(ErrorCode::InvalidShape, "shape " + shape_string(shape) + " is invalid");
    if (chroma_ && chroma_->storage != storage_)
        return make_error(ErrorCode::NotSupported,
                          "set_logical_shape of a two-buffer image (from_planes) is not defined");
    const size_t bytes = *n * dtype_size(dtype_);
    if (bytes > capacity_bytes())
        return make_error(ErrorCode::InsufficientCapacity,
                          "shape " + shape_string(shape) + " needs " + std::to_string(bytes) +
                              " bytes but the allocation holds " +
                              std::to_string(capacity_bytes()) + " from this window");
    shape_ = shape;
    strides_ = detail::contiguous_strides(shape_, dtype_size(dtype_));
    format_ = PixelFormat::None;
    width_ = height_ = 0;
    chroma_.reset();
    return {};
}

Unexpected TensorDyn::dtype_mismatch(DType wanted) const
{
    return make_error(ErrorCode::DTypeMismatch,
                      "tensor '" + name_ + "' holds " + std::string(dtype_name(dtype_)) +
                          " elements, not " + std::string(dtype_name(wanted)));
}

bool is_dma_available() noexcept
{
    if (const detail::PlatformBufferOps* ops = detail::platform_buffer_ops())
        return ops->available();
    return detail::dma_available();
}

} // namespace edgetensor
