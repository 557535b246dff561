// SPDX-License-Identifier: MIT
//
// tensorconvert: camera frame to NPU-ready tensor in one pass (edgetensor::Converter).

// Launch lines stay one per line, as users paste them.
// clang-format off
/**
 * SECTION:element-tensorconvert
 * @title: tensorconvert
 *
 * Converts `video/x-raw` frames (NV12, NV21, NV16, NV24, I420, YUY2, UYVY, VYUY, RGB, BGR,
 * RGBA, BGRA, RGBx, BGRx, GRAY8, RGBP; system memory or mappable DMA-BUF, any stride: the
 * frame's GstVideoMeta is honoured) into a tensor in one pass: YUV to RGB with the matrix and
 * range of the input's colorimetry, crop, resize (nearest or bilinear), letterbox, layout (HWC
 * or CHW), dtype (uint8, int8, float16, float32) and per-channel `(value - mean) / std`.
 *
 * The output is NNStreamer-style `other/tensors` (one static tensor, `dimensions` innermost
 * first with a batch of 1: `3:640:640:1` for 640x640 RGB HWC, `640:640:3:1` for CHW) or, when
 * the tensor is uint8 HWC, `video/x-raw` RGB/BGR/RGBA/BGRA/GRAY8 so it can be viewed or encoded.
 * Output buffers come from a #GstEdgeTensorBufferPool (DMA-BUF where the host has a provider,
 * else shared memory) or from one downstream offers; every output buffer carries a
 * #GstEdgeTensorMeta describing the tensor.
 *
 * Unspecified input colorimetry (caps without a `colorimetry` field, or with unknown axes) is
 * resolved with GStreamer's own defaults for the frame (BT.601 up to 576 lines, BT.709 above,
 * BT.2020 from 2160; limited range), and an element warning says what was assumed. The
 * colorimetry applied is recorded in every output buffer's #GstEdgeTensorMeta
 * (`applied_colorimetry`), and `video/x-raw` output caps state the output's colorimetry.
 *
 * `compute` picks where the conversion runs: `cpu`, `gl` (OpenGL ES 3 shaders on a headless
 * EGL context, the same results within the CPU engine's tolerances; DMA-BUF input is imported
 * as EGLImages where the display can, else uploaded, counted in `gl-stats`), or `auto` (GL on a
 * hardware GPU renderer, the CPU otherwise, including on software renderers such as llvmpipe).
 *
 * An input buffer that does not match the caps (too small, a GstVideoMeta of another format or
 * size, planes outside its memory) is dropped with a warning and counted in
 * #GstTensorConvert:dropped; ten in a row are an error. A refused `mean`, `std` or `crop` is a
 * g_warning when set and keeps the element from starting.
 *
 * The geometry the picture landed at (scale and padding) is readable from the
 * `letterbox-scale` and `letterbox-left/top/right/bottom` properties once caps are set, so
 * detections can be mapped back to the source frame.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 tensortestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1920,height=1080 ! tensorconvert width=640 height=640 letterbox=true ! video/x-raw,format=RGB ! pngenc ! filesink location=out.png
 * gst-launch-1.0 v4l2src io-mode=dmabuf num-buffers=300 ! tensorconvert width=224 height=224 dtype=float32 layout=chw mean=123.675,116.28,103.53 std=58.395,57.12,57.375 ! fakesink
 * ]|
 */
// clang-format on

#include "gsttensorconvert.h"

#include "dma_drm.hpp"
#include "glib_raii.hpp"
#include "import_cache.hpp"
#include "internal.hpp"
#include "pool_acquire.hpp"
#include "tensorconvert_caps.hpp"
#include "tensorconvert_colorimetry.hpp"
#include "tensorconvert_element.hpp"
#include "tensorconvert_meta.hpp"
#include "tensorconvert_pool.hpp"
#include "tensorconvert_properties.hpp"
#include "tensorconvert_run.hpp"
#include "tensorconvert_settings.hpp"
#include "tensorconvert_stats.hpp"
#include "vfunc_guard.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/video/video.h>

