// SPDX-License-Identifier: MIT
//
// TensorDyn: a dtype-erased tensor. Cheap to copy: copies share the storage and the
// BufferIdentity; the view of it (shape, strides, window offset) is per object.

#pragma once

#include "edgetensor/colorimetry.hpp"
#include "edgetensor/compression.hpp"
#include "edgetensor/cuda.hpp"
#include "edgetensor/error.hpp"
#include "edgetensor/identity.hpp"
#include "edgetensor/pixel_format.hpp"
#include "edgetensor/tensor_map.hpp"
#include "edgetensor/types.hpp"
#include "edgetensor/unique_fd.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct EdgeTensorDesc;
struct DLManagedTensor;

namespace edgetensor
{

namespace detail
{
class Storage;
struct IdentityToken;
struct TensorAccess;
} // namespace detail

using Shape = std::vector<size_t>;

template <typename T> class Tensor;

/// Where one plane of an imported image starts in its buffer and how far apart its rows are.
/// A stride of 0 means the natural (tight) pitch of that plane.
struct PlaneLayout {
    size_t offset = 0;
    size_t stride = 0;
};

class TensorDyn
{
public:
    /// An empty tensor: no storage, no shape. Most calls on it return errors.
    TensorDyn() = default;

    /// Allocates a generic tensor. Without `memory` the chain Dma -> Shm -> Mem is walked
    /// (EDGETENSOR_FORCE_MEM=1 forces Mem); with it, only that backend is tried and its failure
    /// is returned. Shape must be non-empty with no zero dimension.
    static Result<TensorDyn> create(DType dtype, const Shape& shape,
                                    std::optional<TensorMemory> memory = {},
                                    std::string_view name = {});

    /// Allocates an image (see PixelLayout for its shape). Auto-selection walks Dma -> Mem
    /// (Shm only when asked). DMA images get a 64-byte aligned row stride in every layout.
    static Result<TensorDyn> image(size_t width, size_t height, PixelFormat format, DType dtype,
                                   CpuAccess access, std::optional<TensorMemory> memory = {},
                                   std::string_view name = {});
    /// image() with a tile-compression request (see compression.hpp): Compression::any() and
    /// exactly() need CpuAccess::None (InvalidArgument otherwise). any() records the device's
    /// scheme when the allocation is eligible and otherwise resolves linear, counted by
    /// compression_fallback_count(); exactly(s) fails with InvalidArgument when the device
    /// compresses differently and NotSupported where there is no vendor tile compression.
    static Result<TensorDyn> image(size_t width, size_t height, PixelFormat format, DType dtype,
                                   CpuAccess access, Compression compression,
                                   std::optional<TensorMemory> memory = {},
                                   std::string_view name = {});

    /// Adopts `fd` (ownership moves in; it is closed on failure too). The backend is recognised
    /// by the fd's filesystem magic: DMA_BUF_MAGIC -> Dma, TMPFS_MAGIC -> Shm, anything else is
    /// ErrorCode::UnknownBufferType carrying the magic. The shape must fit the buffer.
    static Result<TensorDyn> from_fd(UniqueFd fd, DType dtype, const Shape& shape,
                                     std::string_view name = {});

    /// Adopts `fd` as an image whose planes start at the given offsets with the given pitches
    /// (one entry per plane: 1 for packed/planar, 2 for semi-planar; empty = natural layout
    /// from offset 0). Plane offsets are import attributes of a foreign buffer, not sub-regions.
    static Result<TensorDyn> from_fd_image(UniqueFd fd, size_t width, size_t height,
                                           PixelFormat format, std::span<const PlaneLayout> planes,
                                           DType dtype = DType::U8,
                                           CpuAccess access = CpuAccess::ReadWrite,
                                           std::string_view name = {});

    /// Reinterprets this tensor's bytes as an image whose planes start at the given offsets
    /// (relative to this tensor's window) with the given pitches, as from_fd_image does for an
    /// fd. Same storage and BufferIdentity; the layout must fit capacity_bytes(). `access`
    /// declares the image's CPU access (default: this tensor's). For pools that allocate flat
    /// and lay frames out themselves (GStreamer's video alignment).
    Result<TensorDyn> as_image(size_t width, size_t height, PixelFormat format,
                               std::span<const PlaneLayout> planes,
                               std::optional<CpuAccess> access = {}) const;

    /// Composes a semi-planar image from two single-plane tensors (each keeps its own storage,
    /// fd, offset and pitch). `luma` is [H, W] or [H, W, 1] u8; `chroma` has the chroma plane's
    /// rows ([H/2, W] for Nv12, [H, W] for Nv16, [H, 2W] for Nv24, or [rows, W/2, 2]).
    static Result<TensorDyn> from_planes(const TensorDyn& luma, const TensorDyn& chroma,
                                         PixelFormat format);

