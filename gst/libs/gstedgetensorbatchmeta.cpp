// SPDX-License-Identifier: MIT
//
// GstEdgeTensorBatchMeta: per-slot provenance of a batch tensor (gstedgetensorbatchmeta.h).

#include "batch_meta_record.hpp"
#include "internal.hpp"

#include <gst/edgetensor/gstedgetensorbatchmeta.h>

#include <algorithm>

#define GST_CAT_DEFAULT gst_edge_tensor_meta_debug

namespace
{

void empty_slot(GstEdgeTensorBatchSlot* s)
{
    *s = GstEdgeTensorBatchSlot{};
    s->pts = GST_CLOCK_TIME_NONE;
    s->roi_id = -1;
}

gboolean batch_meta_init(GstMeta* meta, gpointer, GstBuffer*)
{
    auto* m = reinterpret_cast<GstEdgeTensorBatchMeta*>(meta);
    m->n_slots = 0;
    m->slot_width = 0;
    m->slot_height = 0;
    m->slots = nullptr;
    return TRUE;
}

void batch_meta_free(GstMeta* meta, GstBuffer*)
{
    auto* m = reinterpret_cast<GstEdgeTensorBatchMeta*>(meta);
    g_free(m->slots);
    m->slots = nullptr;
    m->n_slots = 0;
}

// The slots say where the content came from: true of any copy of the buffer (the bytes are the
// same picture), not of a scaled or otherwise transformed one.
gboolean batch_meta_transform(GstBuffer* dest, GstMeta* meta, GstBuffer*, GQuark type, gpointer)
{
    if (!GST_META_TRANSFORM_IS_COPY(type))
        return FALSE;
    const auto* src = reinterpret_cast<const GstEdgeTensorBatchMeta*>(meta);
    GstEdgeTensorBatchMeta* dst = gst_buffer_add_edge_tensor_batch_meta(
        dest, src->n_slots, src->slot_width, src->slot_height);
    if (!dst)
        return FALSE;
    std::copy(src->slots, src->slots + src->n_slots, dst->slots);
    return TRUE;
}

} // namespace

