/* SPDX-License-Identifier: MIT */
/*
 * The "edgetensor-stats" structure: what an import cache counted
 * (gst_edge_tensor_import_cache_get_stats()), plus the figures of the element that owns it.
 * tensorimport returns it from its "stats" property and posts it as an element message at EOS
 * (gst_message_get_structure() of a GST_MESSAGE_ELEMENT whose structure has this name).
 *
 * Field names, types and meaning (docs/elements/tensorimport.md has the same table):
 *   hits            guint64  buffers whose tensor was already imported
 *   misses          guint64  buffers imported now
 *   evictions       guint64  imported tensors dropped to stay within the bound
 *   invalidations   guint64  times the whole cache was dropped (caps change, flush, stop)
 *   failed-imports  guint64  fd-backed buffers whose import failed
 *   entries         guint    imported tensors held now
 *   peak-entries    guint    most held at once
 *   max-entries     guint    the bound (cache-size)
 *   last-failure    string   why the last import failed ("" when none)
 *   failures        GstStructure "failures": failed imports counted by error code name
 *   inodes          GstValueArray of guint64: st_ino of plane 0 of every held tensor
 * and, from the element:
 *   frames          guint64  buffers seen
 *   copies          guint64  buffers copied because they could not be imported
 *   zero-copy       gboolean frames > 0 and copies == 0
 */

#ifndef GST_EDGE_TENSOR_STATS_H
#define GST_EDGE_TENSOR_STATS_H

/* Name of the stats structure, and of the element message carrying it. */
#define GST_EDGE_TENSOR_STATS_NAME "edgetensor-stats"

#define GST_EDGE_TENSOR_STATS_HITS "hits"
#define GST_EDGE_TENSOR_STATS_MISSES "misses"
#define GST_EDGE_TENSOR_STATS_EVICTIONS "evictions"
#define GST_EDGE_TENSOR_STATS_INVALIDATIONS "invalidations"
#define GST_EDGE_TENSOR_STATS_FAILED_IMPORTS "failed-imports"
#define GST_EDGE_TENSOR_STATS_ENTRIES "entries"
#define GST_EDGE_TENSOR_STATS_PEAK_ENTRIES "peak-entries"
#define GST_EDGE_TENSOR_STATS_MAX_ENTRIES "max-entries"
#define GST_EDGE_TENSOR_STATS_LAST_FAILURE "last-failure"
#define GST_EDGE_TENSOR_STATS_FAILURES "failures"
#define GST_EDGE_TENSOR_STATS_INODES "inodes"
#define GST_EDGE_TENSOR_STATS_FRAMES "frames"
#define GST_EDGE_TENSOR_STATS_COPIES "copies"
#define GST_EDGE_TENSOR_STATS_ZERO_COPY "zero-copy"

#endif /* GST_EDGE_TENSOR_STATS_H */
