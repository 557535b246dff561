// SPDX-License-Identifier: MIT
//
// tensorinfer's transform: one buffer's run. The input found (the buffer's tensor, or the one
// riding on the frame, checked against the model when it changes), the model run straight into
// pooled outputs, copies counted and said once, boxes mapped onto the frame, and the outputs
// handed on (as other/tensors memories, or riding on the frame as GstTensorMeta).

#pragma once

#include "gsttensorinfer.h"

#include <gst/gst.h>

namespace edgetensor::gst::tensorinfer
{

/// One buffer through the model: `outbuf` gets the outputs (`inbuf` itself in frame mode).
GstFlowReturn run_buffer(GstTensorInfer* self, GstBuffer* inbuf, GstBuffer* outbuf);

} // namespace edgetensor::gst::tensorinfer
