// SPDX-License-Identifier: MIT
//
// tensorbatch's aggregate(): the frames taken from the sink pads (by the ordering policy), each
// converted by its pad's engine converter straight into its slot of one pooled batch tensor (in
// ROI mode: the regions of one frame, batch-size per batch), the empty slots zeroed, the
// provenance recorded, the batch pushed; and the statistics at EOS.

#pragma once

#include "gsttensorbatch.h"
#include "tensorbatch_properties.hpp"

#include <gst/gst.h>

namespace edgetensor::gst::tensorbatch
{

/// mode=streams: a frame of each pad into its slot, the slots of pads without one empty; one
/// batch pushed. EOS (end_of_stream()) when no pad has a frame and every pad has ended.
GstFlowReturn aggregate_streams(GstTensorBatch* self, const Settings& s, bool timeout);

/// mode=roi: the regions of the one pad's next frame, filtered, batch-size per batch (more
/// regions make more batches of the same frame); a region outside the frame refused by name.
GstFlowReturn aggregate_rois(GstTensorBatch* self, const Settings& s);

/// The end: the statistics logged and posted as the edgetensor-stats element message.
/// Returns GST_FLOW_EOS.
GstFlowReturn end_of_stream(GstTensorBatch* self);

} // namespace edgetensor::gst::tensorbatch
