// SPDX-License-Identifier: MIT
//
// One frame (or one region of it) into one slot of a batch, and what that did: the conversion
// itself, which needs no lock but the pad's converter to itself (the pad's streaming thread
// converting early, or the aggregator), and its accounting, under the element's mu.

#pragma once

#include "tensorbatch_early.hpp"
#include "tensorbatch_element.hpp"
#include "tensorbatch_pad.hpp"
#include "tensorbatch_roi.hpp"

#include <edgetensor/tensor_dyn.hpp>

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <string>

namespace edgetensor::gst::tensorbatch
{

/// A frame converted into a slot (Filled), or passed over because it does not match its caps
/// (Skipped, with why).
struct SlotOutcome {
    SlotState state = SlotState::Skipped;
    bool copied = false;
    bool streamed = false; ///< written with streaming stores (Converter::streaming_stores())
    std::string why;
    GstEdgeTensorBatchSlot record{};
    guint32 colorimetry = 0;
};

/// Converts `buf`, a frame of `ps` (the region `roi` of it in ROI mode), into `view`, a slot
/// of the batch tensor. Errors say what failed, without the pad's name.
Result<SlotOutcome> convert_slot(PadStream& ps, GstBuffer* buf, const Roi* roi,
                                 const TensorDyn& view);

/// Counts `o` (a frame of pad `pad_name`) and queues the warnings or the error it calls for.
/// False after an error. Under mu.
bool account(Streaming& st, const std::string& pad_name, const Result<SlotOutcome>& o,
             Deferred* msgs);

/// Records `o` in slot `slot` of `b`, written from pad `pad_index`. Under mu.
void place(OpenBatch& b, guint slot, guint pad_index, const SlotOutcome& o);

/// Zero bytes: what an empty slot holds.
Result<void> clear_slot(const TensorDyn& view);

} // namespace edgetensor::gst::tensorbatch