#include <edgetensor/convert.hpp>
#include <edgetensor/gl.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

// Not static: the element's other files (tensorconvert_*.cpp) log in it too.
GST_DEBUG_CATEGORY(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

G_DEFINE_TYPE(GstTensorConvert, gst_tensor_convert, GST_TYPE_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(tensorconvert, "tensorconvert", GST_RANK_NONE, GST_TYPE_TENSOR_CONVERT)

namespace
{

namespace eg = edgetensor::gst;
namespace et = edgetensor;
namespace cs = edgetensor::gst::tensorconvert;

using cs::Report;
using cs::Settings;
using cs::settings_snapshot;
using cs::State;
using cs::state_of;
using cs::Streaming;

// ---- caps ----------------------------------------------------------------------------------

GstCaps* gst_tensor_convert_transform_caps(GstBaseTransform* trans, GstPadDirection direction,
                                           GstCaps* caps, GstCaps* filter)
{
    return eg::guarded(trans, "transform_caps", gst_caps_new_empty, [&] {
        const Settings s = settings_snapshot(GST_TENSOR_CONVERT(trans));
        if (s.output_mode == GST_TENSOR_CONVERT_OUTPUT_MODE_META)
            return cs::meta_transform_caps(trans, caps, filter);
        return cs::transform_caps(trans, s, direction, caps, filter);
    });
}

// The sink reads tiled drm-formats with compute=gl (1.24+): beyond its template, so both the
// accept-caps check and the caps query's answer (GstBaseTransform intersects it with the
// template) are widened here by the GL display's list.
gboolean gst_tensor_convert_accept_caps(GstBaseTransform* trans, GstPadDirection direction,
                                        GstCaps* caps)
{
    return eg::guarded(trans, "accept_caps", FALSE, [&] {
        return cs::accept_caps(trans, settings_snapshot(GST_TENSOR_CONVERT(trans)), direction,
                               caps);
    });
}

gboolean gst_tensor_convert_query(GstBaseTransform* trans, GstPadDirection direction,
                                  GstQuery* query)
{
    auto* parent = GST_BASE_TRANSFORM_CLASS(gst_tensor_convert_parent_class);
    if (direction != GST_PAD_SINK || GST_QUERY_TYPE(query) != GST_QUERY_CAPS)
        return parent->query(trans, direction, query);
    if (!parent->query(trans, direction, query))
        return FALSE;
    return eg::guarded(trans, "query", TRUE, [&] {
        GstCaps* filter = nullptr;
        GstCaps* answer = nullptr;
        gst_query_parse_caps(query, &filter);
        gst_query_parse_caps_result(query, &answer);
        if (!answer)
            return TRUE;
        const Settings s = settings_snapshot(GST_TENSOR_CONVERT(trans));
        GstCaps* ours =
            cs::crop_fitting_first(s, cs::add_tiled_to_answer(s, gst_caps_ref(answer), filter));
        gst_query_set_caps_result(query, ours);
        gst_caps_unref(ours);
        return TRUE;
    });
}

GstCaps* gst_tensor_convert_fixate_caps(GstBaseTransform* trans, GstPadDirection direction,
                                        GstCaps* caps, GstCaps* othercaps)
{
    // cs::fixate_caps throws only before it takes othercaps.
    return eg::guarded(
        trans, "fixate_caps", [othercaps] { return gst_caps_fixate(othercaps); },
        [&] {
            const Settings s = settings_snapshot(GST_TENSOR_CONVERT(trans));
            if (s.output_mode == GST_TENSOR_CONVERT_OUTPUT_MODE_META)
                return gst_caps_fixate(othercaps); // the frame's own caps
            return cs::fixate_caps(trans, s, direction, caps, othercaps);
        });
}

// Whether `event` may go on (the event stays ours either way).
bool accept_sink_event(GstTensorConvert* self, GstEvent* event)
{
    if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        if (state_of(self).streaming.cache)
            gst_edge_tensor_import_cache_clear(state_of(self).streaming.cache.get(), "flush-stop");
    }
    if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
        GstCaps* caps = nullptr;
        gst_event_parse_caps(event, &caps);
        const Settings s = settings_snapshot(self);
        // With output-mode=meta the frame's caps go downstream as they came.
        return s.output_mode == GST_TENSOR_CONVERT_OUTPUT_MODE_META ||
               cs::check_downstream(GST_BASE_TRANSFORM(self), s, caps);
    }
    return true;
}

gboolean gst_tensor_convert_sink_event(GstBaseTransform* trans, GstEvent* event)
{
    if (!eg::guarded(trans, "sink_event", false,
                     [&] { return accept_sink_event(GST_TENSOR_CONVERT(trans), event); })) {
        gst_event_unref(event);
        return FALSE;
    }
    return GST_BASE_TRANSFORM_CLASS(gst_tensor_convert_parent_class)->sink_event(trans, event);
}

// The converter for `in` under `s`, or nullopt after an element error naming why not.
std::optional<et::Converter> make_converter(GstTensorConvert* self, const Settings& s,
                                            const cs::InputCaps& in, GstCaps* incaps)
{
    auto cfg = cs::engine_config(s, in.facts);
    if (!cfg) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("%s", cfg.error().message().c_str()),
                          (nullptr));
        return std::nullopt;
    }
    auto conv = et::Converter::create(*cfg);
    if (!conv) {
        GST_ELEMENT_ERROR(
            self, CORE, NEGOTIATION,
            ("Cannot convert %" GST_PTR_FORMAT " with %s: %s", incaps,
             cs::describe_settings(s).c_str(), conv.error().message().c_str()),
            ("edgetensor error %s", std::string(et::error_code_name(conv.error().code())).c_str()));
        return std::nullopt;
    }
    // A tiled drm-format (compute=gl only: check_input_caps accepted it) is imported with its
    // modifier on every frame; the converter refuses one it cannot import, naming it.
    if (const uint64_t modifier = in.layout->drm.modifier; modifier != eg::kDrmLinear) {
        auto r = et::gl_set_source_modifier(*conv, modifier);
        if (!r) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("Cannot read drm-format %s: %s",
                               eg::drm_format_name(in.layout->drm.fourcc, modifier).c_str(),
                               r.error().message().c_str()),
                              ("input caps %" GST_PTR_FORMAT, incaps));
            return std::nullopt;
        }
    }
    return std::move(*conv);
}

