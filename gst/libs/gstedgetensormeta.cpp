// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta: the tensor's identity and descriptor on a GstBuffer.

#include "gstedgetensormeta_serialize.hpp"
#include "internal.hpp"
#include "vfunc_guard.hpp"

#include <algorithm>
#include <cstring>

#include <gst/allocators/allocators.h>

#define GST_CAT_DEFAULT gst_edge_tensor_meta_debug

namespace
{

void reset_meta(GstEdgeTensorMeta* m)
{
    m->identity = 0;
    m->memory_kind = GST_EDGE_TENSOR_MEMORY_AUTO;
    m->desc = edgetensor_desc_init();
    m->video_format = GST_VIDEO_FORMAT_UNKNOWN;
    m->width = 0;
    m->height = 0;
    m->n_planes = 0;
    for (guint i = 0; i < GST_EDGE_TENSOR_META_MAX_PLANES; ++i) {
        m->plane_offsets[i] = 0;
        m->plane_strides[i] = 0;
    }
    m->flags = GST_EDGE_TENSOR_META_FLAG_NONE;
    m->applied_colorimetry = 0;
    m->quant_scale = 0.f;
    m->quant_zero_point = 0;
}

gboolean meta_init(GstMeta* meta, gpointer, GstBuffer*)
{
    reset_meta(reinterpret_cast<GstEdgeTensorMeta*>(meta));
    return TRUE;
}

void copy_fields(GstEdgeTensorMeta* dst, const GstEdgeTensorMeta* src)
{
    dst->identity = src->identity;
    dst->memory_kind = src->memory_kind;
    dst->desc = src->desc;
    dst->video_format = src->video_format;
    dst->width = src->width;
    dst->height = src->height;
    dst->n_planes = src->n_planes;
    std::memcpy(dst->plane_offsets, src->plane_offsets, sizeof(dst->plane_offsets));
    std::memcpy(dst->plane_strides, src->plane_strides, sizeof(dst->plane_strides));
    dst->flags = src->flags;
    dst->applied_colorimetry = src->applied_colorimetry;
    dst->quant_scale = src->quant_scale;
    dst->quant_zero_point = src->quant_zero_point;
}

/// Whether the copy's first memory holds the very bytes the meta describes. An imported
/// buffer's memory (v4l2, a decoder) is no edgetensor memory, so identity alone cannot tell;
/// a shallow copy shares the source's GstMemory (or a sub-memory of the same parent, or
/// another GstMemory over the same fd object and offset), which can.
bool copy_shares_memory(GstBuffer* dest, GstBuffer* source, const GstEdgeTensorMeta* src)
{
    GstMemory* d = gst_buffer_peek_memory(dest, 0);
    if (src->identity != 0 && gst_edge_tensor_memory_get_identity(d) == src->identity)
        return true;
    if (!source || gst_buffer_n_memory(source) == 0)
        return false;
    GstMemory* s = gst_buffer_peek_memory(source, 0);
    if (d == s)
        return true;
    // Same object but another window of it: the plane offsets would not hold.
    if (d->offset != s->offset || d->size != s->size)
        return false;
    GstMemory* dp = d->parent ? d->parent : d;
    GstMemory* sp = s->parent ? s->parent : s;
    if (dp == sp)
        return true;
    const auto di = edgetensor::gst::memory_identity(d);
    const auto si = edgetensor::gst::memory_identity(s);
    return di && si && *di == *si;
}

gboolean meta_transform_impl(GstBuffer* dest, GstMeta* meta, GstBuffer* source, GQuark type,
                             gpointer data)
{
    auto* src = reinterpret_cast<GstEdgeTensorMeta*>(meta);
    if (!GST_META_TRANSFORM_IS_COPY(type))
        return FALSE; // scaling, format changes: the descriptor no longer holds

    auto* copy = static_cast<GstMetaTransformCopy*>(data);
    // A region copy describes part of the bytes; a deep copy has bytes that are not the tensor.
    // Either way the descriptor would lie, so the meta stays behind (returning TRUE: not an
    // error, just nothing to carry).
    if (copy->region || gst_buffer_n_memory(dest) == 0)
        return TRUE;
    if (!copy_shares_memory(dest, source, src)) {
        GST_LOG("dropping the meta of tensor %" G_GUINT64_FORMAT
                ": the copy does not share its memory",
                src->identity);
        return TRUE;
    }
    GstMemory* mem = gst_buffer_peek_memory(dest, 0);
    auto* dst = reinterpret_cast<GstEdgeTensorMeta*>(
        gst_buffer_add_meta(dest, GST_EDGE_TENSOR_META_INFO, nullptr));
    if (!dst)
        return FALSE;
    copy_fields(dst, src);
    // Borrow the copy's own fd (a copy may outlive the source's memory); a shared GstMemory or
    // a memory without an fd keeps the source's handle.
    if (const int fd = gst_edge_tensor_memory_get_fd(mem); fd >= 0)
        dst->desc.handle = fd;
    else if (gst_is_fd_memory(mem))
        dst->desc.handle = gst_fd_memory_get_fd(mem);
    return TRUE;
}

// A meta that cannot be carried stays behind (TRUE), as one whose bytes the copy does not share.
gboolean meta_transform(GstBuffer* dest, GstMeta* meta, GstBuffer* source, GQuark type,
                        gpointer data)
{
    return edgetensor::gst::guarded(nullptr, "GstEdgeTensorMeta transform", TRUE, [&] {
        return meta_transform_impl(dest, meta, source, type, data);
    });
}

} // namespace

