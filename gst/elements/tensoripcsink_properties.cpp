// SPDX-License-Identifier: MIT
//
// tensoripcsink's properties (tensoripcsink_properties.hpp).

#include "tensoripcsink_properties.hpp"

namespace edgetensor::gst::tensoripcsink
{

void install_properties(GObjectClass* klass)
{
    const auto ready =
        GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
    const auto ro = GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_property(
        klass, PROP_SOCKET_PATH,
        g_param_spec_string("socket-path", "Socket path",
                            "Path of the SOCK_SEQPACKET Unix socket receivers connect to "
                            "(required; a stale socket file there is replaced, a live one is "
                            "an error)",
                            nullptr, ready));
    g_object_class_install_property(
        klass, PROP_SOCKET_MODE,
        g_param_spec_uint("socket-mode", "Socket mode",
                          "Permissions of the socket file, applied before anyone can connect "
                          "(0 to 0777, default 0600: the sink's user only)",
                          0, 0777, DEFAULT_SOCKET_MODE, ready));
    g_object_class_install_property(
        klass, PROP_MAX_PENDING,
        g_param_spec_uint("max-pending", "Max pending",
                          "Frames one receiver may hold unreleased; further frames skip it and "
                          "are counted in \"dropped\" (1 to 1024, default 2)",
                          1, MAX_MAX_PENDING, DEFAULT_MAX_PENDING, ready));
    g_object_class_install_property(
        klass, PROP_ALLOWED_UID,
        g_param_spec_int("allowed-uid", "Allowed uid",
                         "Only receivers of this user id (SO_PEERCRED) are served; -1 = any "
                         "user the socket permissions let in (-1 to 2147483647, default -1)",
                         -1, G_MAXINT, DEFAULT_ALLOWED_UID, ready));
    g_object_class_install_property(
        klass, PROP_COPY_MODE,
        g_param_spec_enum("copy-mode", "Copy mode",
                          "What to do with memory that has no fd (system memory): auto = copy "
                          "into a pooled DMA-BUF/memfd tensor, counted and warned once "
                          "(default); never = element error",
                          GST_TYPE_TENSOR_IPC_SINK_COPY_MODE, DEFAULT_COPY_MODE, ready));
    g_object_class_install_property(
        klass, PROP_WAIT_FOR_CONNECTION,
        g_param_spec_boolean(
            "wait-for-connection", "Wait for connection",
            "Block rendering until a receiver is connected, as shmsink "
            "wait-for-connection does (default false: frames without receivers "
            "are discarded, which suits live cameras)",
            DEFAULT_WAIT_FOR_CONNECTION,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        klass, PROP_BLOCK,
        g_param_spec_boolean(
            "block", "Block",
            "When a receiver holds max-pending frames, wait for it to release "
            "one instead of dropping the frame for it (default false: slow "
            "receivers drop frames, the pipeline never stalls); a wait of a second "
            "names the receiver in a warning, once per receiver",
            DEFAULT_BLOCK,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        klass, PROP_BLOCK_TIMEOUT,
        g_param_spec_uint64(
            "block-timeout", "Block timeout",
            "With block=true, how long a frame waits for a receiver that holds max-pending "
            "frames (or, held back by max-held-bytes, for any release) before the sender gives "
            "up on the receivers holding it up: frames are then dropped for each (counted in "
            "\"dropped\", a warning names it once) until it releases one, so a hung receiver "
            "holds the stream back once, not forever. Nanoseconds, rounded "
            "up to milliseconds; 0 = wait as long as it takes (0 to 18446744073709551615, "
            "default 0)",
            0, G_MAXUINT64, DEFAULT_BLOCK_TIMEOUT,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        klass, PROP_MAX_CLIENTS,
        g_param_spec_uint("max-clients", "Max clients",
                          "Receivers served at once; one more is disconnected before its "
                          "greeting (a warning on the bus, once per start). Each may hold "
                          "max-pending upstream buffers (1 to 1024, default 64)",
                          1, MAX_MAX_CLIENTS, DEFAULT_MAX_CLIENTS, ready));
    g_object_class_install_property(
        klass, PROP_CLIENTS,
        g_param_spec_uint("clients", "Clients", "Receivers connected now", 0, G_MAXUINT, 0, ro));
    g_object_class_install_property(
        klass, PROP_SENT,
        g_param_spec_uint64("sent", "Sent",
                            "Frames sent since start, one per receiver a frame reached", 0,
                            G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_DROPPED,
        g_param_spec_uint64("dropped", "Dropped",
                            "Frames not sent to a receiver since start because it held "
                            "max-pending frames or its socket was full, one per receiver",
                            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_COPIES,
        g_param_spec_uint64("copies", "Copies",
                            "Frames copied since start because their memory had no fd; 0 means "
                            "the stream was zero-copy",
                            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_HELD,
        g_param_spec_uint("held", "Held",
                          "Buffers kept alive now because a receiver has not released them", 0,
                          G_MAXUINT, 0, ro));
    g_object_class_install_property(
        klass, PROP_MAX_HELD_BYTES,
        g_param_spec_uint64(
            "max-held-bytes", "Max held bytes",
            "Bytes the buffers held for receivers may pin at once, each buffer counted once by "
            "its memories' sizes: a buffer that would pass it waits for releases with "
            "block=true, else is dropped for every receiver (counted in \"dropped\"; a "
            "warning names this property); a buffer larger on its own is an error. 0 = no "
            "bound but max-clients x max-pending buffers (0 to 18446744073709551615, default "
            "268435456 = 256 MiB)",
            0, G_MAXUINT64, DEFAULT_MAX_HELD_BYTES,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        klass, PROP_HELD_BYTES,
        g_param_spec_uint64("held-bytes", "Held bytes",
                            "Bytes of the buffers kept alive now because a receiver has not "
                            "released them (see max-held-bytes)",
                            0, G_MAXUINT64, 0, ro));
}

std::span<const SettingField<Settings>> setting_fields()
{
    static constexpr SettingField<Settings> kFields[] = {
        setting_field<&Settings::socket_path>(PROP_SOCKET_PATH),
        setting_field<&Settings::socket_mode>(PROP_SOCKET_MODE),
        setting_field<&Settings::max_pending>(PROP_MAX_PENDING),
        setting_field<&Settings::allowed_uid>(PROP_ALLOWED_UID),
        setting_field<&Settings::copy_mode>(PROP_COPY_MODE),
        setting_field<&Settings::wait_for_connection>(PROP_WAIT_FOR_CONNECTION),
        setting_field<&Settings::block>(PROP_BLOCK),
        setting_field<&Settings::max_clients>(PROP_MAX_CLIENTS),
        setting_field<&Settings::max_held_bytes>(PROP_MAX_HELD_BYTES),
        setting_field<&Settings::block_timeout>(PROP_BLOCK_TIMEOUT),
    };
    return kFields;
}

} // namespace edgetensor::gst::tensoripcsink
