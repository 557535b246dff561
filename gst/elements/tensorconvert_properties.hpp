// SPDX-License-Identifier: MIT
//
// tensorconvert's GObject properties: their ids, specs (names, ranges, defaults, blurbs), the
// geometry report they read, and set/get of the settings (tensorconvert_settings.hpp). The
// element owns the storage and its lock; this file owns what a property means.

#pragma once

#include "gsttensorconvert.h"
#include "tensorconvert_settings.hpp"

#include <edgetensor/convert.hpp>

#include <gst/gst.h>

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
    PROP_OUTPUT_MODE, // set and read by tensorconvert_meta.hpp
};

/// What the last set_caps computed: the letterbox-* read-only properties (under the object lock).
struct Report {
    double scale = 1.0;
    guint left = 0;
    guint top = 0;
    guint right = 0;
    guint bottom = 0;
};

/// Stores where the picture landed (`g`, from the new converter) in `*r` under `self`'s object
/// lock, then notifies the letterbox-* properties (outside it).
void publish_report(GstElement* self, Report* r, const ConvertGeometry& g);

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
