// SPDX-License-Identifier: MIT
//
// tensorimport: upstream DMA-BUFs imported once and described by a GstEdgeTensorMeta.

// Launch lines stay one per line, as users paste them.
// clang-format off
/**
 * SECTION:element-tensorimport
 * @title: tensorimport
 *
 * Imports the DMA-BUF (or memfd) behind every buffer as an edgetensor tensor and attaches a
 * #GstEdgeTensorMeta describing it, without touching the bytes. Imports go through a
 * #GstEdgeTensorImportCache keyed by the kernel's `(st_dev, st_ino, plane offset)` of every
 * plane plus the geometry, so a camera or decoder pool that recycles a handful of buffers gets
 * each one imported once, and the same BufferIdentity every time it comes back, even when the
 * fd number or the GstMemory that carries it changes from frame to frame.
 *
 * In the ALLOCATION query it proposes, for `video/x-raw`, a #GstEdgeTensorBufferPool
 * (DMA-BUF where the host has a provider) and GstVideoMeta, so upstream elements that honour
 * the query (videotestsrc, `v4l2src io-mode=dmabuf-import`, decoders) write straight into
 * DMA-BUF tensors. For `other/tensors` it proposes the edgetensor allocator and no pool:
 * writers allocate their output from it (zero-copy), while elements that append their own
 * memory to the buffer they are given or insist on an empty one (NNStreamer's tensor_transform
 * and tensor_filter) get an empty buffer rather than a pool's full one.
 *
 * An `other/tensors` buffer may hold its tensor in several memories: split across memories
 * that add up to it, or appended after a pool buffer's own memory. The tensor's memories
 * become the buffer's only memory, imported when they are one range of one fd object and
 * copied otherwise. Dimensions compare equal modulo trailing 1s (`3:224:224` is
 * `3:224:224:1`), as NNStreamer's do.
 *
 * Memory that cannot be imported (plain system memory, a tensor split across buffers) is
 * copied into a pooled tensor (DMA-BUF, or shared memory where the host has no DMA-BUF
 * provider) when #GstTensorImport:copy-mode is `auto` (counted in #GstTensorImport:copies,
 * warned once, naming the memory type or the memory layout), or refused with an element error
 * naming it and the upstream element when it is `never`. At EOS the element posts an element
 * message `edgetensor-stats` (the #GstTensorImport:stats structure: hits, misses, evictions,
 * entries, copies, ...; names in gst/edgetensor/gstedgetensorstats.h).
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 -m v4l2src io-mode=dmabuf num-buffers=300 ! tensorimport ! fakesink
 * gst-launch-1.0 v4l2src io-mode=dmabuf-import num-buffers=300 ! tensorimport copy-mode=never ! fakesink
 * ]|
 */
// clang-format on

#include "gsttensorimport.h"

#include "frame_check.hpp"
#include "glib_raii.hpp"
#include "import_cache.hpp"
#include "internal.hpp"
#include "pool_negotiation.hpp"
#include "tensor_memories.hpp"
#include "tensorimport_allocation.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

GST_DEBUG_CATEGORY(gst_tensor_import_debug);
#define GST_CAT_DEFAULT gst_tensor_import_debug

namespace
{

namespace eg = edgetensor::gst;
namespace ti = edgetensor::gst::tensorimport;

constexpr GstTensorImportCopyMode DEFAULT_COPY_MODE = GST_TENSOR_IMPORT_COPY_AUTO;
constexpr guint DEFAULT_CACHE_SIZE = GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE;
constexpr guint COPY_POOL_MIN_BUFFERS = 2;

enum {
    PROP_0,
    PROP_COPY_MODE,
    PROP_CACHE_SIZE,
    PROP_CACHE_HITS,
    PROP_CACHE_MISSES,
    PROP_CACHE_EVICTIONS,
    PROP_COPIES,
    PROP_STATS,
};

#define TEMPLATE_CAPS                                                                              \
    "video/x-raw; video/x-raw(memory:DMABuf); "                                                    \
    "other/tensors, num_tensors = (int) 1, format = (string) static"

GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(TEMPLATE_CAPS));
GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(TEMPLATE_CAPS));

struct CacheFree {
    void operator()(GstEdgeTensorImportCache* c) const noexcept
    {
        gst_edge_tensor_import_cache_free(c);
    }
};

