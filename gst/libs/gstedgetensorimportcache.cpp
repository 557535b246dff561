// SPDX-License-Identifier: MIT
//
// The import cache: upstream DMA-BUFs/memfds imported once, keyed by what the kernel says the
// buffer is (st_dev, st_ino, plane offset) plus the geometry, and kept alive in a bounded LRU.
//
// Why not the fd number or the GstMemory pointer: a camera pool may hand the same buffer out
// under a new fd (dup + close) or a new GstMemory every frame, and the old fd number is then
// reused for a different buffer. The inode is stable for as long as the buffer exists, and a
// cached entry owns a duplicate fd, so the buffer (and its inode) outlives the entry.
//
// This file is the LRU, its statistics and the C API. Where a buffer's planes lie is
// buffer_planes.cpp; the tensor over them is the core's import_fd_planes(); what the caps say
// is stream_layout.cpp.

#include "buffer_planes.hpp"
#include "glib_raii.hpp"
#include "import_cache.hpp"
#include "internal.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/gstedgetensorimportcache.h>

#include <edgetensor/fd_planes.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

GST_DEBUG_CATEGORY_STATIC(gst_edge_tensor_import_debug);
#define GST_CAT_DEFAULT gst_edge_tensor_import_debug

namespace
{

using edgetensor::ErrorCode;
using edgetensor::TensorDyn;
namespace eg = edgetensor::gst;

constexpr guint kMaxPlanes = eg::kMaxBufferPlanes;

void init_debug()
{
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        gst_edge_tensor_init();
        GST_DEBUG_CATEGORY_INIT(gst_edge_tensor_import_debug, "edgetensorimport", 0,
                                "edgetensor import cache");
        g_once_init_leave(&once, 1);
    }
}

struct PlaneKey {
    guint64 dev = 0;
    guint64 ino = 0;
    guint64 offset = 0; ///< bytes from the start of the fd's buffer
    gint64 stride = 0;
    bool operator==(const PlaneKey&) const = default;
};

struct Key {
    std::array<PlaneKey, kMaxPlanes> planes{};
    guint n_planes = 0;
    guint width = 0;
    guint height = 0;
    gint format = -1; ///< GstVideoFormat, -1 for other/tensors
    guint dtype = 0;
    edgetensor::Shape shape; ///< other/tensors only
    bool operator==(const Key&) const = default;
};

struct KeyHash {
    size_t operator()(const Key& k) const noexcept
    {
        size_t h = 0xcbf29ce484222325ull;
        auto mix = [&h](guint64 v) { h = (h ^ v) * 0x100000001b3ull; };
        for (guint i = 0; i < k.n_planes; ++i) {
            mix(k.planes[i].dev);
            mix(k.planes[i].ino);
            mix(k.planes[i].offset);
            mix(guint64(k.planes[i].stride));
        }
        mix(k.width);
        mix(k.height);
        mix(guint64(k.format));
        mix(k.dtype);
        for (size_t d : k.shape)
            mix(d);
        return h;
    }
};

struct Entry {
    Key key;
    TensorDyn tensor;
};

} // namespace

struct _GstEdgeTensorImportCache {
    std::mutex mu;
    guint max_entries = GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE;

    // What the caps say (null: no caps, nothing is imported).
    eg::StreamLayoutPtr layout;

    // LRU: front is the most recently used.
    std::list<Entry> lru;
    std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index;

    // Stats
    guint64 hits = 0;
    guint64 misses = 0;
    guint64 evictions = 0;
    guint64 invalidations = 0;
    guint64 failed = 0;
    guint peak = 0;
    std::string last_failure;
    std::map<std::string, guint64> failures;

    // Entries leave the cache under the lock but die after it is released: dropping a tensor
    // closes an fd and may unmap, and callers may hold other locks. Moving list nodes to the
    // graveyard allocates nothing, so neither can fail half-way.
    void evict_to(guint bound, std::list<Entry>& graveyard) noexcept
    {
        while (lru.size() > bound) {
            Entry& e = lru.back();
            GST_DEBUG("evicting tensor %" G_GUINT64_FORMAT " (ino %" G_GUINT64_FORMAT ")",
                      e.tensor.buffer_identity().id(), e.key.planes[0].ino);
            index.erase(e.key);
            graveyard.splice(graveyard.end(), lru, std::prev(lru.end()));
            ++evictions;
        }
    }

