// SPDX-License-Identifier: MIT
//
// tensorinfer's GObject properties: their ids, specs (names, ranges, defaults, blurbs) and the
// settings they read and write. The element owns the storage, its lock, the session and the
// counters; this file owns what a property means.

#pragma once

#include "gsttensorinfer.h"
#include "settings_table.hpp"

#include <gst/gst.h>

#include <edgetensor/infer.hpp>

#include <span>
#include <string>

namespace edgetensor::gst::tensorinfer
{

enum Prop : guint {
    PROP_0,
    PROP_MODEL,
    PROP_BACKEND,
    PROP_EXECUTION_PROVIDER,
    PROP_DELEGATE,
    PROP_DELEGATE_OPTIONS,
    PROP_N_THREADS,
    PROP_TENSOR_IDS,
    PROP_TENSOR_GROUP,
    PROP_MAP_BOXES,
    PROP_COPY_MODE,
    PROP_COPIES,
    PROP_STATS,
};

inline constexpr GstTensorInferBackend DEFAULT_BACKEND = GST_TENSOR_INFER_BACKEND_AUTO;
inline constexpr const char* DEFAULT_EXECUTION_PROVIDER = "cpu";
inline constexpr guint DEFAULT_N_THREADS = 0;
inline constexpr guint MAX_N_THREADS = 256;
inline constexpr gint DEFAULT_MAP_BOXES = TRUE;
inline constexpr GstTensorInferCopyMode DEFAULT_COPY_MODE = GST_TENSOR_INFER_COPY_AUTO;

/// The writable properties' values (under the element's object lock).
struct Settings {
    std::string model;
    GstTensorInferBackend backend = DEFAULT_BACKEND;
    std::string execution_provider = DEFAULT_EXECUTION_PROVIDER;
    std::string delegate;
    std::string delegate_options;
    guint n_threads = DEFAULT_N_THREADS;
    std::string tensor_ids;
    std::string tensor_group;
    gint map_boxes = DEFAULT_MAP_BOXES;
    GstTensorInferCopyMode copy_mode = DEFAULT_COPY_MODE;
};

/// Installs every property of the element on `klass`, PROP_MODEL..PROP_STATS.
void install_properties(GObjectClass* klass);

/// Property id -> Settings member: the writable properties (settings_table.hpp).
std::span<const SettingField<Settings>> setting_fields();

/// The session options the settings ask for.
InferOptions infer_options(const Settings& s);

} // namespace edgetensor::gst::tensorinfer