struct Settings {
    GstTensorImportCopyMode copy_mode = DEFAULT_COPY_MODE;
    guint cache_size = DEFAULT_CACHE_SIZE;
};

struct Streaming {
    eg::StreamLayoutPtr layout; // null before caps
    eg::GstObjectPtr<GstBufferPool> copy_pool;
    bool warned_copy = false;
};

// One C++ state object per element: settings under the object lock, streaming state under mu;
// the cache has its own lock and the counters are atomics, so property reads never block on
// the streaming thread.
struct State {
    Settings settings;
    std::mutex mu;
    Streaming streaming;
    std::unique_ptr<GstEdgeTensorImportCache, CacheFree> cache{
        gst_edge_tensor_import_cache_new(DEFAULT_CACHE_SIZE)};
    std::atomic<guint64> copies{0};
    std::atomic<guint64> frames{0};
};

} // namespace

struct _GstTensorImport {
    GstBaseTransform parent;
    State* state;
};

G_DEFINE_TYPE(GstTensorImport, gst_tensor_import, GST_TYPE_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(tensorimport, "tensorimport", GST_RANK_NONE, GST_TYPE_TENSOR_IMPORT)

GType gst_tensor_import_copy_mode_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_IMPORT_COPY_AUTO,
         "Copy memory that cannot be imported into a pooled tensor: DMA-BUF, or shared memory "
         "where the host has no DMA-BUF provider (counted, warned once)",
         "auto"},
        {GST_TENSOR_IMPORT_COPY_NEVER, "Refuse memory that cannot be imported (element error)",
         "never"},
        {0, nullptr, nullptr},
    };
    if (g_once_init_enter(&type)) {
        GType t = g_enum_register_static("GstTensorImportCopyMode", values);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

namespace
{

State& state_of(gpointer self)
{
    return *GST_TENSOR_IMPORT(self)->state;
}

GstEdgeTensorImportCache* cache_of(gpointer self)
{
    return state_of(self).cache.get();
}

// The cache's figures plus the element's own.
GstStructure* make_stats(GstTensorImport* self)
{
    State& st = state_of(self);
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(st.cache.get());
    const guint64 copies = st.copies.load();
    const guint64 frames = st.frames.load();
    gst_structure_set(s, GST_EDGE_TENSOR_STATS_FRAMES, G_TYPE_UINT64, frames,
                      GST_EDGE_TENSOR_STATS_COPIES, G_TYPE_UINT64, copies,
                      GST_EDGE_TENSOR_STATS_ZERO_COPY, G_TYPE_BOOLEAN,
                      gboolean(frames > 0 && copies == 0), nullptr);
    return s;
}

// "v4l2src0", or a description of the peer when it has no element.
std::string upstream_name(GstTensorImport* self)
{
    eg::GstObjectPtr<GstPad> peer(gst_pad_get_peer(GST_BASE_TRANSFORM_SINK_PAD(self)));
    if (!peer)
        return "(not linked)";
    eg::GstObjectPtr<GstElement> parent(gst_pad_get_parent_element(peer.get()));
    if (parent)
        return GST_OBJECT_NAME(parent.get());
    return std::string("pad ") + GST_OBJECT_NAME(peer.get());
}

const char* memory_type_of(GstBuffer* buf)
{
    return gst_buffer_n_memory(buf) == 0 ? "(none)"
                                         : eg::memory_type_name(gst_buffer_peek_memory(buf, 0));
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_import_set_property(GObject* object, guint prop_id, const GValue* value,
                                    GParamSpec* pspec)
{
    auto* self = GST_TENSOR_IMPORT(object);
    if (eg::refuse_unless_ready(GST_ELEMENT(self), pspec))
        return;
    switch (prop_id) {
    case PROP_COPY_MODE: {
        eg::ObjectLockGuard lock(self);
        state_of(self).settings.copy_mode = GstTensorImportCopyMode(g_value_get_enum(value));
        break;
    }
    case PROP_CACHE_SIZE: {
        const guint n = g_value_get_uint(value);
        {
            eg::ObjectLockGuard lock(self);
            state_of(self).settings.cache_size = n;
        }
        // Applies at once: a smaller bound evicts the least recently used entries now.
        if (cache_of(self))
            gst_edge_tensor_import_cache_set_max_entries(cache_of(self), n);
        break;
    }
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
}

void gst_tensor_import_get_property(GObject* object, guint prop_id, GValue* value,
                                    GParamSpec* pspec)
{
    auto* self = GST_TENSOR_IMPORT(object);
    State& st = state_of(self);
    switch (prop_id) {
    case PROP_COPY_MODE: {
        eg::ObjectLockGuard lock(self);
        g_value_set_enum(value, st.settings.copy_mode);
        break;
    }
    case PROP_CACHE_SIZE: {
        eg::ObjectLockGuard lock(self);
        g_value_set_uint(value, st.settings.cache_size);
        break;
    }
    case PROP_CACHE_HITS:
        g_value_set_uint64(value,
                           st.cache ? gst_edge_tensor_import_cache_get_hits(st.cache.get()) : 0);
        break;
    case PROP_CACHE_MISSES:
        g_value_set_uint64(value,
                           st.cache ? gst_edge_tensor_import_cache_get_misses(st.cache.get()) : 0);
        break;
    case PROP_CACHE_EVICTIONS:
        g_value_set_uint64(
            value, st.cache ? gst_edge_tensor_import_cache_get_evictions(st.cache.get()) : 0);
        break;
    case PROP_COPIES:
        g_value_set_uint64(value, st.copies.load());
        break;
    case PROP_STATS:
        if (st.cache)
            g_value_take_boxed(value, make_stats(self));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
}

void gst_tensor_import_finalize(GObject* object)
{
    auto* self = GST_TENSOR_IMPORT(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_import_parent_class)->finalize(object);
}

// ---- GstBaseTransform ----------------------------------------------------------------------

gboolean gst_tensor_import_start(GstBaseTransform* trans)
{
    auto* self = GST_TENSOR_IMPORT(trans);
    State& st = state_of(self);
    if (!st.cache) {
        GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Cannot create the import cache."),
                          (nullptr));
        return FALSE;
    }
    guint size;
    {
        eg::ObjectLockGuard lock(self);
        size = st.settings.cache_size;
    }
    gst_edge_tensor_import_cache_set_max_entries(st.cache.get(), size);
    gst_edge_tensor_import_cache_reset_stats(st.cache.get());
    st.copies = 0;
    st.frames = 0;
    std::lock_guard<std::mutex> lock(st.mu);
    st.streaming.warned_copy = false;
    return TRUE;
}

gboolean gst_tensor_import_stop(GstBaseTransform* trans)
{
    auto* self = GST_TENSOR_IMPORT(trans);
    State& st = state_of(self);
    gst_edge_tensor_import_cache_clear(st.cache.get(), "stop");
    eg::GstObjectPtr<GstBufferPool> pool;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        pool = std::move(st.streaming.copy_pool);
        st.streaming.layout.reset();
    }
    // Outside the lock: deactivating waits for nothing of ours, but may free tensors.
    if (pool)
        gst_buffer_pool_set_active(pool.get(), FALSE);
    return TRUE;
}

// The bytes pass untouched; other/tensors dimensions that differ only by rank padding
// ("3:224:224", "3:224:224:1") are one tensor, so either side may spell them either way.
GstCaps* gst_tensor_import_transform_caps(GstBaseTransform* trans, GstPadDirection, GstCaps* caps,
                                          GstCaps* filter)
{
    GstCaps* out = gst_caps_copy(caps);
    try {
        for (guint i = 0; i < gst_caps_get_size(out); ++i) {
            GstStructure* s = gst_caps_get_structure(out, i);
            if (gst_structure_has_name(s, eg::kTensorsMediaType))
                eg::pad_dimensions_field(s);
        }
    } catch (const std::exception& e) {
        GST_ERROR_OBJECT(trans, "transform_caps failed: %s", e.what());
    }
    if (filter) {
        GstCaps* tmp = gst_caps_intersect_full(filter, out, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(out);
        out = tmp;
    }
    return out;
}

gboolean gst_tensor_import_set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps*)
{
    auto* self = GST_TENSOR_IMPORT(trans);
    State& st = state_of(self);
    try {
        auto layout = eg::stream_layout_from_caps(incaps);
        eg::import_cache_set_layout(st.cache.get(), layout ? *layout : nullptr);
        if (!layout) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot import %" GST_PTR_FORMAT, incaps),
                              ("the caps are neither fixed video/x-raw nor one static "
                               "other/tensors tensor"));
            return FALSE;
        }
        eg::GstObjectPtr<GstBufferPool> old_pool;
        {
            std::lock_guard<std::mutex> lock(st.mu);
            Streaming& s = st.streaming;
            if (!s.layout || !s.layout->same_caps(incaps))
                old_pool = std::move(s.copy_pool);
            s.layout = std::move(*layout);
        }
        if (old_pool)
            gst_buffer_pool_set_active(old_pool.get(), FALSE);
        GST_DEBUG_OBJECT(self, "importing %" GST_PTR_FORMAT, incaps);
        return TRUE;
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("%s", e.what()));
    }
    return FALSE;
}

