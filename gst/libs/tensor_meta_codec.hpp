// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta's fields as bytes another process reads (the 1.24 meta serialization that
// unixfdsink/unixfdsrc and gdppay use), without GLib, so the parser is unit-tested and fuzzed
// on every GStreamer version. The GstMeta hooks that call it are gstedgetensormeta_serialize.cpp.
//
// What travels is what describes the bytes: the descriptor (less its handle, address and sync
// fence, which mean nothing in another process), the plane layout, the video format and the
// colorimetries. The identity does not: it names a tensor of the sender's process.

#pragma once

#include <edgetensor/error.hpp>
#include <edgetensor/tensor_desc.h>

#include <cstdint>
#include <span>
#include <vector>

namespace edgetensor::gst
{

/// The serialization format's version (GstMetaSerializeFunction's `version`). Readers refuse
/// any other: a change of layout or meaning bumps it.
inline constexpr uint8_t kTensorMetaCodecVersion = 1;
/// Bytes of a version-1 record.
inline constexpr size_t kTensorMetaRecordSize = 244;
inline constexpr uint32_t kTensorMetaMaxPlanes = 4;

/// GstEdgeTensorMeta's fields that travel, in plain types.
struct TensorMetaFields {
    uint32_t memory_kind = 0;  ///< GstEdgeTensorMemoryKind: 0 auto, 1 dma, 2 shm, 3 system
    EdgeTensorDesc desc{};     ///< handle -1, ptr NULL and sync 0 once decoded
    uint32_t video_format = 0; ///< GstVideoFormat; the GStreamer side checks it is known
    uint32_t width = 0;
    uint32_t height = 0;
    uint32_t n_planes = 0;
    uint64_t plane_offsets[kTensorMetaMaxPlanes] = {};
    int32_t plane_strides[kTensorMetaMaxPlanes] = {};
    uint32_t flags = 0; ///< GstEdgeTensorMetaFlags
    uint32_t applied_colorimetry = 0;
};

/// The record of `fields`, kTensorMetaRecordSize bytes, little-endian. The descriptor's handle,
/// ptr and sync (and its SYNC_PRESENT flag) are left out.
std::vector<uint8_t> encode_tensor_meta(const TensorMetaFields& fields);

/// Reads a record another process wrote; trusts nothing in it. Errors (InvalidDescriptor) name
/// the field: another version, a size that is not the record's, a memory kind, descriptor
/// version, kind, rank, dtype, pixel format, flag or colorimetry code this side does not know,
/// dimensions set beyond the rank, a zero dimension, a negative stride, shape and strides that
/// address more than the capacity, more planes than 4, a plane that starts beyond the capacity
/// or has no positive stride, a plane set beyond n_planes, unknown meta flags, a video frame of
/// zero width or height. Pure: no system call, no allocation beyond the result.
Result<TensorMetaFields> decode_tensor_meta(std::span<const uint8_t> bytes, uint8_t version);

} // namespace edgetensor::gst
