// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta's GstMetaInfo serialization hooks (gstedgetensormeta_serialize.hpp).

#include "gstedgetensormeta_serialize.hpp"

#include "glib_raii.hpp"
#include "internal.hpp"

#include <gst/allocators/allocators.h>

#include <algorithm>
#include <string>

#define GST_CAT_DEFAULT gst_edge_tensor_meta_debug

namespace edgetensor::gst
{

namespace
{

bool video_format_known(guint32 format)
{
    if (format == GST_VIDEO_FORMAT_UNKNOWN || format == GST_VIDEO_FORMAT_ENCODED)
        return true;
    // Compared as integers: a value from another process need not be a GstVideoFormat at all,
    // and loading it as one is undefined.
    guint n = 0;
    const GstVideoFormat* all = gst_video_formats_raw(&n);
    return std::any_of(all, all + n, [format](GstVideoFormat f) { return guint32(f) == format; });
}

} // namespace

TensorMetaFields tensor_meta_fields(const GstEdgeTensorMeta& m)
{
    TensorMetaFields f;
    f.memory_kind = guint32(m.memory_kind);
    f.desc = m.desc;
    f.video_format = guint32(m.video_format);
    f.width = m.width;
    f.height = m.height;
    f.n_planes = std::min<guint>(m.n_planes, kTensorMetaMaxPlanes);
    for (guint i = 0; i < f.n_planes; ++i) {
        f.plane_offsets[i] = m.plane_offsets[i];
        f.plane_strides[i] = m.plane_strides[i];
    }
    f.flags = m.flags;
    f.applied_colorimetry = m.applied_colorimetry;
    return f;
}

bool apply_tensor_meta_fields(GstEdgeTensorMeta* m, GstBuffer* buffer, const TensorMetaFields& f,
                              std::string* why)
{
    if (!video_format_known(f.video_format)) {
        *why = "video format " + std::to_string(f.video_format) +
               " is unknown to this GStreamer (" + running_gst_version() + ")";
        return false;
    }
    m->identity = 0;
    m->memory_kind = GstEdgeTensorMemoryKind(f.memory_kind);
    m->desc = f.desc;
    m->desc.handle = -1;
    m->desc.ptr = nullptr;
    m->desc.sync = 0;
    if (buffer && gst_buffer_n_memory(buffer) > 0) {
        GstMemory* mem = gst_buffer_peek_memory(buffer, 0);
        if (gst_is_fd_memory(mem))
            m->desc.handle = gst_fd_memory_get_fd(mem);
    }
    m->video_format = GstVideoFormat(f.video_format);
    m->width = f.width;
    m->height = f.height;
    m->n_planes = f.n_planes;
    for (guint i = 0; i < GST_EDGE_TENSOR_META_MAX_PLANES; ++i) {
        m->plane_offsets[i] = i < f.n_planes ? gsize(f.plane_offsets[i]) : 0;
        m->plane_strides[i] = i < f.n_planes ? gint(f.plane_strides[i]) : 0;
    }
    m->flags = f.flags;
    m->applied_colorimetry = f.applied_colorimetry;
    return true;
}

#if GST_CHECK_VERSION(1, 24, 0)

gboolean serialize_tensor_meta(const GstMeta* meta, GstByteArrayInterface* data, guint8* version)
{
    try {
        const auto bytes = encode_tensor_meta(
            tensor_meta_fields(*reinterpret_cast<const GstEdgeTensorMeta*>(meta)));
        *version = kTensorMetaCodecVersion;
        return gst_byte_array_interface_append_data(data, bytes.data(), bytes.size());
    } catch (const std::exception& e) {
        GST_WARNING("cannot serialize a GstEdgeTensorMeta: %s", e.what());
    }
    return FALSE;
}

GstMeta* deserialize_tensor_meta(const GstMetaInfo* info, GstBuffer* buffer, const guint8* data,
                                 gsize size, guint8 version)
{
    try {
        auto fields = decode_tensor_meta(std::span(data, size), version);
        if (!fields) {
            GST_WARNING("refusing a serialized GstEdgeTensorMeta: %s",
                        fields.error().message().c_str());
            return nullptr;
        }
        auto* m = reinterpret_cast<GstEdgeTensorMeta*>(gst_buffer_add_meta(buffer, info, nullptr));
        if (!m)
            return nullptr;
        std::string why;
        if (!apply_tensor_meta_fields(m, buffer, *fields, &why)) {
            GST_WARNING("refusing a serialized GstEdgeTensorMeta: %s", why.c_str());
            gst_buffer_remove_meta(buffer, &m->meta);
            return nullptr;
        }
        return &m->meta;
    } catch (const std::exception& e) {
        GST_WARNING("cannot deserialize a GstEdgeTensorMeta: %s", e.what());
    }
    return nullptr;
}

#endif

} // namespace edgetensor::gst
