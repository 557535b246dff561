// SPDX-License-Identifier: MIT
//
// tensorbatch's ROI mode: the regions of interest of a frame, from every
// GstVideoRegionOfInterestMeta and (GStreamer 1.24+, built with gstreamer-analytics-1.0) every
// object-detection entry of its GstAnalyticsRelationMeta; filtered by label and size; a region
// that does not lie inside the frame refused by name (bad input, never clamped); and split into
// batches of at most batch-size regions.

#pragma once

#include <edgetensor/types.hpp>

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorbatch
{

/// How many ROI converters (one per region geometry) a pad keeps: regions that come back with
/// the same rectangle reuse theirs. At least one batch's regions: kept in LRU order, a cache
/// smaller than the regions each frame brings back is emptied by every frame, and each region
/// pays a converter again (a quantized one ~0.4 ms); bounded, as a frame may carry any number.
inline constexpr size_t kRoiConverters = 8;
inline constexpr size_t kRoiConvertersMax = 64;
constexpr size_t roi_converter_capacity(size_t batch_size) noexcept
{
    return std::clamp(batch_size, kRoiConverters, kRoiConvertersMax);
}

/// One region of interest of a frame.
struct Roi {
    Region rect;
    GstEdgeTensorBatchRoiKind kind = GST_EDGE_TENSOR_BATCH_ROI_VIDEO;
    gint id = -1;
    GQuark label = 0;
};

/// A region as a frame's meta gives it, before it is checked (analytics boxes may be negative).
struct RawRoi {
    int64_t x = 0;
    int64_t y = 0;
    int64_t width = 0;
    int64_t height = 0;
    GstEdgeTensorBatchRoiKind kind = GST_EDGE_TENSOR_BATCH_ROI_VIDEO;
    gint id = -1;
    GQuark label = 0;
};

/// Which regions a batch takes.
struct RoiFilter {
    std::vector<std::string> labels; ///< empty: every label
    guint min_size = 0;              ///< width and height at least this (source pixels)
};

/// What became of a frame's regions.
struct FrameRois {
    std::vector<Roi> accepted;
    /// One line per region refused as bad input ("ROI 3 (person) at 1900,10 200x100 ..."), for
    /// the element's warning.
    std::vector<std::string> refused;
    /// Regions the filter skipped (label or size).
    size_t filtered = 0;
};

/// Whether the metas of the other kind (GstAnalyticsRelationMeta) are read: this build knows
/// GStreamer's analytics library.
bool analytics_supported() noexcept;

/// The regions of `buffer`'s metas, in meta order: GstVideoRegionOfInterestMeta first, then
/// the analytics object detections.
std::vector<RawRoi> rois_of(GstBuffer* buffer);

/// Checks and filters `raw` for a `width` x `height` frame.
FrameRois select_rois(const std::vector<RawRoi>& raw, guint width, guint height,
                      const RoiFilter& filter);

/// How `n` regions fill batches of `batch_size` slots: the number of regions in each batch
/// (every batch full but the last).
std::vector<size_t> batch_split(size_t n, size_t batch_size);

} // namespace edgetensor::gst::tensorbatch
