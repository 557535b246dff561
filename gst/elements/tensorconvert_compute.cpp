// SPDX-License-Identifier: MIT

#include "tensorconvert_compute.hpp"

GType gst_tensor_convert_compute_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_CONVERT_COMPUTE_AUTO,
         "GL on a hardware GPU renderer, else the CPU (the reason is logged)", "auto"},
        {GST_TENSOR_CONVERT_COMPUTE_CPU, "The CPU conversion engine", "cpu"},
        {GST_TENSOR_CONVERT_COMPUTE_GL,
         "OpenGL ES 3 shaders (EGL, headless); an error when no GL context can be had", "gl"},
        {0, nullptr, nullptr},
    };
    if (g_once_init_enter(&type)) {
        GType t = g_enum_register_static("GstTensorConvertCompute", values);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

namespace edgetensor::gst
{

ConvertCompute convert_compute(GstTensorConvertCompute c) noexcept
{
    switch (c) {
    case GST_TENSOR_CONVERT_COMPUTE_CPU:
        return ConvertCompute::Cpu;
    case GST_TENSOR_CONVERT_COMPUTE_GL:
        return ConvertCompute::Gl;
    case GST_TENSOR_CONVERT_COMPUTE_AUTO:
        break;
    }
    return ConvertCompute::Auto;
}

GstTensorConvertCompute element_compute(ConvertCompute c) noexcept
{
    switch (c) {
    case ConvertCompute::Cpu:
        return GST_TENSOR_CONVERT_COMPUTE_CPU;
    case ConvertCompute::Gl:
        return GST_TENSOR_CONVERT_COMPUTE_GL;
    case ConvertCompute::Auto:
        break;
    }
    return GST_TENSOR_CONVERT_COMPUTE_AUTO;
}

GlImportStats add_gl_stats(const GlImportStats& a, const GlImportStats& b) noexcept
{
    GlImportStats s;
    s.hits = a.hits + b.hits;
    s.misses = a.misses + b.misses;
    s.evictions = a.evictions + b.evictions;
    s.swept = a.swept + b.swept;
    s.entries = b.entries;
    s.uploads = a.uploads + b.uploads;
    s.zero_copy_declines = a.zero_copy_declines + b.zero_copy_declines;
    s.readbacks = a.readbacks + b.readbacks;
    return s;
}

GstStructure* gl_stats_structure(const GlImportStats& s)
{
    return gst_structure_new(
        "edgetensor-gl-stats", "hits", G_TYPE_UINT64, guint64(s.hits), "misses", G_TYPE_UINT64,
        guint64(s.misses), "evictions", G_TYPE_UINT64, guint64(s.evictions), "swept", G_TYPE_UINT64,
        guint64(s.swept), "entries", G_TYPE_UINT64, guint64(s.entries), "uploads", G_TYPE_UINT64,
        guint64(s.uploads), "zero-copy-declines", G_TYPE_UINT64, guint64(s.zero_copy_declines),
        "readbacks", G_TYPE_UINT64, guint64(s.readbacks), nullptr);
}

} // namespace edgetensor::gst
