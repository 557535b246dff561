// SPDX-License-Identifier: MIT
//
// Shared by the gtest fuzz driver and the libFuzzer target of GstEdgeTensorMeta's
// serialization record (gst/libs/tensor_meta_codec): a valid seed record, and what must hold
// when decode_tensor_meta() accepts bytes. The record is another process's bytes (unixfdsrc,
// gdpdepay hand them over): accepting garbage quietly is as much a bug as crashing on it.

#pragma once

#include "tensor_meta_codec.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace edgetensor::fuzz
{

/// A valid record: a float32 CHW tensor converted from NV12 (which = 1), or a two-plane NV12
/// frame (which = 0), so mutations start near-valid.
inline std::vector<uint8_t> seed_tensor_meta(unsigned which)
{
    gst::TensorMetaFields f;
    f.desc = edgetensor_desc_init();
    if (which & 1) {
        f.memory_kind = 2;
        f.desc.kind = EDGETENSOR_KIND_HOST;
        f.desc.ndim = 3;
        f.desc.dtype = EDGETENSOR_DTYPE_F32;
        f.desc.shape[0] = 3;
        f.desc.shape[1] = 32;
        f.desc.shape[2] = 64;
        f.desc.strides[0] = 32 * 256;
        f.desc.strides[1] = 256;
        f.desc.strides[2] = 4;
        f.desc.capacity = 3 * 32 * 256;
        f.n_planes = 1;
        f.plane_strides[0] = 256;
        f.applied_colorimetry = EDGETENSOR_COLORIMETRY_PACK(1, 1, 2, 2);
    } else {
        f.memory_kind = 1;
        f.desc.kind = EDGETENSOR_KIND_DMABUF;
        f.desc.ndim = 3;
        f.desc.dtype = EDGETENSOR_DTYPE_U8;
        f.desc.shape[0] = 48;
        f.desc.shape[1] = 64;
        f.desc.shape[2] = 1;
        f.desc.strides[0] = 64;
        f.desc.strides[1] = 1;
        f.desc.strides[2] = 1;
        f.desc.capacity = 64 * 48;
        f.desc.format = EDGETENSOR_FORMAT_NV12;
        f.desc.colorimetry = EDGETENSOR_COLORIMETRY_PACK(1, 1, 2, 2);
        f.video_format = 23; // GST_VIDEO_FORMAT_NV12
        f.width = 64;
        f.height = 32;
        f.n_planes = 2;
        f.plane_strides[0] = 64;
        f.plane_strides[1] = 64;
        f.plane_offsets[1] = 64 * 32;
        f.flags = 3;
    }
    return gst::encode_tensor_meta(f);
}

/// What must hold for accepted bytes; empty when all holds. The record has one encoding for
/// what it says, so re-encoding what was accepted must give the same bytes back.
inline std::string check_accepted_tensor_meta(const gst::TensorMetaFields& f,
                                              const std::vector<uint8_t>& bytes)
{
    if (gst::encode_tensor_meta(f) != bytes)
        return "accepted bytes that do not re-encode to themselves";
    const EdgeTensorDesc& d = f.desc;
    if (d.handle != -1 || d.ptr != nullptr || d.sync != 0)
        return "accepted a descriptor with a handle, an address or a fence";
    if (d.ndim > EDGETENSOR_DESC_MAX_NDIM || f.n_planes > gst::kTensorMetaMaxPlanes)
        return "accepted a rank or plane count beyond the arrays";
    uint64_t last = 0;
    for (uint32_t i = 0; i < d.ndim; ++i) {
        if (d.shape[i] == 0 || d.strides[i] < 0)
            return "accepted a zero dimension or a negative stride";
        last += (d.shape[i] - 1) * uint64_t(d.strides[i]);
    }
    if (d.ndim > 0 && last >= d.capacity)
        return "accepted shape and strides beyond the capacity";
    for (uint32_t p = 0; p < f.n_planes; ++p)
        if (f.plane_offsets[p] >= d.capacity || f.plane_strides[p] <= 0)
            return "accepted a plane outside the tensor";
    return {};
}

} // namespace edgetensor::fuzz