void log_conversion(GstTensorConvert* self, const cs::InputCaps& in, const et::Converter& conv)
{
    const et::ConvertConfig& cfg = conv.config();
    const et::ConvertGeometry& g = conv.geometry();
    GST_INFO_OBJECT(self,
                    "%s %zux%zu (%s) -> %s %zux%zu %s %s, %zu threads; content %zux%zu at "
                    "(%zu,%zu), scale %.6f, padding l%zu t%zu r%zu b%zu",
                    in.format_name, cfg.src_width, cfg.src_height,
                    conv.applied_colorimetry().to_string().c_str(),
                    std::string(et::output_format_name(cfg.dst_format)).c_str(), conv.dst_width(),
                    conv.dst_height(), std::string(et::tensor_layout_name(cfg.layout)).c_str(),
                    eg::tensor_type_name(cfg.dtype), conv.threads(), g.content.width,
                    g.content.height, g.content.x, g.content.y, g.scale, g.pad_left, g.pad_top,
                    g.pad_right, g.pad_bottom);
    GST_INFO_OBJECT(self, "compute %s (%s)",
                    std::string(et::convert_compute_name(conv.compute())).c_str(),
                    conv.compute_reason().c_str());
}

// Makes `st` the streaming state for `incaps`, carrying over what outlives a caps change (the
// frame count and counters, the import cache re-keyed, the colorimetry assumption warned
// about). True when `assumed` is one not warned about yet since start.
bool install_streaming(GstTensorConvert* self, Streaming st, const std::string& assumed)
{
    std::lock_guard<std::mutex> lock(state_of(self).mu);
    Streaming& old = state_of(self).streaming;
    st.frames = old.frames;
    st.warned_colorimetry = old.warned_colorimetry;
    const bool warn = !assumed.empty() && assumed != st.warned_colorimetry;
    if (warn)
        st.warned_colorimetry = assumed;
    st.counters = cs::carry_over(old.counters, old.converter ? &*old.converter : nullptr);
    st.cache = std::move(old.cache);
    eg::import_cache_set_layout(st.cache.get(), st.in);
    old.meta.stop(); // its tensors still riding on frames go when they come back
    old = std::move(st);
    return warn;
}

