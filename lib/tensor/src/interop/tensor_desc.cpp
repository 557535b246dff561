// SPDX-License-Identifier: MIT
//
// TensorDyn::describe() and TensorDyn::from_desc(): the EdgeTensorDesc C ABI.
// from_desc treats the descriptor as hostile: every field is checked before any system call,
// and the fd is classified by its filesystem magic and sized by the kernel, never trusted.

#include "edgetensor/tensor_desc.h"

#include "interop/layout_check.hpp"
#include "storage.hpp"
#include "tensor_access.hpp"

#include "edgetensor/pixel_format.hpp"
#include "edgetensor/tensor_dyn.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace edgetensor
{
namespace
{

using detail::format_dims;

constexpr uint32_t kDmaBufMagic = 0x444d4142;
constexpr uint32_t kTmpfsMagic = 0x01021994;
constexpr const char* kImportName = "desc-import";

Unexpected bad(const std::string& msg)
{
    return make_error(ErrorCode::InvalidDescriptor, "invalid tensor descriptor: " + msg);
}

const char* kind_name(uint32_t kind)
{
    switch (kind) {
    case EDGETENSOR_KIND_HOST:
        return "HOST";
    case EDGETENSOR_KIND_DMABUF:
        return "DMABUF";
    case EDGETENSOR_KIND_IOSURFACE:
        return "IOSURFACE";
    case EDGETENSOR_KIND_PBO:
        return "PBO";
    case EDGETENSOR_KIND_CUDA_DEVICE:
        return "CUDA_DEVICE";
    default:
        return "unknown";
    }
}

std::string hex32(uint32_t v)
{
    char s[16];
    std::snprintf(s, sizeof(s), "0x%08x", v);
    return s;
}

std::string fourcc_string(uint32_t fourcc)
{
    char s[32];
    char c[4];
    for (int i = 0; i < 4; ++i) {
        const char ch = char((fourcc >> (8 * i)) & 0xff);
        c[i] = (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    }
    std::snprintf(s, sizeof(s), "'%c%c%c%c' (0x%08x)", c[0], c[1], c[2], c[3], fourcc);
    return s;
}

/// The buffer behind an fd, as the kernel reports it.
struct FdFacts {
    uint32_t magic = 0;
    size_t size = 0;
};

Result<FdFacts> inspect_fd(int fd)
{
    struct statfs sfs {
    };
    if (::fstatfs(fd, &sfs) != 0)
        return unexpected(Error::io(errno, "fstatfs of the descriptor's fd failed"));
    FdFacts f;
    f.magic = uint32_t(sfs.f_type);
    struct stat st {
    };
    if (::fstat(fd, &st) != 0)
        return unexpected(Error::io(errno, "fstat of the descriptor's fd failed"));
    if (st.st_size > 0) {
        f.size = size_t(st.st_size);
    } else if (f.magic == kDmaBufMagic) {
        // Kernels before 5.x do not fill st_size for a dma-buf; its llseek reports the size.
        const off_t end = ::lseek(fd, 0, SEEK_END);
        if (end < 0)
            return unexpected(Error::io(errno, "lseek(SEEK_END) on the dma-buf fd failed"));
        (void)::lseek(fd, 0, SEEK_SET);
        f.size = size_t(end);
    }
    return f;
}

/// Finds the (width, height) whose image_shape() is exactly `shape`. Dimensions here are
/// bounded by the buffer's real size, so the arithmetic cannot overflow.
bool derive_image_geometry(PixelFormat format, const Shape& shape, size_t* width, size_t* height)
{
    if (shape.size() < 2)
        return false;
    std::array<size_t, 6> ws{};
    std::array<size_t, 8> hs{};
    size_t nw = 0, nh = 0;
    auto add = [](auto& arr, size_t& n, size_t v) {
        if (v > 0 && n < arr.size())
            arr[n++] = v;
    };
    for (size_t d = 0; d < shape.size() && d < 3; ++d) {
        add(ws, nw, shape[d]);
        add(ws, nw, shape[d] / 2);
        add(hs, nh, shape[d]);
        add(hs, nh, shape[d] / 2);
    }
    add(hs, nh, shape[0] / 3);
    add(hs, nh, shape[0] * 2 / 3);
    add(hs, nh, (shape[0] * 2 + 2) / 3);
    for (size_t i = 0; i < nh; ++i)
        for (size_t j = 0; j < nw; ++j)
            if (image_shape(format, ws[j], hs[i]) == shape) {
                *width = ws[j];
                *height = hs[i];
                return true;
            }
    return false;
}

/// Imports an image descriptor through the core's own image path, then insists that the
/// core's idea of the layout is exactly what the descriptor says.
Result<TensorDyn> import_image(const EdgeTensorDesc& desc, UniqueFd fd, PixelFormat format,
                               DType dtype, const Shape& shape,
                               const std::vector<ptrdiff_t>& strides)
{
    const auto info = pixel_format_info(format);
    size_t width = 0, height = 0;
    if (!info || !derive_image_geometry(format, shape, &width, &height))
        return bad("shape " + format_dims(std::span<const uint64_t>(desc.shape, desc.ndim)) +
                   " is not the shape of a " + std::string(pixel_format_name(format)) + " image");
    const size_t row_dim = info->layout == PixelLayout::Planar ? 1 : 0;
    // One plane entry: a semi-planar chroma plane then sits where the contiguous layout puts
    // it (right after luma, at the pitch the shape implies), which is what describe() emits.
    const PlaneLayout plane0{0, size_t(strides[row_dim])};
    auto t = TensorDyn::from_fd_image(std::move(fd), width, height, format,
                                      std::span<const PlaneLayout>(&plane0, 1), dtype,
                                      CpuAccess::ReadWrite, kImportName);
    if (!t)
        return unexpected(std::move(t).error());
    if (t->shape() != shape || t->strides() != strides) {
        const std::vector<int64_t> want(t->strides().begin(), t->strides().end());
        return bad("strides " + format_dims(std::span<const int64_t>(desc.strides, desc.ndim)) +
                   " are not a " + std::string(pixel_format_name(format)) + " " +
                   std::to_string(width) + "x" + std::to_string(height) +
                   " image layout (with that row pitch edgetensor expects " +
                   format_dims(std::span<const int64_t>(want)) + ")");
    }
    return t;
}

} // namespace

Result<EdgeTensorDesc> TensorDyn::describe() const
{
    if (!is_valid())
        return make_error(ErrorCode::InvalidArgument, "cannot describe an empty tensor");
    if (ndim() == 0 || ndim() > EDGETENSOR_DESC_MAX_NDIM)
        return make_error(ErrorCode::NotSupported,
                          "a tensor descriptor carries 1 to 8 dimensions; this tensor has " +
                              std::to_string(ndim()));
    const auto& storage = detail::TensorAccess::storage(*this);
    EdgeTensorDesc d = edgetensor_desc_init();
    if (storage->hardware_buffer())
        return make_error(ErrorCode::NotSupported,
                          "tensor '" + name_ +
                              "' is an AHardwareBuffer, which has no fd and no TensorDesc kind; "
                              "hand over hardware_buffer_ptr() instead");

    switch (storage->memory()) {
    case TensorMemory::Dma:
    case TensorMemory::Shm:
        // The consumer maps the fd from byte 0 and the descriptor has no offset field.
        if (offset_ != 0)
            return make_error(ErrorCode::NotSupported,
                              "this tensor's window starts " + std::to_string(offset_) +
                                  " bytes into its buffer, and a descriptor can only say where "
                                  "the fd's data starts; describe the parent tensor and pass "
                                  "the region separately");
        d.kind =
            storage->memory() == TensorMemory::Dma ? EDGETENSOR_KIND_DMABUF : EDGETENSOR_KIND_HOST;
        d.handle = storage->fd();
        break;
    case TensorMemory::Mem:
        d.kind = EDGETENSOR_KIND_HOST;
        d.handle = -1;
        break;
    case TensorMemory::Pbo:
    default:
        return make_error(ErrorCode::NotSupported, "PBO tensors cannot be described yet");
    }

    // Host-addressable: heap storage, and shm storage, which stays mapped for its whole life
    // (shm_storage.cpp), so the address obeys the same borrow contract as the handle.
    if (storage->memory() != TensorMemory::Dma && storage->declared_access() != CpuAccess::None) {
        auto base = storage->begin_cpu_access(CpuAccess::Read);
        if (base) {
            d.ptr = *base + offset_;
            storage->end_cpu_access(CpuAccess::Read);
        }
    }

    if (is_image() && plane_count() == 2) {
        // A descriptor has one handle: the chroma plane must follow luma in the same buffer,
        // at the pitch the shape implies, exactly where the shape says.
        if (!detail::chroma_plane_is_contiguous(*this))
            return make_error(ErrorCode::NotSupported,
                              "this semi-planar image keeps its chroma plane in a separate buffer "
                              "or at a gap; a descriptor carries one handle, so describe each "
                              "plane's tensor on its own");
    }

    d.ndim = uint32_t(ndim());
    d.dtype = uint32_t(dtype_);
    for (size_t i = 0; i < ndim(); ++i) {
        d.shape[i] = shape_[i];
        d.strides[i] = strides_[i];
    }
    d.format = uint32_t(format_);
    d.fourcc = is_image() ? to_drm_fourcc(format_) : 0;
    d.colorimetry = colorimetry_.pack();
    d.flags = 0;
    d.capacity = capacity_bytes();
    d.sync = 0;
    return d;
}

Result<TensorDyn> TensorDyn::from_desc(const EdgeTensorDesc& desc, UniqueFd fd)
{
    // Field checks first: they cost no system call, and most garbage fails here.
    if (desc.version != EDGETENSOR_DESC_VERSION)
        return bad("version " + std::to_string(desc.version) +
                   " is not understood (this build reads version " +
                   std::to_string(EDGETENSOR_DESC_VERSION) + ")");
    if (desc.kind > EDGETENSOR_KIND_CUDA_DEVICE)
        return bad("kind " + std::to_string(desc.kind) + " is not a known kind");
    if (desc.kind != EDGETENSOR_KIND_HOST && desc.kind != EDGETENSOR_KIND_DMABUF)
        return make_error(ErrorCode::NotSupported,
                          std::string("descriptors of kind ") + kind_name(desc.kind) +
                              " cannot be imported here (only HOST and DMABUF)");
    if (desc.flags & ~uint32_t(EDGETENSOR_FLAGS_KNOWN))
        return bad("flags " + hex32(desc.flags) + " has unknown bits set");
    if (desc.flags & EDGETENSOR_FLAG_SYNC_PRESENT) {
        if (desc.kind == EDGETENSOR_KIND_HOST)
            return bad("SYNC_PRESENT is set on a HOST descriptor, which has no fence flavour");
        // The fence is the producer's fd number; closing or waiting on a number from an
        // untrusted descriptor could touch an unrelated fd of this process.
        return make_error(ErrorCode::NotSupported,
                          "the descriptor carries a fence (SYNC_PRESENT); this build imports only "
                          "idle buffers: the producer must wait for its work before describing");
    }
    if (desc.sync != 0)
        return bad("sync is " + std::to_string(desc.sync) + " but SYNC_PRESENT is clear");
    if (desc.ndim == 0 || desc.ndim > EDGETENSOR_DESC_MAX_NDIM)
        return bad("ndim " + std::to_string(desc.ndim) + " is outside 1..8");
    DType dtype{};
    if (!dtype_from_code(desc.dtype, &dtype))
        return bad("dtype code " + std::to_string(desc.dtype) + " is not a known element type");
    PixelFormat format = PixelFormat::None;
    if (!pixel_format_from_code(desc.format, &format))
        return bad("format code " + std::to_string(desc.format) + " is not a known pixel format");
    if (format != PixelFormat::None) {
        if (desc.fourcc != 0 && desc.fourcc != to_drm_fourcc(format))
            return bad("fourcc " + fourcc_string(desc.fourcc) + " contradicts format " +
                       std::string(pixel_format_name(format)) + " (fourcc " +
                       fourcc_string(to_drm_fourcc(format)) + ")");
    } else if (desc.fourcc != 0) {
        format = from_drm_fourcc(desc.fourcc);
        if (format == PixelFormat::None)
            return make_error(ErrorCode::NotSupported,
                              "the descriptor's fourcc " + fourcc_string(desc.fourcc) +
                                  " is not a pixel format edgetensor knows, and format is 0");
    }
    Colorimetry colorimetry;
    if (!Colorimetry::unpack(desc.colorimetry, &colorimetry))
        return bad("colorimetry " + hex32(desc.colorimetry) + " has an unknown axis code");

    const std::span<const uint64_t> dshape(desc.shape, desc.ndim);
    const std::span<const int64_t> dstrides(desc.strides, desc.ndim);
    auto layout = detail::check_layout(dshape, dstrides, dtype_size(dtype),
                                       ErrorCode::InvalidDescriptor, "invalid tensor descriptor");
    if (!layout)
        return unexpected(std::move(layout).error());
    if (desc.capacity != 0 && desc.capacity < layout->extent)
        return bad("shape " + format_dims(dshape) + " with strides " + format_dims(dstrides) +
                   " addresses " + std::to_string(layout->extent) + " bytes but capacity is " +
                   std::to_string(desc.capacity));

    // The handle is the producer's fd number, meaningless here (fds are renumbered when they
    // cross processes); what must agree is whether there is a buffer fd at all.
    if (desc.handle < -1)
        return bad("handle " + std::to_string(desc.handle) + " is neither an fd nor -1");
    if (desc.handle == -1) {
        if (fd)
            return bad("handle is -1 (no buffer fd) but an fd was passed with it");
        if (desc.kind == EDGETENSOR_KIND_HOST && desc.ptr)
            return make_error(ErrorCode::NotSupported,
                              "a HOST descriptor with only a pointer cannot be imported: its "
                              "lifetime belongs to the producer; share a memfd or use DLPack");
        return bad(std::string("a ") + kind_name(desc.kind) +
                   " descriptor needs a buffer fd and has none (handle -1)");
    }
    if (!fd)
        return make_error(ErrorCode::InvalidArgument,
                          "the descriptor names handle " + std::to_string(desc.handle) +
                              " but no fd was passed; pass the fd received with it");

    // Now the kernel's view of the fd.
    auto facts = inspect_fd(fd.get());
    if (!facts)
        return unexpected(std::move(facts).error());
    if (facts->magic == kDmaBufMagic) {
        if (desc.kind != EDGETENSOR_KIND_DMABUF)
            return bad("kind is HOST but the fd is a DMA-BUF");
    } else if (facts->magic == kTmpfsMagic) {
        if (desc.kind != EDGETENSOR_KIND_HOST)
            return bad("kind is DMABUF but the fd is a tmpfs (memfd/shm) buffer");
    } else {
        char s[160];
        std::snprintf(s, sizeof(s),
                      "the descriptor's fd is neither a DMA-BUF nor a memfd/shm buffer "
                      "(filesystem magic 0x%08x)",
                      facts->magic);
        return unexpected(Error::unknown_buffer_type(facts->magic, s));
    }
    if (desc.capacity > facts->size)
        return bad("capacity claims " + std::to_string(desc.capacity) +
                   " bytes but the buffer holds " + std::to_string(facts->size));
    if (layout->extent > facts->size)
        return bad("shape " + format_dims(dshape) + " with strides " + format_dims(dstrides) +
                   " addresses " + std::to_string(layout->extent) + " bytes but the buffer holds " +
                   std::to_string(facts->size));

    Shape shape(dshape.begin(), dshape.end());
    std::vector<ptrdiff_t> strides(dstrides.begin(), dstrides.end());
    // Unit dimensions may carry any stride; normalise them so the core sees one layout.
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i] == 1 && (strides[i] < 0 || size_t(strides[i]) > layout->extent))
            strides[i] = ptrdiff_t(layout->extent);

    TensorDyn t;
    if (format != PixelFormat::None) {
        auto r = import_image(desc, std::move(fd), format, dtype, shape, strides);
        if (!r)
            return unexpected(std::move(r).error());
        t = std::move(*r);
    } else {
        // Import only what the producer lends: capacity bounds set_logical_shape later.
        const size_t lent = desc.capacity != 0 ? size_t(desc.capacity) : facts->size;
        auto storage = facts->magic == kDmaBufMagic
                           ? detail::import_dma(std::move(fd), lent, CpuAccess::ReadWrite)
                           : detail::import_shm(std::move(fd), lent, CpuAccess::ReadWrite);
        if (!storage)
            return unexpected(std::move(storage).error());
        t = detail::TensorAccess::wrap(std::move(*storage), dtype, std::move(shape),
                                       std::move(strides), 0, kImportName);
    }
    t.set_colorimetry(colorimetry);
    return t;
}

} // namespace edgetensor
