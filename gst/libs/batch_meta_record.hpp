// SPDX-License-Identifier: MIT
//
// GstEdgeTensorBatchMeta as the IPC protocol's BATCH record (lib/tensor/src/ipc/ipc_meta.hpp),
// the one format its provenance takes outside a process: tensoripcsink/tensoripcsrc send it in
// a FRAME's meta section, and on GStreamer 1.24+ the meta's own serialization (unixfdsink and
// whatever else calls gst_meta_serialize()) writes the same body. Internal: the plugin links it,
// applications do not see it.

#pragma once

#include "internal_api.hpp"
#include "ipc_meta.hpp"

#include <gst/edgetensor/gstedgetensorbatchmeta.h>
#include <gst/gst.h>

namespace edgetensor::gst
{

/// `meta`'s slots in plain types, the ROI label as its string.
EDGETENSOR_GST_INTERNAL ipc::BatchMeta batch_record_of(const GstEdgeTensorBatchMeta& meta);

/// A new GstEdgeTensorBatchMeta on `buffer` (writable) holding `record` (checked: from
/// ipc::parse_batch_body() or parse_metas()); the ROI labels become this process's GQuarks.
/// NULL when the buffer takes no meta.
EDGETENSOR_GST_INTERNAL GstEdgeTensorBatchMeta* add_batch_meta_from(GstBuffer* buffer,
                                                                    const ipc::BatchMeta& record);

#if GST_CHECK_VERSION(1, 24, 0)
/// GstMetaInfo.serialize_func: the BATCH record's body, version ipc::kBatchVersion.
gboolean serialize_batch_meta(const GstMeta* meta, GstByteArrayInterface* data, guint8* version);
/// GstMetaInfo.deserialize_func: a new meta on `buffer`, or NULL, logged with the reason (the
/// bytes are another process's and are refused unless every field checks).
GstMeta* deserialize_batch_meta(const GstMetaInfo* info, GstBuffer* buffer, const guint8* data,
                                gsize size, guint8 version);
#endif

} // namespace edgetensor::gst