// input caps -> engine configuration -> converter -> output caps check -> streaming state,
// then the letterbox report and the colorimetry warning (outside the locks).
gboolean set_caps_impl(GstTensorConvert* self, GstCaps* incaps, GstCaps* outcaps)
{
    const Settings s = settings_snapshot(self);
    cs::InputCaps in;
    if (!cs::check_input_caps(GST_ELEMENT(self), s, incaps, &in))
        return FALSE;
    std::optional<et::Converter> conv = make_converter(self, s, in, incaps);
    if (!conv)
        return FALSE;
    Streaming st;
    st.in = in.layout;
    eg::GCharPtr name(gst_object_get_name(GST_OBJECT(self)));
    st.tensor_id = name ? name.get() : "tensorconvert";
    if (s.output_mode == GST_TENSOR_CONVERT_OUTPUT_MODE_META) {
        // The frame goes on; the tensor's caps are those output-mode=tensor would negotiate.
        st.meta_caps.reset(cs::meta_tensor_caps(GST_BASE_TRANSFORM(self), s, incaps));
        if (!st.meta_caps) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("output-mode=meta: %s makes no tensor of %" GST_PTR_FORMAT ".",
                               cs::describe_settings(s).c_str(), incaps),
                              (nullptr));
            return FALSE;
        }
        outcaps = st.meta_caps.get();
        st.transform = eg::frame_transform_from(
            conv->geometry(), uint32_t(in.facts.width), uint32_t(in.facts.height),
            uint32_t(conv->dst_width()), uint32_t(conv->dst_height()));
    }
    if (!cs::check_output_caps(GST_ELEMENT(self), s, *conv, outcaps, &st.out))
        return FALSE;
    log_conversion(self, in, *conv);
    const et::ConvertGeometry g = conv->geometry();
    st.converter = std::move(conv);
    st.out_colorimetry = in.colorimetry.output.pack();
    st.applied_colorimetry = in.colorimetry.applied.pack();
    const bool warn = install_streaming(self, std::move(st), in.assumed);
    cs::publish_report(GST_ELEMENT(self), &state_of(self).report, g);
    if (warn)
        cs::warn_assumed_colorimetry(GST_ELEMENT(self), in, incaps);
    return TRUE;
}

gboolean gst_tensor_convert_set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* outcaps)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    return eg::guarded(trans, "set_caps", FALSE, [&]() -> gboolean {
        guint64 changes;
        {
            eg::ObjectLockGuard lock(self);
            changes = state_of(self).settings_changes;
        }
        return state_of(self).refusal.set_caps(
                   GST_CAT_DEFAULT, GST_OBJECT(self), incaps, outcaps, changes,
                   [&] { return set_caps_impl(self, incaps, outcaps) != FALSE; })
                   ? TRUE
                   : FALSE;
    });
}

GstFlowReturn gst_tensor_convert_transform(GstBaseTransform* trans, GstBuffer* inbuf,
                                           GstBuffer* outbuf)
{
    return eg::guarded(trans, "transform", GST_FLOW_ERROR, [&] {
        return cs::check_and_transform(GST_TENSOR_CONVERT(trans), inbuf, outbuf);
    });
}

// ---- output-mode=meta ----------------------------------------------------------------------

GstFlowReturn gst_tensor_convert_transform_ip(GstBaseTransform* trans, GstBuffer* frame)
{
    return eg::guarded(trans, "transform_ip", GST_FLOW_ERROR,
                       [&] { return cs::meta_transform_ip(GST_TENSOR_CONVERT(trans), frame); });
}