    /// Validates an untrusted descriptor and adopts `fd` (DMABUF) or, for HOST descriptors,
    /// wraps nothing: HOST descriptors need an fd of a memfd/shm buffer. See tensor_desc.h.
    static Result<TensorDyn> from_desc(const EdgeTensorDesc& desc, UniqueFd fd);
    /// Describes this tensor for a foreign consumer. The handle is borrowed: valid while any
    /// tensor sharing this storage lives.
    Result<EdgeTensorDesc> describe() const;

    /// Exports a host-mappable tensor as DLPack (kDLCPU). The map and the tensor stay alive
    /// until the returned tensor's deleter runs.
    Result<DLManagedTensor*> to_dlpack(CpuAccess access = CpuAccess::ReadWrite) const;
    /// Wraps a kDLCPU DLPack tensor without copying; the producer's deleter runs exactly once,
    /// when the last tensor sharing it is dropped (also when this call fails).
    static Result<TensorDyn> from_dlpack(DLManagedTensor* managed);

    bool is_valid() const noexcept { return storage_ != nullptr; }
    DType dtype() const noexcept { return dtype_; }
    TensorMemory memory() const noexcept;
    /// Which provider made the storage: "heap", "memfd", "shm_open", "dma-heap:system",
    /// "udmabuf", "drm-prime:vgem", ...
    std::string_view provider() const noexcept;
    const std::string& name() const noexcept { return name_; }
    const Shape& shape() const noexcept { return shape_; }
    /// Byte strides per dimension (most significant first).
    const std::vector<ptrdiff_t>& strides() const noexcept { return strides_; }
    size_t ndim() const noexcept { return shape_.size(); }
    /// Elements in the logical shape.
    size_t len() const noexcept;
    /// Bytes of the logical shape (len() * element size), padding excluded.
    size_t size() const noexcept { return len() * dtype_size(dtype_); }
    /// Bytes of the allocation from this tensor's window start (>= size() for a tight tensor).
    size_t capacity_bytes() const noexcept;
    /// Byte offset of the window in the storage of plane 0.
    size_t offset() const noexcept { return offset_; }
    bool is_contiguous() const noexcept;

    // Images
    bool is_image() const noexcept { return format_ != PixelFormat::None; }
    PixelFormat format() const noexcept { return format_; }
    size_t width() const noexcept { return width_; }
    size_t height() const noexcept { return height_; }
    /// Row pitch in bytes of plane 0 for images; nullopt for non-image tensors.
    std::optional<size_t> row_stride() const noexcept;
    size_t plane_count() const noexcept { return is_image() ? (chroma_ ? 2 : 1) : 1; }
    /// Offset (from the start of its buffer) and pitch of plane `i`.
    Result<PlaneLayout> plane_layout(size_t i) const;
    /// Borrowed fd of plane `i`'s buffer (-1 for heap memory).
    int plane_fd(size_t i) const noexcept;
    const Colorimetry& colorimetry() const noexcept { return colorimetry_; }
    void set_colorimetry(const Colorimetry& c) noexcept { colorimetry_ = c; }
    /// What CPU access the buffer was declared with (generic tensors: ReadWrite).
    CpuAccess cpu_access() const noexcept { return access_; }
    /// The vendor tile compression recorded when the buffer was allocated; nullopt = linear.
    /// When set, row strides describe no meaningful linear layout (tiles are opaque).
    std::optional<CompressionScheme> compression() const noexcept;

    /// Re-points this tensor at a new image geometry, reusing its allocation when it fits.
    /// The stride is recomputed by the stride rule (a DMA tensor keeps its prior stride only
    /// when that is 64-aligned, wide enough and inside the allocation). Fails with
    /// InsufficientCapacity when the allocation is too small. Not allowed on views.
    Result<void> configure_image(size_t width, size_t height, PixelFormat format);

    BufferIdentity buffer_identity() const noexcept;
    /// Borrowed fd of the storage (-1 for heap memory).
    int fd() const noexcept { return plane_fd(0); }
    /// A new owned CLOEXEC fd of the storage. NotSupported for heap memory.
    Result<UniqueFd> clone_fd() const;
    /// (st_dev, st_ino) of plane `i`'s buffer: the kernel's stable identity of a DMA-BUF/memfd.
    Result<std::pair<uint64_t, uint64_t>> stat_identity(size_t plane = 0) const;

