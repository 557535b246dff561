// SPDX-License-Identifier: MIT
//
// tensorbatch's caps: the pad templates (sink pads take what tensorconvert takes, the source
// gives other/tensors with a leading batch dimension), what one sink pad's caps say for its
// converter, why caps a pad cannot take are refused, and the batch's output caps.

#pragma once

#include "stream_layout.hpp"
#include "tensorbatch_properties.hpp"
#include "tensorconvert_colorimetry.hpp"
#include "tensorconvert_settings.hpp"

#include <edgetensor/convert.hpp>
#include <edgetensor/error.hpp>

#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstddef>
#include <string>

namespace edgetensor::gst::tensorbatch
{

extern GstStaticPadTemplate sink_template;
extern GstStaticPadTemplate src_template;

/// What one sink pad's negotiated caps say.
struct PadInput {
    StreamLayoutPtr layout;
    GstVideoInfo info{};
    const char* format_name = "?";
    /// The engine's view of the input (format, size, the colorimetry applied).
    tensorconvert::InputFacts facts;
    /// The colorimetry applied, the output's, and the axes assumed.
    ConvertColorimetry colorimetry;
    /// The applied colorimetry as a caps string when some axis was assumed, else empty.
    std::string assumed;
};

/// Reads a sink pad's caps under `s`: InvalidArgument naming what the batch cannot take (not
/// video/x-raw, a format the engine cannot read, interlaced frames, memory that cannot be
/// mapped).
Result<PadInput> read_pad_caps(GstCaps* caps, const Settings& s);

/// Why the fixed `caps` cannot go into a batch ("" when they can): the reason an ACCEPT_CAPS
/// query is answered no, for the warning that names it.
std::string why_refused(GstCaps* caps, const Settings& s);

/// Outermost first: [N, H, W, C] (hwc) or [N, C, H, W] (chw).
Shape batch_shape(const Settings& s, size_t n, size_t width, size_t height);

/// Bytes of a batch of `shape` under `s`, or an InvalidArgument naming batch-size when it is
/// more than one pooled buffer may hold (4 GiB).
Result<size_t> batch_bytes(const Settings& s, const Shape& shape);

/// The batch's caps: other/tensors of `shape` (every rank-padded spelling of its dimensions, the
/// exact one first), the dtype of `s`, framerate 0/1 (batches go out as frames arrive).
GstCaps* output_caps(const Settings& s, const Shape& shape);

/// "format=rgb layout=hwc dtype=uint8 width=640 height=640 batch-size=4", for messages.
std::string describe_settings(const Settings& s);

} // namespace edgetensor::gst::tensorbatch
