// SPDX-License-Identifier: MIT
//
// tensorconvert's caps negotiation (tensorconvert_caps.hpp).

#include "tensorconvert_caps.hpp"

#include "convert_input_caps.hpp"
#include "dma_drm.hpp"
#include "glib_raii.hpp"
#include "internal.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.hpp>

#include <edgetensor/gl.hpp>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

namespace edgetensor::gst::tensorconvert
{

GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(EDGETENSOR_CONVERT_SINK_CAPS));

// Tensors; and frames: RGB, BGR, RGBA, BGRA, GRAY8 as tensors, any input format with
// output-mode=meta (the frame passes through).
GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS(EDGETENSOR_CONVERT_TENSOR_CAPS "; " EDGETENSOR_CONVERT_SINK_CAPS));

GstVideoFormat output_video_format(const Settings& s)
{
    if (s.dtype != GST_TENSOR_CONVERT_DTYPE_UINT8 || s.layout != GST_TENSOR_CONVERT_LAYOUT_HWC)
        return GST_VIDEO_FORMAT_UNKNOWN;
    switch (s.format) {
    case GST_TENSOR_CONVERT_FORMAT_RGB:
        return GST_VIDEO_FORMAT_RGB;
    case GST_TENSOR_CONVERT_FORMAT_BGR:
        return GST_VIDEO_FORMAT_BGR;
    case GST_TENSOR_CONVERT_FORMAT_RGBA:
        return GST_VIDEO_FORMAT_RGBA;
    case GST_TENSOR_CONVERT_FORMAT_BGRA:
        return GST_VIDEO_FORMAT_BGRA;
    case GST_TENSOR_CONVERT_FORMAT_GRAY:
        return GST_VIDEO_FORMAT_GRAY8;
    }
    return GST_VIDEO_FORMAT_UNKNOWN;
}

Shape output_shape(const Settings& s, size_t w, size_t h)
{
    const size_t c = channels_of(s);
    if (s.layout == GST_TENSOR_CONVERT_LAYOUT_CHW)
        return {1, c, h, w};
    return {1, h, w, c};
}

