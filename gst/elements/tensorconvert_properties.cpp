// SPDX-License-Identifier: MIT
//
// tensorconvert's properties (tensorconvert_properties.hpp) and the GTypes of its enums.

#include "tensorconvert_properties.hpp"

#include "glib_raii.hpp"

#include <string>
#include <utility>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

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

GType gst_tensor_convert_compute_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_CONVERT_COMPUTE_AUTO,
         "GL on a hardware GPU renderer, else the CPU (the reason is logged)", "auto"},
        {GST_TENSOR_CONVERT_COMPUTE_CPU, "The CPU conversion engine", "cpu"},
        {GST_TENSOR_CONVERT_COMPUTE_GL,
         "OpenGL ES 3 shaders (EGL, headless); an error when no GL context can be had", "gl"},
        {0, nullptr, nullptr},
    };
    return register_enum(&type, "GstTensorConvertCompute", values);
}

namespace edgetensor::gst::tensorconvert
{

namespace
{

constexpr guint MAX_SIZE = kMaxSize;
constexpr guint MAX_FILL_COLOR = G_MAXUINT32;
constexpr guint MAX_N_THREADS = 64;

constexpr GParamFlags kReadyFlags =
    GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
constexpr GParamFlags kReportFlags = GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

// A refused value must be seen: gst-launch sets properties before the element has a bus, so
// the bus warning alone is lost there. Like GLib's own refusal of an out-of-range value, it is a
// g_warning; and the refusal is kept, so start() fails instead of running with old settings.
void refuse_value(GstElement* self, Settings* s, const char* prop, const char* value,
                  const std::string& why)
{
    const char* v = value ? value : "";
    {
        ObjectLockGuard lock(self);
        s->refused.refuse(prop, v, why);
    }
    g_warning("%s: invalid %s \"%s\": %s. The previous value is kept and the element will not "
              "start until %s is set to a valid value.",
              GST_OBJECT_NAME(self), prop, v, why.c_str(), prop);
    GST_ELEMENT_WARNING(
        self, LIBRARY, SETTINGS,
        ("Invalid %s \"%s\": %s. The previous value is kept.", prop, v, why.c_str()), (nullptr));
}

} // namespace

void set_property(GstElement* self, Settings* settings, guint prop_id, const GValue* value,
                  GParamSpec* pspec)
{
    if (refuse_unless_ready(self, pspec))
        return;
    { // What throws here stops at the element's set_property guard (vfunc_guard.hpp).
        // Parse outside the lock; GST_ELEMENT_WARNING must not run under it either.
        std::string why;
        std::vector<float> list;
        std::optional<Region> crop;
        const char* str = nullptr;
        if (prop_id == PROP_MEAN || prop_id == PROP_STD) {
            str = g_value_get_string(value);
            const bool ok =
                prop_id == PROP_MEAN ? parse_mean(str, &list, &why) : parse_std(str, &list, &why);
            if (!ok) {
                refuse_value(self, settings, pspec->name, str, why);
                return;
            }
        } else if (prop_id == PROP_CROP) {
            str = g_value_get_string(value);
            if (!parse_crop(str, &crop, &why)) {
                refuse_value(self, settings, pspec->name, str, why);
                return;
            }
        }

        ObjectLockGuard lock(self);
        Settings& s = *settings;
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
            G_OBJECT_WARN_INVALID_PROPERTY_ID(self, prop_id, pspec);
            break;
        }
    }
}

bool get_property(const Settings& s, const Report& r, guint prop_id, GValue* value)
{
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
        return false;
    }
    return true;
}

void publish_report(GstElement* self, Report* r, const ConvertGeometry& g)
{
    {
        ObjectLockGuard lock(self);
        r->scale = g.scale;
        r->left = guint(g.pad_left);
        r->top = guint(g.pad_top);
        r->right = guint(g.pad_right);
        r->bottom = guint(g.pad_bottom);
    }
    for (const char* p : {"letterbox-scale", "letterbox-left", "letterbox-top", "letterbox-right",
                          "letterbox-bottom"})
        g_object_notify(G_OBJECT(self), p);
}

void install_properties(GObjectClass* gobject_class)
{
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
                           "zero-copy-declines, readbacks, direct-imports, direct-declines (all "
                           "guint64; zero with the CPU; read-only)",
                           GST_TYPE_STRUCTURE, kReportFlags));
    g_object_class_install_property(
        gobject_class, PROP_DROPPED,
        g_param_spec_uint64("dropped", "Dropped",
                            "Input buffers dropped because they did not match the caps (too "
                            "small, a GstVideoMeta of another format or size, planes outside "
                            "the memory); each run of drops warns once and 10 in a row are an "
                            "error (read-only, since the element started)",
                            0, G_MAXUINT64, 0, kReportFlags));
}

} // namespace edgetensor::gst::tensorconvert
