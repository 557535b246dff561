// SPDX-License-Identifier: MIT
//
// tensortestsrc's video patterns, rendered fast enough that the source is not what a pipeline
// benchmark measures.

#pragma once

#include "gsttensortestsrc.h"

#include <gst/video/video.h>

namespace edgetensor::gst
{

/// Fills every pixel of a mapped frame with `pattern` for frame number `n`. YUV formats are
/// encoded with the frame's colorimetry (matrix and range), so a consumer that honours it
/// recovers the pattern's RGB.
void fill_video_pattern(GstVideoFrame* frame, GstTensorTestSrcPattern pattern, guint64 n);

} // namespace edgetensor::gst
