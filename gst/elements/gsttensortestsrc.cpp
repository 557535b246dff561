// SPDX-License-Identifier: MIT
//
// tensortestsrc: patterned frames in edgetensor pool buffers.

// Launch lines stay one per line, as users paste them.
// clang-format off
/**
 * SECTION:element-tensortestsrc
 * @title: tensortestsrc
 *
 * Produces patterned `video/x-raw` or `other/tensors` frames in buffers of a
 * #GstEdgeTensorBufferPool, so pipelines and tests have a DMA-BUF producer that is ours. On a
 * host without a DMA-BUF provider the frames live in shared memory (memory type
 * "edgetensor-shm"); every buffer carries a #GstEdgeTensorMeta either way.
 *
 * It seeks as videotestsrc does: after a flushing seek the next frame is the one at the
 * segment position, with that frame's timestamp and pattern.
 *
 * Downstream that offers a #GstEdgeTensorBufferPool in the ALLOCATION query gets its pool used;
 * otherwise the element makes its own. When downstream cannot read GstVideoMeta and 64-byte
 * aligned DMA-BUF rows would differ from GStreamer's default layout, the element falls back to
 * shared memory in the default layout rather than hand out frames nobody can read.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 tensortestsrc num-buffers=100 ! fakesink
 * gst-launch-1.0 tensortestsrc is-live=true num-buffers=90 pattern=checkers ! video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1 ! fakesink
 * gst-launch-1.0 tensortestsrc num-buffers=10 ! other/tensors,types=float32,dimensions=3:224:224:1 ! fakesink
 * ]|
 */
// clang-format on

#include "gsttensortestsrc.h"

#include "enum_type.hpp"
#include "glib_raii.hpp"
#include "internal.hpp"
#include "pool_acquire.hpp"
#include "pool_negotiation.hpp"
#include "testsrc_patterns.hpp"
#include "testsrc_properties.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cstring>
#include <mutex>

GST_DEBUG_CATEGORY_STATIC(gst_tensor_test_src_debug);
#define GST_CAT_DEFAULT gst_tensor_test_src_debug

namespace
{

namespace eg = edgetensor::gst;
namespace ts = edgetensor::gst::tensortestsrc;

constexpr gint DEFAULT_WIDTH = 320;
constexpr gint DEFAULT_HEIGHT = 240;
constexpr gint DEFAULT_FPS = 30;
constexpr const char* DEFAULT_TENSOR_DIMENSIONS = "3:320:240:1";

#define VIDEO_FORMATS                                                                              \
    "{ NV12, NV21, NV16, NV24, I420, YV12, YUY2, UYVY, VYUY, RGB, BGR, RGBA, BGRA, RGBx, BGRx, "   \
    "GRAY8, RGBP }"

GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format = (string) " VIDEO_FORMATS
                    ", width = (int) [ 1, 16384 ], height = (int) [ 1, 16384 ], "
                    "framerate = (fraction) [ 0/1, 2147483647/1 ], "
                    "pixel-aspect-ratio = (fraction) 1/1, interlace-mode = (string) progressive; "
                    "other/tensors, num_tensors = (int) 1, format = (string) static, "
                    "framerate = (fraction) [ 0/1, 2147483647/1 ]"));

struct Streaming {
    eg::StreamLayoutPtr layout; // null until caps are set
    gint fps_n = 0;
    gint fps_d = 1;
    guint64 n_frames = 0; // the next frame's number: its pattern and its timestamp
    bool reverse = false; // a negative-rate seek: frames count down to 0
    bool reverse_done = false;
};

// One C++ state object per element: settings under the object lock, streaming state under mu.
struct State {
    ts::Settings settings;
    std::mutex mu;
    Streaming streaming;
};

} // namespace

struct _GstTensorTestSrc {
    GstPushSrc parent;
    State* state;
};

G_DEFINE_TYPE(GstTensorTestSrc, gst_tensor_test_src, GST_TYPE_PUSH_SRC)
GST_ELEMENT_REGISTER_DEFINE(tensortestsrc, "tensortestsrc", GST_RANK_NONE, GST_TYPE_TENSOR_TEST_SRC)

