// SPDX-License-Identifier: MIT
//
// tensorconvert's streaming statistics (tensorconvert_stats.hpp).

#include "tensorconvert_stats.hpp"

#include "tensorconvert_properties.hpp"

// The element's category, passed in.
#define GST_CAT_DEFAULT cat

namespace edgetensor::gst::tensorconvert
{

GlImportStats add_gl_stats(const GlImportStats& a, const GlImportStats& b) noexcept
{
    GlImportStats s;
    s.hits = a.hits + b.hits;
    s.misses = a.misses + b.misses;
    s.evictions = a.evictions + b.evictions;
    s.swept = a.swept + b.swept;
    s.entries = b.entries;
    s.uploads = a.uploads + b.uploads;
    s.zero_copy_declines = a.zero_copy_declines + b.zero_copy_declines;
    s.readbacks = a.readbacks + b.readbacks;
    s.direct_imports = a.direct_imports + b.direct_imports;
    s.direct_declines = a.direct_declines + b.direct_declines;
    return s;
}

GlImportStats gl_totals(const Counters& c, const Converter* conv) noexcept
{
    return conv ? add_gl_stats(c.gl_carried, conv->gl_stats()) : c.gl_carried;
}

GstStructure* gl_stats_structure(const GlImportStats& s)
{
    return gst_structure_new(
        "edgetensor-gl-stats", "hits", G_TYPE_UINT64, guint64(s.hits), "misses", G_TYPE_UINT64,
        guint64(s.misses), "evictions", G_TYPE_UINT64, guint64(s.evictions), "swept", G_TYPE_UINT64,
        guint64(s.swept), "entries", G_TYPE_UINT64, guint64(s.entries), "uploads", G_TYPE_UINT64,
        guint64(s.uploads), "zero-copy-declines", G_TYPE_UINT64, guint64(s.zero_copy_declines),
        "readbacks", G_TYPE_UINT64, guint64(s.readbacks), "direct-imports", G_TYPE_UINT64,
        guint64(s.direct_imports), "direct-declines", G_TYPE_UINT64, guint64(s.direct_declines),
        nullptr);
}

Counters carry_over(const Counters& old, const Converter* conv) noexcept
{
    Counters c;
    c.dropped = old.dropped;
    c.gl_carried = gl_totals(old, conv);
    return c;
}

bool get_stat(guint prop_id, const Counters& c, GstEdgeTensorImportCache* cache,
              const Converter* conv, GValue* value)
{
    switch (prop_id) {
    case PROP_CACHE_HITS:
        g_value_set_uint64(value, cache ? gst_edge_tensor_import_cache_get_hits(cache) : 0);
        return true;
    case PROP_CACHE_MISSES:
        g_value_set_uint64(value, cache ? gst_edge_tensor_import_cache_get_misses(cache) : 0);
        return true;
    case PROP_DROPPED:
        g_value_set_uint64(value, c.dropped);
        return true;
    case PROP_GL_STATS:
        g_value_take_boxed(value, gl_stats_structure(gl_totals(c, conv)));
        return true;
    default:
        return false;
    }
}

void log_stats(GstObject* self, GstDebugCategory* cat, const Counters& c,
               GstEdgeTensorImportCache* cache, const Converter* conv)
{
    if (cache) {
        GstStructure* stats = gst_edge_tensor_import_cache_get_stats(cache);
        GST_INFO_OBJECT(self, "import cache: %" GST_PTR_FORMAT, stats);
        gst_structure_free(stats);
    }
    if (conv && conv->compute() == ConvertCompute::Gl) {
        GstStructure* gls = gl_stats_structure(gl_totals(c, conv));
        GST_INFO_OBJECT(self, "GL: %" GST_PTR_FORMAT, gls);
        gst_structure_free(gls);
    }
}

} // namespace edgetensor::gst::tensorconvert
