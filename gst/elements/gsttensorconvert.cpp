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

#include "frame_check.hpp"
#include "glib_raii.hpp"
#include "import_cache.hpp"
#include "internal.hpp"
#include "pool_acquire.hpp"
#include "tensorconvert_caps.hpp"
#include "tensorconvert_colorimetry.hpp"
#include "tensorconvert_frame.hpp"
#include "tensorconvert_input.hpp"
#include "tensorconvert_pool.hpp"
#include "tensorconvert_properties.hpp"
#include "tensorconvert_settings.hpp"
#include "tensorconvert_stats.hpp"
#include "vfunc_guard.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/video/video.h>

#include <edgetensor/convert.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

// Not static: the element's other files (tensorconvert_*.cpp) log in it too.
GST_DEBUG_CATEGORY(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

namespace
{

namespace eg = edgetensor::gst;
namespace et = edgetensor;
namespace cs = edgetensor::gst::tensorconvert;

using cs::Report;
using cs::Settings;

struct CacheFree {
    void operator()(GstEdgeTensorImportCache* c) const noexcept
    {
        gst_edge_tensor_import_cache_free(c);
    }
};
using ImportCachePtr = std::unique_ptr<GstEdgeTensorImportCache, CacheFree>;

struct Streaming {
    std::optional<et::Converter> converter;
    // Imported input (DMA-BUF, memfd) resolved to the same tensor every time its buffer comes
    // back; created at start, re-keyed by set_caps, freed at stop.
    ImportCachePtr cache;
    eg::StreamLayoutPtr in; // the input caps, parsed once (the cache reads the same snapshot)
    cs::OutputCaps out;
    guint64 frames = 0;
    // Recorded in every output meta: the output values' and the applied (source) colorimetry.
    guint32 out_colorimetry = 0;
    guint32 applied_colorimetry = 0;
    // The last assumption warned about, so each is said once per start.
    std::string warned_colorimetry;
    cs::Counters counters;
    // A top-down copy of a bottom-up (negative-stride) frame: the engine takes positive pitches.
    std::vector<uint8_t> scratch;
};

// One C++ state object per element: settings and report under the object lock, streaming
// state under mu.
struct State {
    Settings settings;
    Report report;
    std::mutex mu;
    Streaming streaming;
};

} // namespace

struct _GstTensorConvert {
    GstBaseTransform parent;
    State* state;
};

G_DEFINE_TYPE(GstTensorConvert, gst_tensor_convert, GST_TYPE_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(tensorconvert, "tensorconvert", GST_RANK_NONE, GST_TYPE_TENSOR_CONVERT)

namespace
{

State& state_of(gpointer self)
{
    return *GST_TENSOR_CONVERT(self)->state;
}

Settings settings_snapshot(GstTensorConvert* self)
{
    eg::ObjectLockGuard lock(self);
    return state_of(self).settings;
}

// ---- caps ----------------------------------------------------------------------------------

GstCaps* gst_tensor_convert_transform_caps(GstBaseTransform* trans, GstPadDirection direction,
                                           GstCaps* caps, GstCaps* filter)
{
    return eg::guarded(trans, "transform_caps", gst_caps_new_empty, [&] {
        return cs::transform_caps(trans, settings_snapshot(GST_TENSOR_CONVERT(trans)), direction,
                                  caps, filter);
    });
}

GstCaps* gst_tensor_convert_fixate_caps(GstBaseTransform* trans, GstPadDirection direction,
                                        GstCaps* caps, GstCaps* othercaps)
{
    // cs::fixate_caps throws only before it takes othercaps.
    return eg::guarded(
        trans, "fixate_caps", [othercaps] { return gst_caps_fixate(othercaps); },
        [&] {
            return cs::fixate_caps(trans, settings_snapshot(GST_TENSOR_CONVERT(trans)), direction,
                                   caps, othercaps);
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
        return cs::check_downstream(GST_BASE_TRANSFORM(self), settings_snapshot(self), caps);
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
    return eg::guarded(trans, "set_caps", FALSE,
                       [&] { return set_caps_impl(GST_TENSOR_CONVERT(trans), incaps, outcaps); });
}

// The output meta says what the values are and what the conversion applied (the pool's meta
// only knows the output caps).
void record_colorimetry(const Streaming& st, GstBuffer* outbuf)
{
    if (GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(outbuf)) {
        m->desc.colorimetry = st.out_colorimetry;
        m->applied_colorimetry = st.applied_colorimetry;
    }
}

// Drops `inbuf`, which does not match the caps (`why`), as stock converters do (a switch of
// input-selector, a glitching producer); messages are posted outside `mu`.
GstFlowReturn drop_input(GstTensorConvert* self, GstBuffer* inbuf, const std::string& why)
{
    guint64 dropped;
    guint in_row;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        dropped = ++state_of(self).streaming.counters.dropped;
        in_row = ++state_of(self).streaming.counters.consecutive_drops;
    }
    return cs::report_drop(GST_ELEMENT(self), GST_CAT_DEFAULT, inbuf, why, dropped, in_row);
}

GstFlowReturn transform_impl(GstTensorConvert* self, GstBuffer* inbuf, GstBuffer* outbuf)
{
    std::lock_guard<std::mutex> lock(state_of(self).mu);
    Streaming& st = state_of(self).streaming;
    if (!st.converter) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("tensorconvert received data before caps."),
                          (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    st.counters.consecutive_drops = 0; // the frame matched the caps (checked by the caller)
    const cs::FrameJob job{*st.converter, *st.in, st.out, st.cache.get(), st.scratch};
    if (!cs::convert_tensors(GST_ELEMENT(self), job, inbuf, outbuf)) {
        const GstFlowReturn ret = cs::convert_mapped(GST_ELEMENT(self), job, inbuf, outbuf);
        if (ret != GST_FLOW_OK)
            return ret;
    }
    st.frames++;
    record_colorimetry(st, outbuf);
    return GST_FLOW_OK;
}

// Every plane's first and last byte inside the mapped memory, before the engine (or
// gst_video_frame_map, which checks only each plane's first byte) touches the frame.
GstFlowReturn check_and_transform(GstTensorConvert* self, GstBuffer* inbuf, GstBuffer* outbuf)
{
    eg::StreamLayoutPtr in; // null before caps
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        if (state_of(self).streaming.converter)
            in = state_of(self).streaming.in;
    }
    std::string why;
    if (in && !eg::check_video_frame(inbuf, &in->vinfo, &why))
        return drop_input(self, inbuf, why);
    return transform_impl(self, inbuf, outbuf);
}

GstFlowReturn gst_tensor_convert_transform(GstBaseTransform* trans, GstBuffer* inbuf,
                                           GstBuffer* outbuf)
{
    return eg::guarded(trans, "transform", GST_FLOW_ERROR, [&] {
        return check_and_transform(GST_TENSOR_CONVERT(trans), inbuf, outbuf);
    });
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
        state_of(self).streaming = Streaming{};
        return TRUE;
    });
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_convert_set_property(GObject* object, guint prop_id, const GValue* value,
                                     GParamSpec* pspec)
{
    eg::guarded(object, "set_property", [&] {
        cs::set_property(GST_ELEMENT(object), &state_of(object).settings, prop_id, value, pspec);
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
    if (!cs::get_property(state_of(self).settings, state_of(self).report, prop_id, value))
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

    gst_element_class_add_static_pad_template(element_class, &cs::sink_template);
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
    bt_class->transform_size = cs::transform_size;
    bt_class->decide_allocation = cs::decide_allocation;
    bt_class->propose_allocation = cs::propose_allocation;
    bt_class->sink_event = gst_tensor_convert_sink_event;
    bt_class->transform = gst_tensor_convert_transform;
    bt_class->prepare_output_buffer = gst_tensor_convert_prepare_output_buffer;
    bt_class->start = gst_tensor_convert_start;
    bt_class->stop = gst_tensor_convert_stop;
    bt_class->passthrough_on_same_caps = FALSE;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_FORMAT, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_LAYOUT, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_DTYPE, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_METHOD, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_CONVERT_COMPUTE, GstPluginAPIFlags(0));
}

static void gst_tensor_convert_init(GstTensorConvert* self)
{
    self->state = new State();
}