// output-mode=meta: the frames go downstream, so downstream answers for them (and says what a
// riding tensor needs); else the pool tensorconvert reads frames from.
gboolean gst_tensor_convert_propose_allocation(GstBaseTransform* trans, GstQuery* decide_query,
                                               GstQuery* query)
{
    const bool meta = eg::guarded(trans, "propose_allocation", false, [&] {
        return settings_snapshot(GST_TENSOR_CONVERT(trans)).output_mode ==
               GST_TENSOR_CONVERT_OUTPUT_MODE_META;
    });
    if (!meta)
        return cs::propose_allocation(trans, decide_query, query);
    gst_pad_peer_query(GST_BASE_TRANSFORM_SRC_PAD(trans), query);
    return TRUE;
}

// The settings start() refuses: values that were refused when set, and a normalisation that
// overflows float whatever the input (each of mean and std fits a float; together they may not).
bool check_settings(GstTensorConvert* self)
{
    const Settings s = settings_snapshot(self);
    if (!s.refused.empty()) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("Invalid property values: %s. tensorconvert does not run with settings "
                           "other than those asked for: fix or remove them.",
                           s.refused.describe().c_str()),
                          ("%s", cs::describe_settings(s).c_str()));
        return false;
    }
    std::string why;
    if (!cs::normalisation_is_finite(s.mean, s.stdev, cs::channels_of(s), &why)) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("mean=\"%s\" std=\"%s\" cannot be applied: %s.", s.mean_str.c_str(),
                           s.std_str.c_str(), why.c_str()),
                          (nullptr));
        return false;
    }
    return true;
}

GstFlowReturn gst_tensor_convert_prepare_output_buffer(GstBaseTransform* trans, GstBuffer* inbuf,
                                                       GstBuffer** outbuf)
{
    return eg::guarded(trans, "prepare_output_buffer", GST_FLOW_ERROR, [&] {
        return eg::prepare_output_from_pool(
            trans, GST_BASE_TRANSFORM_CLASS(gst_tensor_convert_parent_class), inbuf, outbuf);
    });
}

gboolean gst_tensor_convert_start(GstBaseTransform* trans)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    return eg::guarded(self, "start", FALSE, [self]() -> gboolean {
        if (!check_settings(self))
            return FALSE;
        // output-mode=meta: the frame itself goes downstream (made writable for the meta only).
        const bool meta =
            settings_snapshot(self).output_mode == GST_TENSOR_CONVERT_OUTPUT_MODE_META;
        gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), meta);
        state_of(self).refusal.reset();
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        state_of(self).streaming = Streaming{};
        state_of(self).streaming.cache.reset(
            gst_edge_tensor_import_cache_new(GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE));
        return TRUE;
    });
}

gboolean gst_tensor_convert_stop(GstBaseTransform* trans)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    return eg::guarded(self, "stop", FALSE, [self] {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        const Streaming& st = state_of(self).streaming;
        GST_DEBUG_OBJECT(self, "stopping after %" G_GUINT64_FORMAT " frames", st.frames);
        cs::log_stats(GST_OBJECT(self), GST_CAT_DEFAULT, st.counters, st.cache.get(),
                      st.converter ? &*st.converter : nullptr);
        state_of(self).streaming.meta.stop();
        state_of(self).streaming = Streaming{};
        return TRUE;
    });
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_convert_set_property(GObject* object, guint prop_id, const GValue* value,
                                     GParamSpec* pspec)
{
    eg::guarded(object, "set_property", [&] {
        Settings* s = &state_of(object).settings;
        if (!cs::set_output_mode(GST_ELEMENT(object), s, prop_id, value, pspec))
            cs::set_property(GST_ELEMENT(object), s, prop_id, value, pspec);
        eg::ObjectLockGuard lock(object);
        ++state_of(object).settings_changes;
    });
}