gboolean gst_tensor_import_transform_meta(GstBaseTransform*, GstBuffer*, GstMeta* meta, GstBuffer*)
{
    // Only used for copies: the bytes move to new memory with the same geometry, so metas
    // about the picture survive; those about the old memory (its layout, its tensor) do not.
    const GType api = meta->info->api;
    if (api == GST_VIDEO_META_API_TYPE || api == GST_EDGE_TENSOR_META_API_TYPE)
        return FALSE;
    return !gst_meta_api_type_has_tag(api, g_quark_from_static_string(GST_META_TAG_MEMORY_STR));
}

// Copies `inbuf` into a buffer of our pool (auto mode).
GstFlowReturn copy_into_pool(GstTensorImport* self, GstBuffer* inbuf, GstBuffer** out)
{
    State& st = state_of(self);
    eg::GstObjectPtr<GstBufferPool> pool;
    bool video;
    GstVideoInfo vinfo;
    size_t tensor_bytes = 0;
    eg::MiniObjectPtr<GstCaps> caps;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        if (!st.streaming.layout) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("tensorimport received data before caps."),
                              (nullptr));
            return GST_FLOW_NOT_NEGOTIATED;
        }
        video = st.streaming.layout->video;
        vinfo = st.streaming.layout->vinfo;
        tensor_bytes = video ? 0 : st.streaming.layout->frame_bytes;
        caps.reset(gst_caps_ref(st.streaming.layout->caps.get()));
        if (st.streaming.copy_pool)
            pool.reset(GST_BUFFER_POOL(gst_object_ref(st.streaming.copy_pool.get())));
    }
    if (!pool) {
        pool = eg::make_pool(GST_ELEMENT(self), caps.get(), ti::pool_policy(COPY_POOL_MIN_BUFFERS))
                   .pool;
        if (!pool) {
            GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                              ("Cannot create a buffer pool to copy into."),
                              ("caps %" GST_PTR_FORMAT, caps.get()));
            return GST_FLOW_ERROR;
        }
        if (!eg::activate_pool(GST_ELEMENT(self), pool.get(), "the buffers to copy into"))
            return GST_FLOW_ERROR;
        std::lock_guard<std::mutex> lock(st.mu);
        st.streaming.copy_pool.reset(GST_BUFFER_POOL(gst_object_ref(pool.get())));
    }

    GstBuffer* dst = nullptr;
    GstFlowReturn ret = gst_buffer_pool_acquire_buffer(pool.get(), &dst, nullptr);
    if (ret == GST_FLOW_ERROR)
        eg::post_acquire_error(GST_ELEMENT(self), pool.get(), ret, "a buffer to copy into");
    if (ret != GST_FLOW_OK)
        return ret;
    eg::MiniObjectPtr<GstBuffer> owned(dst);
    bool ok = false;
    if (video) {
        GstVideoFrame in, o;
        if (gst_video_frame_map(&in, &vinfo, inbuf, GST_MAP_READ)) {
            if (gst_video_frame_map(&o, &vinfo, dst, GST_MAP_WRITE)) {
                ok = eg::copy_video_frame(&o, &in);
                gst_video_frame_unmap(&o);
            }
            gst_video_frame_unmap(&in);
        }
    } else {
        // From whichever memories hold the tensor (tensorimport_memories.hpp).
        GstMapInfo o;
        if (gst_buffer_map(dst, &o, GST_MAP_WRITE)) {
            ok = eg::copy_tensor_bytes(inbuf, tensor_bytes, o.data, o.size);
            gst_buffer_unmap(dst, &o);
        }
    }
    if (!ok) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ,
                          ("Cannot copy the input frame%s.", eg::take_map_failure().c_str()),
                          ("mapping or copying %" GST_PTR_FORMAT " failed", inbuf));
        return GST_FLOW_ERROR;
    }
    GST_BASE_TRANSFORM_CLASS(gst_tensor_import_parent_class)
        ->copy_metadata(GST_BASE_TRANSFORM(self), inbuf, dst);
    *out = owned.release();
    return GST_FLOW_OK;
}