    /// Zero-copy sub-rectangle of the leading spatial frame (images: pixels; other tensors of
    /// rank >= 2: y along dim 0, x along dim 1). Shares storage and identity; composes.
    Result<TensorDyn> view(const Region& region) const;
    /// Element `n` along the leading dimension; shares storage and identity.
    Result<TensorDyn> batch(size_t n) const;
    /// Same element count, contiguous tensors only. Drops image-ness.
    Result<void> reshape(const Shape& shape);
    /// Any shape whose bytes fit capacity_bytes(); contiguous strides; drops image-ness.
    Result<void> set_logical_shape(const Shape& shape);

    /// Maps for CPU access. None is refused (InvalidArgument). Access beyond cpu_access()
    /// works best-effort, warns once per buffer and counts in unplanned_cpu_access_count().
    Result<RawMap> map_raw(CpuAccess access) const;
    /// Maps the whole allocation of plane 0's buffer, bytes [0, offset() + capacity_bytes()),
    /// whatever this tensor's window, shape or planes: for adapters that expose the buffer as
    /// one flat byte range (a GstMemory). The storage's persistent mapping is reused (no mmap
    /// per call) and DMA-BUFs are bracketed with DMA_BUF_IOCTL_SYNC as by map_raw(); the same
    /// access rules apply.
    Result<RawMap> map_allocation(CpuAccess access) const;
    Result<TensorMap<uint8_t>> map_with(CpuAccess access) const;
    Result<TensorMap<uint8_t>> map() const { return map_with(CpuAccess::ReadWrite); }
    Result<TensorMap<const uint8_t>> map_read() const;
    Result<TensorMap<uint8_t>> map_write() const { return map_with(CpuAccess::Write); }
    Result<TensorMap<uint8_t>> map_mut() const { return map_with(CpuAccess::ReadWrite); }

    /// A CUDA device pointer to this tensor's window (see edgetensor/cuda.hpp): PBO tensors are
    /// mapped through their GL thread, DMA-BUF tensors imported as CUDA external memory, and
    /// shared-memory and heap tensors of 64 KiB or more registered in place, once per storage.
    /// Errors: NotSupported (a heap tensor under 64 KiB, or a semi-planar image whose planes
    /// live in two buffers), Unavailable (no CUDA runtime or device: the reason),
    /// InvalidArgument (an empty tensor; a PBO mapped for the CPU), Disconnected (a PBO whose GL
    /// context has shut down), Device or AllocationFailed (CUDA refused: its error is in the
    /// message), Io (dup() failed).
    Result<CudaMap> cuda_map() const;

    /// The typed tensor sharing this one's storage and identity; DTypeMismatch unless T
    /// matches dtype(). Defined in tensor.hpp.
    template <typename T> Result<Tensor<T>> as() const;

    /// Typed map; DTypeMismatch unless T matches dtype().
    template <typename T> Result<TensorMap<T>> map_as(CpuAccess access) const
    {
        using E = std::remove_const_t<T>;
        if (dtype_of_v<E> != dtype_)
            return dtype_mismatch(dtype_of_v<E>);
        auto raw = map_raw(access);
        if (!raw)
            return unexpected(std::move(raw).error());
        return TensorMap<T>(std::move(*raw));
    }

private:
    friend struct detail::TensorAccess;
    Unexpected dtype_mismatch(DType wanted) const;
    /// The checks every map shares (direction, emptiness, the unplanned-access warning).
    Result<void> check_map(CpuAccess access) const;
    /// Bytes from the window's first byte to its last addressed one, in plane 0's buffer (a
    /// semi-planar image whose chroma shares that buffer reaches the end of the chroma plane).
    size_t window_bytes() const noexcept;

    struct ChromaPlane {
        std::shared_ptr<detail::Storage> storage;
        size_t offset = 0;
        size_t stride = 0;
    };

    std::shared_ptr<detail::Storage> storage_;
    std::shared_ptr<const detail::IdentityToken> identity_;
    DType dtype_ = DType::U8;
    Shape shape_;
    std::vector<ptrdiff_t> strides_;
    size_t offset_ = 0;
    std::string name_;
    CpuAccess access_ = CpuAccess::ReadWrite;
    PixelFormat format_ = PixelFormat::None;
    size_t width_ = 0;
    size_t height_ = 0;
    bool is_view_ = false;
    std::optional<ChromaPlane> chroma_;
    Colorimetry colorimetry_;
};

/// True when at least one DMA-BUF provider can allocate on this host.
bool is_dma_available() noexcept;
/// True when memfd_create or shm_open works.
bool is_shm_available() noexcept;

} // namespace edgetensor