GType gst_tensor_test_src_pattern_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_TEST_SRC_GRADIENT, "Horizontal colour ramp scrolling one pixel per frame",
         "gradient"},
        {GST_TENSOR_TEST_SRC_CHECKERS, "8x8 black and white squares", "checkers"},
        {GST_TENSOR_TEST_SRC_BLACK, "Solid black", "black"},
        {GST_TENSOR_TEST_SRC_WHITE, "Solid white", "white"},
        {GST_TENSOR_TEST_SRC_FRAME_COUNTER, "Every byte of frame n holds n modulo 256",
         "frame-counter"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstTensorTestSrcPattern", values);
}

namespace
{

State& state_of(gpointer self)
{
    return *GST_TENSOR_TEST_SRC(self)->state;
}

ts::Settings settings_snapshot(GstTensorTestSrc* self)
{
    eg::ObjectLockGuard lock(self);
    return self->state->settings;
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_test_src_set_property(GObject* object, guint prop_id, const GValue* value,
                                      GParamSpec* pspec)
{
    // gst_base_src_set_live() takes the object lock itself: after store_setting() let it go.
    if (eg::guarded(object, "set_property", false,
                    [&] {
                        return eg::store_setting(object, ts::setting_fields(),
                                                 state_of(object).settings, prop_id, value, pspec);
                    }) &&
        prop_id == ts::PROP_IS_LIVE)
        gst_base_src_set_live(GST_BASE_SRC(object), g_value_get_boolean(value));
}

void gst_tensor_test_src_get_property(GObject* object, guint prop_id, GValue* value,
                                      GParamSpec* pspec)
{
    eg::guarded(object, "get_property", [&] {
        if (!eg::load_setting(object, ts::setting_fields(), state_of(object).settings, prop_id,
                              value))
            G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    });
}

void gst_tensor_test_src_finalize(GObject* object)
{
    auto* self = GST_TENSOR_TEST_SRC(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_test_src_parent_class)->finalize(object);
}

// ---- GstBaseSrc ----------------------------------------------------------------------------

GstCaps* gst_tensor_test_src_fixate(GstBaseSrc* bsrc, GstCaps* caps)
{
    caps = gst_caps_truncate(gst_caps_make_writable(caps));
    GstStructure* s = gst_caps_get_structure(caps, 0);
    if (gst_structure_has_name(s, "video/x-raw")) {
        gst_structure_fixate_field_nearest_int(s, "width", DEFAULT_WIDTH);
        gst_structure_fixate_field_nearest_int(s, "height", DEFAULT_HEIGHT);
        // Square progressive pixels, and the colorimetry the frames are encoded with stated in
        // the caps: GStreamer's default for the format and size unless downstream picks one.
        if (gst_structure_has_field(s, "pixel-aspect-ratio"))
            gst_structure_fixate_field_nearest_fraction(s, "pixel-aspect-ratio", 1, 1);
        else
            gst_structure_set(s, "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1, nullptr);
        if (gst_structure_has_field(s, "interlace-mode"))
            gst_structure_fixate_field_string(s, "interlace-mode", "progressive");
        else
            gst_structure_set(s, "interlace-mode", G_TYPE_STRING, "progressive", nullptr);
        gst_structure_fixate_field(s, "format");
        const GstVideoFormat format =
            gst_video_format_from_string(gst_structure_get_string(s, "format"));
        gint w = 0, h = 0;
        GstVideoInfo def;
        if (format != GST_VIDEO_FORMAT_UNKNOWN && gst_structure_get_int(s, "width", &w) &&
            gst_structure_get_int(s, "height", &h) &&
            gst_video_info_set_format(&def, format, guint(w), guint(h))) {
            eg::GCharPtr colorimetry(gst_video_colorimetry_to_string(&def.colorimetry));
            if (colorimetry && gst_structure_has_field(s, "colorimetry"))
                gst_structure_fixate_field_string(s, "colorimetry", colorimetry.get());
            else if (colorimetry)
                gst_structure_set(s, "colorimetry", G_TYPE_STRING, colorimetry.get(), nullptr);
        }
    } else {
        if (!gst_structure_has_field(s, "types"))
            gst_structure_set(s, "types", G_TYPE_STRING, "uint8", nullptr);
        else
            gst_structure_fixate_field_string(s, "types", "uint8");
        if (!gst_structure_has_field(s, "dimensions"))
            gst_structure_set(s, "dimensions", G_TYPE_STRING, DEFAULT_TENSOR_DIMENSIONS, nullptr);
        else
            gst_structure_fixate_field_string(s, "dimensions", DEFAULT_TENSOR_DIMENSIONS);
    }
    if (gst_structure_has_field(s, "framerate"))
        gst_structure_fixate_field_nearest_fraction(s, "framerate", DEFAULT_FPS, 1);
    else
        gst_structure_set(s, "framerate", GST_TYPE_FRACTION, DEFAULT_FPS, 1, nullptr);
    return GST_BASE_SRC_CLASS(gst_tensor_test_src_parent_class)->fixate(bsrc, caps);
}

gboolean gst_tensor_test_src_set_caps(GstBaseSrc* bsrc, GstCaps* caps)
{
    auto* self = GST_TENSOR_TEST_SRC(bsrc);
    return eg::guarded(self, "set_caps", FALSE, [&]() -> gboolean {
        auto layout = eg::stream_layout_from_caps(caps);
        if (!layout) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot produce %" GST_PTR_FORMAT, caps),
                              ("%s", layout.error().message().c_str()));
            return FALSE;
        }
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        Streaming& st = state_of(self).streaming;
        st.layout = std::move(*layout);
        st.fps_n = st.layout->fps_n;
        st.fps_d = st.layout->fps_d;
        GST_DEBUG_OBJECT(self, "producing %" GST_PTR_FORMAT, caps);
        return TRUE;
    });
}

// Downstream's edgetensor pool or ours, with the user's bounds and memory; shared memory in
// the default layout when downstream cannot read GstVideoMeta and 64-byte DMA-BUF rows would
// differ from it. GstBaseSrc activates the pool after this, and would report a failure there
// as "not negotiated": activation is done, and its failure explained, here.
gboolean decide_allocation_impl(GstTensorTestSrc* self, GstQuery* query)
{
    const ts::Settings settings = settings_snapshot(self);
    eg::PoolPolicy policy;
    policy.min_buffers = settings.min_buffers;
    policy.max_buffers = settings.max_buffers;
    policy.max_overrides_peer = true;
    policy.unbounded_because = "max-buffers=0 asks for no limit";
    policy.memory = settings.memory;
    policy.access = GST_EDGE_TENSOR_CPU_ACCESS_WRITE;
    eg::NegotiatedPool made = eg::decide_pool(GST_ELEMENT(self), query, policy, "the buffer pool");
    if (!made)
        return FALSE;
    return eg::activate_pool(GST_ELEMENT(self), made.pool.get(), "the frames of its pool");
}

gboolean gst_tensor_test_src_decide_allocation(GstBaseSrc* bsrc, GstQuery* query)
{
    return eg::guarded(bsrc, "decide_allocation", FALSE, [&]() -> gboolean {
        return decide_allocation_impl(GST_TENSOR_TEST_SRC(bsrc), query);
    });
}

// Seeking as videotestsrc does: the segment's position picks the next frame (its number sets
// the pattern and its timestamp), and a negative rate counts down to frame 0. GstBaseSrc ends
// the segment at its stop.
gboolean gst_tensor_test_src_do_seek(GstBaseSrc* bsrc, GstSegment* segment)
{
    auto* self = GST_TENSOR_TEST_SRC(bsrc);
    segment->time = segment->start;
    std::lock_guard<std::mutex> lock(state_of(self).mu);
    Streaming& st = state_of(self).streaming;
    st.reverse = segment->rate < 0;
    st.reverse_done = false;
    const GstClockTime position =
        GST_CLOCK_TIME_IS_VALID(segment->position) ? segment->position : 0;
    st.n_frames = st.fps_n > 0 ? gst_util_uint64_scale(position, guint64(st.fps_n),
                                                       guint64(st.fps_d) * GST_SECOND)
                               : 0;
    GST_DEBUG_OBJECT(self, "seek to %" GST_TIME_FORMAT ": frame %" G_GUINT64_FORMAT "%s",
                     GST_TIME_ARGS(position), st.n_frames, st.reverse ? ", reverse" : "");
    return TRUE;
}

gboolean gst_tensor_test_src_is_seekable(GstBaseSrc*)
{
    return TRUE;
}

// GstBaseSrc's own allocation, with the pool's reason when it fails (an exhausted fd table says
// so) instead of a bare flow error that surfaces as "Internal data stream error".
GstFlowReturn gst_tensor_test_src_alloc(GstBaseSrc* bsrc, guint64 offset, guint size,
                                        GstBuffer** buffer)
{
    const GstFlowReturn ret =
        GST_BASE_SRC_CLASS(gst_tensor_test_src_parent_class)->alloc(bsrc, offset, size, buffer);
    if (ret == GST_FLOW_ERROR)
        eg::guarded(bsrc, "alloc", [bsrc, ret] {
            eg::GstObjectPtr<GstBufferPool> pool(gst_base_src_get_buffer_pool(bsrc));
            eg::post_acquire_error(GST_ELEMENT(bsrc), pool.get(), ret, "a frame");
        });
    return ret;
}

gboolean gst_tensor_test_src_start(GstBaseSrc* bsrc)
{
    auto* self = GST_TENSOR_TEST_SRC(bsrc);
    std::lock_guard<std::mutex> lock(state_of(self).mu);
    state_of(self).streaming = Streaming{};
    return TRUE;
}

gboolean gst_tensor_test_src_stop(GstBaseSrc* bsrc)
{
    auto* self = GST_TENSOR_TEST_SRC(bsrc);
    std::lock_guard<std::mutex> lock(state_of(self).mu);
    GST_DEBUG_OBJECT(self, "stopping after %" G_GUINT64_FORMAT " frames",
                     state_of(self).streaming.n_frames);
    state_of(self).streaming = Streaming{};
    return TRUE;
}

void gst_tensor_test_src_get_times(GstBaseSrc* bsrc, GstBuffer* buffer, GstClockTime* start,
                                   GstClockTime* end)
{
    // Live: sync every frame against the clock; otherwise run as fast as downstream takes it.
    if (gst_base_src_is_live(bsrc) && GST_BUFFER_PTS_IS_VALID(buffer)) {
        *start = GST_BUFFER_PTS(buffer);
        *end = GST_BUFFER_DURATION_IS_VALID(buffer) ? *start + GST_BUFFER_DURATION(buffer)
                                                    : GST_CLOCK_TIME_NONE;
    } else {
        *start = GST_CLOCK_TIME_NONE;
        *end = GST_CLOCK_TIME_NONE;
    }
}

gboolean gst_tensor_test_src_query(GstBaseSrc* bsrc, GstQuery* query)
{
    if (GST_QUERY_TYPE(query) == GST_QUERY_LATENCY) {
        gint fps_n, fps_d;
        {
            std::lock_guard<std::mutex> lock(state_of(bsrc).mu);
            fps_n = state_of(bsrc).streaming.fps_n;
            fps_d = state_of(bsrc).streaming.fps_d;
        }
        if (fps_n > 0) {
            const GstClockTime latency = gst_util_uint64_scale(GST_SECOND, fps_d, fps_n);
            // One frame, as videotestsrc; no maximum: frames wait in the source's pool, and a
            // maximum of one frame is less than a sink's processing deadline on top of it.
            gst_query_set_latency(query, gst_base_src_is_live(bsrc), latency, GST_CLOCK_TIME_NONE);
            return TRUE;
        }
    }
    return GST_BASE_SRC_CLASS(gst_tensor_test_src_parent_class)->query(bsrc, query);
}

GstFlowReturn fill_impl(GstTensorTestSrc* self, GstBuffer* buffer)
{
    Streaming st;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        Streaming& cur = state_of(self).streaming;
        if (!cur.layout) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("no caps negotiated"));
            return GST_FLOW_NOT_NEGOTIATED;
        }
        if (cur.reverse_done)
            return GST_FLOW_EOS; // reverse playback reached frame 0
        st = cur;
        if (!cur.reverse)
            cur.n_frames++;
        else if (cur.n_frames > 0)
            cur.n_frames--;
        else
            cur.reverse_done = true;
    }
    GstClockTime pts = GST_CLOCK_TIME_NONE, duration = GST_CLOCK_TIME_NONE;
    if (st.fps_n > 0) {
        pts = gst_util_uint64_scale(st.n_frames, st.fps_d * GST_SECOND, st.fps_n);
        duration = gst_util_uint64_scale(st.n_frames + 1, st.fps_d * GST_SECOND, st.fps_n) - pts;
        // "pattern" is controllable: apply the controller's value for this frame.
        gst_object_sync_values(GST_OBJECT(self), pts);
    }
    GstTensorTestSrcPattern pattern;
    {
        eg::ObjectLockGuard lock(self);
        pattern = state_of(self).settings.pattern;
    }

    if (st.layout->video) {
        GstVideoFrame frame;
        if (!gst_video_frame_map(&frame, &st.layout->vinfo, buffer, GST_MAP_WRITE)) {
            GST_ELEMENT_ERROR(self, RESOURCE, WRITE,
                              ("Cannot map the output frame%s.", eg::take_map_failure().c_str()),
                              ("gst_video_frame_map failed on %" GST_PTR_FORMAT, buffer));
            return GST_FLOW_ERROR;
        }
        eg::fill_video(&frame, pattern, st.n_frames);
        gst_video_frame_unmap(&frame);
    } else {
        GstMapInfo map;
        if (!gst_buffer_map(buffer, &map, GST_MAP_WRITE)) {
            GST_ELEMENT_ERROR(self, RESOURCE, WRITE,
                              ("Cannot map the output tensor%s.", eg::take_map_failure().c_str()),
                              ("gst_buffer_map failed on %" GST_PTR_FORMAT, buffer));
            return GST_FLOW_ERROR;
        }
        eg::fill_tensor(map.data, map.size, st.layout->tensor.dtype, pattern, st.n_frames);
        gst_buffer_unmap(buffer, &map);
    }

    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DURATION(buffer) = duration;
    GST_BUFFER_OFFSET(buffer) = st.n_frames;
    GST_BUFFER_OFFSET_END(buffer) = st.n_frames + 1;
    return GST_FLOW_OK;
}

