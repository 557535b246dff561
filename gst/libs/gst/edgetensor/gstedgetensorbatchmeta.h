/* SPDX-License-Identifier: MIT */
/*
 * GstEdgeTensorBatchMeta: where every slot of a batch tensor came from. A batch tensor
 * `[N, ...]` (tensorbatch) holds N pictures converted from N source frames or regions; a tensor
 * from tensorconvert is a batch of one. For each slot the meta says which stream and frame it
 * came from, the source rectangle that was read, and the transform that put it into the slot
 * (scale per axis and letterbox padding), so a detection in slot coordinates maps back to its
 * source frame:
 *
 *   x_source = crop_x + (x_slot - pad_left) / scale_x
 *   y_source = crop_y + (y_slot - pad_top) / scale_y
 *
 * (gst_edge_tensor_batch_slot_to_source() does this). A sibling of GstEdgeTensorMeta, which
 * describes the bytes; this one describes their content, so it has no tags and stays on copies
 * of the buffer, deep ones included (elements that keep the tensor's geometry keep it); scaling
 * transforms drop it.
 */

#ifndef GST_EDGE_TENSOR_BATCH_META_H
#define GST_EDGE_TENSOR_BATCH_META_H

#include <gst/edgetensor/edgetensor-prelude.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_EDGE_TENSOR_BATCH_META_API_TYPE (gst_edge_tensor_batch_meta_api_get_type())
#define GST_EDGE_TENSOR_BATCH_META_INFO (gst_edge_tensor_batch_meta_get_info())

/* Most slots a batch has (tensorbatch's batch-size bound). */
#define GST_EDGE_TENSOR_BATCH_MAX_SLOTS 1024

/**
 * GstEdgeTensorBatchRoiKind:
 * @GST_EDGE_TENSOR_BATCH_ROI_NONE: the slot holds a whole frame (or nothing)
 * @GST_EDGE_TENSOR_BATCH_ROI_VIDEO: a #GstVideoRegionOfInterestMeta of the frame
 * @GST_EDGE_TENSOR_BATCH_ROI_ANALYTICS: an object-detection entry of the frame's
 *   GstAnalyticsRelationMeta (GStreamer 1.24 and later)
 *
 * Where a slot's region of interest came from, and so what its @roi_id numbers.
 */
typedef enum {
    GST_EDGE_TENSOR_BATCH_ROI_NONE = 0,
    GST_EDGE_TENSOR_BATCH_ROI_VIDEO = 1,
    GST_EDGE_TENSOR_BATCH_ROI_ANALYTICS = 2,
} GstEdgeTensorBatchRoiKind;

typedef struct _GstEdgeTensorBatchSlot GstEdgeTensorBatchSlot;

/**
 * GstEdgeTensorBatchSlot:
 * @filled: whether the slot holds a picture; an empty slot's bytes are all zero and its other
 *   fields say nothing (a stream without a frame when a partial batch went out, an ended
 *   stream, a ROI batch with fewer regions than slots)
 * @pad_index: the number of the sink pad the frame came in on (`sink_%u`; 0 for tensorconvert)
 * @pts: the source buffer's PTS (GST_CLOCK_TIME_NONE when it had none)
 * @source_width: the source frame's width in pixels
 * @source_height: the source frame's height in pixels
 * @crop_x: left edge of the source rectangle that was converted, in source pixels
 * @crop_y: top edge of that rectangle
 * @crop_width: its width
 * @crop_height: its height
 * @scale_x: slot pixels per source pixel, horizontally (the picture's width in the slot /
 *   @crop_width)
 * @scale_y: slot pixels per source pixel, vertically
 * @pad_left: letterbox padding columns left of the picture, in slot pixels
 * @pad_top: padding rows above the picture
 * @pad_right: padding columns right of the picture
 * @pad_bottom: padding rows below the picture
 * @roi_kind: a #GstEdgeTensorBatchRoiKind: what @roi_id numbers
 * @roi_id: the region of interest's id (the #GstVideoRegionOfInterestMeta's `id`, or the
 *   analytics entry's id); -1 when the slot holds a whole frame
 * @roi_label: the region's type or class as a #GQuark (0 when none); see
 *   gst_edge_tensor_batch_slot_get_roi_label()
 * @applied_colorimetry: the source colorimetry the conversion applied, packed like
 *   GstEdgeTensorMeta's (0 for an empty slot)
 *
 * One slot of a batch tensor: where its picture came from and how it got there.
 */
struct _GstEdgeTensorBatchSlot {
    gboolean filled;
    guint pad_index;
    GstClockTime pts;
    guint source_width;
    guint source_height;
    guint crop_x;
    guint crop_y;
    guint crop_width;
    guint crop_height;
    gdouble scale_x;
    gdouble scale_y;
    guint pad_left;
    guint pad_top;
    guint pad_right;
    guint pad_bottom;
    guint roi_kind;
    gint roi_id;
    GQuark roi_label;
    guint32 applied_colorimetry;

    /*< private >*/
    gpointer _gst_reserved[GST_PADDING];
};

typedef struct _GstEdgeTensorBatchMeta GstEdgeTensorBatchMeta;

/**
 * GstEdgeTensorBatchMeta:
 * @meta: parent
 * @n_slots: slots of the batch (the tensor's leading dimension)
 * @slot_width: width of every slot's picture, in pixels
 * @slot_height: height of every slot's picture, in pixels
 * @slots: (array length=n_slots): the slots, in batch order
 *
 * Per-slot provenance of a batch tensor. Read it with gst_buffer_get_edge_tensor_batch_meta().
 */
struct _GstEdgeTensorBatchMeta {
    GstMeta meta;

    guint n_slots;
    guint slot_width;
    guint slot_height;
    GstEdgeTensorBatchSlot* slots;

