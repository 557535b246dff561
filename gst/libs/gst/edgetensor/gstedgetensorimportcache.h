/* SPDX-License-Identifier: MIT */
/*
 * GstEdgeTensorImportCache: imports the DMA-BUFs (or memfds) behind upstream buffers once and
 * keeps the imported tensors alive, so a buffer that comes back from a camera or decoder pool
 * gets the same tensor (and BufferIdentity) every time. See docs/import-cache.md.
 *
 * Key: for every plane, (st_dev, st_ino, byte offset in the fd) of the buffer behind it, plus
 * the frame geometry (width, height, strides, format, or dtype and shape for other/tensors).
 * Never the fd number or the GstMemory pointer: both are recycled for other buffers.
 * Value: the imported tensor, holding its own duplicate of the fd, so the kernel buffer (and
 * its inode) cannot be freed or reused while it is cached.
 * Bound: least-recently-used eviction at max_entries (default 32). Cleared when the caps
 * change and on gst_edge_tensor_import_cache_clear() (elements call it at flush-stop and stop).
 *
 * Thread-safe: every call takes the cache's own lock.
 */

#ifndef GST_EDGE_TENSOR_IMPORT_CACHE_H
#define GST_EDGE_TENSOR_IMPORT_CACHE_H

#include <gst/edgetensor/edgetensor-prelude.h>
#include <gst/edgetensor/gstedgetensormeta.h>
#include <gst/edgetensor/gstedgetensorstats.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* Entries a cache holds unless told otherwise. */
#define GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE 32
/* Most entries a cache may be asked to hold. */
#define GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE 1024
/* Name of the structure gst_edge_tensor_import_cache_get_stats() returns (gstedgetensorstats.h
 * names its fields). */
#define GST_EDGE_TENSOR_IMPORT_STATS_NAME GST_EDGE_TENSOR_STATS_NAME

/**
 * GstEdgeTensorImportResult:
 * @GST_EDGE_TENSOR_IMPORT_HIT: the buffer's planes were in the cache; the cached tensor is used
 * @GST_EDGE_TENSOR_IMPORT_MISS: imported now and cached
 * @GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE: the memory cannot be imported (not fd-backed, e.g.
 *   system memory; a plane spanning memories; a format whose planes live in several fds that
 *   one tensor cannot describe; no caps yet). Nothing was counted or changed.
 * @GST_EDGE_TENSOR_IMPORT_FAILED: fd-backed memory whose import failed (an fd that is neither
 *   a DMA-BUF nor a memfd, a frame that does not fit the buffer, ...); counted with its reason
 */
typedef enum {
    GST_EDGE_TENSOR_IMPORT_HIT = 0,
    GST_EDGE_TENSOR_IMPORT_MISS = 1,
    GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE = 2,
    GST_EDGE_TENSOR_IMPORT_FAILED = 3,
} GstEdgeTensorImportResult;

typedef struct _GstEdgeTensorImportCache GstEdgeTensorImportCache;

/**
 * gst_edge_tensor_import_cache_new:
 * @max_entries: the LRU bound, 1 to %GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE
 *
 * Returns: (transfer full) (skip): a new, empty cache without caps; free with
 * gst_edge_tensor_import_cache_free(). (Not introspectable: elements own caches, applications
 * read their stats.)
 */
GST_EDGE_TENSOR_API
GstEdgeTensorImportCache* gst_edge_tensor_import_cache_new(guint max_entries);

/* Releases every cached tensor (and its fd) and the cache. */
GST_EDGE_TENSOR_API
void gst_edge_tensor_import_cache_free(GstEdgeTensorImportCache* cache);

/**
 * gst_edge_tensor_import_cache_set_caps:
 * @cache: a cache
 * @caps: fixed `video/x-raw` (any memory feature) or `other/tensors` caps
 *
 * Caps that differ from the current ones clear the cache (counted as an invalidation).
 *
 * Returns: %FALSE when @caps cannot be parsed; the cache then has no caps and imports nothing.
 */
GST_EDGE_TENSOR_API
gboolean gst_edge_tensor_import_cache_set_caps(GstEdgeTensorImportCache* cache, GstCaps* caps);

/**
 * gst_edge_tensor_import_cache_clear:
 * @cache: a cache
 * @reason: (nullable): why, for the log ("flush-stop", "stop", ...)
 *
 * Drops every entry (counted as an invalidation when there was one); keeps caps and stats.
 */
GST_EDGE_TENSOR_API
void gst_edge_tensor_import_cache_clear(GstEdgeTensorImportCache* cache, const gchar* reason);

/**
 * gst_edge_tensor_import_cache_set_max_entries:
 * @cache: a cache
 * @max_entries: the new bound, 1 to %GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE; entries beyond it
 *   are evicted at once (least recently used first)
 */
GST_EDGE_TENSOR_API
void gst_edge_tensor_import_cache_set_max_entries(GstEdgeTensorImportCache* cache,
                                                  guint max_entries);
