// SPDX-License-Identifier: MIT
//
// tensoripcsrc's GObject properties: their ids, specs (names, ranges, defaults, blurbs), the
// GEnum types of the enum ones, and the settings they read and write. The element owns the
// storage, its lock, the counters (its receiver's) and what a change sets in motion (liveness,
// the cache's size); this file owns what a property means.

#pragma once

#include "gsttensoripcsrc.h"
#include "settings_table.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <span>
#include <string>

namespace edgetensor::gst::tensoripcsrc
{

enum Prop : guint {
    PROP_0,
    PROP_SOCKET_PATH,
    PROP_TIMEOUT,
    PROP_IS_LIVE,
    PROP_ALLOWED_UID,
    PROP_ON_DISCONNECT,
    PROP_ON_INVALID,
    PROP_CACHE_SIZE,
    PROP_RECEIVED,
    PROP_REJECTED,
    PROP_STATS,
};

inline constexpr guint64 DEFAULT_TIMEOUT = 10 * GST_SECOND;
inline constexpr gboolean DEFAULT_IS_LIVE = FALSE;
inline constexpr gint DEFAULT_ALLOWED_UID = -1;
inline constexpr guint DEFAULT_CACHE_SIZE = GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE;
inline constexpr GstTensorIpcSrcOnDisconnect DEFAULT_ON_DISCONNECT =
    GST_TENSOR_IPC_SRC_ON_DISCONNECT_EOS;
inline constexpr GstTensorIpcSrcOnInvalid DEFAULT_ON_INVALID = GST_TENSOR_IPC_SRC_ON_INVALID_DROP;

/// The writable properties' values (under the element's object lock).
struct Settings {
    std::string socket_path;
    guint64 timeout = DEFAULT_TIMEOUT;
    gboolean is_live = DEFAULT_IS_LIVE;
    gint allowed_uid = DEFAULT_ALLOWED_UID;
    GstTensorIpcSrcOnDisconnect on_disconnect = DEFAULT_ON_DISCONNECT;
    GstTensorIpcSrcOnInvalid on_invalid = DEFAULT_ON_INVALID;
    guint cache_size = DEFAULT_CACHE_SIZE;
};

/// Installs every property of the element on `klass`, PROP_SOCKET_PATH..PROP_STATS.
void install_properties(GObjectClass* klass);

/// Property id -> Settings member: the writable properties, for store_setting() and
/// load_setting() (settings_table.hpp).
std::span<const SettingField<Settings>> setting_fields();

} // namespace edgetensor::gst::tensoripcsrc
