// SPDX-License-Identifier: MIT
//
// tensorimport's GObject properties: their ids, specs (names, ranges, defaults, blurbs) and
// the settings they read and write. The element owns the storage, its lock, the cache and the
// counters; this file owns what a property means.

#pragma once

#include "gsttensorimport.h"
#include "settings_table.hpp"

#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/gst.h>

#include <span>

namespace edgetensor::gst::tensorimport
{

enum Prop : guint {
    PROP_0,
    PROP_COPY_MODE,
    PROP_CACHE_SIZE,
    PROP_CACHE_HITS,
    PROP_CACHE_MISSES,
    PROP_CACHE_EVICTIONS,
    PROP_COPIES,
    PROP_STATS,
};

inline constexpr GstTensorImportCopyMode DEFAULT_COPY_MODE = GST_TENSOR_IMPORT_COPY_AUTO;
inline constexpr guint DEFAULT_CACHE_SIZE = GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE;

/// The writable properties' values (under the element's object lock).
struct Settings {
    GstTensorImportCopyMode copy_mode = DEFAULT_COPY_MODE;
    guint cache_size = DEFAULT_CACHE_SIZE;
};

/// Installs every property of the element on `klass`, PROP_COPY_MODE..PROP_STATS.
void install_properties(GObjectClass* klass);

/// Property id -> Settings member: the writable properties, for set_setting() and
/// get_setting() (settings_table.hpp).
std::span<const SettingField<Settings>> setting_fields();

} // namespace edgetensor::gst::tensorimport