    void clear_locked(const char* reason, std::list<Entry>& graveyard) noexcept
    {
        if (lru.empty())
            return;
        GST_DEBUG("dropping %zu entries: %s", lru.size(), reason ? reason : "cleared");
        graveyard.splice(graveyard.end(), lru);
        index.clear();
        ++invalidations;
    }

    void record_failure(ErrorCode code, const std::string& why)
    {
        ++failed;
        ++failures[std::string(edgetensor::error_code_name(code))];
        last_failure = why;
    }
};

namespace
{

// The key of a classified buffer: every plane's kernel object, offset in it and pitch, and
// the geometry.
Key key_of(const eg::BufferPlanes& p, const eg::StreamLayout& layout)
{
    Key k;
    k.n_planes = p.n_planes;
    for (guint i = 0; i < p.n_planes; ++i)
        k.planes[i] = {p.places[i].object.dev, p.places[i].object.ino, p.places[i].fd_offset,
                       p.places[i].stride};
    if (p.video) {
        k.width = GST_VIDEO_INFO_WIDTH(&p.vinfo);
        k.height = GST_VIDEO_INFO_HEIGHT(&p.vinfo);
        k.format = gint(GST_VIDEO_INFO_FORMAT(&p.vinfo));
    } else {
        k.dtype = guint(layout.tensor.dtype);
        k.shape = layout.tensor.shape;
    }
    return k;
}

// The tensor for classified planes: the memory's own (an edgetensor memory), else ours from
// the memory's fd (a dup: the memory keeps its own).
edgetensor::Result<TensorDyn> import_planes(const eg::BufferPlanes& p, const eg::StreamLayout& l)
{
    if (p.edgetensor_memory) {
        if (auto t = eg::tensor_from_memory(p.places[0].mem))
            return *t;
    }
    const std::string name = "import-" + std::to_string(p.places[0].object.ino);
    return edgetensor::import_fd_planes(eg::fd_planes_of(p, l), name);
}

struct Outcome {
    GstEdgeTensorImportResult result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    std::optional<TensorDyn> tensor;
    eg::StreamLayoutPtr layout; // what the buffer was classified under
    eg::BufferPlanes planes;
    std::string why;
};

Outcome lookup_or_import(GstEdgeTensorImportCache* c, GstBuffer* buffer)
{
    Outcome out;
    std::list<Entry> graveyard;
    std::lock_guard<std::mutex> lock(c->mu);
    if (!c->layout) {
        out.why = "no caps were set on the import cache";
        return out;
    }
    out.layout = c->layout;
    const eg::StreamLayout& layout = *out.layout;
    const eg::Classified cl = eg::classify_planes(layout, buffer, &out.planes);
    if (cl.verdict == eg::PlanesVerdict::NotImportable) {
        out.why = cl.why;
        return out;
    }
    if (cl.verdict == eg::PlanesVerdict::Failed) {
        c->record_failure(cl.code, cl.why);
        out.result = GST_EDGE_TENSOR_IMPORT_FAILED;
        out.why = cl.why;
        GST_WARNING("import failed: %s", cl.why.c_str());
        return out;
    }
    const Key key = key_of(out.planes, layout);
    auto it = c->index.find(key);
    if (it != c->index.end()) {
        c->lru.splice(c->lru.begin(), c->lru, it->second);
        ++c->hits;
        out.result = GST_EDGE_TENSOR_IMPORT_HIT;
        out.tensor = it->second->tensor;
        return out;
    }
    auto t = import_planes(out.planes, layout);
    if (!t) {
        out.why = "importing fd " + std::to_string(out.planes.places[0].fd) + " (ino " +
                  std::to_string(key.planes[0].ino) + ") failed: " + t.error().message();
        c->record_failure(t.error().code(), out.why);
        out.result = GST_EDGE_TENSOR_IMPORT_FAILED;
        GST_WARNING("%s", out.why.c_str());
        return out;
    }
    if (out.planes.video && layout.colorimetry_from_caps && !out.planes.edgetensor_memory)
        t->set_colorimetry(layout.colorimetry);
    ++c->misses;
    GST_DEBUG("imported ino %" G_GUINT64_FORMAT " offset %" G_GUINT64_FORMAT
              " as tensor %" G_GUINT64_FORMAT " (%s%s)",
              key.planes[0].ino, key.planes[0].offset, t->buffer_identity().id(),
              std::string(edgetensor::memory_name(t->memory())).c_str(),
              out.planes.edgetensor_memory ? ", the memory's own tensor" : "");
    c->lru.push_front(Entry{key, *t});
    c->index.emplace(key, c->lru.begin());
    c->evict_to(c->max_entries, graveyard);
    c->peak = std::max<guint>(c->peak, guint(c->lru.size()));
    out.result = GST_EDGE_TENSOR_IMPORT_MISS;
    out.tensor = std::move(*t);
    return out;
}

void set_why(gchar** why, const std::string& s)
{
    if (why)
        *why = g_strdup(s.c_str());
}

// The meta for an imported buffer. For an edgetensor memory, the library's own (it reads the
// tensor off the memory); for a foreign one, the cached tensor with the buffer's planes. The
// handle is borrowed from the buffer's memory, like the pool's: valid while the buffer lives,
// even if the cache entry is evicted meanwhile. The cache's mapping is no address the
// buffer's holder may use, so no host pointer.
GstEdgeTensorMeta* add_import_meta(GstBuffer* buffer, const Outcome& o)
{
    const eg::BufferPlanes& p = o.planes;
    const GstVideoInfo* vinfo = p.video ? &p.vinfo : nullptr;
    const bool colorimetry = o.layout->colorimetry_from_caps;
    if (p.edgetensor_memory)
        return gst_buffer_add_edge_tensor_meta(buffer, vinfo, colorimetry);
    return eg::add_tensor_meta(buffer, *o.tensor, p.places[0].fd, false, vinfo,
                               eg::meta_planes_of(p, *o.tensor), colorimetry);
}

} // namespace

