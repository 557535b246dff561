// SPDX-License-Identifier: MIT
//
// GstEdgeTensorBatchMeta to and from its BATCH record (batch_meta_record.hpp).

#include "batch_meta_record.hpp"

#include "internal.hpp"

#include <cstring>
#include <exception>

#define GST_CAT_DEFAULT gst_edge_tensor_meta_debug

namespace edgetensor::gst
{

namespace
{

// The fields both slot types name alike (`filled` and the ROI label differ in type).
template <typename To, typename From> void copy_common_fields(To& o, const From& s)
{
    o.pad_index = s.pad_index;
    o.pts = s.pts;
    o.source_width = s.source_width;
    o.source_height = s.source_height;
    o.crop_x = s.crop_x;
    o.crop_y = s.crop_y;
    o.crop_width = s.crop_width;
    o.crop_height = s.crop_height;
    o.scale_x = s.scale_x;
    o.scale_y = s.scale_y;
    o.pad_left = s.pad_left;
    o.pad_top = s.pad_top;
    o.pad_right = s.pad_right;
    o.pad_bottom = s.pad_bottom;
    o.roi_kind = s.roi_kind;
    o.roi_id = s.roi_id;
    o.applied_colorimetry = s.applied_colorimetry;
}

} // namespace

ipc::BatchMeta batch_record_of(const GstEdgeTensorBatchMeta& meta)
{
    ipc::BatchMeta b;
    b.slot_width = meta.slot_width;
    b.slot_height = meta.slot_height;
    b.slots.resize(meta.n_slots);
    for (guint i = 0; i < meta.n_slots; ++i) {
        const GstEdgeTensorBatchSlot& s = meta.slots[i];
        ipc::BatchSlot& o = b.slots[i];
        copy_common_fields(o, s);
        o.filled = s.filled != FALSE;
        const gchar* label = s.roi_label ? g_quark_to_string(s.roi_label) : nullptr;
        o.roi_label = label ? label : "";
    }
    return b;
}

GstEdgeTensorBatchMeta* add_batch_meta_from(GstBuffer* buffer, const ipc::BatchMeta& record)
{
    static_assert(ipc::kMaxBatchSlots == GST_EDGE_TENSOR_BATCH_MAX_SLOTS);
    GstEdgeTensorBatchMeta* m = gst_buffer_add_edge_tensor_batch_meta(
        buffer, guint(record.slots.size()), record.slot_width, record.slot_height);
    if (!m)
        return nullptr;
    for (size_t i = 0; i < record.slots.size(); ++i) {
        const ipc::BatchSlot& s = record.slots[i];
        GstEdgeTensorBatchSlot& o = m->slots[i];
        copy_common_fields(o, s);
        o.filled = s.filled ? TRUE : FALSE;
        o.roi_label = s.roi_label.empty() ? 0 : g_quark_from_string(s.roi_label.c_str());
    }
    return m;
}

#if GST_CHECK_VERSION(1, 24, 0)

gboolean serialize_batch_meta(const GstMeta* meta, GstByteArrayInterface* data, guint8* version)
{
    try {
        auto bytes = ipc::encode_batch_body(
            batch_record_of(*reinterpret_cast<const GstEdgeTensorBatchMeta*>(meta)));
        if (!bytes) {
            GST_WARNING("not serializing a GstEdgeTensorBatchMeta: %s",
                        bytes.error().message().c_str());
            return FALSE;
        }
        guint8* out = gst_byte_array_interface_append(data, bytes->size());
        if (!out)
            return FALSE;
        std::memcpy(out, bytes->data(), bytes->size());
        *version = ipc::kBatchVersion;
        return TRUE;
    } catch (const std::exception& e) {
        GST_WARNING("cannot serialize a GstEdgeTensorBatchMeta: %s", e.what());
    }
    return FALSE;
}

GstMeta* deserialize_batch_meta(const GstMetaInfo*, GstBuffer* buffer, const guint8* data,
                                gsize size, guint8 version)
{
    try {
        if (version != ipc::kBatchVersion) {
            GST_WARNING("refusing a serialized GstEdgeTensorBatchMeta of version %u (this side "
                        "reads %u)",
                        version, ipc::kBatchVersion);
            return nullptr;
        }
        auto record = ipc::parse_batch_body(std::span(data, size));
        if (!record) {
            GST_WARNING("refusing a serialized GstEdgeTensorBatchMeta: %s",
                        record.error().message().c_str());
            return nullptr;
        }
        GstEdgeTensorBatchMeta* m = add_batch_meta_from(buffer, *record);
        return m ? &m->meta : nullptr;
    } catch (const std::exception& e) {
        GST_WARNING("cannot deserialize a GstEdgeTensorBatchMeta: %s", e.what());
    }
    return nullptr;
}

#endif

} // namespace edgetensor::gst
