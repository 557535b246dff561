// SPDX-License-Identifier: MIT
//
// tensoripcsrc's create(), over the receiver's events (tensoripcsrc_events.cpp).

#pragma once

#include "gsttensoripcsrc.h"

#include <gst/gst.h>

namespace edgetensor::gst::tensoripcsrc
{

/// The receiver's events until one ends this create(): a frame to push (*out set,
/// GST_FLOW_OK), or the flow return that ends the stream (flushing, EOS, the sender gone, an
/// error posted). Caps, refusals, stalls and a sender's return are handled on the way.
GstFlowReturn next_buffer(GstTensorIpcSrc* self, GstBuffer** out);

} // namespace edgetensor::gst::tensoripcsrc