void get_property_impl(GstTensorConvert* self, guint prop_id, GValue* value, GParamSpec* pspec)
{
    {
        // Streaming state: under mu, never with the object lock held.
        std::lock_guard<std::mutex> slock(state_of(self).mu);
        const Streaming& st = state_of(self).streaming;
        if (cs::get_stat(prop_id, st.counters, st.cache.get(),
                         st.converter ? &*st.converter : nullptr, value))
            return;
    }
    eg::ObjectLockGuard lock(self);
    if (!cs::get_output_mode(state_of(self).settings, prop_id, value) &&
        !cs::get_property(state_of(self).settings, state_of(self).report, prop_id, value))
        G_OBJECT_WARN_INVALID_PROPERTY_ID(self, prop_id, pspec);
}

void gst_tensor_convert_get_property(GObject* object, guint prop_id, GValue* value,
                                     GParamSpec* pspec)
{
    eg::guarded(object, "get_property",
                [&] { get_property_impl(GST_TENSOR_CONVERT(object), prop_id, value, pspec); });
}

void gst_tensor_convert_finalize(GObject* object)
{
    auto* self = GST_TENSOR_CONVERT(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_convert_parent_class)->finalize(object);
}

} // namespace

static void gst_tensor_convert_class_init(GstTensorConvertClass* klass)
{
    gst_edge_tensor_init();
    GST_DEBUG_CATEGORY_INIT(gst_tensor_convert_debug, "tensorconvert", 0,
                            "edgetensor frame-to-tensor converter");

    GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    GstBaseTransformClass* bt_class = GST_BASE_TRANSFORM_CLASS(klass);

    gobject_class->set_property = gst_tensor_convert_set_property;
    gobject_class->get_property = gst_tensor_convert_get_property;
    gobject_class->finalize = gst_tensor_convert_finalize;

    cs::install_properties(gobject_class);

    // From GStreamer 1.24 the sink also reads DMA_DRM: the linear drm-formats of its formats.
    {
        eg::MiniObjectPtr<GstCaps> sink(gst_static_pad_template_get_caps(&cs::sink_template));
        gst_element_class_add_pad_template(
            element_class,
            eg::pad_template_with_dma_drm(&cs::sink_template, eg::dma_drm_caps_like(sink.get())));
    }
    gst_element_class_add_static_pad_template(element_class, &cs::src_template);
    gst_element_class_set_static_metadata(
        element_class, "Tensor converter", "Filter/Converter/Video/Scaler/Tensor",
        "Converts camera frames into NPU-ready tensors in one pass: colour conversion with the "
        "frame's colorimetry, crop, resize, letterbox, HWC/CHW layout, uint8/int8/float16/"
        "float32 and per-channel normalisation, into edgetensor buffers (DMA-BUF, or shared memory "
        "where the host has no DMA-BUF provider). Example: "
        "gst-launch-1.0 tensortestsrc num-buffers=1 ! "
        "video/x-raw,format=NV12,width=1920,height=1080 ! tensorconvert width=640 height=640 "
        "letterbox=true ! video/x-raw,format=RGB ! pngenc ! filesink location=out.png",
        "edgetensor developers");

    bt_class->transform_caps = gst_tensor_convert_transform_caps;
    bt_class->fixate_caps = gst_tensor_convert_fixate_caps;
    bt_class->set_caps = gst_tensor_convert_set_caps;
    bt_class->accept_caps = gst_tensor_convert_accept_caps;
    bt_class->query = gst_tensor_convert_query;
    bt_class->transform_size = cs::transform_size;
    bt_class->decide_allocation = cs::decide_allocation;
    bt_class->propose_allocation = gst_tensor_convert_propose_allocation;
    bt_class->sink_event = gst_tensor_convert_sink_event;
    bt_class->transform = gst_tensor_convert_transform;
    bt_class->transform_ip = gst_tensor_convert_transform_ip;
    bt_class->prepare_output_buffer = gst_tensor_convert_prepare_output_buffer;
    bt_class->start = gst_tensor_convert_start;
    bt_class->stop = gst_tensor_convert_stop;
    bt_class->passthrough_on_same_caps = FALSE;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_FORMAT, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_LAYOUT, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_DTYPE, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_METHOD, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_COMPUTE, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_OUTPUT_MODE, GstPluginAPIFlags(0));
}

static void gst_tensor_convert_init(GstTensorConvert* self)
{
    self->state = new State();
}