extern "C" GstEdgeTensorImportCache* gst_edge_tensor_import_cache_new(guint max_entries)
{
    g_return_val_if_fail(max_entries >= 1 && max_entries <= GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE,
                         nullptr);
    init_debug();
    return eg::guarded(nullptr, __func__, nullptr, [max_entries] {
        auto* c = new GstEdgeTensorImportCache();
        c->max_entries = max_entries;
        return c;
    });
}

extern "C" void gst_edge_tensor_import_cache_free(GstEdgeTensorImportCache* cache)
{
    delete cache;
}

extern "C" gboolean gst_edge_tensor_import_cache_set_caps(GstEdgeTensorImportCache* cache,
                                                          GstCaps* caps)
{
    g_return_val_if_fail(cache != nullptr, FALSE);
    g_return_val_if_fail(GST_IS_CAPS(caps), FALSE);
    return eg::guarded(nullptr, __func__, FALSE, [&]() -> gboolean {
        {
            std::lock_guard<std::mutex> lock(cache->mu);
            if (cache->layout && cache->layout->same_caps(caps))
                return TRUE;
        }
        auto layout = eg::stream_layout_from_caps(caps);
        if (!layout)
            GST_WARNING("import cache: %" GST_PTR_FORMAT ": %s", caps,
                        layout.error().message().c_str());
        eg::import_cache_set_layout(cache, layout ? *layout : nullptr);
        return layout ? TRUE : FALSE;
    });
}

extern "C" void gst_edge_tensor_import_cache_clear(GstEdgeTensorImportCache* cache,
                                                   const gchar* reason)
{
    g_return_if_fail(cache != nullptr);
    std::list<Entry> graveyard;
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->clear_locked(reason, graveyard);
}

extern "C" void gst_edge_tensor_import_cache_set_max_entries(GstEdgeTensorImportCache* cache,
                                                             guint max_entries)
{
    g_return_if_fail(cache != nullptr);
    g_return_if_fail(max_entries >= 1 && max_entries <= GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE);
    std::list<Entry> graveyard;
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->max_entries = max_entries;
    cache->evict_to(max_entries, graveyard);
}

extern "C" guint gst_edge_tensor_import_cache_get_max_entries(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    std::lock_guard<std::mutex> lock(cache->mu);
    return cache->max_entries;
}

extern "C" void gst_edge_tensor_import_cache_reset_stats(GstEdgeTensorImportCache* cache)
{
    g_return_if_fail(cache != nullptr);
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->hits = cache->misses = cache->evictions = cache->invalidations = cache->failed = 0;
    cache->peak = guint(cache->lru.size());
    cache->last_failure.clear();
    cache->failures.clear();
}

