// SPDX-License-Identifier: MIT
//
// How an edgetensor pool lays out one frame of a stream: the row-stride rule (64-byte rows for
// DMA-BUF, the caller's GstVideoAlignment) applied to the stream's default layout. Not
// installed.

#pragma once

#include "internal_api.hpp"

#include "stream_layout.hpp"

#include <gst/video/video.h>

#include <edgetensor/error.hpp>

#include <cstddef>

namespace edgetensor::gst
{

/// What one pooled frame looks like in memory.
struct FrameLayout {
    StreamLayoutPtr stream;            ///< what the caps say
    GstVideoInfo vinfo{};              ///< video: final strides, offsets and size
    size_t size = 0;                   ///< bytes of one frame
    bool differs_from_default = false; ///< video: not GStreamer's default layout for the caps
};

/// The pooled layout of `stream`: video planes get row strides rounded up to `row_align` (1 =
/// GStreamer's default layout; a power of two); `align` (nullable) adds the caller's
/// GstVideoAlignment (padding and stride masks). Tiled, opaque and interlaced video is refused:
/// pools hold linear progressive frames.
EDGETENSOR_GST_INTERNAL Result<FrameLayout> pooled_frame_layout(const StreamLayoutPtr& stream,
                                                                size_t row_align,
                                                                const GstVideoAlignment* align);

} // namespace edgetensor::gst
