// SPDX-License-Identifier: MIT
//
// tensorconvert's colorimetry: what a conversion decodes its input with (the caps' colorimetry,
// unspecified axes resolved with GStreamer's own defaults for the frame, and said so), and what
// the output's values are, for the output caps and the GstEdgeTensorMeta.

#pragma once

#include <gst/video/video.h>

#include <edgetensor/colorimetry.hpp>

#include <optional>
#include <string>

namespace edgetensor::gst
{

struct ConvertColorimetry {
    /// The source colorimetry the conversion applies: every axis resolved for a YUV source
    /// (the meta's applied_colorimetry).
    Colorimetry applied;
    /// The output values: the source's primaries and transfer kept, no YUV matrix (gray: the
    /// BT.601 luma weights), full range from a YUV source (the meta's desc.colorimetry, the
    /// video caps' field).
    Colorimetry output;
    /// The names of the axes the caps left unspecified and GStreamer's defaults filled
    /// ("matrix, range"); empty when the caps said everything the conversion uses.
    std::string assumed_axes;
};

/// For an input frame `in` whose caps had a `colorimetry` field when `from_caps`, converted
/// to `out_format` (GST_VIDEO_FORMAT_GRAY8 for gray tensors, else an RGB format).
ConvertColorimetry resolve_convert_colorimetry(const GstVideoInfo& in, bool from_caps,
                                               GstVideoFormat out_format);

/// The colorimetry string a video/x-raw output of `out_format` states for the input
/// structure `in`, nullopt when `in` is not fixed enough to tell (format, width and height).
std::optional<std::string> output_colorimetry_string(const GstStructure* in,
                                                     GstVideoFormat out_format);

/// `c` as a GStreamer colorimetry string for `format` ("bt709", "1:1:5:1", ...).
std::string colorimetry_gst_string(const Colorimetry& c, GstVideoFormat format);

} // namespace edgetensor::gst
