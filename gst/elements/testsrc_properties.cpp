// SPDX-License-Identifier: MIT
//
// tensortestsrc's properties (testsrc_properties.hpp).

#include "testsrc_properties.hpp"

namespace edgetensor::gst::tensortestsrc
{

void install_properties(GObjectClass* klass)
{
    g_object_class_install_property(
        klass, PROP_PATTERN,
        g_param_spec_enum("pattern", "Pattern",
                          "What each frame shows (default: gradient). May change while playing.",
                          GST_TYPE_TENSOR_TEST_SRC_PATTERN, DEFAULT_PATTERN,
                          GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                      GST_PARAM_CONTROLLABLE | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        klass, PROP_IS_LIVE,
        g_param_spec_boolean(
            "is-live", "Is live",
            "Behave like a live camera: frames are produced at the framerate "
            "against the pipeline clock (default: false)",
            DEFAULT_IS_LIVE,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
    g_object_class_install_property(
        klass, PROP_MEMORY,
        g_param_spec_enum(
            "memory", "Memory",
            "Where the pool's tensors live (default: auto = DMA-BUF when the host "
            "has a provider, else shared memory)",
            GST_TYPE_EDGE_TENSOR_MEMORY_KIND, DEFAULT_MEMORY,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
    g_object_class_install_property(
        klass, PROP_MIN_BUFFERS,
        g_param_spec_uint(
            "min-buffers", "Minimum buffers",
            "Buffers the pool allocates up front (1 to 64, default 4; downstream "
            "may ask for more)",
            1, MAX_POOL_BUFFERS, DEFAULT_MIN_BUFFERS,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
    g_object_class_install_property(
        klass, PROP_MAX_BUFFERS,
        g_param_spec_uint(
            "max-buffers", "Maximum buffers",
            "Most buffers the pool allocates; the source waits for one to come "
            "back when all are downstream. Each holds a file descriptor. (0 to 64, 0 = no "
            "limit, default 32)",
            0, MAX_POOL_BUFFERS, DEFAULT_MAX_BUFFERS,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
}

bool set_property(Settings& s, guint prop_id, const GValue* value)
{
    switch (prop_id) {
    case PROP_PATTERN:
        s.pattern = GstTensorTestSrcPattern(g_value_get_enum(value));
        return true;
    case PROP_IS_LIVE:
        s.is_live = g_value_get_boolean(value);
        return true;
    case PROP_MEMORY:
        s.memory = GstEdgeTensorMemoryKind(g_value_get_enum(value));
        return true;
    case PROP_MIN_BUFFERS:
        s.min_buffers = g_value_get_uint(value);
        return true;
    case PROP_MAX_BUFFERS:
        s.max_buffers = g_value_get_uint(value);
        return true;
    default:
        return false;
    }
}

bool get_property(const Settings& s, guint prop_id, GValue* value)
{
    switch (prop_id) {
    case PROP_PATTERN:
        g_value_set_enum(value, s.pattern);
        return true;
    case PROP_IS_LIVE:
        g_value_set_boolean(value, s.is_live);
        return true;
    case PROP_MEMORY:
        g_value_set_enum(value, s.memory);
        return true;
    case PROP_MIN_BUFFERS:
        g_value_set_uint(value, s.min_buffers);
        return true;
    case PROP_MAX_BUFFERS:
        g_value_set_uint(value, s.max_buffers);
        return true;
    default:
        return false;
    }
}

} // namespace edgetensor::gst::tensortestsrc
