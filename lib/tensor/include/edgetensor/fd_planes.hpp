// SPDX-License-Identifier: MIT
//
// A tensor over planes that lie in fds someone else owns: what an importer (a GStreamer
// element, a camera bridge) holds when a frame arrives as one or two DMA-BUFs or memfds with
// plane offsets and pitches. The fds are borrowed and duplicated; the tensor owns its copies.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/pixel_format.hpp"
#include "edgetensor/tensor_dyn.hpp"
#include "edgetensor/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace edgetensor
{

/// Where one plane lies: in the borrowed `fd`, `offset` bytes from the start of its buffer,
/// rows `stride` bytes apart (0 for a tensor).
struct FdPlane {
    int fd = -1;
    uint64_t offset = 0;
    size_t stride = 0;
};

/// What the planes hold.
struct FdPlanes {
    static constexpr size_t kMaxPlanes = 4;
    std::array<FdPlane, kMaxPlanes> planes{};
    size_t n_planes = 1;
    /// A semi-planar frame whose two planes lie in two buffers (two kernel objects). Otherwise
    /// every plane is in planes[0]'s buffer, at its offset there.
    bool separate_buffers = false;
    /// A frame (width > 0): its format (PixelFormat::None when the core has no image for it),
    /// width and height in pixels.
    PixelFormat format = PixelFormat::None;
    size_t width = 0;
    size_t height = 0;
    /// A tensor (width 0): its element type and shape, from byte 0 of planes[0].fd. For a
    /// frame, the flat u8 bytes to cover from byte 0 ({bytes}) when the core cannot lay an
    /// image over its planes.
    DType dtype = DType::U8;
    Shape shape;
};

/// The tensor over `planes`, each fd duplicated (CLOEXEC), never adopted:
///  - a tensor: `from_fd(dtype, shape)`; it must start at byte 0 (NotSupported otherwise);
///  - a frame in two buffers (semi-planar only): a luma and a chroma image composed with
///    `from_planes`, each keeping its own fd, offset and pitch;
///  - a frame the core has an image for: `from_fd_image` with every plane's offset and pitch
///    (planar formats only when their planes share one pitch and lie back to back);
///  - any other frame: flat u8 of `shape`, from byte 0 (the caller describes the planes).
/// Errors: Io (a failed dup, naming the errno), and those of the core constructors
/// (UnknownBufferType, InsufficientCapacity, InvalidArgument, ...). `name` names the tensor
/// ("-luma" / "-chroma" are appended for two-buffer frames).
Result<TensorDyn> import_fd_planes(const FdPlanes& planes, std::string_view name = {});

} // namespace edgetensor
