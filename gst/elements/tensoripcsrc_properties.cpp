// SPDX-License-Identifier: MIT
//
// tensoripcsrc's properties and their enum types (tensoripcsrc_properties.hpp).

#include "tensoripcsrc_properties.hpp"
#include "enum_type.hpp"

// The enum properties' value types (declared in gsttensoripcsrc.h, part of the element's API).

GType gst_tensor_ipc_src_on_disconnect_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_IPC_SRC_ON_DISCONNECT_EOS, "End the stream (EOS)", "eos"},
        {GST_TENSOR_IPC_SRC_ON_DISCONNECT_ERROR, "Post an element error", "error"},
        {GST_TENSOR_IPC_SRC_ON_DISCONNECT_RECONNECT,
         "Wait for a sender on the same socket-path (up to timeout) and go on", "reconnect"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstTensorIpcSrcOnDisconnect", values);
}

GType gst_tensor_ipc_src_on_invalid_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_IPC_SRC_ON_INVALID_DROP,
         "Drop the message (fds closed, reason logged and counted) and go on", "drop"},
        {GST_TENSOR_IPC_SRC_ON_INVALID_ERROR, "Post an element error", "error"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstTensorIpcSrcOnInvalid", values);
}

namespace edgetensor::gst::tensoripcsrc
{

void install_properties(GObjectClass* klass)
{
    const auto ready =
        GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
    const auto ro = GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_property(
        klass, PROP_SOCKET_PATH,
        g_param_spec_string("socket-path", "Socket path",
                            "Path of the tensoripcsink socket to connect to (required)", nullptr,
                            ready));
    g_object_class_install_property(
        klass, PROP_TIMEOUT,
        g_param_spec_uint64("timeout", "Timeout",
                            "Nanoseconds to wait for a sink to listen on socket-path before an "
                            "element error (0 = wait forever; default 10 s)",
                            0, G_MAXUINT64, DEFAULT_TIMEOUT, ready));
    g_object_class_install_property(
        klass, PROP_IS_LIVE,
        g_param_spec_boolean(
            "is-live", "Is live",
            "Act as a live source: each frame's PTS is its capture time at the sender put on "
            "this pipeline's clock, as unixfdsrc does (default false: the sender's "
            "timestamps, in a segment that starts at the first)",
            DEFAULT_IS_LIVE, ready));
    g_object_class_install_property(
        klass, PROP_ALLOWED_UID,
        g_param_spec_int("allowed-uid", "Allowed uid",
                         "Only accept a sink running as this user id (SO_PEERCRED); -1 = any "
                         "(-1 to 2147483647, default -1)",
                         -1, G_MAXINT, DEFAULT_ALLOWED_UID, ready));
    g_object_class_install_property(
        klass, PROP_ON_DISCONNECT,
        g_param_spec_enum("on-disconnect", "On disconnect",
                          "What to do when the sender goes away without EOS: eos (default), "
                          "error, or reconnect (wait up to timeout for a sender on the same "
                          "socket-path and go on with its stream)",
                          GST_TYPE_TENSOR_IPC_SRC_ON_DISCONNECT, DEFAULT_ON_DISCONNECT, ready));
    g_object_class_install_property(
        klass, PROP_ON_INVALID,
        g_param_spec_enum("on-invalid", "On invalid",
                          "What to do with an invalid message: drop it, closing its fds, "
                          "logging and counting it (default), or error",
                          GST_TYPE_TENSOR_IPC_SRC_ON_INVALID, DEFAULT_ON_INVALID, ready));
    g_object_class_install_property(
        klass, PROP_CACHE_SIZE,
        g_param_spec_uint(
            "cache-size", "Cache size",
            "Most remote buffers kept imported (least recently used evicted "
            "first; 1 to 1024, default 32); at least the sender's pool size keeps "
            "every identity stable",
            1, GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE, DEFAULT_CACHE_SIZE,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(klass, PROP_RECEIVED,
                                    g_param_spec_uint64("received", "Received",
                                                        "Frames received and pushed since start", 0,
                                                        G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_REJECTED,
        g_param_spec_uint64("rejected", "Rejected",
                            "Invalid messages dropped since start (each logged with its "
                            "reason)",
                            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_STATS,
        g_param_spec_boxed("stats", "Statistics",
                           "The import cache's edgetensor-stats (hits, misses, entries, inodes, "
                           "...) plus received, rejected, last-rejection and sink-pid",
                           GST_TYPE_STRUCTURE, ro));
}

std::span<const SettingField<Settings>> setting_fields()
{
    static constexpr SettingField<Settings> kFields[] = {
        setting_field<&Settings::socket_path>(PROP_SOCKET_PATH),
        setting_field<&Settings::timeout>(PROP_TIMEOUT),
        setting_field<&Settings::is_live>(PROP_IS_LIVE),
        setting_field<&Settings::allowed_uid>(PROP_ALLOWED_UID),
        setting_field<&Settings::on_disconnect>(PROP_ON_DISCONNECT),
        setting_field<&Settings::on_invalid>(PROP_ON_INVALID),
        setting_field<&Settings::cache_size>(PROP_CACHE_SIZE),
    };
    return kFields;
}

} // namespace edgetensor::gst::tensoripcsrc
