// SPDX-License-Identifier: MIT
//
// tensorconvert's caps: the pad templates, what the settings produce from an input and accept
// for an output (transform_caps, fixate), the engine configuration negotiated caps stand for,
// and the checks that make a mismatch an error naming both sides instead of a bare
// "not-negotiated".

#pragma once

#include "tensorconvert_colorimetry.hpp"
#include "tensorconvert_properties.hpp"

#include <edgetensor/convert.hpp>

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstddef>
#include <string>

namespace edgetensor::gst::tensorconvert
{

extern GstStaticPadTemplate sink_template;
extern GstStaticPadTemplate src_template;

OutputFormat output_format(GstTensorConvertFormat f);
DType output_dtype(GstTensorConvertDType d);
/// The video format of a uint8 HWC output, GST_VIDEO_FORMAT_UNKNOWN when the output cannot be
/// video/x-raw.
GstVideoFormat output_video_format(const Settings& s);
size_t channels_of(const Settings& s);
/// Outermost first: [1, H, W, C] or [1, C, H, W].
Shape output_shape(const Settings& s, size_t w, size_t h);
/// "format=rgb layout=hwc dtype=uint8 width=640 height=640[ crop=...]", for messages.
std::string describe_settings(const Settings& s);

/// The base class's transform_caps with settings `s`: from a sink structure what we produce,
/// from a src structure what we accept; only system-memory (or ANY) features.
GstCaps* transform_caps(GstBaseTransform* self, const Settings& s, GstPadDirection direction,
                        GstCaps* caps, GstCaps* filter);

/// The base class's fixate_caps: the exact output for a fixed input (dimensions included), in
/// downstream's order of preference, then fixated. Takes `othercaps`; never throws.
GstCaps* fixate_caps(GstBaseTransform* self, const Settings& s, GstPadDirection direction,
                     GstCaps* caps, GstCaps* othercaps);

/// The base class's transform_size: an output buffer's size follows from the output caps alone
/// (never the input's from the output); exceptions caught.
gboolean transform_size(GstBaseTransform* self, GstPadDirection direction, GstCaps* caps,
                        gsize size, GstCaps* othercaps, gsize* othersize);

/// A caps event downstream cannot take: false after an element error that says what `s`
/// produces from `incaps` and what downstream accepts.
bool check_downstream(GstBaseTransform* self, const Settings& s, GstCaps* incaps);

/// The engine's configuration for the input `in_info` (from `incaps`, frames in `src_format`)
/// under `s`, the colorimetry resolved into `*colorimetry`. False after an element error when
/// mean or std do not spread over the output channels.
bool engine_config(GstElement* self, const Settings& s, const GstVideoInfo& in_info,
                   GstCaps* incaps, ConvertFormat src_format, ConvertColorimetry* colorimetry,
                   ConvertConfig* cfg);

/// What the negotiated output caps say about the buffers transform() writes.
struct OutputCaps {
    bool video = false;
    GstVideoInfo info{}; // when video
    size_t bytes = 0;
};

/// `outcaps` must describe exactly what `conv` (made from `s`) writes: false after an element
/// error naming both.
bool check_output_caps(GstElement* self, const Settings& s, const Converter& conv, GstCaps* outcaps,
                       OutputCaps* out);

} // namespace edgetensor::gst::tensorconvert
