// SPDX-License-Identifier: MIT
//
// tensorconvert's streaming statistics: the read-only properties cache-hits, cache-misses,
// dropped and gl-stats, counted since the element started (across caps changes, which replace
// the converter), and what stop() logs of them.

#pragma once

#include <edgetensor/convert.hpp>

#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/gst.h>

namespace edgetensor::gst::tensorconvert
{

/// Counters the element keeps under its streaming lock.
struct Counters {
    // Input buffers that did not match the caps: dropped in total, and in a row now.
    guint64 dropped = 0;
    guint consecutive_drops = 0;
    // GL counters of the converters replaced by caps changes since start.
    GlImportStats gl_carried;
};

/// a + b, counter by counter (entries: b's, the live cache's).
GlImportStats add_gl_stats(const GlImportStats& a, const GlImportStats& b) noexcept;

/// The GL counters since start: those carried plus the live converter's (`conv`, may be null).
GlImportStats gl_totals(const Counters& c, const Converter* conv) noexcept;

/// "edgetensor-gl-stats, hits=(guint64)..., misses, evictions, swept, entries, uploads,
/// zero-copy-declines, readbacks". Caller owns it.
GstStructure* gl_stats_structure(const GlImportStats& s);

/// The counters a caps change keeps: `old`'s totals with its converter `conv`'s GL counters
/// carried over; the run of drops starts again under the new caps.
Counters carry_over(const Counters& old, const Converter* conv) noexcept;

/// Reads cache-hits, cache-misses, dropped or gl-stats into `value` (`cache` and `conv` may be
/// null: before start, or before caps). False for any other property.
bool get_stat(guint prop_id, const Counters& c, GstEdgeTensorImportCache* cache,
              const Converter* conv, GValue* value);

/// Logs the import cache's and (with the GL backend) the GL counters in `cat`, at stop.
void log_stats(GstObject* self, GstDebugCategory* cat, const Counters& c,
               GstEdgeTensorImportCache* cache, const Converter* conv);

} // namespace edgetensor::gst::tensorconvert
