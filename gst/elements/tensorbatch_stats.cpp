// SPDX-License-Identifier: MIT
//
// tensorbatch's statistics (tensorbatch_stats.hpp).

#include "tensorbatch_stats.hpp"

namespace edgetensor::gst::tensorbatch
{

GstStructure* stats_structure(const Counters& c,
                              const std::vector<GstEdgeTensorImportCache*>& caches)
{
    guint64 hits = 0, misses = 0, evictions = 0;
    guint entries = 0;
    for (GstEdgeTensorImportCache* cache : caches) {
        if (!cache)
            continue;
        hits += gst_edge_tensor_import_cache_get_hits(cache);
        misses += gst_edge_tensor_import_cache_get_misses(cache);
        evictions += gst_edge_tensor_import_cache_get_evictions(cache);
        entries += gst_edge_tensor_import_cache_get_n_entries(cache);
    }
    return gst_structure_new(
        GST_EDGE_TENSOR_STATS_NAME, GST_EDGE_TENSOR_STATS_FRAMES, G_TYPE_UINT64, c.frames,
        GST_EDGE_TENSOR_STATS_COPIES, G_TYPE_UINT64, c.copies, GST_EDGE_TENSOR_STATS_ZERO_COPY,
        G_TYPE_BOOLEAN, gboolean(c.frames > 0 && c.copies == 0), "batches", G_TYPE_UINT64,
        c.batches, "partial-batches", G_TYPE_UINT64, c.partial_batches, "empty-slots",
        G_TYPE_UINT64, c.empty_slots, "dropped", G_TYPE_UINT64, c.dropped, "rois", G_TYPE_UINT64,
        c.rois, "rois-refused", G_TYPE_UINT64, c.rois_refused, "rois-filtered", G_TYPE_UINT64,
        c.rois_filtered, "streamed", G_TYPE_UINT64, c.streamed, GST_EDGE_TENSOR_STATS_HITS,
        G_TYPE_UINT64, hits, GST_EDGE_TENSOR_STATS_MISSES, G_TYPE_UINT64, misses,
        GST_EDGE_TENSOR_STATS_EVICTIONS, G_TYPE_UINT64, evictions, GST_EDGE_TENSOR_STATS_ENTRIES,
        G_TYPE_UINT, entries, nullptr);
}

} // namespace edgetensor::gst::tensorbatch
