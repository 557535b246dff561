// SPDX-License-Identifier: MIT
//
// tensorconvert: camera frame to NPU-ready tensor in one pass (edgetensor::Converter).

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
 * gst-launch-1.0 tensortestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1920,height=1080 !
 * tensorconvert width=640 height=640 letterbox=true ! video/x-raw,format=RGB ! pngenc ! filesink
 * location=out.png gst-launch-1.0 v4l2src io-mode=dmabuf ! tensorconvert width=224 height=224
 * dtype=float32 layout=chw mean=123.675,116.28,103.53 std=58.395,57.12,57.375 ! fakesink
 * ]|
 */

#include "gsttensorconvert.h"

#include "frame_check.hpp"
#include "glib_raii.hpp"
#include "internal.hpp"
#include "tensorconvert_colorimetry.hpp"
#include "tensorconvert_compute.hpp"
#include "tensorconvert_input.hpp"
#include "tensorconvert_settings.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/video/video.h>

#include <edgetensor/convert.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

GST_DEBUG_CATEGORY_STATIC(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

namespace
{

namespace eg = edgetensor::gst;
namespace et = edgetensor;
namespace cs = edgetensor::gst::tensorconvert;

constexpr guint MAX_SIZE = 16384;
constexpr guint DEFAULT_WIDTH = 0;
constexpr guint DEFAULT_HEIGHT = 0;
constexpr GstTensorConvertFormat DEFAULT_FORMAT = GST_TENSOR_CONVERT_FORMAT_RGB;
constexpr GstTensorConvertLayout DEFAULT_LAYOUT = GST_TENSOR_CONVERT_LAYOUT_HWC;
constexpr GstTensorConvertDType DEFAULT_DTYPE = GST_TENSOR_CONVERT_DTYPE_UINT8;
constexpr GstTensorConvertMethod DEFAULT_METHOD = GST_TENSOR_CONVERT_METHOD_BILINEAR;
constexpr gboolean DEFAULT_LETTERBOX = FALSE;
// ARGB, as GStreamer's video converter takes its border colour (GstVideoConverter.border-argb).
constexpr guint DEFAULT_FILL_COLOR = 0xff000000;
constexpr guint MAX_FILL_COLOR = G_MAXUINT32;
constexpr guint DEFAULT_N_THREADS = 1;
constexpr guint MAX_N_THREADS = 64;
constexpr guint DEFAULT_MIN_BUFFERS = 2;
constexpr GstTensorConvertCompute DEFAULT_COMPUTE = GST_TENSOR_CONVERT_COMPUTE_AUTO;

enum {
    PROP_0,
    PROP_WIDTH,
    PROP_HEIGHT,
    PROP_FORMAT,
    PROP_LAYOUT,
    PROP_DTYPE,
    PROP_MEAN,
    PROP_STD,
    PROP_METHOD,
    PROP_LETTERBOX,
    PROP_FILL_COLOR,
    PROP_CROP,
    PROP_N_THREADS,
    PROP_LETTERBOX_SCALE,
    PROP_LETTERBOX_LEFT,
    PROP_LETTERBOX_TOP,
    PROP_LETTERBOX_RIGHT,
    PROP_LETTERBOX_BOTTOM,
    PROP_CACHE_HITS,
    PROP_CACHE_MISSES,
    PROP_COMPUTE,
    PROP_GL_STATS,
    PROP_DROPPED,
};

// Every format the engine reads (GStreamer spelling, as convert_format_from_name() takes it).
#define SINK_FORMATS                                                                               \
    "{ NV12, NV21, NV16, NV24, I420, YUY2, UYVY, VYUY, RGB, BGR, RGBA, BGRA, RGBx, BGRx, "         \
    "GRAY8, RGBP }"
#define SIZE_RANGE "(int) [ 1, 16384 ]"

GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format = (string) " SINK_FORMATS ", width = " SIZE_RANGE
                    ", height = " SIZE_RANGE ", framerate = (fraction) [ 0/1, 2147483647/1 ]"));

GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("other/tensors, num_tensors = (int) 1, format = (string) static, "
                    "types = (string) { uint8, int8, float16, float32 }, "
                    "framerate = (fraction) [ 0/1, 2147483647/1 ]; "
                    "video/x-raw, format = (string) { RGB, BGR, RGBA, BGRA, GRAY8 }, "
                    "width = " SIZE_RANGE ", height = " SIZE_RANGE ", "
                    "framerate = (fraction) [ 0/1, 2147483647/1 ]"));

struct Settings {
    guint width = DEFAULT_WIDTH;
    guint height = DEFAULT_HEIGHT;
    GstTensorConvertFormat format = DEFAULT_FORMAT;
    GstTensorConvertLayout layout = DEFAULT_LAYOUT;
    GstTensorConvertDType dtype = DEFAULT_DTYPE;
    GstTensorConvertMethod method = DEFAULT_METHOD;
    std::string mean_str;
    std::vector<float> mean;
    std::string std_str;
    std::vector<float> stdev;
    gboolean letterbox = DEFAULT_LETTERBOX;
    guint fill_color = DEFAULT_FILL_COLOR;
    std::string crop_str;
    std::optional<et::Region> crop;
    guint n_threads = DEFAULT_N_THREADS;
    GstTensorConvertCompute compute = DEFAULT_COMPUTE;
    // Values set but refused (and not replaced since): start() will not run with them.
    cs::Refusals refused;
};

// What the last set_caps computed; read-only properties.
struct Report {
    double scale = 1.0;
    guint left = 0;
    guint top = 0;
    guint right = 0;
    guint bottom = 0;
};

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
    GstVideoInfo in_info{};
    bool out_video = false;
    GstVideoInfo out_info{};
    size_t out_bytes = 0;
    guint64 frames = 0;
    // Recorded in every output meta: the output values' and the applied (source) colorimetry.
    guint32 out_colorimetry = 0;
    guint32 applied_colorimetry = 0;
    // The last assumption warned about, so each is said once per start.
    std::string warned_colorimetry;
    // GL counters of the converters replaced by caps changes since start.
    et::GlImportStats gl_carried;
    // Input buffers that did not match the caps: dropped in total, and in a row now.
    guint64 dropped = 0;
    guint consecutive_drops = 0;
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

GType register_enum(gsize* once, const char* name, const GEnumValue* values)
{
    if (g_once_init_enter(once)) {
        GType t = g_enum_register_static(name, values);
        g_once_init_leave(once, t);
    }
    return GType(*once);
}

} // namespace

GType gst_tensor_convert_format_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_CONVERT_FORMAT_RGB, "R, G, B", "rgb"},
        {GST_TENSOR_CONVERT_FORMAT_BGR, "B, G, R", "bgr"},
        {GST_TENSOR_CONVERT_FORMAT_RGBA, "R, G, B, A", "rgba"},
        {GST_TENSOR_CONVERT_FORMAT_BGRA, "B, G, R, A", "bgra"},
        {GST_TENSOR_CONVERT_FORMAT_GRAY, "One full-range luma channel", "gray"},
        {0, nullptr, nullptr},
    };
    return register_enum(&type, "GstTensorConvertFormat", values);
}