// True when `inbuf` is what the caps say: a video frame whose every plane lies inside its
// memory, or a tensor of exactly the caps' size in one memory (never padded, never cut).
bool input_matches_caps(GstTensorImport* self, GstBuffer* inbuf, std::string* why)
{
    bool have_caps, video;
    GstVideoInfo vinfo;
    gsize tensor_bytes;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        const Streaming& s = state_of(self).streaming;
        have_caps = bool(s.layout);
        video = have_caps && s.layout->video;
        if (have_caps)
            vinfo = s.layout->vinfo;
        tensor_bytes = have_caps && !video ? s.layout->frame_bytes : 0;
    }
    if (!have_caps)
        return true; // the import cache and the copy say "before caps"
    if (video)
        return eg::check_video_frame(inbuf, &vinfo, why);
    // Several memories (NNStreamer's split or appended tensors) are sized up by
    // locate_tensor(), which refuses any that do not add up to exactly one tensor.
    const gsize size = gst_buffer_get_size(inbuf);
    if (tensor_bytes != 0 && gst_buffer_n_memory(inbuf) == 1 && size != tensor_bytes) {
        *why = "it holds " + std::to_string(size) + " bytes, but the other/tensors caps describe " +
               std::to_string(tensor_bytes) + " (tensors are never padded or cut)";
        return false;
    }
    return true;
}