extern "C" gboolean gst_edge_tensor_import_cache_can_import(GstEdgeTensorImportCache* cache,
                                                            GstBuffer* buffer, gchar** why)
{
    g_return_val_if_fail(cache != nullptr, FALSE);
    g_return_val_if_fail(GST_IS_BUFFER(buffer), FALSE);
    const auto failed = [why](const char* what) {
        set_why(why, what);
        return FALSE;
    };
    return eg::guarded(nullptr, __func__, failed, [&]() -> gboolean {
        eg::StreamLayoutPtr layout;
        {
            std::lock_guard<std::mutex> lock(cache->mu);
            layout = cache->layout;
        }
        if (!layout) {
            set_why(why, "no caps were set on the import cache");
            return FALSE;
        }
        eg::BufferPlanes planes;
        const eg::Classified cl = eg::classify_planes(*layout, buffer, &planes);
        if (cl.verdict != eg::PlanesVerdict::Ok)
            set_why(why, cl.why);
        return cl.verdict == eg::PlanesVerdict::Ok;
    });
}

extern "C" GstEdgeTensorImportResult
gst_edge_tensor_import_cache_import(GstEdgeTensorImportCache* cache, GstBuffer* buffer,
                                    guint64* identity, gchar** why)
{
    g_return_val_if_fail(cache != nullptr, GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    g_return_val_if_fail(GST_IS_BUFFER(buffer), GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    if (identity)
        *identity = 0;
    const auto failed = [why](const char* what) {
        set_why(why, what);
        return GST_EDGE_TENSOR_IMPORT_FAILED;
    };
    return eg::guarded(nullptr, __func__, failed, [&] {
        Outcome o = lookup_or_import(cache, buffer);
        if (identity)
            *identity = o.tensor ? o.tensor->buffer_identity().id() : 0;
        if (!o.tensor)
            set_why(why, o.why);
        return o.result;
    });
}

extern "C" GstEdgeTensorMeta*
gst_edge_tensor_import_cache_attach_meta(GstEdgeTensorImportCache* cache, GstBuffer* buffer,
                                         GstEdgeTensorImportResult* result, gchar** why)
{
    if (result)
        *result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    g_return_val_if_fail(cache != nullptr, nullptr);
    g_return_val_if_fail(GST_IS_BUFFER(buffer), nullptr);
    g_return_val_if_fail(gst_buffer_is_writable(buffer), nullptr);
    const auto failed = [why, result](const char* what) -> GstEdgeTensorMeta* {
        set_why(why, what);
        if (result)
            *result = GST_EDGE_TENSOR_IMPORT_FAILED;
        return nullptr;
    };
    return eg::guarded(nullptr, __func__, failed, [&]() -> GstEdgeTensorMeta* {
        Outcome o = lookup_or_import(cache, buffer);
        if (result)
            *result = o.result;
        if (!o.tensor) {
            set_why(why, o.why);
            return nullptr;
        }
        const guint64 id = o.tensor->buffer_identity().id();
        GstEdgeTensorMeta* old = gst_buffer_get_edge_tensor_meta(buffer);
        if (old && old->identity == id)
            return old; // the producing pool's own meta for this very tensor
        // A pool's metas are locked to their buffer: one whose memory was replaced (an element
        // appended its own, tensorimport dropped the pool's) keeps the meta, which must then
        // describe the new memory. (The pool discards such a buffer when it comes back.)
        const bool locked = old && GST_META_FLAG_IS_SET(&old->meta, GST_META_FLAG_LOCKED);
        if (old && !locked)
            gst_buffer_remove_meta(buffer, &old->meta);
        GstEdgeTensorMeta* m = add_import_meta(buffer, o);
        if (!m) {
            set_why(why, "cannot attach GstEdgeTensorMeta");
        } else if (locked) {
            eg::copy_tensor_meta_fields(old, m);
            gst_buffer_remove_meta(buffer, &m->meta);
            m = old;
        }
        return m;
    });
}

namespace
{

GstStructure* stats_of(GstEdgeTensorImportCache* cache)
{
    std::vector<TensorDyn> tensors;
    GstStructure* s = gst_structure_new_empty(GST_EDGE_TENSOR_IMPORT_STATS_NAME);
    GstStructure* failures = gst_structure_new_empty(GST_EDGE_TENSOR_STATS_FAILURES);
    {
        std::lock_guard<std::mutex> lock(cache->mu);
        gst_structure_set(s, GST_EDGE_TENSOR_STATS_HITS, G_TYPE_UINT64, cache->hits,
                          GST_EDGE_TENSOR_STATS_MISSES, G_TYPE_UINT64, cache->misses,
                          GST_EDGE_TENSOR_STATS_EVICTIONS, G_TYPE_UINT64, cache->evictions,
                          GST_EDGE_TENSOR_STATS_INVALIDATIONS, G_TYPE_UINT64, cache->invalidations,
                          GST_EDGE_TENSOR_STATS_ENTRIES, G_TYPE_UINT, guint(cache->lru.size()),
                          GST_EDGE_TENSOR_STATS_PEAK_ENTRIES, G_TYPE_UINT, cache->peak,
                          GST_EDGE_TENSOR_STATS_MAX_ENTRIES, G_TYPE_UINT, cache->max_entries,
                          GST_EDGE_TENSOR_STATS_FAILED_IMPORTS, G_TYPE_UINT64, cache->failed,
                          GST_EDGE_TENSOR_STATS_LAST_FAILURE, G_TYPE_STRING,
                          cache->last_failure.c_str(), nullptr);
        for (const auto& [code, count] : cache->failures)
            gst_structure_set(failures, code.c_str(), G_TYPE_UINT64, count, nullptr);
        for (const Entry& e : cache->lru)
            tensors.push_back(e.tensor);
    }
    {
        GValue v = G_VALUE_INIT;
        g_value_init(&v, GST_TYPE_STRUCTURE);
        g_value_take_boxed(&v, failures);
        gst_structure_take_value(s, GST_EDGE_TENSOR_STATS_FAILURES, &v);
    }
    // From the tensors' own fds (not the buffers'): what was really imported.
    GValue inodes = G_VALUE_INIT;
    gst_value_array_init(&inodes, guint(tensors.size()));
    for (const TensorDyn& t : tensors) {
        auto id = t.stat_identity(0);
        if (!id)
            continue;
        GValue v = G_VALUE_INIT;
        g_value_init(&v, G_TYPE_UINT64);
        g_value_set_uint64(&v, id->second);
        gst_value_array_append_and_take_value(&inodes, &v);
    }
    gst_structure_take_value(s, GST_EDGE_TENSOR_STATS_INODES, &inodes);
    return s;
}

} // namespace

// Elements call it from get_property ("stats") and at EOS: it allocates (the inode list).
// Out of memory it returns NULL, as for a NULL cache.
extern "C" GstStructure* gst_edge_tensor_import_cache_get_stats(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, nullptr);
    return eg::guarded(nullptr, __func__, nullptr, [cache] { return stats_of(cache); });
}

namespace
{
// One figure of the cache, read under its lock.
template <typename F> auto read_locked(GstEdgeTensorImportCache* cache, F figure)
{
    std::lock_guard<std::mutex> lock(cache->mu);
    return figure(*cache);
}
} // namespace

extern "C" guint64 gst_edge_tensor_import_cache_get_hits(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    return read_locked(cache, [](const auto& c) { return c.hits; });
}

extern "C" guint64 gst_edge_tensor_import_cache_get_misses(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    return read_locked(cache, [](const auto& c) { return c.misses; });
}

extern "C" guint64 gst_edge_tensor_import_cache_get_evictions(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    return read_locked(cache, [](const auto& c) { return c.evictions; });
}

extern "C" guint gst_edge_tensor_import_cache_get_n_entries(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    return read_locked(cache, [](const auto& c) { return guint(c.lru.size()); });
}

namespace edgetensor::gst
{
std::optional<TensorDyn> import_tensor(GstEdgeTensorImportCache* cache, GstBuffer* buffer,
                                       GstEdgeTensorImportResult* result) noexcept
{
    if (result)
        *result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    if (!cache || !GST_IS_BUFFER(buffer))
        return std::nullopt;
    const auto failed = [result]() -> std::optional<TensorDyn> {
        if (result)
            *result = GST_EDGE_TENSOR_IMPORT_FAILED;
        return std::nullopt;
    };
    return guarded(nullptr, __func__, failed, [&] {
        Outcome o = lookup_or_import(cache, buffer);
        if (result)
            *result = o.result;
        return std::move(o.tensor);
    });
}

void import_cache_set_layout(GstEdgeTensorImportCache* cache, StreamLayoutPtr layout) noexcept
{
    if (!cache)
        return;
    std::list<Entry> graveyard;
    std::lock_guard<std::mutex> lock(cache->mu);
    if (cache->layout && layout && cache->layout->same_caps(layout->caps.get()))
        return;
    cache->clear_locked("caps changed", graveyard);
    cache->layout = std::move(layout);
}

} // namespace edgetensor::gst
