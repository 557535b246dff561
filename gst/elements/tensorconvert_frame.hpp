// SPDX-License-Identifier: MIT
//
// One frame through tensorconvert's converter: the tensor path (the input's memory is a tensor:
// a foreign DMA-BUF or memfd through the import cache, or, for the GL backend, our own pool's)
// or the mapped path (both frames mapped, bottom-up input copied top-down). The element keeps
// the streaming state and its lock; this file only converts.

#pragma once

#include "stream_layout.hpp"
#include "tensorconvert_caps.hpp"

#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/gst.h>

#include <edgetensor/convert.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorconvert
{

/// What converting one frame reads from the element's streaming state (under its lock).
struct FrameJob {
    Converter& converter;
    const StreamLayout& in;          ///< the input caps
    const OutputCaps& out;           ///< the output caps
    GstEdgeTensorImportCache* cache; ///< null: foreign memory is mapped
    std::vector<uint8_t>& scratch;   ///< a top-down copy of a bottom-up frame
};

/// Converts tensor to tensor when `inbuf`'s memory is one; false (logged, and why in `refused`
/// when given) when it is not, or the converter refused it: the caller maps the frame instead.
bool convert_tensors(GstElement* self, const FrameJob& job, GstBuffer* inbuf, GstBuffer* outbuf,
                     std::string* refused = nullptr);

/// Converts the mapped frames: GST_FLOW_OK, or GST_FLOW_ERROR after an element error naming
/// what could not be mapped or why the conversion failed.
GstFlowReturn convert_mapped(GstElement* self, const FrameJob& job, GstBuffer* inbuf,
                             GstBuffer* outbuf);

} // namespace edgetensor::gst::tensorconvert
