// SPDX-License-Identifier: MIT
//
// tensorconvert's input that is not what the engine can take as it is: buffers that do not match
// the caps (dropped, counted, an error when they persist) and bottom-up frames (copied top-down).

#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <edgetensor/convert.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorconvert
{

/// Input buffers that do not match the caps in a row before a drop becomes an error.
inline constexpr guint kMaxConsecutiveDrops = 10;

/// Reports the drop of `inbuf` (`why` it does not match the caps; `dropped` so far, `in_row` of
/// them in the current run): the first of a run is an element warning, kMaxConsecutiveDrops in a
/// row an element error (GST_FLOW_ERROR), the others a debug line in `cat`. Otherwise returns
/// GST_BASE_TRANSFORM_FLOW_DROPPED. Call it without holding the element's locks: a bus sync
/// handler may read its properties.
GstFlowReturn report_drop(GstElement* element, GstDebugCategory* cat, GstBuffer* inbuf,
                          const std::string& why, guint64 dropped, guint in_row);

/// The engine reads rows at positive pitches: copies the `caps`-sized picture of the bottom-up
/// `frame` top-down into `scratch` and points `src` at its planes.
void top_down_copy(const GstVideoFrame* frame, const GstVideoInfo* caps,
                   std::vector<uint8_t>* scratch, SourceFrame* src);

} // namespace edgetensor::gst::tensorconvert