GType gst_tensor_convert_layout_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_CONVERT_LAYOUT_HWC, "[H, W, C]: channels interleaved", "hwc"},
        {GST_TENSOR_CONVERT_LAYOUT_CHW, "[C, H, W]: one plane per channel", "chw"},
        {0, nullptr, nullptr},
    };
    return register_enum(&type, "GstTensorConvertLayout", values);
}

GType gst_tensor_convert_dtype_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_CONVERT_DTYPE_UINT8, "Unsigned 8-bit, 0..255", "uint8"},
        {GST_TENSOR_CONVERT_DTYPE_INT8, "Signed 8-bit, value - 128", "int8"},
        {GST_TENSOR_CONVERT_DTYPE_FLOAT16, "IEEE half precision, (value - mean) / std", "float16"},
        {GST_TENSOR_CONVERT_DTYPE_FLOAT32, "IEEE single precision, (value - mean) / std",
         "float32"},
        {0, nullptr, nullptr},
    };
    return register_enum(&type, "GstTensorConvertDType", values);
}

GType gst_tensor_convert_method_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_CONVERT_METHOD_NEAREST, "Nearest neighbour", "nearest"},
        {GST_TENSOR_CONVERT_METHOD_BILINEAR, "Bilinear interpolation", "bilinear"},
        {0, nullptr, nullptr},
    };
    return register_enum(&type, "GstTensorConvertMethod", values);
}

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

// ---- settings -> engine ---------------------------------------------------------------------

et::OutputFormat output_format(GstTensorConvertFormat f)
{
    switch (f) {
    case GST_TENSOR_CONVERT_FORMAT_BGR:
        return et::OutputFormat::Bgr;
    case GST_TENSOR_CONVERT_FORMAT_RGBA:
        return et::OutputFormat::Rgba;
    case GST_TENSOR_CONVERT_FORMAT_BGRA:
        return et::OutputFormat::Bgra;
    case GST_TENSOR_CONVERT_FORMAT_GRAY:
        return et::OutputFormat::Gray;
    case GST_TENSOR_CONVERT_FORMAT_RGB:
        break;
    }
    return et::OutputFormat::Rgb;
}

et::DType output_dtype(GstTensorConvertDType d)
{
    switch (d) {
    case GST_TENSOR_CONVERT_DTYPE_INT8:
        return et::DType::I8;
    case GST_TENSOR_CONVERT_DTYPE_FLOAT16:
        return et::DType::F16;
    case GST_TENSOR_CONVERT_DTYPE_FLOAT32:
        return et::DType::F32;
    case GST_TENSOR_CONVERT_DTYPE_UINT8:
        break;
    }
    return et::DType::U8;
}

// The video format of a uint8 HWC output, GST_VIDEO_FORMAT_UNKNOWN when the output cannot be
// video/x-raw.
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

size_t channels_of(const Settings& s)
{
    return et::output_format_channels(output_format(s.format));
}

// Outermost first: [1, H, W, C] or [1, C, H, W].
et::Shape output_shape(const Settings& s, size_t w, size_t h)
{
    const size_t c = channels_of(s);
    if (s.layout == GST_TENSOR_CONVERT_LAYOUT_CHW)
        return {1, c, h, w};
    return {1, h, w, c};
}

// ---- caps ----------------------------------------------------------------------------------

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
    gst_value_set_int_range(out, 1, gint(MAX_SIZE));
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
                             eg::tensor_type_name(output_dtype(s.dtype)), nullptr);
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
        eg::padded_dimensions_list(
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
        if (const auto c = eg::output_colorimetry_string(in, vf))
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

    eg::MiniObjectPtr<GstCaps> templ(gst_static_pad_template_get_caps(&sink_template));
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

GstCaps* transform_caps_impl(GstTensorConvert* self, GstPadDirection direction, GstCaps* caps,
                             GstCaps* filter)
{
    const Settings s = settings_snapshot(self);
    GstCaps* result = gst_caps_new_empty();
    eg::MiniObjectPtr<GstCaps> input;
    if (gst_caps_is_any(caps))
        input.reset(gst_pad_get_pad_template_caps(direction == GST_PAD_SINK
                                                      ? GST_BASE_TRANSFORM_SINK_PAD(self)
                                                      : GST_BASE_TRANSFORM_SRC_PAD(self)));
    else
        input.reset(gst_caps_ref(caps));

    for (guint i = 0; i < gst_caps_get_size(input.get()); ++i) {
        const GstCapsFeatures* f = gst_caps_get_features(input.get(), i);
        if (f && !gst_caps_features_is_any(f) &&
            !gst_caps_features_is_equal(f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY))
            continue; // we map frames: system memory or mappable DMA-BUF under plain caps
        const GstStructure* st = gst_caps_get_structure(input.get(), i);
        if (direction == GST_PAD_SINK) {
            if (gst_structure_has_name(st, "video/x-raw"))
                result = add_src_structures(s, st, result);
        } else {
            result = add_sink_structures(s, st, result);
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

GstCaps* gst_tensor_convert_transform_caps(GstBaseTransform* trans, GstPadDirection direction,
                                           GstCaps* caps, GstCaps* filter)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    try {
        return transform_caps_impl(self, direction, caps, filter);
    } catch (const std::exception& e) {
        GST_ERROR_OBJECT(self, "transform_caps failed: %s", e.what());
    }
    return gst_caps_new_empty();
}

GstCaps* gst_tensor_convert_fixate_caps(GstBaseTransform* trans, GstPadDirection direction,
                                        GstCaps* caps, GstCaps* othercaps)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    try {
        if (direction == GST_PAD_SINK && gst_caps_is_fixed(caps)) {
            // The exact output for this input (dimensions included), in downstream's order of
            // preference.
            GstCaps* ideal = transform_caps_impl(self, GST_PAD_SINK, caps, nullptr);
            GstCaps* best = gst_caps_intersect_full(othercaps, ideal, GST_CAPS_INTERSECT_FIRST);
            gst_caps_unref(ideal);
            if (!gst_caps_is_empty(best)) {
                gst_caps_unref(othercaps);
                othercaps = best;
            } else {
                gst_caps_unref(best);
            }
        }
    } catch (const std::exception& e) {
        GST_ERROR_OBJECT(self, "fixate_caps failed: %s", e.what());
    }
    othercaps = gst_caps_fixate(othercaps);
    GST_DEBUG_OBJECT(self, "fixated to %" GST_PTR_FORMAT, othercaps);
    return othercaps;
}

std::string describe_settings(const Settings& s)
{
    std::string d = "format=";
    d += et::output_format_name(output_format(s.format));
    d += " layout=";
    d += et::tensor_layout_name(s.layout == GST_TENSOR_CONVERT_LAYOUT_CHW ? et::TensorLayout::Chw
                                                                          : et::TensorLayout::Hwc);
    d += " dtype=";
    d += eg::tensor_type_name(output_dtype(s.dtype));
    d += " width=" + std::to_string(s.width) + " height=" + std::to_string(s.height);
    if (s.crop)
        d += " crop=" + s.crop_str;
    return d;
}

// A caps event downstream cannot take fails in the base class with a bare "not-negotiated";
// say what we would produce and what the properties allow instead.
bool check_downstream(GstTensorConvert* self, GstCaps* incaps)
{
    const Settings s = settings_snapshot(self);
    eg::MiniObjectPtr<GstCaps> ours(transform_caps_impl(self, GST_PAD_SINK, incaps, nullptr));
    if (gst_caps_is_empty(ours.get())) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("tensorconvert cannot read %" GST_PTR_FORMAT, incaps),
                          ("only progressive video/x-raw in system memory (or mappable DMA-BUF "
                           "under plain caps) is accepted"));
        return false;
    }
    eg::MiniObjectPtr<GstCaps> peer(
        gst_pad_peer_query_caps(GST_BASE_TRANSFORM_SRC_PAD(self), ours.get()));
    if (peer && !gst_caps_is_empty(peer.get()))
        return true;
    eg::MiniObjectPtr<GstCaps> accepted(
        gst_pad_peer_query_caps(GST_BASE_TRANSFORM_SRC_PAD(self), nullptr));
    eg::GCharPtr ours_str(gst_caps_to_string(ours.get()));
    eg::GCharPtr peer_str(accepted ? gst_caps_to_string(accepted.get()) : g_strdup("nothing"));
    GST_ELEMENT_ERROR(
        self, CORE, NEGOTIATION,
        ("tensorconvert's output does not match what downstream accepts. With %s it produces "
         "%s; downstream accepts %s. Change the properties (video/x-raw output needs "
         "dtype=uint8 layout=hwc) or the caps after tensorconvert.",
         describe_settings(s).c_str(), ours_str.get(), peer_str.get()),
        ("input caps %" GST_PTR_FORMAT, incaps));
    return false;
}

