// SPDX-License-Identifier: MIT
//
// tensorconvert output-mode=meta: the source frame passes through untouched and the tensor it
// was converted into rides on it (attached_tensors.hpp: our meta with the frame transform, and
// on 1.26+ a GstTensorMeta), in a buffer of a pool of tensorconvert's own. What downstream needs
// of that tensor to read it where it lies (tensorinfer: the spare bytes TensorFlow Lite reads
// past a tensor) comes with the attached-tensor meta in the allocation query, and the pool
// allocates by it. The caps are the frame's on both pads; the tensor's caps are what
// output-mode=tensor would have negotiated for the same input.

#pragma once

#include "frame_transform.hpp"
#include "glib_raii.hpp"
#include "stream_layout.hpp"
#include "tensorconvert_settings.hpp"

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

#include <cstddef>
#include <string>

namespace edgetensor::gst::tensorconvert
{

/// Sets output-mode (`prop_id` PROP_OUTPUT_MODE) into `s` under `self`'s object lock (taken
/// here); refused past READY. False for any other property (nothing done).
bool set_output_mode(GstElement* self, Settings* s, guint prop_id, const GValue* value,
                     GParamSpec* pspec);
/// Reads output-mode into `value` (object lock held); false for any other property.
bool get_output_mode(const Settings& s, guint prop_id, GValue* value);

/// transform_caps with output-mode=meta: the frame's caps on both sides (the sink template's
/// formats), filtered.
GstCaps* meta_transform_caps(GstBaseTransform* self, GstCaps* caps, GstCaps* filter);

/// The fixed other/tensors caps output-mode=tensor negotiates for `incaps` under `s` (null when
/// `s` produces none).
GstCaps* meta_tensor_caps(GstBaseTransform* self, const Settings& s, GstCaps* incaps);

/// The spare bytes downstream asks for after an attached tensor (the attached-tensor meta's
/// "trailing-bytes" in the allocation query), 0 when it asks for none.
size_t attached_trailing_bytes(GstQuery* query);

/// Asks downstream of `self` (an allocation query for the frames' caps on the src pad) what an
/// attached tensor needs: the trailing bytes, 0 when nobody says. Call with no lock held.
size_t query_trailing_bytes(GstBaseTransform* self);

class MetaOutput
{
public:
    /// A pool for tensors of `tensor_caps` (other/tensors) with `trailing_bytes` past each.
    /// False after a warning when the pool refuses them.
    bool configure(GstElement* element, GstCaps* tensor_caps, size_t trailing_bytes);
    /// A tensor buffer to convert into (posts the pool's reason when there is none).
    GstFlowReturn acquire(GstElement* element, GstBuffer** tensor);
    /// Hangs `tensor` (a reference is taken) on `frame` (writable) under `id`, with where its
    /// picture came from.
    bool attach(GstElement* element, GstBuffer* frame, GstBuffer* tensor, const std::string& id,
                const FrameTransform& transform) const;
    void stop();
    /// Whether configure() succeeded since the last stop().
    bool configured() const noexcept { return bool(pool_); }

private:
    GstObjectPtr<GstBufferPool> pool_;
    StreamLayoutPtr layout_;
};

} // namespace edgetensor::gst::tensorconvert