namespace
{

// The output size along one axis as a caps value: the property, else the crop, else whatever
// the input says (fixed or a range).
void output_dim(const GstStructure* in, const char* field, guint prop,
                std::optional<size_t> crop_dim, GValue* out)
{
    if (prop > 0 || crop_dim) {
        g_value_init(out, G_TYPE_INT);
        g_value_set_int(out, gint(prop > 0 ? prop : *crop_dim));
        return;
    }
    const GValue* v = gst_structure_get_value(in, field);
    if (v) {
        g_value_init(out, G_VALUE_TYPE(v));
        g_value_copy(v, out);
        return;
    }
    g_value_init(out, GST_TYPE_INT_RANGE);
    gst_value_set_int_range(out, 1, gint(kMaxSize));
}

void copy_framerate(const GstStructure* from, GstStructure* to)
{
    if (const GValue* fr = gst_structure_get_value(from, "framerate"))
        gst_structure_set_value(to, "framerate", fr);
}

GstStructure* tensors_structure(const Settings& s)
{
    return gst_structure_new("other/tensors", "num_tensors", G_TYPE_INT, 1, "format", G_TYPE_STRING,
                             "static", "types", G_TYPE_STRING,
                             tensor_type_name(output_dtype(s.dtype)), nullptr);
}

// What we produce from the video/x-raw structure `in`, merged into `out`.
GstCaps* add_src_structures(const Settings& s, const GstStructure* in, GstCaps* out)
{
    GValue w = G_VALUE_INIT;
    GValue h = G_VALUE_INIT;
    output_dim(in, "width", s.width, s.crop ? std::optional<size_t>(s.crop->width) : std::nullopt,
               &w);
    output_dim(in, "height", s.height,
               s.crop ? std::optional<size_t>(s.crop->height) : std::nullopt, &h);

    GstStructure* t = tensors_structure(s);
    if (G_VALUE_HOLDS_INT(&w) && G_VALUE_HOLDS_INT(&h)) {
        // "3:640:640:1" first, and its rank-padded spellings ("3:640:640", ...), which
        // NNStreamer treats as the same tensor.
        GValue dims = G_VALUE_INIT;
        padded_dimensions_list(
            output_shape(s, size_t(g_value_get_int(&w)), size_t(g_value_get_int(&h))), &dims);
        gst_structure_take_value(t, "dimensions", &dims);
    }
    copy_framerate(in, t);
    out = gst_caps_merge_structure(out, t);

    const GstVideoFormat vf = output_video_format(s);
    if (vf != GST_VIDEO_FORMAT_UNKNOWN) {
        GstStructure* v = gst_structure_new("video/x-raw", "format", G_TYPE_STRING,
                                            gst_video_format_to_string(vf), nullptr);
        gst_structure_set_value(v, "width", &w);
        gst_structure_set_value(v, "height", &h);
        if (const auto c = output_colorimetry_string(in, vf))
            gst_structure_set(v, "colorimetry", G_TYPE_STRING, c->c_str(), nullptr);
        copy_framerate(in, v);
        out = gst_caps_merge_structure(out, v);
    }
    g_value_unset(&w);
    g_value_unset(&h);
    return out;
}

// Width and height of an other/tensors `dimensions` string for our layout: C:W:H:N (HWC) or
// W:H:C:N (CHW), missing trailing entries 1 and any beyond the fourth 1 (rank padding).
bool size_from_dimensions(const Settings& s, const char* dims, gint* w, gint* h)
{
    if (!dims)
        return false;
    gchar** parts = g_strsplit(dims, ":", -1);
    std::vector<guint64> d;
    bool ok = true;
    for (gchar** p = parts; *p && ok; ++p) {
        guint64 n = 0;
        ok = g_ascii_string_to_unsigned(*p, 10, 1, G_MAXINT, &n, nullptr);
        d.push_back(n);
    }
    g_strfreev(parts);
    if (!ok || d.size() < 2)
        return false;
    while (d.size() < 4)
        d.push_back(1);
    for (size_t i = 3; i < d.size(); ++i)
        if (d[i] != 1)
            return false;
    const bool chw = s.layout == GST_TENSOR_CONVERT_LAYOUT_CHW;
    *w = gint(chw ? d[0] : d[1]);
    *h = gint(chw ? d[1] : d[2]);
    return true;
}

// What we accept upstream for the src structure `in` (if we can produce it at all), merged
// into `out`.
GstCaps* add_sink_structures(const Settings& s, const GstStructure* in, GstCaps* out)
{
    // Only structures our settings can produce: the dtype for tensors, the format for video.
    GstStructure* ours = nullptr;
    if (gst_structure_has_name(in, "other/tensors")) {
        ours = tensors_structure(s);
    } else if (gst_structure_has_name(in, "video/x-raw")) {
        const GstVideoFormat vf = output_video_format(s);
        if (vf == GST_VIDEO_FORMAT_UNKNOWN)
            return out;
        ours = gst_structure_new("video/x-raw", "format", G_TYPE_STRING,
                                 gst_video_format_to_string(vf), nullptr);
    } else {
        return out;
    }
    const bool can = gst_structure_can_intersect(in, ours);
    gst_structure_free(ours);
    if (!can)
        return out;

    MiniObjectPtr<GstCaps> templ(gst_static_pad_template_get_caps(&sink_template));
    GstStructure* sink = gst_structure_copy(gst_caps_get_structure(templ.get(), 0));
    // An output axis follows the input only when neither its property nor a crop fixes it.
    // With a crop any frame size passes here: one the crop does not fit is refused in set_caps
    // with a message naming the crop, rather than as an anonymous caps mismatch.
    if (!s.crop) {
        const bool video = gst_structure_has_name(in, "video/x-raw");
        gint w = 0, h = 0;
        const bool dims =
            !video && size_from_dimensions(s, gst_structure_get_string(in, "dimensions"), &w, &h);
        for (const char* axis : {"width", "height"}) {
            const bool is_w = std::strcmp(axis, "width") == 0;
            if ((is_w ? s.width : s.height) != 0)
                continue;
            if (video) {
                if (const GValue* v = gst_structure_get_value(in, axis))
                    gst_structure_set_value(sink, axis, v);
            } else if (dims) {
                gst_structure_set(sink, axis, G_TYPE_INT, is_w ? w : h, nullptr);
            }
        }
    }
    copy_framerate(in, sink);
    return gst_caps_merge_structure(out, sink);
}

} // namespace

