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

} // namespace edgetensor::gst