    /*< private >*/
    gpointer _gst_reserved[GST_PADDING];
};

GST_EDGE_TENSOR_API
GType gst_edge_tensor_batch_meta_api_get_type(void);
GST_EDGE_TENSOR_API
const GstMetaInfo* gst_edge_tensor_batch_meta_get_info(void);

/**
 * gst_buffer_get_edge_tensor_batch_meta:
 * @buffer: a #GstBuffer
 *
 * Returns: (transfer none) (nullable): the buffer's #GstEdgeTensorBatchMeta.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorBatchMeta* gst_buffer_get_edge_tensor_batch_meta(GstBuffer* buffer);

/**
 * gst_buffer_add_edge_tensor_batch_meta:
 * @buffer: a writable #GstBuffer
 * @n_slots: slots of the batch, 1 to %GST_EDGE_TENSOR_BATCH_MAX_SLOTS
 * @slot_width: width of a slot's picture in pixels
 * @slot_height: height of a slot's picture in pixels
 *
 * Attaches a batch meta whose slots are all empty (@filled %FALSE, @roi_id -1, @pts
 * GST_CLOCK_TIME_NONE), for the producer to fill.
 *
 * Returns: (transfer none) (nullable): the meta, %NULL when @n_slots is out of range.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorBatchMeta* gst_buffer_add_edge_tensor_batch_meta(GstBuffer* buffer, guint n_slots,
                                                              guint slot_width, guint slot_height);

/**
 * gst_edge_tensor_batch_meta_get_n_slots:
 * @meta: a #GstEdgeTensorBatchMeta
 *
 * Returns: the number of slots.
 */
GST_EDGE_TENSOR_API
guint gst_edge_tensor_batch_meta_get_n_slots(const GstEdgeTensorBatchMeta* meta);

/**
 * gst_edge_tensor_batch_meta_get_slot:
 * @meta: a #GstEdgeTensorBatchMeta
 * @index: the slot's index in the batch
 *
 * Returns: (transfer none) (nullable): slot @index, %NULL when there is no such slot.
 */
GST_EDGE_TENSOR_API
const GstEdgeTensorBatchSlot*
gst_edge_tensor_batch_meta_get_slot(const GstEdgeTensorBatchMeta* meta, guint index);

#define GST_TYPE_EDGE_TENSOR_BATCH_SLOT (gst_edge_tensor_batch_slot_get_type())
GST_EDGE_TENSOR_API
GType gst_edge_tensor_batch_slot_get_type(void);

/**
 * gst_edge_tensor_batch_slot_copy:
 * @slot: a #GstEdgeTensorBatchSlot
 *
 * Returns: (transfer full): a copy; free it with gst_edge_tensor_batch_slot_free().
 */
GST_EDGE_TENSOR_API
GstEdgeTensorBatchSlot* gst_edge_tensor_batch_slot_copy(const GstEdgeTensorBatchSlot* slot);

/**
 * gst_edge_tensor_batch_slot_free:
 * @slot: (transfer full): a copy made by gst_edge_tensor_batch_slot_copy()
 */
GST_EDGE_TENSOR_API
void gst_edge_tensor_batch_slot_free(GstEdgeTensorBatchSlot* slot);

/**
 * gst_edge_tensor_batch_slot_to_source:
 * @slot: a #GstEdgeTensorBatchSlot
 * @x: horizontal position in the slot, in slot pixels (edges: 0 is the left edge of the slot,
 *   the slot width its right edge)
 * @y: vertical position in the slot
 * @source_x: (out): the same point in the source frame, in source pixels
 * @source_y: (out): the same point in the source frame
 *
 * Maps a point of the slot's picture back to the source frame: `source_x = crop_x + (x -
 * pad_left) / scale_x`, likewise for y. A point in the letterbox padding maps outside the
 * source rectangle; nothing is clamped.
 *
 * Returns: %FALSE (and the outputs untouched) for an empty slot.
 */
GST_EDGE_TENSOR_API
gboolean gst_edge_tensor_batch_slot_to_source(const GstEdgeTensorBatchSlot* slot, gdouble x,
                                              gdouble y, gdouble* source_x, gdouble* source_y);

/**
 * gst_edge_tensor_batch_slot_box_to_source:
 * @slot: a #GstEdgeTensorBatchSlot
 * @x: the box's left edge in slot pixels
 * @y: its top edge
 * @width: its width in slot pixels
 * @height: its height
 * @source_x: (out): the box's left edge in the source frame
 * @source_y: (out): its top edge in the source frame
 * @source_width: (out): its width in source pixels
 * @source_height: (out): its height in source pixels
 *
 * A detection box of the slot in source-frame pixels (gst_edge_tensor_batch_slot_to_source()
 * of its corners).
 *
 * Returns: %FALSE (and the outputs untouched) for an empty slot.
 */
GST_EDGE_TENSOR_API
gboolean gst_edge_tensor_batch_slot_box_to_source(const GstEdgeTensorBatchSlot* slot, gdouble x,
                                                  gdouble y, gdouble width, gdouble height,
                                                  gdouble* source_x, gdouble* source_y,
                                                  gdouble* source_width, gdouble* source_height);

/**
 * gst_edge_tensor_batch_slot_get_roi_label:
 * @slot: a #GstEdgeTensorBatchSlot
 *
 * Returns: (transfer none) (nullable): the region's type or class ("person", ...), %NULL when
 *   the slot has none.
 */
GST_EDGE_TENSOR_API
const gchar* gst_edge_tensor_batch_slot_get_roi_label(const GstEdgeTensorBatchSlot* slot);

G_END_DECLS

#endif /* GST_EDGE_TENSOR_BATCH_META_H */
