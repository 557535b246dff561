// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta through GStreamer's meta serialization (1.24+: gst_meta_serialize() and
// gst_meta_deserialize(), which unixfdsink/unixfdsrc and gdppay/gdpdepay use). The record is
// tensor_meta_codec.hpp's; these are the GstMetaInfo hooks around it. Not installed.

#pragma once

#include "internal_api.hpp"
#include "tensor_meta_codec.hpp"

#include <gst/edgetensor/gstedgetensormeta.h>

namespace edgetensor::gst
{

/// The fields of `meta` that travel.
EDGETENSOR_GST_INTERNAL TensorMetaFields tensor_meta_fields(const GstEdgeTensorMeta& meta);

/// Fills `meta` from fields another process sent: its identity 0 (the sender's names nothing
/// here), its descriptor's handle the fd of `buffer`'s first memory when it has one (a
/// deserializer usually runs before the memories are added: then -1), ptr NULL, sync 0.
/// False, with `why`, when the video format is one this GStreamer does not know.
EDGETENSOR_GST_INTERNAL bool apply_tensor_meta_fields(GstEdgeTensorMeta* meta, GstBuffer* buffer,
                                                      const TensorMetaFields& fields,
                                                      std::string* why);

#if GST_CHECK_VERSION(1, 24, 0)
/// GstMetaInfo.serialize_func: the version-1 record.
gboolean serialize_tensor_meta(const GstMeta* meta, GstByteArrayInterface* data, guint8* version);
/// GstMetaInfo.deserialize_func: a new meta on `buffer`, or NULL (logged with the reason: the
/// record is another process's bytes and is refused unless every field checks).
GstMeta* deserialize_tensor_meta(const GstMetaInfo* info, GstBuffer* buffer, const guint8* data,
                                 gsize size, guint8 version);
#endif

} // namespace edgetensor::gst
