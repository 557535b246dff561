// SPDX-License-Identifier: MIT
//
// tensorimport's properties (tensorimport_properties.hpp).

#include "tensorimport_properties.hpp"

namespace edgetensor::gst::tensorimport
{

void install_properties(GObjectClass* klass)
{
    const auto ro = GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_property(
        klass, PROP_COPY_MODE,
        g_param_spec_enum(
            "copy-mode", "Copy mode",
            "What to do with memory that cannot be imported (system memory): auto = copy into "
            "a pooled tensor (DMA-BUF, or shared memory where the host has no DMA-BUF provider), "
            "counted and warned once (default); never = element error",
            GST_TYPE_TENSOR_IMPORT_COPY_MODE, DEFAULT_COPY_MODE,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
    g_object_class_install_property(
        klass, PROP_CACHE_SIZE,
        g_param_spec_uint(
            "cache-size", "Cache size",
            "Most imported buffers kept (least recently used evicted first; 1 to "
            "1024, default 32). Lowering it while playing evicts at once.",
            1, GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE, DEFAULT_CACHE_SIZE,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        klass, PROP_CACHE_HITS,
        g_param_spec_uint64("cache-hits", "Cache hits",
                            "Buffers whose tensor was already imported (since the last start)", 0,
                            G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_CACHE_MISSES,
        g_param_spec_uint64("cache-misses", "Cache misses",
                            "Buffers imported now (since the last start)", 0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_CACHE_EVICTIONS,
        g_param_spec_uint64("cache-evictions", "Cache evictions",
                            "Imported tensors dropped to stay within cache-size (since the "
                            "last start)",
                            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_COPIES,
        g_param_spec_uint64("copies", "Copies",
                            "Frames copied because their memory could not be imported (since "
                            "the last start); 0 means the stream was zero-copy",
                            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_STATS,
        g_param_spec_boxed("stats", "Statistics",
                           "edgetensor-stats: hits, misses, evictions, invalidations, entries, "
                           "peak-entries, max-entries, failed-imports, last-failure, failures, "
                           "inodes, frames, copies, zero-copy (also posted at EOS)",
                           GST_TYPE_STRUCTURE, ro));
}

std::span<const SettingField<Settings>> setting_fields()
{
    static constexpr SettingField<Settings> kFields[] = {
        setting_field<&Settings::copy_mode>(PROP_COPY_MODE),
        setting_field<&Settings::cache_size>(PROP_CACHE_SIZE),
    };
    return kFields;
}

} // namespace edgetensor::gst::tensorimport