std::vector<DrmFormat> tiled_drm_formats(const Settings& s)
{
    if (!dma_drm_negotiated() || s.compute != GST_TENSOR_CONVERT_COMPUTE_GL ||
        s.output_mode == GST_TENSOR_CONVERT_OUTPUT_MODE_META)
        return {};
    // No GL context: compute=gl fails at caps anyway; the answer stays linear.
    std::vector<DrmFormat> out;
    for (const GlDmaBufFormat& f : GlContext::shared_dma_buf_formats().formats)
        for (uint64_t m : f.modifiers)
            if (m != kDrmLinear)
                out.push_back({f.fourcc, m});
    return out;
}

gboolean accept_caps(GstBaseTransform* self, const Settings& s, GstPadDirection direction,
                     GstCaps* caps)
{
    const std::vector<DrmFormat> tiled = tiled_drm_formats(s);
    if (tiled.empty())
        return transform_accept_caps(self, direction, caps);
    MiniObjectPtr<GstCaps> readable(
        gst_pad_get_pad_template_caps(GST_BASE_TRANSFORM_SINK_PAD(self)));
    MiniObjectPtr<GstCaps> plain(gst_static_pad_template_get_caps(&sink_template));
    readable.reset(gst_caps_merge(readable.release(), dma_drm_tiled_caps_like(plain.get(), tiled)));
    return transform_accept_caps_reading(self, direction, caps, readable.get());
}

GstCaps* add_tiled_to_answer(const Settings& s, GstCaps* answer, GstCaps* filter)
{
    const std::vector<DrmFormat> tiled = tiled_drm_formats(s);
    if (tiled.empty() || !answer)
        return answer;
    MiniObjectPtr<GstCaps> extra(dma_drm_tiled_caps_like(answer, tiled));
    if (filter)
        extra.reset(gst_caps_intersect_full(filter, extra.get(), GST_CAPS_INTERSECT_FIRST));
    if (gst_caps_is_empty(extra.get()))
        return answer;
    // Linear DMA_DRM first (the answer's DMA_DRM structures lead), then the tiled ones, then
    // the rest.
    GstCaps* out = gst_caps_new_empty();
    guint i = 0;
    for (; i < gst_caps_get_size(answer) && is_dma_drm_structure(answer, i); ++i)
        out = gst_caps_merge(out, gst_caps_copy_nth(answer, i));
    out = gst_caps_merge(out, extra.release());
    for (; i < gst_caps_get_size(answer); ++i)
        out = gst_caps_merge(out, gst_caps_copy_nth(answer, i));
    gst_caps_unref(answer);
    return out;
}

GstCaps* crop_fitting_first(const Settings& s, GstCaps* answer)
{
    if (!s.crop || !answer || gst_caps_is_any(answer))
        return answer;
    const size_t min_w = s.crop->x + s.crop->width, min_h = s.crop->y + s.crop->height;
    if (min_w > kMaxSize || min_h > kMaxSize)
        return answer; // no frame fits: set_caps says so
    GstStructure* fits =
        gst_structure_new("video/x-raw", "width", GST_TYPE_INT_RANGE, gint(min_w), gint(kMaxSize),
                          "height", GST_TYPE_INT_RANGE, gint(min_h), gint(kMaxSize), nullptr);
    GstCaps* out = gst_caps_new_empty();
    for (guint i = 0; i < gst_caps_get_size(answer); ++i) {
        GstStructure* narrowed = gst_structure_intersect(gst_caps_get_structure(answer, i), fits);
        if (narrowed)
            out = gst_caps_merge_structure_full(
                out, narrowed, gst_caps_features_copy(gst_caps_get_features(answer, i)));
    }
    gst_structure_free(fits);
    return gst_caps_merge(out, answer);
}

