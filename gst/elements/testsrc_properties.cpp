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

std::span<const SettingField<Settings>> setting_fields()
{
    static constexpr SettingField<Settings> kFields[] = {
        setting_field<&Settings::pattern>(PROP_PATTERN),
        setting_field<&Settings::is_live>(PROP_IS_LIVE),
        setting_field<&Settings::memory>(PROP_MEMORY),
        setting_field<&Settings::min_buffers>(PROP_MIN_BUFFERS),
        setting_field<&Settings::max_buffers>(PROP_MAX_BUFFERS),
    };
    return kFields;
}

} // namespace edgetensor::gst::tensortestsrc
