// SPDX-License-Identifier: MIT
//
// What a stream's fixed caps say about every buffer: video/x-raw (its GstVideoInfo, pixel and
// DRM format, colorimetry) or one other/tensors tensor. Made once per caps and shared
// immutable: an element keeps the pointer under its streaming lock and takes it once per
// buffer; the import cache and the copy fallback read the same snapshot. Not installed.
//
// DMA_DRM (GStreamer 1.24+) is one more way for caps to say where the frames are:
// `video/x-raw(memory:DMABuf), format=DMA_DRM, drm-format=NV12[:<modifier>]`, read here
// (GstVideoInfoDmaDrm) and nowhere else: a linear drm-format is the same frame as
// `video/x-raw(memory:DMABuf), format=NV12` (vinfo has the GStreamer format and its default
// layout; GstVideoMeta carries the real strides and offsets), memory DmaDrm, the DRM format in
// `drm`; a tiled or compressed modifier is refused, naming it, so no element ever reads such a
// frame as linear. Built against 1.22, DMA_DRM caps do not exist and nothing here changes.

#pragma once

#include "internal_api.hpp"

#include "glib_raii.hpp"
#include "tensor_caps.hpp"

#include <gst/video/video.h>

#include <edgetensor/colorimetry.hpp>
#include <edgetensor/error.hpp>
#include <edgetensor/pixel_format.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace edgetensor::gst
{

/// Where the caps say the frames travel.
enum class StreamMemory {
    Any,    ///< no memory feature: mappable memory (system, memfd, mappable DMA-BUF)
    DmaBuf, ///< video/x-raw(memory:DMABuf) with a GStreamer format
    DmaDrm, ///< 1.24+: format=DMA_DRM, drm-format=<fourcc>[:<modifier>], the DRM format in `drm`
};

/// A DRM pixel format: its FourCC (0 where DRM has none) and modifier (0: linear).
struct DrmFormat {
    uint32_t fourcc = 0;
    uint64_t modifier = 0;
};

/// One stream's layout, from fixed caps.
struct StreamLayout {
    MiniObjectPtr<GstCaps> caps; ///< the caps it was made from
    bool video = false;          ///< video/x-raw; else one other/tensors tensor
    StreamMemory memory = StreamMemory::Any;

    // video/x-raw
    GstVideoInfo vinfo{}; ///< the caps' default layout (a buffer's GstVideoMeta may differ)
    PixelFormat pixel_format = PixelFormat::None; ///< None: the core has no image for it
    DrmFormat drm; ///< the frames' DRM format (DmaDrm: the caps' drm-format; tiled only as asked)
    bool colorimetry_from_caps = false;
    Colorimetry colorimetry; ///< from the caps' colorimetry field only, never guessed

    // other/tensors
    TensorCaps tensor;

    size_t frame_bytes = 0; ///< one frame in the default layout (video) or the tensor
    int fps_n = 0;
    int fps_d = 1;

    /// Whether `other` are the caps this layout was made from (gst_caps_is_equal).
    EDGETENSOR_GST_INTERNAL bool same_caps(const GstCaps* other) const noexcept;
};

using StreamLayoutPtr = std::shared_ptr<const StreamLayout>;

/// The layout of fixed caps of one structure: video/x-raw (any memory feature, any format
/// gst_video_info_from_caps() reads; 1.24+: DMA_DRM with a linear drm-format) or other/tensors
/// (parse_tensor_caps()). The error says what is wrong: not fixed, neither media type, no known
/// format/size, the tensor field, a drm-format with a modifier (NotSupported, naming it:
/// "NV12:0x0100000000000001") that `tiled` does not list. `tiled`: the tiled or compressed
/// drm-formats the caller imports itself (tensorconvert compute=gl, its GL display's list);
/// such a layout has the GStreamer format's default vinfo (GstVideoMeta carries the real
/// pitches and offsets) and its modifier in `drm`, and is never to be mapped as rows.
EDGETENSOR_GST_INTERNAL Result<StreamLayoutPtr>
stream_layout_from_caps(const GstCaps* caps, std::span<const DrmFormat> tiled = {});

} // namespace edgetensor::gst