gboolean gst_tensor_convert_sink_event(GstBaseTransform* trans, GstEvent* event)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    try {
        if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            if (state_of(self).streaming.cache)
                gst_edge_tensor_import_cache_clear(state_of(self).streaming.cache.get(),
                                                   "flush-stop");
        }
        if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
            GstCaps* caps = nullptr;
            gst_event_parse_caps(event, &caps);
            if (!check_downstream(self, caps)) {
                gst_event_unref(event);
                return FALSE;
            }
        }
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("%s", e.what()));
        gst_event_unref(event);
        return FALSE;
    }
    return GST_BASE_TRANSFORM_CLASS(gst_tensor_convert_parent_class)->sink_event(trans, event);
}

gboolean set_caps_impl(GstTensorConvert* self, GstCaps* incaps, GstCaps* outcaps)
{
    const Settings s = settings_snapshot(self);

    GstVideoInfo in_info;
    if (!gst_video_info_from_caps(&in_info, incaps)) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot parse the input caps."),
                          ("%" GST_PTR_FORMAT, incaps));
        return FALSE;
    }
    if (GST_VIDEO_INFO_INTERLACE_MODE(&in_info) != GST_VIDEO_INTERLACE_MODE_PROGRESSIVE) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("tensorconvert needs progressive video; deinterlace first."),
                          ("%" GST_PTR_FORMAT, incaps));
        return FALSE;
    }
    const char* fmt_name = gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&in_info));
    const auto src_format = et::convert_format_from_name(fmt_name ? fmt_name : "");
    if (!src_format) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("tensorconvert cannot read %s frames.", fmt_name ? fmt_name : "?"),
                          ("%" GST_PTR_FORMAT, incaps));
        return FALSE;
    }

    et::ConvertConfig cfg;
    cfg.src_format = *src_format;
    cfg.src_width = size_t(GST_VIDEO_INFO_WIDTH(&in_info));
    cfg.src_height = size_t(GST_VIDEO_INFO_HEIGHT(&in_info));
    // What the caps say, unspecified axes resolved with GStreamer's defaults for the frame
    // (reported below): the engine then guesses nothing, and the meta records it all.
    const eg::ConvertColorimetry colorimetry = eg::resolve_convert_colorimetry(
        in_info, gst_structure_has_field(gst_caps_get_structure(incaps, 0), "colorimetry"),
        s.format == GST_TENSOR_CONVERT_FORMAT_GRAY ? GST_VIDEO_FORMAT_GRAY8 : GST_VIDEO_FORMAT_RGB);
    cfg.src_colorimetry = colorimetry.applied;
    cfg.crop = s.crop;
    cfg.dst_width = s.width;
    cfg.dst_height = s.height;
    cfg.dst_format = output_format(s.format);
    cfg.layout =
        s.layout == GST_TENSOR_CONVERT_LAYOUT_CHW ? et::TensorLayout::Chw : et::TensorLayout::Hwc;
    cfg.dtype = output_dtype(s.dtype);
    const size_t channels = channels_of(s);
    if (!cs::per_channel(s.mean, channels, 0.f, &cfg.mean) ||
        !cs::per_channel(s.stdev, channels, 1.f, &cfg.std)) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("mean and std need one value or one per output channel (%zu for "
                           "format=%s); got mean=\"%s\" std=\"%s\".",
                           channels, std::string(et::output_format_name(cfg.dst_format)).c_str(),
                           s.mean_str.c_str(), s.std_str.c_str()),
                          (nullptr));
        return FALSE;
    }
    cfg.method = s.method == GST_TENSOR_CONVERT_METHOD_NEAREST ? et::ResizeMethod::Nearest
                                                               : et::ResizeMethod::Bilinear;
    cfg.letterbox = s.letterbox;
    // 0xAARRGGBB; the engine writes alpha only into 4-channel outputs.
    cfg.fill = {guint8((s.fill_color >> 16) & 0xff), guint8((s.fill_color >> 8) & 0xff),
                guint8(s.fill_color & 0xff), guint8((s.fill_color >> 24) & 0xff)};
    cfg.threads = s.n_threads;
    cfg.compute = eg::convert_compute(s.compute);

    auto conv = et::Converter::create(cfg);
    if (!conv) {
        GST_ELEMENT_ERROR(
            self, CORE, NEGOTIATION,
            ("Cannot convert %" GST_PTR_FORMAT " with %s: %s", incaps, describe_settings(s).c_str(),
             conv.error().message().c_str()),
            ("edgetensor error %s", std::string(et::error_code_name(conv.error().code())).c_str()));
        return FALSE;
    }

    // The output caps must describe exactly what the converter writes.
    const et::Shape shape = output_shape(s, conv->dst_width(), conv->dst_height());
    const GstStructure* os = gst_caps_get_structure(outcaps, 0);
    Streaming st;
    st.in_info = in_info;
    if (gst_structure_has_name(os, "video/x-raw")) {
        GstVideoInfo out_info;
        if (!gst_video_info_from_caps(&out_info, outcaps) ||
            GST_VIDEO_INFO_FORMAT(&out_info) != output_video_format(s) ||
            size_t(GST_VIDEO_INFO_WIDTH(&out_info)) != conv->dst_width() ||
            size_t(GST_VIDEO_INFO_HEIGHT(&out_info)) != conv->dst_height()) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("Output caps %" GST_PTR_FORMAT " do not match %s (%zux%zu).",
                               outcaps, describe_settings(s).c_str(), conv->dst_width(),
                               conv->dst_height()),
                              (nullptr));
            return FALSE;
        }
        st.out_video = true;
        st.out_info = out_info;
        st.out_bytes = GST_VIDEO_INFO_SIZE(&out_info);
    } else {
        auto tc = eg::parse_tensor_caps(os);
        if (!tc) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("Invalid output caps: %s", tc.error().message().c_str()),
                              ("%" GST_PTR_FORMAT, outcaps));
            return FALSE;
        }
        if (tc->dtype != cfg.dtype || !eg::shapes_equal_padded(tc->shape, shape)) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("Output caps want %s [%s], but %s produces %s [%s].",
                               eg::tensor_type_name(tc->dtype),
                               eg::dimensions_string(tc->shape).c_str(),
                               describe_settings(s).c_str(), eg::tensor_type_name(cfg.dtype),
                               eg::dimensions_string(shape).c_str()),
                              ("%" GST_PTR_FORMAT, outcaps));
            return FALSE;
        }
        st.out_bytes = et::dtype_size(cfg.dtype);
        for (size_t d : shape)
            st.out_bytes *= d;
    }

    const et::ConvertGeometry& g = conv->geometry();
    GST_INFO_OBJECT(
        self,
        "%s %zux%zu (%s) -> %s %zux%zu %s %s, %zu threads; content %zux%zu at "
        "(%zu,%zu), scale %.6f, padding l%zu t%zu r%zu b%zu",
        fmt_name, cfg.src_width, cfg.src_height, conv->applied_colorimetry().to_string().c_str(),
        std::string(et::output_format_name(cfg.dst_format)).c_str(), conv->dst_width(),
        conv->dst_height(), std::string(et::tensor_layout_name(cfg.layout)).c_str(),
        eg::tensor_type_name(cfg.dtype), conv->threads(), g.content.width, g.content.height,
        g.content.x, g.content.y, g.scale, g.pad_left, g.pad_top, g.pad_right, g.pad_bottom);
    GST_INFO_OBJECT(self, "compute %s (%s)",
                    std::string(et::convert_compute_name(conv->compute())).c_str(),
                    conv->compute_reason().c_str());

    st.converter.emplace(std::move(*conv));
    st.out_colorimetry = colorimetry.output.pack();
    st.applied_colorimetry = colorimetry.applied.pack();
    std::string assumed;
    if (!colorimetry.assumed_axes.empty())
        assumed = eg::colorimetry_gst_string(colorimetry.applied, GST_VIDEO_INFO_FORMAT(&in_info));
    bool warn = false;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        st.frames = state_of(self).streaming.frames;
        st.warned_colorimetry = state_of(self).streaming.warned_colorimetry;
        if (!assumed.empty() && assumed != st.warned_colorimetry) {
            st.warned_colorimetry = assumed;
            warn = true;
        }
        const Streaming& old = state_of(self).streaming;
        st.gl_carried = old.converter ? eg::add_gl_stats(old.gl_carried, old.converter->gl_stats())
                                      : old.gl_carried;
        st.cache = std::move(state_of(self).streaming.cache);
        if (st.cache && !gst_edge_tensor_import_cache_set_caps(st.cache.get(), incaps))
            GST_DEBUG_OBJECT(self, "input caps not importable: frames are mapped instead");
        state_of(self).streaming = std::move(st);
    }
    {
        eg::ObjectLockGuard lock(self);
        Report& r = state_of(self).report;
        r.scale = g.scale;
        r.left = guint(g.pad_left);
        r.top = guint(g.pad_top);
        r.right = guint(g.pad_right);
        r.bottom = guint(g.pad_bottom);
    }
    for (const char* p : {"letterbox-scale", "letterbox-left", "letterbox-top", "letterbox-right",
                          "letterbox-bottom"})
        g_object_notify(G_OBJECT(self), p);
    if (warn)
        GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                            ("The input (%s %zux%zu) does not say its colorimetry's %s; assuming "
                             "\"%s\", GStreamer's default for this frame. Add colorimetry=... "
                             "to the caps before tensorconvert to choose.",
                             fmt_name, cfg.src_width, cfg.src_height,
                             colorimetry.assumed_axes.c_str(), assumed.c_str()),
                            ("input caps %" GST_PTR_FORMAT, incaps));
    return TRUE;
}