GstCaps* transform_caps(GstBaseTransform* self, const Settings& s, GstPadDirection direction,
                        GstCaps* caps, GstCaps* filter)
{
    const std::vector<DrmFormat> tiled =
        direction == GST_PAD_SINK ? tiled_drm_formats(s) : std::vector<DrmFormat>();
    GstCaps* result = gst_caps_new_empty();
    MiniObjectPtr<GstCaps> input;
    if (gst_caps_is_any(caps))
        input.reset(gst_pad_get_pad_template_caps(direction == GST_PAD_SINK
                                                      ? GST_BASE_TRANSFORM_SINK_PAD(self)
                                                      : GST_BASE_TRANSFORM_SRC_PAD(self)));
    else
        input.reset(gst_caps_ref(caps));

    for (guint i = 0; i < gst_caps_get_size(input.get()); ++i) {
        if (direction == GST_PAD_SINK && is_dma_drm_structure(input.get(), i)) {
            // Linear DMA_DRM (1.24+) is mapped like plain video/x-raw of its format, and so
            // are the tiled drm-formats compute=gl imports.
            if (GstStructure* video =
                    dma_drm_as_video(gst_caps_get_structure(input.get(), i), tiled)) {
                result = add_src_structures(s, video, result);
                gst_structure_free(video);
            }
            continue;
        }
        const GstCapsFeatures* f = gst_caps_get_features(input.get(), i);
        if (f && !gst_caps_features_is_any(f) &&
            !gst_caps_features_is_equal(f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY))
            continue; // we map frames: system memory or mappable DMA-BUF under plain caps
        const GstStructure* st = gst_caps_get_structure(input.get(), i);
        if (direction == GST_PAD_SINK) {
            if (gst_structure_has_name(st, "video/x-raw"))
                result = add_src_structures(s, st, result);
        } else {
            // From 1.24 the same frames as linear DMA_DRM first, so that a DMA-BUF producer
            // (v4l2src, a VA decoder, glupload) hands its buffers over rather than a copy in
            // system memory, and picks a linear drm-format, never a tiled one.
            MiniObjectPtr<GstCaps> sink(add_sink_structures(s, st, gst_caps_new_empty()));
            result = gst_caps_merge(result, dma_drm_caps_like(sink.get()));
            result = gst_caps_merge(result, sink.release());
        }
    }
    if (filter) {
        GstCaps* tmp = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(result);
        result = tmp;
    }
    GST_DEBUG_OBJECT(self, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
                     direction == GST_PAD_SINK ? "sink" : "src", caps, result);
    return result;
}

