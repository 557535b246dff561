// SPDX-License-Identifier: MIT
//
// import_fd_planes (edgetensor/fd_planes.hpp).

#include "edgetensor/fd_planes.hpp"

#include "edgetensor/unique_fd.hpp"

#include <cerrno>
#include <string>
#include <vector>

namespace edgetensor
{

namespace
{

Result<UniqueFd> dup_plane(const FdPlanes& p, size_t i)
{
    UniqueFd d = UniqueFd::dup(p.planes[i].fd);
    if (!d)
        return unexpected(Error::io(errno, "dup of plane " + std::to_string(i) + "'s fd " +
                                               std::to_string(p.planes[i].fd) + " failed"));
    return d;
}

PlaneLayout layout_of(const FdPlane& p)
{
    return PlaneLayout{size_t(p.offset), p.stride};
}

size_t sub(size_t n, uint32_t by)
{
    return by <= 1 ? n : (n + by - 1) / by;
}

Result<TensorDyn> import_tensor(const FdPlanes& p, std::string_view name)
{
    if (p.planes[0].offset != 0)
        return make_error(ErrorCode::NotSupported,
                          "the tensor starts " + std::to_string(p.planes[0].offset) +
                              " bytes into its fd; other/tensors are imported from byte 0 only");
    auto fd = dup_plane(p, 0);
    if (!fd)
        return unexpected(std::move(fd).error());
    return TensorDyn::from_fd(std::move(*fd), p.dtype, p.shape, name);
}

// Semi-planar in two buffers: one single-plane image per buffer, composed. The chroma plane
// is imported as 2-byte pixels (the YUYV geometry) because from_planes wants its rows as
// [rows, chroma width, 2] pairs.
Result<TensorDyn> import_two_buffers(const FdPlanes& p, const PixelFormatInfo& info,
                                     std::string_view name)
{
    if (info.layout != PixelLayout::SemiPlanar || p.n_planes != 2)
        return make_error(ErrorCode::NotSupported,
                          std::string(info.name) +
                              " with planes in separate buffers cannot be described by one "
                              "tensor (only semi-planar NV12/NV16/NV24 can)");
    auto fd0 = dup_plane(p, 0);
    if (!fd0)
        return unexpected(std::move(fd0).error());
    const std::array<PlaneLayout, 1> l0{layout_of(p.planes[0])};
    auto luma =
        TensorDyn::from_fd_image(std::move(*fd0), p.width, p.height, PixelFormat::Grey, l0,
                                 DType::U8, CpuAccess::ReadWrite, std::string(name) + "-luma");
    if (!luma)
        return luma;
    auto fd1 = dup_plane(p, 1);
    if (!fd1)
        return unexpected(std::move(fd1).error());
    const std::array<PlaneLayout, 1> l1{layout_of(p.planes[1])};
    auto chroma = TensorDyn::from_fd_image(
        std::move(*fd1), sub(p.width, info.chroma_h_sub), sub(p.height, info.chroma_v_sub),
        PixelFormat::Yuyv, l1, DType::U8, CpuAccess::ReadWrite, std::string(name) + "-chroma");
    if (!chroma)
        return chroma;
    return TensorDyn::from_planes(*luma, *chroma, p.format);
}

// The planes of `info`'s image as the core lays them out, or empty when it cannot: planar
// images stack their channels at one pitch, back to back.
std::vector<PlaneLayout> image_planes(const FdPlanes& p, const PixelFormatInfo& info)
{
    std::vector<PlaneLayout> planes{layout_of(p.planes[0])};
    if (info.layout == PixelLayout::SemiPlanar && p.n_planes > 1)
        planes.push_back(layout_of(p.planes[1]));
    if (info.layout == PixelLayout::Planar) {
        const uint64_t plane_bytes = uint64_t(p.planes[0].stride) * p.height;
        for (size_t i = 1; i < p.n_planes; ++i)
            if (p.planes[i].stride != p.planes[0].stride ||
                p.planes[i].offset != p.planes[0].offset + i * plane_bytes)
                return {};
    }
    return planes;
}

} // namespace

Result<TensorDyn> import_fd_planes(const FdPlanes& p, std::string_view name)
{
    if (p.n_planes == 0 || p.n_planes > FdPlanes::kMaxPlanes)
        return make_error(ErrorCode::InvalidArgument,
                          "import_fd_planes: " + std::to_string(p.n_planes) +
                              " planes (1 to 4 are possible)");
    if (p.width == 0)
        return import_tensor(p, name);

    const auto info = pixel_format_info(p.format);
    if (p.separate_buffers) {
        if (!info)
            return make_error(ErrorCode::NotSupported,
                              "a frame with planes in separate buffers cannot be described by "
                              "one tensor (only semi-planar NV12/NV16/NV24 can)");
        return import_two_buffers(p, *info, name);
    }
    const std::vector<PlaneLayout> planes =
        info ? image_planes(p, *info) : std::vector<PlaneLayout>{};
    auto fd = dup_plane(p, 0);
    if (!fd)
        return unexpected(std::move(fd).error());
    if (!planes.empty())
        return TensorDyn::from_fd_image(std::move(*fd), p.width, p.height, p.format, planes,
                                        DType::U8, CpuAccess::ReadWrite, name);
    // A format the core has no image for: the bytes from byte 0, flat; the caller describes
    // the planes.
    return TensorDyn::from_fd(std::move(*fd), DType::U8, p.shape, name);
}

} // namespace edgetensor
