// SPDX-License-Identifier: MIT
//
// tensortestsrc's GObject properties: their ids, specs (names, ranges, defaults, blurbs) and
// the settings they read and write. The element owns the storage and its lock; this file owns
// what a property means.

#pragma once

#include "gsttensortestsrc.h"
#include "pool_negotiation.hpp"
#include "settings_table.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <span>

namespace edgetensor::gst::tensortestsrc
{

enum Prop : guint {
    PROP_0,
    PROP_PATTERN,
    PROP_IS_LIVE,
    PROP_MEMORY,
    PROP_MIN_BUFFERS,
    PROP_MAX_BUFFERS,
};

inline constexpr GstTensorTestSrcPattern DEFAULT_PATTERN = GST_TENSOR_TEST_SRC_GRADIENT;
inline constexpr gboolean DEFAULT_IS_LIVE = FALSE;
inline constexpr GstEdgeTensorMemoryKind DEFAULT_MEMORY = GST_EDGE_TENSOR_MEMORY_AUTO;
inline constexpr guint DEFAULT_MIN_BUFFERS = 4;
// Bounded: every pooled buffer holds an fd, and a deep queue downstream would take them all.
inline constexpr guint DEFAULT_MAX_BUFFERS = kDefaultMaxBuffers;
inline constexpr guint MAX_POOL_BUFFERS = 64;

/// The writable properties' values (under the element's object lock).
struct Settings {
    GstTensorTestSrcPattern pattern = DEFAULT_PATTERN;
    gboolean is_live = DEFAULT_IS_LIVE;
    GstEdgeTensorMemoryKind memory = DEFAULT_MEMORY;
    guint min_buffers = DEFAULT_MIN_BUFFERS;
    guint max_buffers = DEFAULT_MAX_BUFFERS;
};

/// Installs every property of the element on `klass`, PROP_PATTERN..PROP_MAX_BUFFERS.
void install_properties(GObjectClass* klass);

/// Property id -> Settings member: the writable properties, for set_setting() and
/// get_setting() (settings_table.hpp).
std::span<const SettingField<Settings>> setting_fields();

} // namespace edgetensor::gst::tensortestsrc