gboolean gst_tensor_convert_set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* outcaps)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    try {
        return set_caps_impl(self, incaps, outcaps);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot configure the conversion."),
                          ("%s", e.what()));
    }
    return FALSE;
}

gboolean gst_tensor_convert_transform_size(GstBaseTransform* trans, GstPadDirection direction,
                                           GstCaps* caps, gsize size, GstCaps* othercaps,
                                           gsize* othersize)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    (void)caps;
    (void)size;
    try {
        if (direction != GST_PAD_SINK)
            return FALSE; // the input size never follows from the output
        auto layout = eg::layout_from_caps(othercaps, 1, nullptr);
        if (!layout) {
            GST_DEBUG_OBJECT(self, "no size for %" GST_PTR_FORMAT ": %s", othercaps,
                             layout.error().message().c_str());
            return FALSE;
        }
        *othersize = layout->size;
        return TRUE;
    } catch (const std::exception& e) {
        GST_ERROR_OBJECT(self, "transform_size failed: %s", e.what());
    }
    return FALSE;
}

// Picks the memory kind for a pool of `caps`: DMA-BUF unless its 64-byte rows would differ
// from the default layout and the other side cannot read GstVideoMeta.
GstEdgeTensorMemoryKind pool_memory_kind(GstTensorConvert* self, GstCaps* caps, bool video_meta)
{
    GstEdgeTensorMemoryKind kind = eg::resolve_memory_kind(GST_EDGE_TENSOR_MEMORY_AUTO);
    const bool video = gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw");
    if (video && !video_meta && kind == GST_EDGE_TENSOR_MEMORY_DMA) {
        auto aligned = eg::layout_from_caps(caps, GST_EDGE_TENSOR_ROW_ALIGNMENT, nullptr);
        if (aligned && aligned->differs_from_default) {
            GST_INFO_OBJECT(self,
                            "the peer cannot read GstVideoMeta and 64-byte DMA-BUF rows differ "
                            "from the default layout of %" GST_PTR_FORMAT
                            ": using shared memory in the default layout",
                            caps);
            kind = GST_EDGE_TENSOR_MEMORY_SHM;
        }
    }
    return kind;
}

