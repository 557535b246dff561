// SPDX-License-Identifier: MIT
//
// tensorconvert's GObject properties: their ids, specs (names, ranges, defaults, blurbs), the
// settings and geometry report they read and write, and set/get. The element owns the storage
// and its lock; this file owns what a property means.

#pragma once

#include "gsttensorconvert.h"
#include "tensorconvert_settings.hpp"

#include <edgetensor/types.hpp>

#include <gst/gst.h>

#include <optional>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorconvert
{

enum Prop : guint {
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

inline constexpr guint DEFAULT_WIDTH = 0;
inline constexpr guint DEFAULT_HEIGHT = 0;
inline constexpr GstTensorConvertFormat DEFAULT_FORMAT = GST_TENSOR_CONVERT_FORMAT_RGB;
inline constexpr GstTensorConvertLayout DEFAULT_LAYOUT = GST_TENSOR_CONVERT_LAYOUT_HWC;
inline constexpr GstTensorConvertDType DEFAULT_DTYPE = GST_TENSOR_CONVERT_DTYPE_UINT8;
inline constexpr GstTensorConvertMethod DEFAULT_METHOD = GST_TENSOR_CONVERT_METHOD_BILINEAR;
inline constexpr gboolean DEFAULT_LETTERBOX = FALSE;
// ARGB, as GStreamer's video converter takes its border colour (GstVideoConverter.border-argb).
inline constexpr guint DEFAULT_FILL_COLOR = 0xff000000;
inline constexpr guint DEFAULT_N_THREADS = 1;
inline constexpr GstTensorConvertCompute DEFAULT_COMPUTE = GST_TENSOR_CONVERT_COMPUTE_AUTO;

/// The writable properties' values (under the element's object lock).
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
    std::optional<Region> crop;
    guint n_threads = DEFAULT_N_THREADS;
    GstTensorConvertCompute compute = DEFAULT_COMPUTE;
    // Values set but refused (and not replaced since): start() will not run with them.
    Refusals refused;
};

/// What the last set_caps computed: the letterbox-* read-only properties (under the object lock).
struct Report {
    double scale = 1.0;
    guint left = 0;
    guint top = 0;
    guint right = 0;
    guint bottom = 0;
};

/// Installs every property of the element on `klass`, PROP_WIDTH..PROP_DROPPED.
void install_properties(GObjectClass* klass);

/// Sets a writable property of `self` into `*s`, which `self`'s object lock guards (taken here).
/// mean, std and crop are parsed first, outside the lock: a refused value is a g_warning and an
/// element warning, the old value stays and the refusal is kept in `s->refused`.
void set_property(GstElement* self, Settings* s, guint prop_id, const GValue* value,
                  GParamSpec* pspec);

/// Reads a setting or a letterbox-* report into `value`; call with the object lock held. False
/// when `prop_id` is neither (a streaming statistic, or unknown).
bool get_property(const Settings& s, const Report& r, guint prop_id, GValue* value);

} // namespace edgetensor::gst::tensorconvert
