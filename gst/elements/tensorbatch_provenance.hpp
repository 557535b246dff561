// SPDX-License-Identifier: MIT
//
// What a converted tensor says about itself on its buffer, for tensorbatch (a slot per source)
// and tensorconvert (a batch of one): the GstEdgeTensorBatchMeta slot of each picture (source
// pad, PTS, size, crop and the transform into the slot, ROI) and, on the GstEdgeTensorMeta, the
// output's colorimetry and quantization. Plain functions over the engine's geometry.

#pragma once

#include <edgetensor/convert.hpp>

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

namespace edgetensor::gst
{

/// Where a slot's picture came from.
struct SlotSource {
    guint pad_index = 0;
    GstClockTime pts = GST_CLOCK_TIME_NONE;
    GstEdgeTensorBatchRoiKind roi_kind = GST_EDGE_TENSOR_BATCH_ROI_NONE;
    gint roi_id = -1;
    GQuark roi_label = 0;
    /// Packed, as GstEdgeTensorMeta's applied_colorimetry.
    guint32 applied_colorimetry = 0;
};

/// Fills `slot` for the picture a converter configured with `cfg` (geometry `g`) wrote from
/// `src`: filled, the source size, the rectangle read, scale per axis and padding.
void fill_slot(GstEdgeTensorBatchSlot* slot, const SlotSource& src, const ConvertConfig& cfg,
               const ConvertGeometry& g) noexcept;

/// Marks `slot` empty (what gst_buffer_add_edge_tensor_batch_meta() gives).
void empty_slot(GstEdgeTensorBatchSlot* slot) noexcept;

/// Records on the GstEdgeTensorMeta of `outbuf` (when it has one) the output values'
/// colorimetry `out`, the applied source colorimetry `applied` and the quantization of `cfg`
/// (set or cleared: a pool's meta stays on its buffer from frame to frame).
void record_output(GstBuffer* outbuf, const ConvertConfig& cfg, guint32 out,
                   guint32 applied) noexcept;

/// tensorconvert's record of a frame: record_output() and a GstEdgeTensorBatchMeta of one slot
/// for the frame of PTS `pts` converted by `conv`. `outbuf` must be writable.
void record_conversion(GstBuffer* outbuf, const Converter& conv, GstClockTime pts, guint32 out,
                       guint32 applied) noexcept;

} // namespace edgetensor::gst
