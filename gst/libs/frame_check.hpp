// SPDX-License-Identifier: MIT
//
// Untrusted video frames: where a buffer's planes really lie (its GstVideoMeta, else the caps'
// layout), checked against the memory gst_video_frame_map() will map before any byte is read,
// and a row copy that carries every byte of a row. Not installed.

#pragma once

#include "internal_api.hpp"

#include <gst/video/video.h>

#include <cstddef>
#include <string>

namespace edgetensor::gst
{

/// Bytes of one row of `plane` that hold samples of a `width`-pixel frame, the last chroma
/// sample of odd-width packed 4:2:2 rows (YUY2, UYVY, VYUY) included. 0 when the format's
/// packing is not described per component (v210, UYVP, IYU1, tiled formats).
EDGETENSOR_GST_INTERNAL size_t plane_row_bytes(const GstVideoFormatInfo* finfo, guint plane,
                                               gint width) noexcept;

/// Rows of `plane` in a `height`-line frame.
EDGETENSOR_GST_INTERNAL guint plane_rows(const GstVideoFormatInfo* finfo, guint plane,
                                         gint height) noexcept;

/// True when `buffer` can be read as a frame of `info`: a GstVideoMeta, if any, has the caps'
/// format and plane count and at least their size; without one the buffer holds info->size
/// bytes; and the first and last byte of every plane (its first and last row, either stride
/// sign) lie inside the memory that gst_video_frame_map() maps for that plane. Otherwise false,
/// and `why` names the plane, the offsets and the sizes. Reads no pixel, maps nothing.
EDGETENSOR_GST_INTERNAL bool check_video_frame(GstBuffer* buffer, const GstVideoInfo* info,
                                               std::string* why);

/// True when some plane of `frame` has a negative stride (a bottom-up frame).
EDGETENSOR_GST_INTERNAL bool frame_is_bottom_up(const GstVideoFrame* frame) noexcept;

/// Copies the picture of `src` into `dst` (same format, `dst` no larger): plane_row_bytes() of
/// every row, any stride sign on either side. gst_video_frame_copy() in 1.22 copies width x
/// pixel-stride bytes, which drops the last V (U) byte of odd-width YUY2/UYVY (VYUY) rows.
EDGETENSOR_GST_INTERNAL bool copy_video_frame(GstVideoFrame* dst, const GstVideoFrame* src);

} // namespace edgetensor::gst
