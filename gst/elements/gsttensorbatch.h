// SPDX-License-Identifier: MIT
//
// tensorbatch: many streams (or many regions of one stream's frames) into one batch tensor
// [N, ...], each input converted by the engine straight into its slot of one pooled tensor, with
// a latency bound for partial batches and per-slot provenance (GstEdgeTensorBatchMeta).

#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_BATCH (gst_tensor_batch_get_type())
G_DECLARE_FINAL_TYPE(GstTensorBatch, gst_tensor_batch, GST, TENSOR_BATCH, GstAggregator)

#define GST_TYPE_TENSOR_BATCH_PAD (gst_tensor_batch_pad_get_type())
G_DECLARE_FINAL_TYPE(GstTensorBatchPad, gst_tensor_batch_pad, GST, TENSOR_BATCH_PAD,
                     GstAggregatorPad)

/**
 * GstTensorBatchMode:
 * @GST_TENSOR_BATCH_MODE_STREAMS: one slot per sink pad: a batch holds a frame of each stream
 * @GST_TENSOR_BATCH_MODE_ROI: the slots hold the regions of interest of one stream's frames
 */
typedef enum {
    GST_TENSOR_BATCH_MODE_STREAMS = 0,
    GST_TENSOR_BATCH_MODE_ROI = 1,
} GstTensorBatchMode;

/**
 * GstTensorBatchOrdering:
 * @GST_TENSOR_BATCH_ORDERING_FIFO: each slot takes its stream's oldest waiting frame; no frame
 *   is dropped
 * @GST_TENSOR_BATCH_ORDERING_LATEST: each slot takes its stream's newest waiting frame; older
 *   waiting frames of that stream are dropped (counted)
 *
 * Which frame of a stream goes into the batch when several wait (live sources of different
 * rates or phases).
 */
typedef enum {
    GST_TENSOR_BATCH_ORDERING_FIFO = 0,
    GST_TENSOR_BATCH_ORDERING_LATEST = 1,
} GstTensorBatchOrdering;

#define GST_TYPE_TENSOR_BATCH_MODE (gst_tensor_batch_mode_get_type())
GType gst_tensor_batch_mode_get_type(void);
#define GST_TYPE_TENSOR_BATCH_ORDERING (gst_tensor_batch_ordering_get_type())
GType gst_tensor_batch_ordering_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(tensorbatch);

G_END_DECLS