// All the work happens here rather than in transform_ip, because a copy replaces the buffer.
GstFlowReturn prepare_impl(GstTensorImport* self, GstBuffer* inbuf, GstBuffer** outbuf)
{
    State& st = state_of(self);
    st.frames++;
    std::string mismatch;
    if (!input_matches_caps(self, inbuf, &mismatch)) {
        GST_ELEMENT_ERROR(
            self, STREAM, FORMAT,
            ("An input buffer does not match the caps: %s.", mismatch.c_str()),
            ("buffer %" GST_PTR_FORMAT " from \"%s\"", inbuf, upstream_name(self).c_str()));
        return GST_FLOW_ERROR;
    }
    // In place: the input itself when writable, else a copy sharing its memory.
    GstBuffer* work = gst_buffer_is_writable(inbuf) ? inbuf : gst_buffer_copy(inbuf);

    // An other/tensors tensor in several memories becomes the buffer's one memory when it can
    // without a copy (located on inbuf: a copy forgets the pool the buffer came from).
    size_t tensor_bytes = 0;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        const eg::StreamLayoutPtr& l = st.streaming.layout;
        tensor_bytes = l && !l->video ? l->frame_bytes : 0;
    }
    eg::TensorMemories where;
    std::string layout_why, multi_sent;
    bool single = true;
    if (tensor_bytes > 0 && gst_buffer_n_memory(inbuf) > 1) {
        where = eg::locate_tensor(inbuf, tensor_bytes);
        if (where.layout == eg::TensorMemories::Layout::Unusable) {
            // Neither importable nor copyable: no run of memories is known to be the tensor.
            GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                              ("Upstream element \"%s\" sends buffers of %s for one tensor of "
                               "%zu bytes; which of them hold the tensor cannot be told.",
                               upstream_name(self).c_str(), where.memories.c_str(), tensor_bytes),
                              ("%s", where.why.c_str()));
            if (work != inbuf)
                gst_buffer_unref(work);
            return GST_FLOW_ERROR;
        }
        multi_sent = eg::describe_sent_memory(inbuf, where); // before `work` (maybe inbuf) changes
        single = eg::make_single_memory(work, where, &layout_why);
    }

    GstEdgeTensorImportResult result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    gchar* why_c = nullptr;
    GstEdgeTensorMeta* meta =
        single ? gst_edge_tensor_import_cache_attach_meta(st.cache.get(), work, &result, &why_c)
               : nullptr;
    const std::string why = !single ? layout_why : why_c ? why_c : "";
    g_free(why_c);
    if (meta) {
        GST_LOG_OBJECT(self, "%s: tensor %" G_GUINT64_FORMAT,
                       result == GST_EDGE_TENSOR_IMPORT_HIT ? "hit" : "miss", meta->identity);
        *outbuf = work; // BaseTransform drops inbuf when this is a copy
        return GST_FLOW_OK;
    }
    if (work != inbuf)
        gst_buffer_unref(work);

    GstTensorImportCopyMode mode;
    {
        eg::ObjectLockGuard lock(self);
        mode = st.settings.copy_mode;
    }
    const std::string upstream = upstream_name(self);
    // What arrived, for the messages: the memory type, or the memory layout when that is why.
    const std::string sent = where.layout == eg::TensorMemories::Layout::Single
                                 ? std::string("memory of type \"") + memory_type_of(inbuf) + "\""
                                 : multi_sent;
    const char* mem_type = memory_type_of(inbuf);
    // An import that failed (a system call said no) is not the memory's fault: say what failed.
    const bool failed = result == GST_EDGE_TENSOR_IMPORT_FAILED;
    if (mode == GST_TENSOR_IMPORT_COPY_NEVER && failed) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ,
                          ("Cannot import a buffer from upstream element \"%s\": %s.",
                           upstream.c_str(), why.c_str()),
                          ("memory of type \"%s\"; copy-mode is \"never\", so it is not copied "
                           "either",
                           mem_type));
        return GST_FLOW_ERROR;
    }
    if (mode == GST_TENSOR_IMPORT_COPY_NEVER) {
        GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                          ("Upstream element \"%s\" sends %s, which cannot be imported without a "
                           "copy, and copy-mode is \"never\".",
                           upstream.c_str(), sent.c_str()),
                          ("%s. Set copy-mode=auto to copy (every copy is counted), or have "
                           "upstream use the DMA-BUF pool tensorimport proposes.",
                           why.c_str()));
        return GST_FLOW_ERROR;
    }
    bool warn = false;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        warn = !std::exchange(st.streaming.warned_copy, true);
    }
    if (warn && failed)
        GST_ELEMENT_WARNING(self, RESOURCE, READ,
                            ("Copying frames: importing a buffer from upstream element \"%s\" "
                             "failed (%s); every copy is counted (property \"copies\").",
                             upstream.c_str(), why.c_str()),
                            ("memory of type \"%s\"", mem_type));
    else if (warn)
        GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                            ("Copying frames: upstream element \"%s\" sends %s, which cannot "
                             "be imported; every copy is counted (property \"copies\").",
                             upstream.c_str(), sent.c_str()),
                            ("%s", why.c_str()));
    GstBuffer* copy = nullptr;
    GstFlowReturn ret = copy_into_pool(self, inbuf, &copy);
    if (ret != GST_FLOW_OK)
        return ret;
    st.copies++;
    eg::MiniObjectPtr<GstBuffer> owned(copy);
    gchar* why2 = nullptr;
    if (!gst_edge_tensor_import_cache_attach_meta(st.cache.get(), copy, &result, &why2)) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED,
                          ("Cannot describe the copied frame: %s.", why2 ? why2 : "?"), (nullptr));
        g_free(why2);
        return GST_FLOW_ERROR;
    }
    *outbuf = owned.release();
    return GST_FLOW_OK;
}

