// SPDX-License-Identifier: MIT
//
// Provenance and output records of converted tensors (tensorbatch_provenance.hpp).

#include "tensorbatch_provenance.hpp"

namespace edgetensor::gst
{

void fill_slot(GstEdgeTensorBatchSlot* slot, const SlotSource& src, const ConvertConfig& cfg,
               const ConvertGeometry& g) noexcept
{
    empty_slot(slot);
    slot->filled = TRUE;
    slot->pad_index = src.pad_index;
    slot->pts = src.pts;
    slot->source_width = guint(cfg.src_width);
    slot->source_height = guint(cfg.src_height);
    slot->crop_x = guint(g.source.x);
    slot->crop_y = guint(g.source.y);
    slot->crop_width = guint(g.source.width);
    slot->crop_height = guint(g.source.height);
    slot->scale_x = g.scale_x;
    slot->scale_y = g.scale_y;
    slot->pad_left = guint(g.pad_left);
    slot->pad_top = guint(g.pad_top);
    slot->pad_right = guint(g.pad_right);
    slot->pad_bottom = guint(g.pad_bottom);
    slot->roi_kind = src.roi_kind;
    slot->roi_id = src.roi_id;
    slot->roi_label = src.roi_label;
    slot->applied_colorimetry = src.applied_colorimetry;
}

void empty_slot(GstEdgeTensorBatchSlot* slot) noexcept
{
    *slot = GstEdgeTensorBatchSlot{};
    slot->pts = GST_CLOCK_TIME_NONE;
    slot->roi_id = -1;
}

void record_output(GstBuffer* outbuf, const ConvertConfig& cfg, guint32 out,
                   guint32 applied) noexcept
{
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(outbuf);
    if (!m)
        return;
    m->desc.colorimetry = out;
    m->applied_colorimetry = applied;
    if (cfg.quant) {
        m->flags |= GST_EDGE_TENSOR_META_FLAG_QUANTIZED;
        m->quant_scale = cfg.quant->scale;
        m->quant_zero_point = cfg.quant->zero_point;
    } else {
        m->flags &= ~guint(GST_EDGE_TENSOR_META_FLAG_QUANTIZED);
        m->quant_scale = 0.f;
        m->quant_zero_point = 0;
    }
}

void record_conversion(GstBuffer* outbuf, const Converter& conv, GstClockTime pts, guint32 out,
                       guint32 applied) noexcept
{
    record_output(outbuf, conv.config(), out, applied);
    GstEdgeTensorBatchMeta* b = gst_buffer_add_edge_tensor_batch_meta(
        outbuf, 1, guint(conv.dst_width()), guint(conv.dst_height()));
    if (!b)
        return;
    SlotSource src;
    src.pts = pts;
    src.applied_colorimetry = applied;
    fill_slot(&b->slots[0], src, conv.config(), conv.geometry());
}

} // namespace edgetensor::gst
