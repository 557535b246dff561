// SPDX-License-Identifier: MIT
//
// Shared internals of libgstedgetensor-1.0 and the plugin: debug categories, memory kinds,
// the meta filler, and (included from here) the stream layout, the pooled frame layout, the
// other/tensors parser and memory identities. Not installed.

#pragma once

#include "internal_api.hpp"

#include "frame_layout.hpp"
#include "glib_raii.hpp"
#include "memory_identity.hpp"
#include "stream_layout.hpp"
#include "tensor_caps.hpp"

#include <gst/base/gstbasetransform.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/video/video.h>

#include <edgetensor/log.hpp>
#include <edgetensor/tensor.hpp>

#include <cstddef>
#include <optional>
#include <string>

GST_DEBUG_CATEGORY_EXTERN(gst_edge_tensor_allocator_debug);
// Also the element helpers' category (pool negotiation, copies): exported.
EDGETENSOR_GST_INTERNAL GST_DEBUG_CATEGORY_EXTERN(gst_edge_tensor_pool_debug);
GST_DEBUG_CATEGORY_EXTERN(gst_edge_tensor_meta_debug);
GST_DEBUG_CATEGORY_EXTERN(gst_edge_tensor_core_debug);

namespace edgetensor::gst
{

/// The GStreamer debug level of a library log level (None: GST_LEVEL_NONE), for forwarding the
/// library's messages to a debug category.
EDGETENSOR_GST_INTERNAL GstDebugLevel gst_debug_level(LogLevel level) noexcept;

/// Allocates a tensor of `bytes` bytes (u8) in `kind`; AUTO walks DMA -> SHM -> SYSTEM
/// (EDGETENSOR_FORCE_MEM=1 forces SYSTEM). `chosen` receives the kind that succeeded.
Result<TensorDyn> allocate_bytes(GstEdgeTensorMemoryKind kind, size_t bytes, const char* name,
                                 GstObject* log_object);

/// The kind AUTO resolves to on this host (DMA, SHM or SYSTEM).
EDGETENSOR_GST_INTERNAL GstEdgeTensorMemoryKind
resolve_memory_kind(GstEdgeTensorMemoryKind kind) noexcept;

/// Where a frame's planes lie, as GstEdgeTensorMeta records them.
struct MetaPlanes {
    guint n_planes = 0;
    gsize offsets[GST_EDGE_TENSOR_META_MAX_PLANES] = {};
    gint strides[GST_EDGE_TENSOR_META_MAX_PLANES] = {};
};

/// Attaches a GstEdgeTensorMeta describing `tensor` to `buffer` (writable): identity, kind,
/// descriptor (its handle is `handle`, borrowed from the buffer's memory; `host_ptr` keeps the
/// descriptor's host address, else it is cleared), and the frame's `planes`. With `video`, the
/// format, size and (when `colorimetry_from_caps`) colorimetry come from it. The one filler of
/// the meta: gst_buffer_add_edge_tensor_meta() and the import cache both call it. Throws only
/// what the core's accessors throw; callers catch.
GstEdgeTensorMeta* add_tensor_meta(GstBuffer* buffer, const TensorDyn& tensor, int handle,
                                   bool host_ptr, const GstVideoInfo* video,
                                   const MetaPlanes& planes, bool colorimetry_from_caps);

/// Every field of `src` into `dst` (a meta that cannot be replaced: a pool's locked one).
void copy_tensor_meta_fields(GstEdgeTensorMeta* dst, const GstEdgeTensorMeta* src) noexcept;

std::optional<TensorMemory> core_memory(GstEdgeTensorMemoryKind kind) noexcept;

/// ": <why>" when the last gst_memory_map() of one of our memories on this thread failed
/// (DMA_BUF_IOCTL_SYNC refused, ...), else "": for the element's error message. Clears it.
EDGETENSOR_GST_INTERNAL std::string take_map_failure();

/// "auto", "dma", "shm", "system".
EDGETENSOR_GST_INTERNAL const char* memory_kind_name(GstEdgeTensorMemoryKind kind) noexcept;

} // namespace edgetensor::gst
