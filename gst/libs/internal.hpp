// SPDX-License-Identifier: MIT
//
// Shared internals of libgstedgetensor-1.0 and the plugin: debug categories, memory kinds,
// the meta filler, and (included from here) the stream layout, the pooled frame layout, the
// other/tensors parser and memory identities. Not installed.

#pragma once

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
GST_DEBUG_CATEGORY_EXTERN(gst_edge_tensor_pool_debug);
GST_DEBUG_CATEGORY_EXTERN(gst_edge_tensor_meta_debug);
GST_DEBUG_CATEGORY_EXTERN(gst_edge_tensor_core_debug);

namespace edgetensor::gst
{

/// The GStreamer debug level of a library log level (None: GST_LEVEL_NONE), for forwarding the
/// library's messages to a debug category.
GstDebugLevel gst_debug_level(LogLevel level) noexcept;

/// Allocates a tensor of `bytes` bytes (u8) in `kind`; AUTO walks DMA -> SHM -> SYSTEM
/// (EDGETENSOR_FORCE_MEM=1 forces SYSTEM). `chosen` receives the kind that succeeded.
Result<TensorDyn> allocate_bytes(GstEdgeTensorMemoryKind kind, size_t bytes, const char* name,
                                 GstObject* log_object);

/// The kind AUTO resolves to on this host (DMA, SHM or SYSTEM).
GstEdgeTensorMemoryKind resolve_memory_kind(GstEdgeTensorMemoryKind kind) noexcept;

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
std::string take_map_failure();

/// The max-buffers the elements give their pools when nobody asks for a bound: every pooled
/// buffer holds an fd, so an unbounded pool behind a deep queue runs the process out of fds.
inline constexpr guint kDefaultMaxBuffers = 32;

/// A configured, inactive edgetensor pool for `caps` of `min`..`max` buffers (0: no bound),
/// memory kind AUTO, with GstVideoMeta for video; corrections the pool asks for (e.g. the frame
/// size) are accepted. `size` (optional) gets the buffer size. Empty when the pool refuses
/// `caps` even so (the caller says so in its own debug category).
GstObjectPtr<GstBufferPool> make_tensor_pool(GstCaps* caps, bool video, guint min, guint max,
                                             guint* size);

/// Why the last allocation of the edgetensor pool `pool` failed ("" when none did since the
/// last call), and its errno when the library kept one. Clears what it returns.
std::string take_pool_error(GstBufferPool* pool, int* err);

/// Posts the element error for a failed acquire of `what` ("an output buffer") from `pool`,
/// with the pool's reason; an exhausted fd table says "too many open files (EMFILE)".
void post_acquire_error(GstElement* element, GstBufferPool* pool, GstFlowReturn ret,
                        const char* what);

/// GstBaseTransform's own prepare_output_buffer (`parent`'s), with the output pool activated
/// first and both failures reported through post_acquire_error(): the base class says only
/// "failed to activate bufferpool", or nothing, and the source ends on "Internal data stream
/// error".
GstFlowReturn prepare_output_from_pool(GstBaseTransform* trans, GstBaseTransformClass* parent,
                                       GstBuffer* inbuf, GstBuffer** outbuf);
/// "auto", "dma", "shm", "system".
const char* memory_kind_name(GstEdgeTensorMemoryKind kind) noexcept;

} // namespace edgetensor::gst
