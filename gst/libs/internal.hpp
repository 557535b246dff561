// SPDX-License-Identifier: MIT
//
// Shared internals of libgstedgetensor-1.0 and the plugin: debug categories, caps parsing and
// the frame-layout rule. Not installed.

#pragma once

#include "glib_raii.hpp"

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

/// The media type of NNStreamer-style tensor caps.
inline constexpr const char* kTensorsMediaType = "other/tensors";

/// other/tensors caps, parsed: one static tensor.
struct TensorCaps {
    DType dtype = DType::U8;
    Shape shape; ///< outermost first (the caps' dimensions string is innermost first)
    int fps_n = 0;
    int fps_d = 1;
};

/// NNStreamer type name of a dtype ("uint8", "float32", ...).
const char* tensor_type_name(DType t) noexcept;
/// Parses NNStreamer's type name; false when unknown.
bool tensor_type_from_name(const char* name, DType* out) noexcept;
/// "3:640:480:1" for shape [1, 480, 640, 3].
std::string dimensions_string(const Shape& shape);

/// The GStreamer debug level of a library log level (None: GST_LEVEL_NONE), for forwarding the
/// library's messages to a debug category.
GstDebugLevel gst_debug_level(LogLevel level) noexcept;

/// Validates and parses an other/tensors structure (num_tensors=1, format=static, a fixed
/// types and dimensions). The error names the offending field.
Result<TensorCaps> parse_tensor_caps(const GstStructure* s);

/// Whether two shapes (outermost first) are the same tensor up to rank padding: leading 1s
/// aside, as NNStreamer compares dimensions ("3:224:224" == "3:224:224:1").
bool shapes_equal_padded(const Shape& a, const Shape& b) noexcept;

/// Every spelling of `shape`'s dimensions string from its shortest rank (trailing 1s dropped)
/// up to 8 dimensions, `dimensions_string(shape)` first, as a GST_TYPE_LIST in `out`
/// (uninitialised on entry), so caps with either spelling intersect.
void padded_dimensions_list(const Shape& shape, GValue* out);

/// `s` (writable) with a fixed `dimensions` string replaced by padded_dimensions_list() of it;
/// unchanged when the field is missing, not a string or not parseable.
void pad_dimensions_field(GstStructure* s);

/// What one pooled frame looks like in memory.
struct FrameLayout {
    bool is_video = false;
    GstVideoInfo vinfo{}; ///< video: final strides, offsets and size
    bool colorimetry_from_caps = false;
    Colorimetry colorimetry; ///< from the caps' colorimetry field only, never guessed
    PixelFormat pixel_format = PixelFormat::None;
    TensorCaps tensor;                 ///< other/tensors
    size_t size = 0;                   ///< bytes of one frame
    bool differs_from_default = false; ///< video: not GStreamer's default layout for the caps
};

/// Computes the layout of `caps` (video/x-raw or other/tensors). Video planes get row strides
/// rounded up to `row_align` (1 = GStreamer's default layout); `align` (nullable) adds the
/// caller's GstVideoAlignment (padding and stride masks).
Result<FrameLayout> layout_from_caps(const GstCaps* caps, size_t row_align,
                                     const GstVideoAlignment* align);

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
const char* memory_kind_name(GstEdgeTensorMemoryKind kind) noexcept;

} // namespace edgetensor::gst