GstFlowReturn gst_tensor_test_src_fill(GstPushSrc* psrc, GstBuffer* buffer)
{
    return eg::guarded(psrc, "fill", GST_FLOW_ERROR,
                       [&] { return fill_impl(GST_TENSOR_TEST_SRC(psrc), buffer); });
}

} // namespace

static void gst_tensor_test_src_class_init(GstTensorTestSrcClass* klass)
{
    gst_edge_tensor_init();
    GST_DEBUG_CATEGORY_INIT(gst_tensor_test_src_debug, "tensortestsrc", 0,
                            "edgetensor test source");

    GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    GstBaseSrcClass* base_class = GST_BASE_SRC_CLASS(klass);
    GstPushSrcClass* push_class = GST_PUSH_SRC_CLASS(klass);

    gobject_class->set_property = gst_tensor_test_src_set_property;
    gobject_class->get_property = gst_tensor_test_src_get_property;
    gobject_class->finalize = gst_tensor_test_src_finalize;

    ts::install_properties(gobject_class);

    gst_element_class_add_static_pad_template(element_class, &src_template);
    gst_element_class_set_static_metadata(
        element_class, "Tensor test source", "Source/Video/Tensor",
        "Produces patterned video/x-raw or other/tensors frames in edgetensor DMA-BUF buffers "
        "(shared memory where the host has no DMA-BUF provider). "
        "Example: gst-launch-1.0 tensortestsrc num-buffers=100 ! fakesink",
        "edgetensor developers");

    base_class->fixate = gst_tensor_test_src_fixate;
    base_class->set_caps = gst_tensor_test_src_set_caps;
    base_class->decide_allocation = gst_tensor_test_src_decide_allocation;
    base_class->start = gst_tensor_test_src_start;
    base_class->stop = gst_tensor_test_src_stop;
    base_class->get_times = gst_tensor_test_src_get_times;
    base_class->do_seek = gst_tensor_test_src_do_seek;
    base_class->is_seekable = gst_tensor_test_src_is_seekable;
    base_class->alloc = gst_tensor_test_src_alloc;
    base_class->query = gst_tensor_test_src_query;
    push_class->fill = gst_tensor_test_src_fill;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_TEST_SRC_PATTERN, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_EDGE_TENSOR_MEMORY_KIND, GstPluginAPIFlags(0));
}

static void gst_tensor_test_src_init(GstTensorTestSrc* self)
{
    self->state = new State();
    gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
    gst_base_src_set_live(GST_BASE_SRC(self), ts::DEFAULT_IS_LIVE);
}