// Configures `pool` for `caps`; accepts the pool's corrections once, as GStreamer elements do.
bool configure_pool(GstBufferPool* pool, GstCaps* caps, guint min, guint max,
                    GstEdgeTensorMemoryKind kind, GstEdgeTensorCpuAccess access, bool video_meta,
                    guint* size)
{
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, 0, min, max);
    gst_edge_tensor_buffer_pool_config_set_memory_kind(config, kind);
    gst_edge_tensor_buffer_pool_config_set_cpu_access(config, access);
    if (video_meta)
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool, config)) {
        config = gst_buffer_pool_get_config(pool);
        if (!gst_buffer_pool_config_validate_params(config, caps, 0, min, max) ||
            !gst_buffer_pool_set_config(pool, config))
            return false;
    }
    config = gst_buffer_pool_get_config(pool);
    guint sz = 0;
    gst_buffer_pool_config_get_params(config, nullptr, &sz, nullptr, nullptr);
    gst_structure_free(config);
    if (size)
        *size = sz;
    return true;
}

gboolean decide_allocation_impl(GstTensorConvert* self, GstQuery* query)
{
    GstCaps* caps = nullptr;
    gst_query_parse_allocation(query, &caps, nullptr);
    if (!caps) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("allocation query without caps"));
        return FALSE;
    }

    eg::GstObjectPtr<GstBufferPool> pool;
    guint size = 0, min = 0, max = 0;
    const bool have_pool = gst_query_get_n_allocation_pools(query) > 0;
    if (have_pool) {
        GstBufferPool* p = nullptr;
        gst_query_parse_nth_allocation_pool(query, 0, &p, &size, &min, &max);
        // Only an edgetensor pool's memory holds a tensor a GstEdgeTensorMeta can describe;
        // another pool's buffers would leave downstream without the descriptor.
        if (p && GST_IS_EDGE_TENSOR_BUFFER_POOL(p)) {
            GST_DEBUG_OBJECT(self, "using downstream's pool %s", GST_OBJECT_NAME(p));
            pool.reset(p);
        } else if (p) {
            GST_DEBUG_OBJECT(self, "downstream offers %s, not an edgetensor pool: using ours",
                             GST_OBJECT_NAME(p));
            gst_object_unref(p);
        }
    }
    if (!pool)
        pool.reset(gst_edge_tensor_buffer_pool_new());
    min = std::max(min, DEFAULT_MIN_BUFFERS);
    // Bounded even when downstream sets no bound: each buffer holds an fd (see internal.hpp).
    max = std::max(max ? max : eg::kDefaultMaxBuffers, min);

    const bool video = gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw");
    const bool downstream_meta =
        gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
    const GstEdgeTensorMemoryKind kind = pool_memory_kind(self, caps, downstream_meta);
    if (!configure_pool(pool.get(), caps, min, max, kind, GST_EDGE_TENSOR_CPU_ACCESS_WRITE,
                        video && downstream_meta, &size)) {
        GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Cannot configure the output buffer pool."),
                          ("%" GST_PTR_FORMAT " was refused", caps));
        return FALSE;
    }
    GST_INFO_OBJECT(self, "output pool %s: %s memory, %u bytes, %u..%u buffers",
                    GST_OBJECT_NAME(pool.get()),
                    eg::memory_kind_name(gst_edge_tensor_buffer_pool_get_memory_kind(pool.get())),
                    size, min, max);
    if (have_pool)
        gst_query_set_nth_allocation_pool(query, 0, pool.get(), size, min, max);
    else
        gst_query_add_allocation_pool(query, pool.get(), size, min, max);
    return TRUE;
}

gboolean gst_tensor_convert_decide_allocation(GstBaseTransform* trans, GstQuery* query)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    try {
        return decide_allocation_impl(self, query);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Cannot set up output buffers."),
                          ("%s", e.what()));
    }
    return FALSE;
}

gboolean gst_tensor_convert_propose_allocation(GstBaseTransform* trans, GstQuery* decide_query,
                                               GstQuery* query)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    (void)decide_query;
    try {
        // Frames are read through gst_video_frame_map(), which honours GstVideoMeta.
        gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);

        GstCaps* caps = nullptr;
        gboolean need_pool = FALSE;
        gst_query_parse_allocation(query, &caps, &need_pool);
        if (!need_pool || !caps || !gst_caps_is_fixed(caps))
            return TRUE;
        // Offer upstream our (DMA-BUF where possible) pool so it writes straight into tensors.
        // Upstream has not said whether it reads GstVideoMeta, so keep the default layout
        // unless the DMA-BUF layout equals it.
        eg::GstObjectPtr<GstBufferPool> pool(gst_edge_tensor_buffer_pool_new());
        const GstEdgeTensorMemoryKind kind = pool_memory_kind(self, caps, false);
        guint size = 0;
        if (!configure_pool(pool.get(), caps, DEFAULT_MIN_BUFFERS, eg::kDefaultMaxBuffers, kind,
                            GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE, false, &size)) {
            GST_DEBUG_OBJECT(self, "not proposing a pool for %" GST_PTR_FORMAT, caps);
            return TRUE;
        }
        gst_query_add_allocation_pool(query, pool.get(), size, DEFAULT_MIN_BUFFERS,
                                      eg::kDefaultMaxBuffers);
        return TRUE;
    } catch (const std::exception& e) {
        GST_ERROR_OBJECT(self, "propose_allocation failed: %s", e.what());
    }
    return TRUE;
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
        dropped = ++state_of(self).streaming.dropped;
        in_row = ++state_of(self).streaming.consecutive_drops;
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
    st.consecutive_drops = 0; // the frame matched the caps (checked by the caller)

    // Foreign fd memory (a camera's DMA-BUFs, a memfd) goes through the import cache, so the
    // source is the same tensor, with the same identity, whenever its buffer comes back, and
    // the converter reads it as a tensor. Our own pool's memory already is a tensor, system
    // memory has no fd: both are mapped below, as is anything the tensor path refuses.
    // The GL backend imports tensors (an EGLImage per buffer, kept across frames), so with it
    // our own pool's memory takes the tensor path too.
    GstMemory* first = gst_buffer_n_memory(inbuf) > 0 ? gst_buffer_peek_memory(inbuf, 0) : nullptr;
    const bool gl = st.converter->compute() == et::ConvertCompute::Gl;
    const bool ours = first && gst_is_edge_tensor_memory(first);
    if (first && ((st.cache && gst_is_fd_memory(first) && !ours) || (gl && ours))) {
        GstEdgeTensorImportResult res = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
        auto src_tensor =
            ours ? eg::tensor_from_buffer(inbuf) : eg::import_tensor(st.cache.get(), inbuf, &res);
        auto dst_tensor = eg::tensor_from_buffer(outbuf);
        if (src_tensor && src_tensor->is_image() && dst_tensor) {
            auto r = st.converter->run(*src_tensor, *dst_tensor);
            if (r) {
                st.frames++;
                record_colorimetry(st, outbuf);
                return GST_FLOW_OK;
            }
            GST_DEBUG_OBJECT(self, "tensor path refused (%s): mapping the frame instead",
                             r.error().message().c_str());
        } else {
            GST_LOG_OBJECT(self, "input not imported as an image (result %d): mapping it", res);
        }
    }
    GstVideoFrame in;
    if (!gst_video_frame_map(&in, &st.in_info, inbuf, GST_MAP_READ)) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ,
                          ("Cannot map the input frame%s.", eg::take_map_failure().c_str()),
                          ("gst_video_frame_map failed on %" GST_PTR_FORMAT
                           " (its size or GstVideoMeta does not match the caps)",
                           inbuf));
        return GST_FLOW_ERROR;
    }
    et::SourceFrame src;
    if (eg::frame_is_bottom_up(&in)) {
        GST_LOG_OBJECT(self, "bottom-up frame: converting a top-down copy");
        cs::top_down_copy(&in, &st.in_info, &st.scratch, &src);
    } else {
        for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&in) && p < src.planes.size(); ++p)
            src.planes[p] = {static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&in, p)),
                             size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&in, p))};
    }

    et::Result<void> r;
    if (st.out_video) {
        GstVideoFrame out;
        if (!gst_video_frame_map(&out, &st.out_info, outbuf, GST_MAP_WRITE)) {
            gst_video_frame_unmap(&in);
            GST_ELEMENT_ERROR(self, RESOURCE, WRITE,
                              ("Cannot map the output frame%s.", eg::take_map_failure().c_str()),
                              ("gst_video_frame_map failed on %" GST_PTR_FORMAT, outbuf));
            return GST_FLOW_ERROR;
        }
        et::DestFrame dst{static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&out, 0)),
                          size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&out, 0)), 0};
        r = st.converter->run(src, dst);
        gst_video_frame_unmap(&out);
    } else {
        GstMapInfo map;
        if (!gst_buffer_map(outbuf, &map, GST_MAP_WRITE)) {
            gst_video_frame_unmap(&in);
            GST_ELEMENT_ERROR(self, RESOURCE, WRITE,
                              ("Cannot map the output tensor%s.", eg::take_map_failure().c_str()),
                              ("gst_buffer_map failed on %" GST_PTR_FORMAT, outbuf));
            return GST_FLOW_ERROR;
        }
        if (map.size < st.out_bytes) {
            gst_buffer_unmap(outbuf, &map);
            gst_video_frame_unmap(&in);
            GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("The output buffer is too small."),
                              ("%zu bytes, the tensor needs %zu", size_t(map.size), st.out_bytes));
            return GST_FLOW_ERROR;
        }
        et::DestFrame dst{map.data, st.converter->min_row_stride(),
                          st.converter->min_plane_stride()};
        r = st.converter->run(src, dst);
        gst_buffer_unmap(outbuf, &map);
    }
    gst_video_frame_unmap(&in);
    if (!r) {
        GST_ELEMENT_ERROR(
            self, STREAM, FAILED, ("Conversion failed: %s", r.error().message().c_str()),
            ("edgetensor error %s", std::string(et::error_code_name(r.error().code())).c_str()));
        return GST_FLOW_ERROR;
    }
    st.frames++;
    record_colorimetry(st, outbuf);
    return GST_FLOW_OK;
}