void edgetensor::gst::copy_tensor_meta_fields(GstEdgeTensorMeta* dst,
                                              const GstEdgeTensorMeta* src) noexcept
{
    copy_fields(dst, src);
}

extern "C" GType gst_edge_tensor_meta_api_get_type(void)
{
    static gsize type = 0;
    static const gchar* tags[] = {GST_META_TAG_MEMORY_STR, GST_META_TAG_VIDEO_STR, nullptr};
    if (g_once_init_enter(&type)) {
        GType t = gst_meta_api_type_register("GstEdgeTensorMetaAPI", tags);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

extern "C" const GstMetaInfo* gst_edge_tensor_meta_get_info(void)
{
    // Outside the once below: gst_edge_tensor_init() registers this meta through this very
    // function, which must then find the once not yet entered.
    gst_edge_tensor_init();
    static const GstMetaInfo* info = nullptr;
    if (g_once_init_enter(&info)) {
#if GST_CHECK_VERSION(1, 24, 0)
        // With serialization, so unixfdsink/unixfdsrc carry the meta.
        GstMetaInfo* m = gst_meta_info_new(GST_EDGE_TENSOR_META_API_TYPE, "GstEdgeTensorMeta",
                                           sizeof(GstEdgeTensorMeta));
        m->init_func = meta_init;
        m->transform_func = meta_transform;
        m->serialize_func = edgetensor::gst::serialize_tensor_meta;
        m->deserialize_func = edgetensor::gst::deserialize_tensor_meta;
        const GstMetaInfo* mi = gst_meta_info_register(m);
#else
        const GstMetaInfo* mi =
            gst_meta_register(GST_EDGE_TENSOR_META_API_TYPE, "GstEdgeTensorMeta",
                              sizeof(GstEdgeTensorMeta), meta_init, nullptr, meta_transform);
#endif
        g_once_init_leave(&info, mi);
    }
    return info;
}

extern "C" GstEdgeTensorMeta* gst_buffer_get_edge_tensor_meta(GstBuffer* buffer)
{
    g_return_val_if_fail(GST_IS_BUFFER(buffer), nullptr);
    return reinterpret_cast<GstEdgeTensorMeta*>(
        gst_buffer_get_meta(buffer, GST_EDGE_TENSOR_META_API_TYPE));
}

GstEdgeTensorMeta* edgetensor::gst::add_tensor_meta(GstBuffer* buffer, const TensorDyn& tensor,
                                                    int handle, bool host_ptr,
                                                    const GstVideoInfo* video,
                                                    const MetaPlanes& planes,
                                                    bool colorimetry_from_caps)
{
    EdgeTensorDesc desc = edgetensor_desc_init();
    if (auto d = tensor.describe()) {
        desc = *d;
    } else {
        // Still describe what can be described (a PBO tensor, a two-buffer image: no single
        // handle).
        GST_DEBUG("buffer %p: describe() failed (%s); filling the descriptor by hand", buffer,
                  d.error().message().c_str());
        desc.ndim = guint32(std::min<size_t>(tensor.ndim(), EDGETENSOR_DESC_MAX_NDIM));
        desc.dtype = guint32(tensor.dtype());
        for (guint32 i = 0; i < desc.ndim; ++i) {
            desc.shape[i] = tensor.shape()[i];
            desc.strides[i] = tensor.strides()[i];
        }
        desc.format = guint32(tensor.format());
        desc.fourcc = edgetensor::to_drm_fourcc(tensor.format());
        desc.capacity = tensor.capacity_bytes();
        desc.kind = tensor.memory() == edgetensor::TensorMemory::Dma ? EDGETENSOR_KIND_DMABUF
                                                                     : EDGETENSOR_KIND_HOST;
    }
    desc.handle = handle;
    if (!host_ptr)
        desc.ptr = 0;

    auto* m = reinterpret_cast<GstEdgeTensorMeta*>(
        gst_buffer_add_meta(buffer, GST_EDGE_TENSOR_META_INFO, nullptr));
    if (!m)
        return nullptr;
    m->identity = tensor.buffer_identity().id();
    m->memory_kind = memory_kind(tensor.memory());
    m->desc = desc;
    m->n_planes = std::min<guint>(planes.n_planes, GST_EDGE_TENSOR_META_MAX_PLANES);
    for (guint i = 0; i < m->n_planes; ++i) {
        m->plane_offsets[i] = planes.offsets[i];
        m->plane_strides[i] = planes.strides[i];
    }
    if (video) {
        const GstVideoFormat fmt = GST_VIDEO_INFO_FORMAT(video);
        m->video_format = fmt;
        m->width = guint(GST_VIDEO_INFO_WIDTH(video));
        m->height = guint(GST_VIDEO_INFO_HEIGHT(video));
        if (m->desc.fourcc == 0)
            m->desc.fourcc = drm_fourcc_from_gst(fmt);
        m->desc.colorimetry =
            colorimetry_from_caps ? colorimetry_from_gst(video->colorimetry).pack() : 0;
    }
    bool aligned = m->n_planes > 0;
    for (guint i = 0; i < m->n_planes; ++i)
        aligned = aligned && m->plane_strides[i] % GST_EDGE_TENSOR_ROW_ALIGNMENT == 0;
    m->flags = (aligned ? GST_EDGE_TENSOR_META_FLAG_STRIDES_ALIGNED : 0) |
               (tensor.is_image() ? GST_EDGE_TENSOR_META_FLAG_IMAGE : 0);
    return m;
}

extern "C" GstEdgeTensorMeta* gst_buffer_add_edge_tensor_meta(GstBuffer* buffer,
                                                              const GstVideoInfo* info,
                                                              gboolean colorimetry_from_caps)
{
    g_return_val_if_fail(GST_IS_BUFFER(buffer), nullptr);
    g_return_val_if_fail(gst_buffer_is_writable(buffer), nullptr);
    return edgetensor::gst::guarded(nullptr, __func__, nullptr, [&]() -> GstEdgeTensorMeta* {
        if (gst_buffer_n_memory(buffer) == 0)
            return nullptr;
        GstMemory* mem = gst_buffer_peek_memory(buffer, 0);
        auto tensor = edgetensor::gst::tensor_from_memory(mem);
        if (!tensor) {
            GST_WARNING("buffer %p: its first memory holds no edgetensor tensor", buffer);
            return nullptr;
        }
        edgetensor::gst::MetaPlanes planes;
        if (info) {
            planes.n_planes =
                std::min<guint>(GST_VIDEO_INFO_N_PLANES(info), GST_EDGE_TENSOR_META_MAX_PLANES);
            for (guint i = 0; i < planes.n_planes; ++i) {
                planes.offsets[i] = GST_VIDEO_INFO_PLANE_OFFSET(info, i);
                planes.strides[i] = GST_VIDEO_INFO_PLANE_STRIDE(info, i);
            }
        } else {
            planes.n_planes = 1;
            planes.offsets[0] = tensor->offset();
            planes.strides[0] = tensor->strides().empty() ? 0 : gint(tensor->strides().front());
        }
        return edgetensor::gst::add_tensor_meta(buffer, *tensor, gst_edge_tensor_memory_get_fd(mem),
                                                true, info, planes, colorimetry_from_caps != FALSE);
    });
}
