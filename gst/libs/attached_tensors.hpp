// SPDX-License-Identifier: MIT
//
// Tensors that ride on a buffer of another stream: tensorconvert output-mode=meta hangs the
// tensor it converted (a buffer of its pool) on the source frame, which travels on untouched;
// tensorinfer reads it there and hangs the model's outputs on the same frame. Our own meta
// (GstEdgeTensorAttachedMeta: the tensors' records and, for a converted picture, the frame
// transform) carries them on every GStreamer version, and on 1.26+ a GstTensorMeta carries the
// same tensors for upstream's decoders (gst_tensor_meta.hpp). Element helpers, compiled into
// the plugin; not installed.
//
// The meta is copied with the buffer (gst_buffer_copy(), queue, tee, in-place elements such as
// the tensor decoders and overlays) and dropped by anything that makes a new frame (a scaler):
// its frame transform would no longer be true of it.

#pragma once

#include "frame_transform.hpp"
#include "gst_tensor_meta.hpp"

#include <gst/gst.h>

#include <optional>
#include <string>
#include <vector>

namespace edgetensor::gst
{

/// One tensor riding on a frame.
struct AttachedTensor {
    TensorRecord tensor;
    /// For a picture converted from the frame: where it came from (crop, letterbox).
    std::optional<FrameTransform> transform;
};

/// The API type of GstEdgeTensorAttachedMeta ("GstEdgeTensorAttachedMetaAPI", no tags).
GType attached_tensors_meta_api_type();

/// The allocation-query parameters a consumer of attached tensors puts with the meta's API type
/// (gst_query_add_allocation_meta): what a tensor needs to be read where it lies, so that the
/// producer allocates it that way. Structure "edgetensor-attached-tensor", fields "alignment"
/// and "trailing-bytes" (guint).
inline constexpr const char* kAttachedTensorParams = "edgetensor-attached-tensor";

/// Hangs `tensors` on `buffer` (writable): appended to its GstEdgeTensorAttachedMeta (made when
/// missing), and, when `with_gst_tensor_meta` and the build has it, as one more GstTensorMeta.
/// The GstTensorMeta's failure (a tensor's data smaller than its dims) is returned; ours never
/// fails.
Result<void> attach_tensors(GstBuffer* buffer, std::vector<AttachedTensor> tensors,
                            bool with_gst_tensor_meta);

/// The tensors our meta carries on `buffer`, in the order attached (references taken).
std::vector<AttachedTensor> attached_tensors(GstBuffer* buffer);

/// Removes tensor `id` from `buffer` (writable): from our meta (dropped once empty) and every
/// GstTensorMeta holding it. How many tensors or metas were removed.
size_t detach_tensor(GstBuffer* buffer, const std::string& id);

} // namespace edgetensor::gst