GstFlowReturn gst_tensor_convert_transform(GstBaseTransform* trans, GstBuffer* inbuf,
                                           GstBuffer* outbuf)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    try {
        // Every plane's first and last byte inside the mapped memory, before the engine (or
        // gst_video_frame_map, which checks only each plane's first byte) touches the frame.
        GstVideoInfo info;
        bool configured;
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            configured = state_of(self).streaming.converter.has_value();
            info = state_of(self).streaming.in_info;
        }
        std::string why;
        if (configured && !eg::check_video_frame(inbuf, &info, &why))
            return drop_input(self, inbuf, why);
        return transform_impl(self, inbuf, outbuf);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Conversion failed."), ("%s", e.what()));
    }
    return GST_FLOW_ERROR;
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
                          ("%s", describe_settings(s).c_str()));
        return false;
    }
    std::string why;
    if (!cs::normalisation_is_finite(s.mean, s.stdev, channels_of(s), &why)) {
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
    return eg::prepare_output_from_pool(
        trans, GST_BASE_TRANSFORM_CLASS(gst_tensor_convert_parent_class), inbuf, outbuf);
}

gboolean gst_tensor_convert_start(GstBaseTransform* trans)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    try {
        if (!check_settings(self))
            return FALSE;
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        state_of(self).streaming = Streaming{};
        state_of(self).streaming.cache.reset(
            gst_edge_tensor_import_cache_new(GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE));
        return TRUE;
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, CORE, STATE_CHANGE, (nullptr), ("%s", e.what()));
    }
    return FALSE;
}

gboolean gst_tensor_convert_stop(GstBaseTransform* trans)
{
    auto* self = GST_TENSOR_CONVERT(trans);
    try {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        const Streaming& st = state_of(self).streaming;
        GST_DEBUG_OBJECT(self, "stopping after %" G_GUINT64_FORMAT " frames", st.frames);
        if (st.cache) {
            GstStructure* stats = gst_edge_tensor_import_cache_get_stats(st.cache.get());
            GST_INFO_OBJECT(self, "import cache: %" GST_PTR_FORMAT, stats);
            gst_structure_free(stats);
        }
        if (st.converter && st.converter->compute() == et::ConvertCompute::Gl) {
            GstStructure* gls =
                eg::gl_stats_structure(eg::add_gl_stats(st.gl_carried, st.converter->gl_stats()));
            GST_INFO_OBJECT(self, "GL: %" GST_PTR_FORMAT, gls);
            gst_structure_free(gls);
        }
        state_of(self).streaming = Streaming{};
        return TRUE;
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, CORE, STATE_CHANGE, (nullptr), ("%s", e.what()));
    }
    return FALSE;
}

// ---- GObject -------------------------------------------------------------------------------

// A refused value must be seen: gst-launch sets properties before the element has a bus, so
// the bus warning alone is lost there. Like GLib's own refusal of an out-of-range value, it is a
// g_warning; and the refusal is kept, so start() fails instead of running with old settings.
void refuse_value(GstTensorConvert* self, const char* prop, const char* value,
                  const std::string& why)
{
    const char* v = value ? value : "";
    {
        eg::ObjectLockGuard lock(self);
        state_of(self).settings.refused.refuse(prop, v, why);
    }
    g_warning("%s: invalid %s \"%s\": %s. The previous value is kept and the element will not "
              "start until %s is set to a valid value.",
              GST_OBJECT_NAME(self), prop, v, why.c_str(), prop);
    GST_ELEMENT_WARNING(
        self, LIBRARY, SETTINGS,
        ("Invalid %s \"%s\": %s. The previous value is kept.", prop, v, why.c_str()), (nullptr));
}

