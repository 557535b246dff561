// SPDX-License-Identifier: MIT
//
// tensorconvert's per-buffer run: each input frame checked against the caps (a mismatch dropped
// and counted), then converted under the streaming lock into the output buffer
// (output-mode=tensor) or into a tensor of tensorconvert's own pool that rides on the frame
// (output-mode=meta; the pool made at the first frame).

#pragma once

#include "gsttensorconvert.h"

#include <gst/gst.h>

namespace edgetensor::gst::tensorconvert
{

/// output-mode=tensor: `inbuf` converted into `outbuf` (transform), or dropped with a warning
/// when it does not match the caps.
GstFlowReturn check_and_transform(GstTensorConvert* self, GstBuffer* inbuf, GstBuffer* outbuf);

/// output-mode=meta: `frame` (writable) left as it is, the tensor converted from it hung on it
/// (transform_ip), or dropped with a warning when it does not match the caps.
GstFlowReturn meta_transform_ip(GstTensorConvert* self, GstBuffer* frame);

} // namespace edgetensor::gst::tensorconvert
