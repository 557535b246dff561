// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta accessors: what bindings (GObject introspection, PyGObject) read instead of
// the descriptor's fixed-size arrays, which they cannot reach.

#include "internal.hpp"

#include <edgetensor/pixel_format.hpp>

#include <algorithm>

namespace
{

guint n_dims_of(const GstEdgeTensorMeta* meta)
{
    return std::min<guint>(meta->desc.ndim, EDGETENSOR_DESC_MAX_NDIM);
}

// The GStreamer string of a packed colorimetry for `format`; nullptr when unspecified/unknown.
gchar* colorimetry_string(guint32 packed, GstVideoFormat format)
{
    if (packed == 0)
        return nullptr;
    GstVideoColorimetry c;
    if (!gst_edge_tensor_colorimetry_to_gst(packed, format, &c))
        return nullptr;
    return gst_video_colorimetry_to_string(&c);
}

} // namespace

extern "C" guint gst_edge_tensor_meta_get_n_dims(const GstEdgeTensorMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, 0);
    return n_dims_of(meta);
}

namespace
{
// A newly allocated copy of the descriptor's first n_dims values of `field` (at least one
// element, so an empty answer is still freeable), its length in `n_dims`.
template <typename Out, typename In>
Out* dims_copy(const GstEdgeTensorMeta* meta, const In* field, guint* n_dims)
{
    const guint n = n_dims_of(meta);
    if (n_dims)
        *n_dims = n;
    auto* out = g_new0(Out, std::max<guint>(n, 1));
    std::copy(field, field + n, out);
    return out;
}
} // namespace

extern "C" guint64* gst_edge_tensor_meta_get_shape(const GstEdgeTensorMeta* meta, guint* n_dims)
{
    g_return_val_if_fail(meta != nullptr, nullptr);
    return dims_copy<guint64>(meta, meta->desc.shape, n_dims);
}

extern "C" gint64* gst_edge_tensor_meta_get_strides(const GstEdgeTensorMeta* meta, guint* n_dims)
{
    g_return_val_if_fail(meta != nullptr, nullptr);
    return dims_copy<gint64>(meta, meta->desc.strides, n_dims);
}

extern "C" const gchar* gst_edge_tensor_meta_get_dtype_name(const GstEdgeTensorMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, "unknown");
    if (meta->desc.dtype > EDGETENSOR_DTYPE_F64)
        return "unknown";
    return edgetensor::gst::tensor_type_name(edgetensor::DType(meta->desc.dtype));
}

extern "C" const gchar* gst_edge_tensor_meta_get_element_format(const GstEdgeTensorMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, "none");
    if (meta->desc.format != EDGETENSOR_FORMAT_NONE) {
        // Static strings: string_views of the core's format table are NUL-terminated literals.
        const auto info = edgetensor::pixel_format_info(edgetensor::PixelFormat(meta->desc.format));
        if (info)
            return info->name.data();
    }
    if (meta->video_format != GST_VIDEO_FORMAT_UNKNOWN)
        return gst_video_format_to_string(meta->video_format);
    return "none";
}

extern "C" gint gst_edge_tensor_meta_get_fd(const GstEdgeTensorMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, -1);
    return meta->desc.handle >= 0 && meta->desc.handle <= G_MAXINT ? gint(meta->desc.handle) : -1;
}

extern "C" guint64 gst_edge_tensor_meta_get_identity(const GstEdgeTensorMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, 0);
    return meta->identity;
}

extern "C" GstEdgeTensorMemoryKind
gst_edge_tensor_meta_get_memory_kind(const GstEdgeTensorMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, GST_EDGE_TENSOR_MEMORY_AUTO);
    return meta->memory_kind;
}

extern "C" gchar* gst_edge_tensor_meta_get_colorimetry(const GstEdgeTensorMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, nullptr);
    return colorimetry_string(meta->desc.colorimetry, meta->video_format);
}

extern "C" gchar* gst_edge_tensor_meta_get_applied_colorimetry(const GstEdgeTensorMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, nullptr);
    // The source picture's colorimetry: a YUV matrix, so no RGB format to resolve it against.
    return colorimetry_string(meta->applied_colorimetry, GST_VIDEO_FORMAT_UNKNOWN);
}

extern "C" gboolean gst_edge_tensor_meta_get_quantization(const GstEdgeTensorMeta* meta,
                                                          gfloat* scale, gint* zero_point)
{
    g_return_val_if_fail(meta != nullptr, FALSE);
    const bool quantized = (meta->flags & GST_EDGE_TENSOR_META_FLAG_QUANTIZED) != 0;
    if (scale)
        *scale = quantized ? meta->quant_scale : 0.f;
    if (zero_point)
        *zero_point = quantized ? meta->quant_zero_point : 0;
    return quantized ? TRUE : FALSE;
}

extern "C" gssize gst_edge_tensor_meta_get_offset(const GstEdgeTensorMeta* meta, GstBuffer* buffer)
{
    g_return_val_if_fail(meta != nullptr, -1);
    g_return_val_if_fail(GST_IS_BUFFER(buffer), -1);
    if (gst_buffer_n_memory(buffer) == 0)
        return -1;
    // Plane offsets count from the start of the memory's allocation (or fd); a map starts at
    // the memory's own offset into it.
    const GstMemory* mem = gst_buffer_peek_memory(buffer, 0);
    const gsize first = meta->n_planes > 0 ? meta->plane_offsets[0] : 0;
    if (first < mem->offset)
        return -1;
    return gssize(first - mem->offset);
}