void gst_tensor_convert_set_property(GObject* object, guint prop_id, const GValue* value,
                                     GParamSpec* pspec)
{
    auto* self = GST_TENSOR_CONVERT(object);
    if (eg::refuse_unless_ready(GST_ELEMENT(self), pspec))
        return;
    try {
        // Parse outside the lock; GST_ELEMENT_WARNING must not run under it either.
        std::string why;
        std::vector<float> list;
        std::optional<et::Region> crop;
        const char* str = nullptr;
        if (prop_id == PROP_MEAN || prop_id == PROP_STD) {
            str = g_value_get_string(value);
            const bool ok = prop_id == PROP_MEAN ? cs::parse_mean(str, &list, &why)
                                                 : cs::parse_std(str, &list, &why);
            if (!ok) {
                refuse_value(self, pspec->name, str, why);
                return;
            }
        } else if (prop_id == PROP_CROP) {
            str = g_value_get_string(value);
            if (!cs::parse_crop(str, &crop, &why)) {
                refuse_value(self, pspec->name, str, why);
                return;
            }
        }

        eg::ObjectLockGuard lock(self);
        Settings& s = state_of(self).settings;
        s.refused.accept(pspec->name);
        switch (prop_id) {
        case PROP_WIDTH:
            s.width = g_value_get_uint(value);
            break;
        case PROP_HEIGHT:
            s.height = g_value_get_uint(value);
            break;
        case PROP_FORMAT:
            s.format = GstTensorConvertFormat(g_value_get_enum(value));
            break;
        case PROP_LAYOUT:
            s.layout = GstTensorConvertLayout(g_value_get_enum(value));
            break;
        case PROP_DTYPE:
            s.dtype = GstTensorConvertDType(g_value_get_enum(value));
            break;
        case PROP_METHOD:
            s.method = GstTensorConvertMethod(g_value_get_enum(value));
            break;
        case PROP_MEAN:
            s.mean_str = str ? str : "";
            s.mean = std::move(list);
            break;
        case PROP_STD:
            s.std_str = str ? str : "";
            s.stdev = std::move(list);
            break;
        case PROP_LETTERBOX:
            s.letterbox = g_value_get_boolean(value);
            break;
        case PROP_FILL_COLOR:
            s.fill_color = g_value_get_uint(value);
            break;
        case PROP_CROP:
            s.crop_str = str ? str : "";
            s.crop = crop;
            break;
        case PROP_N_THREADS:
            s.n_threads = g_value_get_uint(value);
            break;
        case PROP_COMPUTE:
            s.compute = GstTensorConvertCompute(g_value_get_enum(value));
            break;
        default:
            G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
            break;
        }
    } catch (const std::exception& e) {
        GST_ERROR_OBJECT(self, "cannot set %s: %s", pspec->name, e.what());
    }
}

