// SPDX-License-Identifier: MIT
//
// tensorconvert's GObject properties: their ids, specs (names, ranges, defaults, blurbs), the
// geometry report they read, and set/get of the settings (tensorconvert_settings.hpp). The
// element owns the storage and its lock; this file owns what a property means. The output
// properties (width ... quant-zero-point) are one table that tensorbatch installs too, so the
// two elements cannot drift apart in a name, range, default or blurb.

#pragma once

#include "gsttensorconvert.h"
#include "tensorconvert_settings.hpp"

#include <edgetensor/convert.hpp>

#include <gst/gst.h>

#include <span>
#include <string>

namespace edgetensor::gst::tensorconvert
{

enum Prop : guint {
    PROP_0,
    // The output properties (output_properties()): tensorconvert's and tensorbatch's.
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
    PROP_N_THREADS,
    PROP_QUANT_SCALE,
    PROP_QUANT_ZERO_POINT,
    /// The first id an element's own properties take.
    PROP_OUTPUT_END,
    // tensorconvert's own.
    PROP_CROP = PROP_OUTPUT_END,
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

/// One output property: its id and the maker of its spec (a GParamSpec belongs to the one class
/// it is installed on, so each element makes its own from the same row).
struct OutputProperty {
    guint id;
    GParamSpec* (*make)();
};

/// The output properties, PROP_WIDTH..PROP_QUANT_ZERO_POINT.
std::span<const OutputProperty> output_properties() noexcept;

/// Installs the output properties on `klass` under their Prop ids.
void install_output_properties(GObjectClass* klass);

/// Sets the output property `prop_id` of `self` into `*s`, which `self`'s object lock guards
/// (taken here); false when `prop_id` is no output property (nothing done). A READY-only
/// property past READY is refused (refuse_unless_ready()). mean, std and quant-scale are parsed
/// first, outside the lock: a refused value is a g_warning and an element warning, the old value
/// stays and the refusal is kept in `s->refused`, which keeps the element from starting.
bool set_output_property(GstElement* self, OutputSettings* s, guint prop_id, const GValue* value,
                         GParamSpec* pspec);

/// Refuses `value` of the string property `prop`: kept in `s->refused` (under `self`'s object
/// lock, taken here, so start() fails naming it), a g_warning (gst-launch sets properties before
/// the element has a bus) and an element warning. The previous value stays.
void refuse_value(GstElement* self, OutputSettings* s, const char* prop, const char* value,
                  const std::string& why);

/// Reads an output property into `value`; call with the object lock held. False when `prop_id`
/// is no output property.
bool get_output_property(const OutputSettings& s, guint prop_id, GValue* value);

/// Installs every property of the element on `klass`: the output ones, then
/// PROP_CROP..PROP_DROPPED.
void install_properties(GObjectClass* klass);

/// Sets a writable property of `self` into `*s`, which `self`'s object lock guards (taken here):
/// the output ones as set_output_property() does; crop is parsed outside the lock and refused
/// the same way.
void set_property(GstElement* self, Settings* s, guint prop_id, const GValue* value,
                  GParamSpec* pspec);

/// Reads a setting or a letterbox-* report into `value`; call with the object lock held. False
/// when `prop_id` is neither (a streaming statistic, or unknown).
bool get_property(const Settings& s, const Report& r, guint prop_id, GValue* value);

} // namespace edgetensor::gst::tensorconvert