GstFlowReturn gst_tensor_import_prepare_output_buffer(GstBaseTransform* trans, GstBuffer* inbuf,
                                                      GstBuffer** outbuf)
{
    auto* self = GST_TENSOR_IMPORT(trans);
    try {
        return prepare_impl(self, inbuf, outbuf);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, (nullptr), ("%s", e.what()));
    }
    return GST_FLOW_ERROR;
}

GstFlowReturn gst_tensor_import_transform_ip(GstBaseTransform*, GstBuffer*)
{
    return GST_FLOW_OK; // prepare_output_buffer did it all
}

gboolean gst_tensor_import_sink_event(GstBaseTransform* trans, GstEvent* event)
{
    auto* self = GST_TENSOR_IMPORT(trans);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_FLUSH_STOP:
        gst_edge_tensor_import_cache_clear(cache_of(self), "flush-stop");
        break;
    case GST_EVENT_EOS: {
        GstStructure* s = make_stats(self);
        gchar* str = gst_structure_to_string(s);
        GST_INFO_OBJECT(self, "%s", str);
        g_free(str);
        gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), s));
        break;
    }
    default:
        break;
    }
    return GST_BASE_TRANSFORM_CLASS(gst_tensor_import_parent_class)->sink_event(trans, event);
}

} // namespace

