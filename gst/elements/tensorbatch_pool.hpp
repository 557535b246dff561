// SPDX-License-Identifier: MIT
//
// tensorbatch's buffer pools through the pool negotiation module: the batch pool it decides on
// (an edgetensor pool, downstream's or its own, bounded, DMA-BUF where the host has a
// provider), the pool it proposes on each sink pad so producers write frames straight into
// tensors, and acquiring a batch buffer with errors that say why it failed.

#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

namespace edgetensor::gst::tensorbatch
{

gboolean decide_allocation(GstAggregator* self, GstQuery* query);
gboolean propose_allocation(GstAggregator* self, GstAggregatorPad* pad, GstQuery* decide_query,
                            GstQuery* query);

/// A buffer of the negotiated batch pool (activated first): GST_FLOW_OK, or the failure after an
/// element error that carries the pool's reason.
GstFlowReturn acquire_batch(GstAggregator* self, GstBuffer** out);

} // namespace edgetensor::gst::tensorbatch
