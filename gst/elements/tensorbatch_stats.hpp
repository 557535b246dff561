// SPDX-License-Identifier: MIT
//
// tensorbatch's statistics: what it counted since it started (frames, copies, batches and their
// empty slots, frames dropped, regions taken, refused and filtered) and the inputs' import
// caches, as the edgetensor-stats structure its "stats" property returns and its EOS message
// carries.

#pragma once

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <vector>

namespace edgetensor::gst::tensorbatch
{

/// Counters under the element's streaming lock.
struct Counters {
    guint64 frames = 0;          ///< source frames (or regions) converted into slots
    guint64 copies = 0;          ///< frames read from a copy (bottom-up)
    guint64 streamed = 0;        ///< frames written into their slots with streaming stores
    guint64 batches = 0;         ///< batches pushed
    guint64 partial_batches = 0; ///< batches with an empty slot
    guint64 empty_slots = 0;     ///< empty slots pushed
    guint64 dropped = 0;         ///< frames not batched: ordering=latest, not matching the caps
    guint64 rois = 0;            ///< regions converted (mode=roi)
    guint64 rois_refused = 0;    ///< regions refused as bad input (outside the frame, empty)
    guint64 rois_filtered = 0;   ///< regions skipped by roi-labels / roi-min-size
};

/// The edgetensor-stats structure: `c`, plus hits, misses, evictions and entries summed over
/// the pads' import `caches` (null entries skipped). Caller owns it.
GstStructure* stats_structure(const Counters& c,
                              const std::vector<GstEdgeTensorImportCache*>& caches);

} // namespace edgetensor::gst::tensorbatch
