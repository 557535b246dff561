// SPDX-License-Identifier: MIT
//
// tensoripcsink's GObject properties: their ids, specs (names, ranges, defaults, blurbs) and
// the settings they read and write. The element owns the storage, its lock and the counters;
// this file owns what a property means.

#pragma once

#include "gsttensoripcsink.h"
#include "settings_table.hpp"

#include <gst/gst.h>

#include <cstdint>
#include <span>
#include <string>

namespace edgetensor::gst::tensoripcsink
{

enum Prop : guint {
    PROP_0,
    PROP_SOCKET_PATH,
    PROP_SOCKET_MODE,
    PROP_MAX_PENDING,
    PROP_ALLOWED_UID,
    PROP_COPY_MODE,
    PROP_WAIT_FOR_CONNECTION,
    PROP_BLOCK,
    PROP_MAX_CLIENTS,
    PROP_CLIENTS,
    PROP_SENT,
    PROP_DROPPED,
    PROP_COPIES,
    PROP_HELD,
    PROP_MAX_HELD_BYTES,
    PROP_HELD_BYTES,
    PROP_BLOCK_TIMEOUT,
};

inline constexpr guint DEFAULT_SOCKET_MODE = 0600;
inline constexpr guint DEFAULT_MAX_PENDING = 2;
inline constexpr guint MAX_MAX_PENDING = 1024;
inline constexpr gint DEFAULT_ALLOWED_UID = -1;
inline constexpr guint DEFAULT_MAX_CLIENTS = 64;
inline constexpr guint MAX_MAX_CLIENTS = 1024;
inline constexpr gboolean DEFAULT_WAIT_FOR_CONNECTION = FALSE;
inline constexpr gboolean DEFAULT_BLOCK = FALSE;
inline constexpr GstTensorIpcSinkCopyMode DEFAULT_COPY_MODE = GST_TENSOR_IPC_SINK_COPY_AUTO;
/// 256 MiB: 20 NV12 4K frames, 2 float32 RGB 4K tensors; far below what max-clients x
/// max-pending frames can pin at their defaults (128 frames, 1.6 GB of NV12 4K).
inline constexpr guint64 DEFAULT_MAX_HELD_BYTES = 256ull << 20;
/// 0: with block=true a frame waits for a receiver as long as it takes (the behaviour before
/// the property existed).
inline constexpr guint64 DEFAULT_BLOCK_TIMEOUT = 0;

/// block-timeout (nanoseconds) as the server's milliseconds: rounded up, so that any timeout
/// set is one; at most ~49 days.
constexpr uint32_t block_timeout_ms(guint64 ns)
{
    const guint64 ms = ns / GST_MSECOND + (ns % GST_MSECOND != 0);
    return ms > G_MAXUINT32 ? G_MAXUINT32 : uint32_t(ms);
}

/// The writable properties' values (under the element's object lock).
struct Settings {
    std::string socket_path;
    guint socket_mode = DEFAULT_SOCKET_MODE;
    guint max_pending = DEFAULT_MAX_PENDING;
    gint allowed_uid = DEFAULT_ALLOWED_UID;
    GstTensorIpcSinkCopyMode copy_mode = DEFAULT_COPY_MODE;
    gboolean wait_for_connection = DEFAULT_WAIT_FOR_CONNECTION;
    gboolean block = DEFAULT_BLOCK;
    guint max_clients = DEFAULT_MAX_CLIENTS;
    guint64 max_held_bytes = DEFAULT_MAX_HELD_BYTES;
    guint64 block_timeout = DEFAULT_BLOCK_TIMEOUT;
};

/// Installs every property of the element on `klass`, PROP_SOCKET_PATH..PROP_BLOCK_TIMEOUT.
void install_properties(GObjectClass* klass);

/// Property id -> Settings member: the writable properties, for set_setting() and
/// get_setting() (settings_table.hpp).
std::span<const SettingField<Settings>> setting_fields();

} // namespace edgetensor::gst::tensoripcsink
