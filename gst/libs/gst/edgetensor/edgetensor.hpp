// SPDX-License-Identifier: MIT
//
// C++ access to the tensors behind libgstedgetensor-1.0 memories. Header-only declarations
// over the same library; include it from C++ code that wants the edgetensor::TensorDyn itself
// (NPU bridges, importers) rather than the C accessors.

#pragma once

#include <gst/edgetensor/edgetensor.h>

#include <edgetensor/tensor.hpp>

#include <cstddef>
#include <functional>
#include <optional>

namespace edgetensor::gst
{

/// The tensor behind `mem` (or behind the memory `mem` was shared from). The returned handle
/// shares storage and BufferIdentity with the memory's tensor. A pooled tensor is recycled
/// into a new frame once its GstMemory is gone, so keep the GstMemory (or its buffer) alive for
/// as long as you use the bytes. nullopt when no tensor stands behind `mem`.
GST_EDGE_TENSOR_API std::optional<TensorDyn> tensor_from_memory(GstMemory* mem) noexcept;

/// tensor_from_memory() of the buffer's first memory; nullopt for an empty buffer.
GST_EDGE_TENSOR_API std::optional<TensorDyn> tensor_from_buffer(GstBuffer* buffer) noexcept;

/// Called with the tensor when the last GstMemory wrapping it is freed (the pool uses it to
/// recycle tensors whose buffer was discarded). Runs on whichever thread frees the memory;
/// must not throw.
using TensorReleaseFunc = std::function<void(TensorDyn&&)>;

/// Wraps `tensor` into a new GstMemory of `size` bytes that keeps the tensor alive:
///  - Dma: dmabuf memory of `allocator` (a GstEdgeTensorAllocator; nullptr = the shared one)
///    over the tensor's own fd, borrowed (DONT_CLOSE: the memory keeps the tensor, which owns
///    the fd);
///  - Shm: memory of that allocator's GstEdgeTensorShmAllocator sibling (type "edgetensor-shm"),
///    likewise over the tensor's fd;
///  - Mem: wrapped system memory over a map held for the memory's life.
/// Errors: InvalidArgument (empty tensor, foreign allocator), NotSupported (a view whose window
/// does not start at byte 0, PBO memory), InsufficientCapacity (size beyond the allocation),
/// InvalidArgument also for a Dma/Shm tensor without an fd, AllocationFailed (the GstFdMemory
/// could not be made).
GST_EDGE_TENSOR_API Result<GstMemory*> wrap_tensor(GstAllocator* allocator, const TensorDyn& tensor,
                                                   size_t size, TensorReleaseFunc on_release = {});

/// GstVideoColorimetry -> Colorimetry (see gst_edge_tensor_colorimetry_from_gst()).
GST_EDGE_TENSOR_API Colorimetry colorimetry_from_gst(const GstVideoColorimetry& cinfo) noexcept;
/// Colorimetry -> GstVideoColorimetry (see gst_edge_tensor_colorimetry_to_gst()).
GST_EDGE_TENSOR_API GstVideoColorimetry colorimetry_to_gst(const Colorimetry& c,
                                                           GstVideoFormat format) noexcept;

/// The C enum for a core backend.
GST_EDGE_TENSOR_API GstEdgeTensorMemoryKind memory_kind(TensorMemory m) noexcept;

/// The PixelFormat of a GStreamer video format, PixelFormat::None when the core has none.
GST_EDGE_TENSOR_API PixelFormat pixel_format_from_gst(GstVideoFormat format) noexcept;
/// The DRM FourCC of a GStreamer video format (the little-endian DRM naming: GStreamer RGBA is
/// DRM_FORMAT_ABGR8888), 0 when DRM has none.
GST_EDGE_TENSOR_API uint32_t drm_fourcc_from_gst(GstVideoFormat format) noexcept;

} // namespace edgetensor::gst