static void gst_tensor_import_class_init(GstTensorImportClass* klass)
{
    gst_edge_tensor_init();
    GST_DEBUG_CATEGORY_INIT(gst_tensor_import_debug, "tensorimport", 0,
                            "edgetensor DMA-BUF importer");

    GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    GstBaseTransformClass* bt = GST_BASE_TRANSFORM_CLASS(klass);

    gobject_class->set_property = gst_tensor_import_set_property;
    gobject_class->get_property = gst_tensor_import_get_property;
    gobject_class->finalize = gst_tensor_import_finalize;

    g_object_class_install_property(
        gobject_class, PROP_COPY_MODE,
        g_param_spec_enum(
            "copy-mode", "Copy mode",
            "What to do with memory that cannot be imported (system memory): auto = copy into "
            "a pooled tensor (DMA-BUF, or shared memory where the host has no DMA-BUF provider), "
            "counted and warned once (default); never = element error",
            GST_TYPE_TENSOR_IMPORT_COPY_MODE, DEFAULT_COPY_MODE,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
    g_object_class_install_property(
        gobject_class, PROP_CACHE_SIZE,
        g_param_spec_uint(
            "cache-size", "Cache size",
            "Most imported buffers kept (least recently used evicted first; 1 to "
            "1024, default 32). Lowering it while playing evicts at once.",
            1, GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE, DEFAULT_CACHE_SIZE,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        gobject_class, PROP_CACHE_HITS,
        g_param_spec_uint64("cache-hits", "Cache hits",
                            "Buffers whose tensor was already imported (since the last start)", 0,
                            G_MAXUINT64, 0,
                            GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
    g_object_class_install_property(
        gobject_class, PROP_CACHE_MISSES,
        g_param_spec_uint64("cache-misses", "Cache misses",
                            "Buffers imported now (since the last start)", 0, G_MAXUINT64, 0,
                            GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
    g_object_class_install_property(
        gobject_class, PROP_CACHE_EVICTIONS,
        g_param_spec_uint64("cache-evictions", "Cache evictions",
                            "Imported tensors dropped to stay within cache-size (since the "
                            "last start)",
                            0, G_MAXUINT64, 0,
                            GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
    g_object_class_install_property(
        gobject_class, PROP_COPIES,
        g_param_spec_uint64("copies", "Copies",
                            "Frames copied because their memory could not be imported (since "
                            "the last start); 0 means the stream was zero-copy",
                            0, G_MAXUINT64, 0,
                            GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
    g_object_class_install_property(
        gobject_class, PROP_STATS,
        g_param_spec_boxed("stats", "Statistics",
                           "edgetensor-stats: hits, misses, evictions, invalidations, entries, "
                           "peak-entries, max-entries, failed-imports, last-failure, failures, "
                           "inodes, frames, copies, zero-copy (also posted at EOS)",
                           GST_TYPE_STRUCTURE,
                           GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_add_static_pad_template(element_class, &src_template);
    gst_element_class_set_static_metadata(
        element_class, "Tensor import", "Filter/Video/Tensor",
        "Imports the DMA-BUF or memfd behind every video/x-raw or other/tensors buffer once "
        "(cached by inode and plane offset) and attaches a GstEdgeTensorMeta, without copying; "
        "memory it cannot import is copied (copy-mode). Example: gst-launch-1.0 -m "
        "v4l2src io-mode=dmabuf num-buffers=300 ! tensorimport ! fakesink",
        "edgetensor developers");

    bt->start = gst_tensor_import_start;
    bt->stop = gst_tensor_import_stop;
    bt->transform_caps = gst_tensor_import_transform_caps;
    bt->set_caps = gst_tensor_import_set_caps;
    bt->propose_allocation = ti::propose_allocation;
    bt->transform_meta = gst_tensor_import_transform_meta;
    bt->prepare_output_buffer = gst_tensor_import_prepare_output_buffer;
    bt->transform_ip = gst_tensor_import_transform_ip;
    bt->sink_event = gst_tensor_import_sink_event;
    bt->passthrough_on_same_caps = FALSE;
    bt->transform_ip_on_passthrough = FALSE;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_IMPORT_COPY_MODE, GstPluginAPIFlags(0));
}

static void gst_tensor_import_init(GstTensorImport* self)
{
    self->state = new State();
    gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
    gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
}
