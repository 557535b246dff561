// SPDX-License-Identifier: MIT
//
// tensorconvert's caps: the pad templates, what the settings produce from an input and accept
// for an output (transform_caps, fixate), what negotiated input caps say for the engine
// configuration (tensorconvert_settings.hpp), and the checks that make a mismatch an error
// naming both sides instead of a bare "not-negotiated".

#pragma once

#include "stream_layout.hpp"
#include "tensorconvert_colorimetry.hpp"
#include "tensorconvert_settings.hpp"

#include <edgetensor/convert.hpp>

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstddef>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorconvert
{

extern GstStaticPadTemplate sink_template;
extern GstStaticPadTemplate src_template;

/// The video format of a uint8 HWC output, GST_VIDEO_FORMAT_UNKNOWN when the output cannot be
/// video/x-raw.
GstVideoFormat output_video_format(const Settings& s);
/// Outermost first: [1, H, W, C] or [1, C, H, W].
Shape output_shape(const Settings& s, size_t w, size_t h);
/// "format=rgb layout=hwc dtype=uint8 width=640 height=640[ crop=...]", for messages.
std::string describe_settings(const Settings& s);

/// The base class's transform_caps with settings `s`: from a sink structure what we produce,
/// from a src structure what we accept; only system-memory (or ANY) features.
GstCaps* transform_caps(GstBaseTransform* self, const Settings& s, GstPadDirection direction,
                        GstCaps* caps, GstCaps* filter);

/// The base class's fixate_caps: the exact output for a fixed input (dimensions included), in
/// downstream's order of preference, then fixated. Takes `othercaps`; when it throws (out of
/// memory), it has not taken it yet.
GstCaps* fixate_caps(GstBaseTransform* self, const Settings& s, GstPadDirection direction,
                     GstCaps* caps, GstCaps* othercaps);

/// The base class's transform_size: an output buffer's size follows from the output caps alone
/// (never the input's from the output). Guarded (vfunc_guard.hpp).
gboolean transform_size(GstBaseTransform* self, GstPadDirection direction, GstCaps* caps,
                        gsize size, GstCaps* othercaps, gsize* othersize);

/// A caps event downstream cannot take: false after an element error that says what `s`
/// produces from `incaps` and what downstream accepts.
bool check_downstream(GstBaseTransform* self, const Settings& s, GstCaps* incaps);

/// The tiled or compressed drm-formats tensorconvert reads under `s` (GStreamer 1.24+): with
/// compute=gl and output-mode=tensor, the non-linear modifiers the GL converter imports
/// directly (GlContext::shared_dma_buf_formats(): the core keeps the answer, so a caps query
/// starts no GL thread); none otherwise, or where no GL context starts.
std::vector<DrmFormat> tiled_drm_formats(const Settings& s);

/// The sink's accept_caps under `s`: the sink template's linear drm-formats plus
/// tiled_drm_formats() of its formats are readable; any other drm-format is refused naming it.
gboolean accept_caps(GstBaseTransform* self, const Settings& s, GstPadDirection direction,
                     GstCaps* caps);

/// A caps query's answer on the sink pad under `s`, GstBaseTransform's `answer` (whose
/// intersection with the template drops tiled drm-formats) with the DMA_DRM twins of
/// tiled_drm_formats() added after its linear DMA_DRM structures, within `filter`. Takes
/// `answer`.
GstCaps* add_tiled_to_answer(const Settings& s, GstCaps* answer, GstCaps* filter);

/// With a crop, the caps query's `answer` on the sink pad led by its video structures narrowed
/// to frames the crop fits (at least x + width by y + height), then the answer itself: a source
/// that can choose its size (videotestsrc, a camera's modes) picks one the crop fits, where
/// GstBaseTransform would put downstream's own size (the crop's) first; a source of one size
/// too small still negotiates, and set_caps names the crop that does not fit. Takes `answer`.
GstCaps* crop_fitting_first(const Settings& s, GstCaps* answer);

/// What the negotiated input caps say.
struct InputCaps {
    /// The caps parsed once: read per frame, and handed to the import cache.
    StreamLayoutPtr layout;
    /// GStreamer's name of the frames' format ("NV12"), for messages.
    const char* format_name = "?";
    /// What the engine's configuration takes from the caps (engine_config()).
    InputFacts facts;
    /// The colorimetry applied (facts.colorimetry), the output's, and what was assumed.
    ConvertColorimetry colorimetry;
    /// The applied colorimetry as a caps string when some axis of it was assumed, else empty.
    std::string assumed;
};

/// Reads `incaps` (stream_layout_from_caps(), the one parse) for a conversion under `s`: false
/// after an element error when they cannot be parsed, are not progressive video, or carry
/// frames the engine cannot read.
bool check_input_caps(GstElement* self, const Settings& s, GstCaps* incaps, InputCaps* in);

/// The element warning that the input's colorimetry was assumed (`in.assumed`); call it outside
/// the element's locks.
void warn_assumed_colorimetry(GstElement* self, const InputCaps& in, GstCaps* incaps);

/// What the negotiated output caps say about the buffers transform() writes.
struct OutputCaps {
    StreamLayoutPtr layout; ///< video/x-raw (its vinfo) or other/tensors
    size_t bytes = 0;
};

/// `outcaps` must describe exactly what `conv` (made from `s`) writes: false after an element
/// error naming both.
bool check_output_caps(GstElement* self, const Settings& s, const Converter& conv, GstCaps* outcaps,
                       OutputCaps* out);

} // namespace edgetensor::gst::tensorconvert
