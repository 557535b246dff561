// SPDX-License-Identifier: MIT
//
// tensorbatch's GObject properties: the output ones, installed from tensorconvert's table (same
// names, ranges, defaults and blurbs), and its own (batch-size, batched-push-timeout, ordering,
// mode, the ROI filters, the statistics), with the settings they hold and the enums' GTypes.
// The element owns the storage and its lock; this file owns what a property means.

#pragma once

#include "gsttensorbatch.h"
#include "tensorconvert_properties.hpp"
#include "tensorconvert_settings.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <string>
#include <vector>

namespace edgetensor::gst::tensorbatch
{

/// The most slots a batch has: what a GstEdgeTensorBatchMeta carries.
inline constexpr guint kMaxBatchSize = GST_EDGE_TENSOR_BATCH_MAX_SLOTS;

inline constexpr guint DEFAULT_BATCH_SIZE = 4;
/// One frame interval at 30 fps.
inline constexpr guint64 DEFAULT_BATCHED_PUSH_TIMEOUT = 33333333;
inline constexpr GstTensorBatchOrdering DEFAULT_ORDERING = GST_TENSOR_BATCH_ORDERING_FIFO;
inline constexpr GstTensorBatchMode DEFAULT_MODE = GST_TENSOR_BATCH_MODE_STREAMS;
inline constexpr guint DEFAULT_ROI_MIN_SIZE = 0;
inline constexpr gboolean DEFAULT_CONVERT_ON_ARRIVAL = FALSE;

/// The writable properties' values (under the element's object lock): the output ones
/// (tensorconvert's, refusals included) and tensorbatch's own.
struct Settings : tensorconvert::OutputSettings {
    guint batch_size = DEFAULT_BATCH_SIZE;
    guint64 timeout = DEFAULT_BATCHED_PUSH_TIMEOUT;
    GstTensorBatchOrdering ordering = DEFAULT_ORDERING;
    GstTensorBatchMode mode = DEFAULT_MODE;
    std::string roi_labels_str;
    std::vector<std::string> roi_labels; // empty: every label
    guint roi_min_size = DEFAULT_ROI_MIN_SIZE;
    gboolean convert_on_arrival = DEFAULT_CONVERT_ON_ARRIVAL;
};

enum Prop : guint {
    PROP_BATCH_SIZE = tensorconvert::PROP_OUTPUT_END,
    PROP_BATCHED_PUSH_TIMEOUT,
    PROP_ORDERING,
    PROP_MODE,
    PROP_ROI_LABELS,
    PROP_ROI_MIN_SIZE,
    PROP_CONVERT_ON_ARRIVAL,
    PROP_COPIES,
    PROP_STATS,
};

/// "person, car" -> {"person", "car"}: comma-separated labels, blanks trimmed; empty = none.
/// False (with `why`) for an empty entry ("person,,car").
bool parse_roi_labels(const char* str, std::vector<std::string>* out, std::string* why);

/// Installs every property on `klass`: the output ones, then PROP_BATCH_SIZE..PROP_STATS.
void install_properties(GObjectClass* klass);

/// Sets a writable property of `self` into `*s` (object lock taken here). READY-only ones past
/// READY are refused; string values that do not parse are refused as tensorconvert refuses them
/// (a g_warning, an element warning, and the element will not start); the rest go through the
/// settings table (settings_table.hpp). True when batched-push-timeout was stored (the caller
/// then reports the latency).
bool set_property(GstElement* self, Settings* s, guint prop_id, const GValue* value,
                  GParamSpec* pspec);

/// Reads a setting into `value` (object lock held); false for the statistics or an unknown id.
bool get_property(const Settings& s, guint prop_id, GValue* value);

} // namespace edgetensor::gst::tensorbatch