void gst_tensor_convert_get_property(GObject* object, guint prop_id, GValue* value,
                                     GParamSpec* pspec)
{
    auto* self = GST_TENSOR_CONVERT(object);
    if (prop_id == PROP_CACHE_HITS || prop_id == PROP_CACHE_MISSES || prop_id == PROP_DROPPED) {
        // Streaming state: under mu, never with the object lock held.
        std::lock_guard<std::mutex> slock(state_of(self).mu);
        const Streaming& st = state_of(self).streaming;
        guint64 v = 0;
        if (prop_id == PROP_DROPPED)
            v = st.dropped;
        else if (st.cache)
            v = prop_id == PROP_CACHE_HITS
                    ? gst_edge_tensor_import_cache_get_hits(st.cache.get())
                    : gst_edge_tensor_import_cache_get_misses(st.cache.get());
        g_value_set_uint64(value, v);
        return;
    }
    if (prop_id == PROP_GL_STATS) {
        std::lock_guard<std::mutex> slock(state_of(self).mu);
        const Streaming& st = state_of(self).streaming;
        g_value_take_boxed(
            value, eg::gl_stats_structure(
                       st.converter ? eg::add_gl_stats(st.gl_carried, st.converter->gl_stats())
                                    : st.gl_carried));
        return;
    }
    eg::ObjectLockGuard lock(self);
    const Settings& s = state_of(self).settings;
    const Report& r = state_of(self).report;
    switch (prop_id) {
    case PROP_WIDTH:
        g_value_set_uint(value, s.width);
        break;
    case PROP_HEIGHT:
        g_value_set_uint(value, s.height);
        break;
    case PROP_FORMAT:
        g_value_set_enum(value, s.format);
        break;
    case PROP_LAYOUT:
        g_value_set_enum(value, s.layout);
        break;
    case PROP_DTYPE:
        g_value_set_enum(value, s.dtype);
        break;
    case PROP_METHOD:
        g_value_set_enum(value, s.method);
        break;
    case PROP_MEAN:
        g_value_set_string(value, s.mean_str.c_str());
        break;
    case PROP_STD:
        g_value_set_string(value, s.std_str.c_str());
        break;
    case PROP_LETTERBOX:
        g_value_set_boolean(value, s.letterbox);
        break;
    case PROP_FILL_COLOR:
        g_value_set_uint(value, s.fill_color);
        break;
    case PROP_CROP:
        g_value_set_string(value, s.crop_str.c_str());
        break;
    case PROP_N_THREADS:
        g_value_set_uint(value, s.n_threads);
        break;
    case PROP_COMPUTE:
        g_value_set_enum(value, s.compute);
        break;
    case PROP_LETTERBOX_SCALE:
        g_value_set_double(value, r.scale);
        break;
    case PROP_LETTERBOX_LEFT:
        g_value_set_uint(value, r.left);
        break;
    case PROP_LETTERBOX_TOP:
        g_value_set_uint(value, r.top);
        break;
    case PROP_LETTERBOX_RIGHT:
        g_value_set_uint(value, r.right);
        break;
    case PROP_LETTERBOX_BOTTOM:
        g_value_set_uint(value, r.bottom);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
}

void gst_tensor_convert_finalize(GObject* object)
{
    auto* self = GST_TENSOR_CONVERT(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_convert_parent_class)->finalize(object);
}

constexpr GParamFlags kReadyFlags =
    GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
constexpr GParamFlags kReportFlags = GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

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

    g_object_class_install_property(
        gobject_class, PROP_WIDTH,
        g_param_spec_uint("width", "Width",
                          "Output width in pixels (0 to 16384; 0 = the input's, or the crop's, "
                          "width; default 0)",
                          0, MAX_SIZE, DEFAULT_WIDTH, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_HEIGHT,
        g_param_spec_uint("height", "Height",
                          "Output height in pixels (0 to 16384; 0 = the input's, or the crop's, "
                          "height; default 0)",
                          0, MAX_SIZE, DEFAULT_HEIGHT, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_FORMAT,
        g_param_spec_enum("format", "Format",
                          "Output channels in memory order: rgb, bgr, rgba, bgra or gray "
                          "(default: rgb)",
                          GST_TYPE_TENSOR_CONVERT_FORMAT, DEFAULT_FORMAT, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_LAYOUT,
        g_param_spec_enum("layout", "Layout",
                          "Tensor layout: hwc ([H, W, C], dimensions C:W:H:1) or chw ([C, H, W], "
                          "dimensions W:H:C:1) (default: hwc). video/x-raw output needs hwc.",
                          GST_TYPE_TENSOR_CONVERT_LAYOUT, DEFAULT_LAYOUT, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_DTYPE,
        g_param_spec_enum("dtype", "Data type",
                          "Tensor element type: uint8, int8 (value - 128), float16 or float32 "
                          "(default: uint8). video/x-raw output needs uint8.",
                          GST_TYPE_TENSOR_CONVERT_DTYPE, DEFAULT_DTYPE, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_MEAN,
        g_param_spec_string("mean", "Mean",
                            "Per-channel mean subtracted before dividing by std, in the 0..255 "
                            "domain and output channel order: one value for all channels or one "
                            "per channel, comma separated, e.g. \"123.675,116.28,103.53\" "
                            "(float dtypes only; default: empty = 0)",
                            "", kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_STD,
        g_param_spec_string("std", "Standard deviation",
                            "Per-channel divisor, (value - mean) / std, in the 0..255 domain: one "
                            "non-zero value or one per channel, comma separated, e.g. "
                            "\"58.395,57.12,57.375\" or \"255\" for 0..1 (float dtypes only; "
                            "default: empty = 1)",
                            "", kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_METHOD,
        g_param_spec_enum("method", "Method", "Resampling: nearest or bilinear (default: bilinear)",
                          GST_TYPE_TENSOR_CONVERT_METHOD, DEFAULT_METHOD, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_LETTERBOX,
        g_param_spec_boolean("letterbox", "Letterbox",
                             "Keep the aspect ratio: scale the picture to fit, centre it and pad "
                             "the rest with fill-color (default: false = stretch)",
                             DEFAULT_LETTERBOX, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_FILL_COLOR,
        g_param_spec_uint("fill-color", "Fill colour",
                          "Letterbox padding as 0xAARRGGBB, ARGB like the border colour of "
                          "GStreamer's video converter (0 to 0xFFFFFFFF; alpha only reaches "
                          "rgba/bgra outputs; default 0xff000000 opaque black; YOLO models often "
                          "use 0xff727272), normalised like the picture",
                          0, MAX_FILL_COLOR, DEFAULT_FILL_COLOR, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_CROP,
        g_param_spec_string("crop", "Crop",
                            "Source rectangle to convert as \"x,y,width,height\" in input pixels "
                            "(integers, width and height at least 1, inside the frame), e.g. "
                            "\"420,0,1080,1080\" (default: empty = the whole frame)",
                            "", kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_N_THREADS,
        g_param_spec_uint("n-threads", "Threads",
                          "Worker threads for the conversion, including the streaming thread (0 "
                          "to 64; 0 = one per CPU; default 1)",
                          0, MAX_N_THREADS, DEFAULT_N_THREADS, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_LETTERBOX_SCALE,
        g_param_spec_double("letterbox-scale", "Letterbox scale",
                            "Output pixels per source pixel applied with letterbox=true, "
                            "min(width / source width, height / source height); 1 without "
                            "letterbox (read-only, valid once caps are set)",
                            0.0, G_MAXDOUBLE, 1.0, kReportFlags));
    g_object_class_install_property(
        gobject_class, PROP_LETTERBOX_LEFT,
        g_param_spec_uint("letterbox-left", "Letterbox left",
                          "Padding columns left of the picture (read-only, valid once caps are "
                          "set)",
                          0, MAX_SIZE, 0, kReportFlags));
    g_object_class_install_property(
        gobject_class, PROP_LETTERBOX_TOP,
        g_param_spec_uint("letterbox-top", "Letterbox top",
                          "Padding rows above the picture (read-only, valid once caps are set)", 0,
                          MAX_SIZE, 0, kReportFlags));
    g_object_class_install_property(
        gobject_class, PROP_LETTERBOX_RIGHT,
        g_param_spec_uint("letterbox-right", "Letterbox right",
                          "Padding columns right of the picture (the odd one when the padding "
                          "is odd; read-only, valid once caps are set)",
                          0, MAX_SIZE, 0, kReportFlags));
    g_object_class_install_property(
        gobject_class, PROP_LETTERBOX_BOTTOM,
        g_param_spec_uint("letterbox-bottom", "Letterbox bottom",
                          "Padding rows below the picture (the odd one when the padding is odd; "
                          "read-only, valid once caps are set)",
                          0, MAX_SIZE, 0, kReportFlags));

    g_object_class_install_property(
        gobject_class, PROP_CACHE_HITS,
        g_param_spec_uint64("cache-hits", "Import cache hits",
                            "Input frames in imported memory (DMA-BUF, memfd) whose buffer was "
                            "already imported (read-only, since the element started)",
                            0, G_MAXUINT64, 0, kReportFlags));
    g_object_class_install_property(
        gobject_class, PROP_CACHE_MISSES,
        g_param_spec_uint64("cache-misses", "Import cache misses",
                            "Input frames in imported memory whose buffer had to be imported "
                            "(read-only, since the element started)",
                            0, G_MAXUINT64, 0, kReportFlags));

    g_object_class_install_property(
        gobject_class, PROP_COMPUTE,
        g_param_spec_enum("compute", "Compute",
                          "Where the conversion runs: auto (GL on a hardware GPU renderer, else "
                          "the CPU), cpu, or gl (OpenGL ES 3 on a headless EGL context; an error "
                          "at caps time when none can be had) (default: auto)",
                          GST_TYPE_TENSOR_CONVERT_COMPUTE, DEFAULT_COMPUTE, kReadyFlags));
    g_object_class_install_property(
        gobject_class, PROP_GL_STATS,
        g_param_spec_boxed("gl-stats", "GL statistics",
                           "The GL backend's EGLImage import cache and copies since the element "
                           "started: hits, misses, evictions, swept, entries, uploads, "
                           "zero-copy-declines, readbacks (all guint64; zero with the CPU; "
                           "read-only)",
                           GST_TYPE_STRUCTURE, kReportFlags));
    g_object_class_install_property(
        gobject_class, PROP_DROPPED,
        g_param_spec_uint64("dropped", "Dropped",
                            "Input buffers dropped because they did not match the caps (too "
                            "small, a GstVideoMeta of another format or size, planes outside "
                            "the memory); each run of drops warns once and 10 in a row are an "
                            "error (read-only, since the element started)",
                            0, G_MAXUINT64, 0, kReportFlags));

    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_add_static_pad_template(element_class, &src_template);
    gst_element_class_set_static_metadata(
        element_class, "Tensor converter", "Filter/Converter/Video/Scaler/Tensor",
        "Converts camera frames into NPU-ready tensors in one pass: colour conversion with the "
        "frame's colorimetry, crop, resize, letterbox, HWC/CHW layout, uint8/int8/float16/"
        "float32 and per-channel normalisation, into edgetensor buffers (DMA-BUF, or shared memory "
        "where the host has no DMA-BUF provider). Example: "
        "gst-launch-1.0 tensortestsrc ! video/x-raw,format=NV12,width=1920,height=1080 ! "
        "tensorconvert width=640 height=640 letterbox=true ! video/x-raw,format=RGB ! pngenc ! "
        "filesink location=out.png",
        "edgetensor developers");

    bt_class->transform_caps = gst_tensor_convert_transform_caps;
    bt_class->fixate_caps = gst_tensor_convert_fixate_caps;
    bt_class->set_caps = gst_tensor_convert_set_caps;
    bt_class->transform_size = gst_tensor_convert_transform_size;
    bt_class->decide_allocation = gst_tensor_convert_decide_allocation;
    bt_class->propose_allocation = gst_tensor_convert_propose_allocation;
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