extern "C" GType gst_edge_tensor_batch_meta_api_get_type(void)
{
    static gsize type = 0;
    // No tags: the provenance holds whatever is done to the bytes short of a transform (which
    // the transform function refuses).
    static const gchar* tags[] = {nullptr};
    if (g_once_init_enter(&type)) {
        GType t = gst_meta_api_type_register("GstEdgeTensorBatchMetaAPI", tags);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

extern "C" const GstMetaInfo* gst_edge_tensor_batch_meta_get_info(void)
{
    // Outside the once below: gst_edge_tensor_init() registers this meta through this very
    // function, which must then find the once not yet entered.
    gst_edge_tensor_init();
    static const GstMetaInfo* info = nullptr;
    if (g_once_init_enter(&info)) {
#if GST_CHECK_VERSION(1, 24, 0)
        // With serialization (the IPC protocol's BATCH record), so unixfdsink/unixfdsrc carry
        // the provenance.
        GstMetaInfo* m =
            gst_meta_info_new(GST_EDGE_TENSOR_BATCH_META_API_TYPE, "GstEdgeTensorBatchMeta",
                              sizeof(GstEdgeTensorBatchMeta));
        m->init_func = batch_meta_init;
        m->free_func = batch_meta_free;
        m->transform_func = batch_meta_transform;
        m->serialize_func = edgetensor::gst::serialize_batch_meta;
        m->deserialize_func = edgetensor::gst::deserialize_batch_meta;
        const GstMetaInfo* mi = gst_meta_info_register(m);
#else
        const GstMetaInfo* mi = gst_meta_register(
            GST_EDGE_TENSOR_BATCH_META_API_TYPE, "GstEdgeTensorBatchMeta",
            sizeof(GstEdgeTensorBatchMeta), batch_meta_init, batch_meta_free, batch_meta_transform);
#endif
        g_once_init_leave(&info, mi);
    }
    return info;
}

extern "C" GstEdgeTensorBatchMeta* gst_buffer_get_edge_tensor_batch_meta(GstBuffer* buffer)
{
    g_return_val_if_fail(GST_IS_BUFFER(buffer), nullptr);
    return reinterpret_cast<GstEdgeTensorBatchMeta*>(
        gst_buffer_get_meta(buffer, GST_EDGE_TENSOR_BATCH_META_API_TYPE));
}

extern "C" GstEdgeTensorBatchMeta* gst_buffer_add_edge_tensor_batch_meta(GstBuffer* buffer,
                                                                         guint n_slots,
                                                                         guint slot_width,
                                                                         guint slot_height)
{
    g_return_val_if_fail(GST_IS_BUFFER(buffer), nullptr);
    g_return_val_if_fail(gst_buffer_is_writable(buffer), nullptr);
    g_return_val_if_fail(n_slots >= 1 && n_slots <= GST_EDGE_TENSOR_BATCH_MAX_SLOTS, nullptr);
    auto* m = reinterpret_cast<GstEdgeTensorBatchMeta*>(
        gst_buffer_add_meta(buffer, GST_EDGE_TENSOR_BATCH_META_INFO, nullptr));
    if (!m)
        return nullptr;
    m->slots = g_new(GstEdgeTensorBatchSlot, n_slots);
    m->n_slots = n_slots;
    m->slot_width = slot_width;
    m->slot_height = slot_height;
    for (guint i = 0; i < n_slots; ++i)
        empty_slot(&m->slots[i]);
    return m;
}

extern "C" guint gst_edge_tensor_batch_meta_get_n_slots(const GstEdgeTensorBatchMeta* meta)
{
    g_return_val_if_fail(meta != nullptr, 0);
    return meta->n_slots;
}

extern "C" const GstEdgeTensorBatchSlot*
gst_edge_tensor_batch_meta_get_slot(const GstEdgeTensorBatchMeta* meta, guint index)
{
    g_return_val_if_fail(meta != nullptr, nullptr);
    if (index >= meta->n_slots || !meta->slots)
        return nullptr;
    return &meta->slots[index];
}

extern "C" GstEdgeTensorBatchSlot*
gst_edge_tensor_batch_slot_copy(const GstEdgeTensorBatchSlot* slot)
{
    g_return_val_if_fail(slot != nullptr, nullptr);
    auto* copy = g_new(GstEdgeTensorBatchSlot, 1);
    *copy = *slot;
    return copy;
}

extern "C" void gst_edge_tensor_batch_slot_free(GstEdgeTensorBatchSlot* slot)
{
    g_free(slot);
}

G_DEFINE_BOXED_TYPE(GstEdgeTensorBatchSlot, gst_edge_tensor_batch_slot,
                    gst_edge_tensor_batch_slot_copy, gst_edge_tensor_batch_slot_free)

extern "C" gboolean gst_edge_tensor_batch_slot_to_source(const GstEdgeTensorBatchSlot* slot,
                                                         gdouble x, gdouble y, gdouble* source_x,
                                                         gdouble* source_y)
{
    g_return_val_if_fail(slot != nullptr, FALSE);
    if (!slot->filled || !(slot->scale_x > 0.0) || !(slot->scale_y > 0.0))
        return FALSE;
    if (source_x)
        *source_x = slot->crop_x + (x - slot->pad_left) / slot->scale_x;
    if (source_y)
        *source_y = slot->crop_y + (y - slot->pad_top) / slot->scale_y;
    return TRUE;
}

extern "C" gboolean gst_edge_tensor_batch_slot_box_to_source(
    const GstEdgeTensorBatchSlot* slot, gdouble x, gdouble y, gdouble width, gdouble height,
    gdouble* source_x, gdouble* source_y, gdouble* source_width, gdouble* source_height)
{
    g_return_val_if_fail(slot != nullptr, FALSE);
    gdouble x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    if (!gst_edge_tensor_batch_slot_to_source(slot, x, y, &x0, &y0) ||
        !gst_edge_tensor_batch_slot_to_source(slot, x + width, y + height, &x1, &y1))
        return FALSE;
    if (source_x)
        *source_x = x0;
    if (source_y)
        *source_y = y0;
    if (source_width)
        *source_width = x1 - x0;
    if (source_height)
        *source_height = y1 - y0;
    return TRUE;
}

extern "C" const gchar* gst_edge_tensor_batch_slot_get_roi_label(const GstEdgeTensorBatchSlot* slot)
{
    g_return_val_if_fail(slot != nullptr, nullptr);
    return slot->roi_label ? g_quark_to_string(slot->roi_label) : nullptr;
}