GST_EDGE_TENSOR_API
guint gst_edge_tensor_import_cache_get_max_entries(GstEdgeTensorImportCache* cache);

/* Zeroes the counters (entries stay). */
GST_EDGE_TENSOR_API
void gst_edge_tensor_import_cache_reset_stats(GstEdgeTensorImportCache* cache);

/**
 * gst_edge_tensor_import_cache_can_import:
 * @cache: a cache with caps
 * @buffer: a buffer of those caps
 * @why: (out) (optional) (transfer full): why not, when %FALSE; g_free() it
 *
 * Whether every plane of @buffer is in fd-backed memory this cache would try to import.
 * No side effects: no fd is duplicated, nothing is counted.
 */
GST_EDGE_TENSOR_API
gboolean gst_edge_tensor_import_cache_can_import(GstEdgeTensorImportCache* cache, GstBuffer* buffer,
                                                 gchar** why);

/**
 * gst_edge_tensor_import_cache_import:
 * @cache: a cache with caps
 * @buffer: a buffer of those caps
 * @identity: (out) (optional): the cached tensor's BufferIdentity id on HIT or MISS
 * @why: (out) (optional) (transfer full): the reason on NOT_IMPORTABLE or FAILED; g_free() it
 *
 * Finds or imports the tensor behind @buffer. A memory that is already an edgetensor memory
 * (gst_is_edge_tensor_memory()) is "imported" as the tensor it wraps, so its identity is the
 * producing pool's.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorImportResult gst_edge_tensor_import_cache_import(GstEdgeTensorImportCache* cache,
                                                              GstBuffer* buffer, guint64* identity,
                                                              gchar** why);

/**
 * gst_edge_tensor_import_cache_attach_meta:
 * @cache: a cache with caps
 * @buffer: a writable buffer of those caps
 * @result: (out) (optional): what the import did
 * @why: (out) (optional) (transfer full): the reason on NOT_IMPORTABLE or FAILED; g_free() it
 *
 * gst_edge_tensor_import_cache_import(), then a #GstEdgeTensorMeta describing the cached
 * tensor on @buffer (replacing one that describes another tensor). Its `desc.handle` is the
 * fd of the buffer's memory holding plane 0 (borrowed, valid while @buffer lives) and its
 * plane offsets are byte offsets into that fd.
 *
 * Returns: (transfer none) (nullable): the meta, %NULL unless HIT or MISS.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorMeta* gst_edge_tensor_import_cache_attach_meta(GstEdgeTensorImportCache* cache,
                                                            GstBuffer* buffer,
                                                            GstEdgeTensorImportResult* result,
                                                            gchar** why);

/**
 * gst_edge_tensor_import_cache_get_stats:
 * @cache: a cache
 *
 * Returns: (transfer full): a structure named %GST_EDGE_TENSOR_IMPORT_STATS_NAME with guint64
 * fields `hits`, `misses`, `evictions`, `invalidations`, `failed-imports`, guint fields
 * `entries`, `peak-entries`, `max-entries`, a string `last-failure` (empty when none), a
 * structure `failures` counting failed imports by reason (error code names), and `inodes`, the
 * st_ino of plane 0 of every cached tensor as the tensor's own fd reports it.
 */
GST_EDGE_TENSOR_API
GstStructure* gst_edge_tensor_import_cache_get_stats(GstEdgeTensorImportCache* cache);

GST_EDGE_TENSOR_API
guint64 gst_edge_tensor_import_cache_get_hits(GstEdgeTensorImportCache* cache);
GST_EDGE_TENSOR_API
guint64 gst_edge_tensor_import_cache_get_misses(GstEdgeTensorImportCache* cache);
GST_EDGE_TENSOR_API
guint64 gst_edge_tensor_import_cache_get_evictions(GstEdgeTensorImportCache* cache);
GST_EDGE_TENSOR_API
guint gst_edge_tensor_import_cache_get_n_entries(GstEdgeTensorImportCache* cache);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GstEdgeTensorImportCache, gst_edge_tensor_import_cache_free)

G_END_DECLS

#ifdef __cplusplus
#include <edgetensor/tensor_dyn.hpp>

#include <optional>

namespace edgetensor::gst
{
/// The tensor gst_edge_tensor_import_cache_import() resolved `buffer` to (shares storage and
/// BufferIdentity with the cached entry, so it stays valid after eviction), or nullopt when the
/// buffer is not importable or its import failed (`result` says which).
GST_EDGE_TENSOR_API std::optional<TensorDyn>
import_tensor(GstEdgeTensorImportCache* cache, GstBuffer* buffer,
              GstEdgeTensorImportResult* result = nullptr) noexcept;
} // namespace edgetensor::gst
#endif

#endif /* GST_EDGE_TENSOR_IMPORT_CACHE_H */
