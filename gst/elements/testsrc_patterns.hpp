// SPDX-License-Identifier: MIT
//
// tensortestsrc's patterns: video rendered fast enough that the source is not what a pipeline
// benchmark measures, and the same patterns as tensor elements.

#pragma once

#include "gsttensortestsrc.h"

#include <gst/video/video.h>

#include <edgetensor/tensor_dyn.hpp>

namespace edgetensor::gst
{

/// Fills every pixel of a mapped frame with `pattern` for frame number `n`. YUV formats are
/// encoded with the frame's colorimetry (matrix and range), so a consumer that honours it
/// recovers the pattern's RGB.
void fill_video_pattern(GstVideoFrame* frame, GstTensorTestSrcPattern pattern, guint64 n);

/// fill_video_pattern(), and for GST_TENSOR_TEST_SRC_FRAME_COUNTER every byte of every row of
/// frame n set to n modulo 256.
void fill_video(GstVideoFrame* frame, GstTensorTestSrcPattern pattern, guint64 n);

/// Fills `bytes` bytes of `dtype` elements with `pattern` for frame `n`: the gradient counts
/// (i + n) mod 256, the checkers alternate every 8 elements, white is 255; floating-point
/// elements get those values / 255. The frame counter sets every byte to n mod 256.
void fill_tensor(guint8* data, gsize bytes, DType dtype, GstTensorTestSrcPattern pattern,
                 guint64 n);

} // namespace edgetensor::gst