GstCaps* fixate_caps(GstBaseTransform* self, const Settings& s, GstPadDirection direction,
                     GstCaps* caps, GstCaps* othercaps)
{
    if (direction == GST_PAD_SINK && gst_caps_is_fixed(caps)) {
        // The exact output for this input (dimensions included), in downstream's order of
        // preference. Only transform_caps() throws, before othercaps changes hands.
        GstCaps* ideal = transform_caps(self, s, GST_PAD_SINK, caps, nullptr);
        GstCaps* best = gst_caps_intersect_full(othercaps, ideal, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(ideal);
        if (!gst_caps_is_empty(best)) {
            gst_caps_unref(othercaps);
            othercaps = best;
        } else {
            gst_caps_unref(best);
        }
    }
    othercaps = gst_caps_fixate(othercaps);
    GST_DEBUG_OBJECT(self, "fixated to %" GST_PTR_FORMAT, othercaps);
    return othercaps;
}

std::string describe_settings(const Settings& s)
{
    std::string d = "format=";
    d += output_format_name(output_format(s.format));
    d += " layout=";
    d += tensor_layout_name(output_layout(s.layout));
    d += " dtype=";
    d += tensor_type_name(output_dtype(s.dtype));
    d += " width=" + std::to_string(s.width) + " height=" + std::to_string(s.height);
    if (s.crop)
        d += " crop=" + s.crop_str;
    return d;
}

bool check_downstream(GstBaseTransform* self, const Settings& s, GstCaps* incaps)
{
    MiniObjectPtr<GstCaps> ours(transform_caps(self, s, GST_PAD_SINK, incaps, nullptr));
    if (gst_caps_is_empty(ours.get())) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("tensorconvert cannot read %" GST_PTR_FORMAT, incaps),
                          ("only progressive video/x-raw in system memory (or mappable DMA-BUF "
                           "under plain caps) is accepted"));
        return false;
    }
    MiniObjectPtr<GstCaps> peer(
        gst_pad_peer_query_caps(GST_BASE_TRANSFORM_SRC_PAD(self), ours.get()));
    if (peer && !gst_caps_is_empty(peer.get()))
        return true;
    MiniObjectPtr<GstCaps> accepted(
        gst_pad_peer_query_caps(GST_BASE_TRANSFORM_SRC_PAD(self), nullptr));
    GCharPtr ours_str(gst_caps_to_string(ours.get()));
    GCharPtr peer_str(accepted ? gst_caps_to_string(accepted.get()) : g_strdup("nothing"));
    GST_ELEMENT_ERROR(
        self, CORE, NEGOTIATION,
        ("tensorconvert's output does not match what downstream accepts. With %s it produces "
         "%s; downstream accepts %s. Change the properties (video/x-raw output needs "
         "dtype=uint8 layout=hwc) or the caps after tensorconvert.",
         describe_settings(s).c_str(), ours_str.get(), peer_str.get()),
        ("input caps %" GST_PTR_FORMAT, incaps));
    return false;
}

bool check_input_caps(GstElement* self, const Settings& s, GstCaps* incaps, InputCaps* in)
{
    const std::vector<DrmFormat> tiled = tiled_drm_formats(s);
    auto layout = stream_layout_from_caps(incaps, tiled);
    if (!layout || !(*layout)->video) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot parse the input caps."),
                          ("%" GST_PTR_FORMAT "%s%s", incaps, layout ? "" : ": ",
                           layout ? "" : layout.error().message().c_str()));
        return false;
    }
    in->layout = std::move(*layout);
    const GstVideoInfo& info = in->layout->vinfo;
    if (GST_VIDEO_INFO_INTERLACE_MODE(&info) != GST_VIDEO_INTERLACE_MODE_PROGRESSIVE) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("tensorconvert needs progressive video; deinterlace first."),
                          ("%" GST_PTR_FORMAT, incaps));
        return false;
    }
    const GstVideoFormat vf = GST_VIDEO_INFO_FORMAT(&info);
    const char* fmt_name = gst_video_format_to_string(vf);
    const auto src_format = convert_format_from_name(fmt_name ? fmt_name : "");
    if (!src_format) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("tensorconvert cannot read %s frames.", fmt_name ? fmt_name : "?"),
                          ("%" GST_PTR_FORMAT, incaps));
        return false;
    }
    in->format_name = fmt_name;
    // What the caps say, unspecified axes resolved with GStreamer's defaults for the frame
    // (warned about): the engine then guesses nothing, and the meta records it all.
    in->colorimetry = resolve_convert_colorimetry(
        info, in->layout->colorimetry_from_caps,
        s.format == GST_TENSOR_CONVERT_FORMAT_GRAY ? GST_VIDEO_FORMAT_GRAY8 : GST_VIDEO_FORMAT_RGB);
    in->assumed.clear();
    if (!in->colorimetry.assumed_axes.empty())
        in->assumed = colorimetry_gst_string(in->colorimetry.applied, vf);
    in->facts = {*src_format, size_t(GST_VIDEO_INFO_WIDTH(&info)),
                 size_t(GST_VIDEO_INFO_HEIGHT(&info)), in->colorimetry.applied};
    return true;
}

void warn_assumed_colorimetry(GstElement* self, const InputCaps& in, GstCaps* incaps)
{
    GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                        ("The input (%s %zux%zu) does not say its colorimetry's %s; assuming "
                         "\"%s\", GStreamer's default for this frame. Add colorimetry=... "
                         "to the caps before tensorconvert to choose.",
                         in.format_name, in.facts.width, in.facts.height,
                         in.colorimetry.assumed_axes.c_str(), in.assumed.c_str()),
                        ("input caps %" GST_PTR_FORMAT, incaps));
}

bool check_output_caps(GstElement* self, const Settings& s, const Converter& conv, GstCaps* outcaps,
                       OutputCaps* out)
{
    const Shape shape = output_shape(s, conv.dst_width(), conv.dst_height());
    const bool video = gst_structure_has_name(gst_caps_get_structure(outcaps, 0), "video/x-raw");
    auto layout = stream_layout_from_caps(outcaps);
    if (video) {
        const GstVideoInfo* vi = layout ? &(*layout)->vinfo : nullptr;
        if (!vi || GST_VIDEO_INFO_FORMAT(vi) != output_video_format(s) ||
            size_t(GST_VIDEO_INFO_WIDTH(vi)) != conv.dst_width() ||
            size_t(GST_VIDEO_INFO_HEIGHT(vi)) != conv.dst_height()) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("Output caps %" GST_PTR_FORMAT " do not match %s (%zux%zu).",
                               outcaps, describe_settings(s).c_str(), conv.dst_width(),
                               conv.dst_height()),
                              (nullptr));
            return false;
        }
    } else {
        if (!layout) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("Invalid output caps: %s", layout.error().message().c_str()),
                              ("%" GST_PTR_FORMAT, outcaps));
            return false;
        }
        const TensorCaps* tc = &(*layout)->tensor;
        if (tc->dtype != output_dtype(s.dtype) || !shapes_equal_padded(tc->shape, shape)) {
            GST_ELEMENT_ERROR(
                self, CORE, NEGOTIATION,
                ("Output caps want %s [%s], but %s produces %s [%s].", tensor_type_name(tc->dtype),
                 dimensions_string(tc->shape).c_str(), describe_settings(s).c_str(),
                 tensor_type_name(output_dtype(s.dtype)), dimensions_string(shape).c_str()),
                ("%" GST_PTR_FORMAT, outcaps));
            return false;
        }
    }
    out->layout = std::move(*layout);
    // Video: the caps' frame; a tensor: ours (the caps may spell it with rank padding).
    out->bytes = dtype_size(output_dtype(s.dtype));
    for (size_t d : shape)
        out->bytes *= d;
    if (video)
        out->bytes = out->layout->frame_bytes;
    return true;
}

gboolean transform_size(GstBaseTransform* self, GstPadDirection direction, GstCaps* caps,
                        gsize size, GstCaps* othercaps, gsize* othersize)
{
    (void)caps;
    (void)size;
    return guarded(self, "transform_size", FALSE, [&]() -> gboolean {
        if (direction != GST_PAD_SINK)
            return FALSE; // the input size never follows from the output
        auto layout = stream_layout_from_caps(othercaps);
        if (!layout) {
            GST_DEBUG_OBJECT(self, "no size for %" GST_PTR_FORMAT ": %s", othercaps,
                             layout.error().message().c_str());
            return FALSE;
        }
        *othersize = (*layout)->frame_bytes;
        return TRUE;
    });
}

} // namespace edgetensor::gst::tensorconvert
