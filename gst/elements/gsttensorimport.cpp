// SPDX-License-Identifier: MIT
//
// tensorimport: upstream DMA-BUFs imported once and described by a GstEdgeTensorMeta. The
// GstBaseTransform adapter; per-buffer steps in tensorimport_frame, proposals and pools in
// tensorimport_allocation, properties in tensorimport_properties.

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

#include "copy_fallback.hpp"
#include "enum_type.hpp"
#include "glib_raii.hpp"
#include "import_cache.hpp"
#include "internal.hpp"
#include "tensorimport_allocation.hpp"
#include "tensorimport_frame.hpp"
#include "tensorimport_properties.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#include <atomic>
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

constexpr guint COPY_POOL_MIN_BUFFERS = 2;

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

// Memory that cannot be imported is copied into a pooled tensor (copy-mode=auto) or refused.
eg::CopyPolicy copy_policy()
{
    eg::CopyPolicy p;
    p.action = "import";
    p.acting = "importing";
    p.done = "imported";
    p.offer = "the DMA-BUF pool tensorimport proposes";
    p.pool = ti::pool_policy(COPY_POOL_MIN_BUFFERS);
    return p;
}

// One C++ state object per element: settings under the object lock, the stream's layout
// under mu (taken once per buffer); the cache and the copy fallback have their own locks and
// the counters are atomics, so property reads never block on the streaming thread.
struct State {
    ti::Settings settings;
    std::mutex mu;
    eg::StreamLayoutPtr layout; // null before caps
    std::unique_ptr<GstEdgeTensorImportCache, CacheFree> cache{
        gst_edge_tensor_import_cache_new(ti::DEFAULT_CACHE_SIZE)};
    eg::CopyFallback fallback{copy_policy()};
    std::atomic<guint64> frames{0};

    eg::StreamLayoutPtr current_layout()
    {
        std::lock_guard<std::mutex> lock(mu);
        return layout;
    }
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
    return edgetensor::gst::enum_type(&type, "GstTensorImportCopyMode", values);
}

namespace
{

State& state_of(gpointer self)
{
    return *GST_TENSOR_IMPORT(self)->state;
}

// The cache's figures plus the element's own; NULL out of memory.
GstStructure* make_stats(GstTensorImport* self)
{
    State& st = state_of(self);
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(st.cache.get());
    if (!s)
        return nullptr;
    const guint64 copies = st.fallback.copies();
    const guint64 frames = st.frames.load();
    gst_structure_set(s, GST_EDGE_TENSOR_STATS_FRAMES, G_TYPE_UINT64, frames,
                      GST_EDGE_TENSOR_STATS_COPIES, G_TYPE_UINT64, copies,
                      GST_EDGE_TENSOR_STATS_ZERO_COPY, G_TYPE_BOOLEAN,
                      gboolean(frames > 0 && copies == 0), nullptr);
    return s;
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_import_set_property(GObject* object, guint prop_id, const GValue* value,
                                    GParamSpec* pspec)
{
    State& st = state_of(object);
    // cache-size applies at once: a smaller bound evicts the least recently used entries now.
    if (eg::guarded(object, "set_property", false,
                    [&] {
                        return eg::store_setting(object, ti::setting_fields(), st.settings, prop_id,
                                                 value, pspec);
                    }) &&
        prop_id == ti::PROP_CACHE_SIZE && st.cache)
        gst_edge_tensor_import_cache_set_max_entries(st.cache.get(), g_value_get_uint(value));
}

void get_property_impl(GstTensorImport* self, guint prop_id, GValue* value, GParamSpec* pspec)
{
    GObject* object = G_OBJECT(self);
    State& st = state_of(self);
    if (eg::load_setting(object, ti::setting_fields(), st.settings, prop_id, value))
        return;
    GstEdgeTensorImportCache* cache = st.cache.get();
    switch (prop_id) {
    case ti::PROP_CACHE_HITS:
        g_value_set_uint64(value, cache ? gst_edge_tensor_import_cache_get_hits(cache) : 0);
        break;
    case ti::PROP_CACHE_MISSES:
        g_value_set_uint64(value, cache ? gst_edge_tensor_import_cache_get_misses(cache) : 0);
        break;
    case ti::PROP_CACHE_EVICTIONS:
        g_value_set_uint64(value, cache ? gst_edge_tensor_import_cache_get_evictions(cache) : 0);
        break;
    case ti::PROP_COPIES:
        g_value_set_uint64(value, st.fallback.copies());
        break;
    case ti::PROP_STATS:
        if (cache)
            g_value_take_boxed(value, make_stats(self));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
}

void gst_tensor_import_get_property(GObject* object, guint prop_id, GValue* value,
                                    GParamSpec* pspec)
{
    eg::guarded(object, "get_property",
                [&] { get_property_impl(GST_TENSOR_IMPORT(object), prop_id, value, pspec); });
}

void gst_tensor_import_finalize(GObject* object)
{
    auto* self = GST_TENSOR_IMPORT(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_import_parent_class)->finalize(object);
}

// ---- GstBaseTransform ----------------------------------------------------------------------

gboolean start_impl(GstTensorImport* self)
{
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
    st.frames = 0;
    st.fallback.start();
    return TRUE;
}

gboolean gst_tensor_import_start(GstBaseTransform* trans)
{
    return eg::guarded(trans, "start", FALSE,
                       [trans] { return start_impl(GST_TENSOR_IMPORT(trans)); });
}

gboolean gst_tensor_import_stop(GstBaseTransform* trans)
{
    return eg::guarded(trans, "stop", FALSE, [trans] {
        State& st = state_of(trans);
        gst_edge_tensor_import_cache_clear(st.cache.get(), "stop");
        st.fallback.retire_pool_unless(nullptr);
        std::lock_guard<std::mutex> lock(st.mu);
        st.layout.reset();
        return TRUE;
    });
}

// The bytes pass untouched; other/tensors dimensions that differ only by rank padding
// ("3:224:224", "3:224:224:1") are one tensor, so either side may spell them either way.
GstCaps* gst_tensor_import_transform_caps(GstBaseTransform* trans, GstPadDirection, GstCaps* caps,
                                          GstCaps* filter)
{
    GstCaps* out = gst_caps_copy(caps);
    const bool padded = eg::guarded(trans, "transform_caps", false, [out] {
        for (guint i = 0; i < gst_caps_get_size(out); ++i) {
            GstStructure* s = gst_caps_get_structure(out, i);
            if (gst_structure_has_name(s, eg::kTensorsMediaType))
                eg::pad_dimensions_field(s);
        }
        return true;
    });
    if (!padded) {
        gst_caps_unref(out);
        return gst_caps_new_empty();
    }
    if (filter) {
        GstCaps* tmp = gst_caps_intersect_full(filter, out, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(out);
        out = tmp;
    }
    return out;
}

// One stream layout per caps, shared with the import cache.
gboolean gst_tensor_import_set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps*)
{
    auto* self = GST_TENSOR_IMPORT(trans);
    State& st = state_of(self);
    return eg::guarded(trans, "set_caps", FALSE, [&]() -> gboolean {
        auto layout = eg::stream_layout_from_caps(incaps);
        eg::import_cache_set_layout(st.cache.get(), layout ? *layout : nullptr);
        if (!layout) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot import %" GST_PTR_FORMAT, incaps),
                              ("the caps are neither fixed video/x-raw nor one static "
                               "other/tensors tensor"));
            return FALSE;
        }
        {
            std::lock_guard<std::mutex> lock(st.mu);
            st.layout = std::move(*layout);
        }
        st.fallback.retire_pool_unless(incaps);
        GST_DEBUG_OBJECT(self, "importing %" GST_PTR_FORMAT, incaps);
        return TRUE;
    });
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

// What cannot be imported: copied into a pooled tensor and described like any import, or
// refused (copy-mode).
GstFlowReturn fallback(GstTensorImport* self, const eg::StreamLayoutPtr& layout, GstBuffer* inbuf,
                       const eg::Unusable& what, GstBuffer** outbuf)
{
    State& st = state_of(self);
    GstTensorImportCopyMode mode;
    {
        eg::ObjectLockGuard lock(self);
        mode = st.settings.copy_mode;
    }
    GstBuffer* copy = nullptr;
    const GstFlowReturn ret =
        st.fallback.copy(GST_ELEMENT(self), eg::CopyMode(mode), layout, what, inbuf, &copy);
    if (ret != GST_FLOW_OK)
        return ret;
    eg::MiniObjectPtr<GstBuffer> owned(copy);
    GST_BASE_TRANSFORM_CLASS(gst_tensor_import_parent_class)
        ->copy_metadata(GST_BASE_TRANSFORM(self), inbuf, copy);
    GstEdgeTensorImportResult result;
    gchar* why = nullptr;
    if (!gst_edge_tensor_import_cache_attach_meta(st.cache.get(), copy, &result, &why)) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED,
                          ("Cannot describe the copied frame: %s.", why ? why : "?"), (nullptr));
        g_free(why);
        return GST_FLOW_ERROR;
    }
    *outbuf = owned.release();
    return GST_FLOW_OK;
}

// All the work happens here rather than in transform_ip, because a copy replaces the buffer:
// check -> locate -> attach -> fallback, on one snapshot of the stream's layout.
GstFlowReturn prepare_impl(GstTensorImport* self, GstBuffer* inbuf, GstBuffer** outbuf)
{
    State& st = state_of(self);
    st.frames++;
    const eg::StreamLayoutPtr layout = st.current_layout();

    std::string mismatch;
    if (!ti::matches_caps(layout.get(), inbuf, &mismatch)) {
        GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                          ("An input buffer does not match the caps: %s.", mismatch.c_str()),
                          ("buffer %" GST_PTR_FORMAT " from \"%s\"", inbuf,
                           eg::upstream_name(GST_ELEMENT(self)).c_str()));
        return GST_FLOW_ERROR;
    }

    const ti::Located located = ti::locate(layout.get(), inbuf);
    if (!located.usable()) {
        // Neither importable nor copyable: no run of memories is known to be the tensor.
        GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                          ("Upstream element \"%s\" sends buffers of %s for one tensor of "
                           "%zu bytes; which of them hold the tensor cannot be told.",
                           eg::upstream_name(GST_ELEMENT(self)).c_str(),
                           located.where.memories.c_str(), located.tensor_bytes),
                          ("%s", located.where.why.c_str()));
        return GST_FLOW_ERROR;
    }

    const ti::Attached attached = ti::attach(st.cache.get(), inbuf, located);
    if (attached.buffer) {
        GST_LOG_OBJECT(self, "%s: tensor %" G_GUINT64_FORMAT,
                       attached.result == GST_EDGE_TENSOR_IMPORT_HIT ? "hit" : "miss",
                       attached.identity);
        *outbuf = attached.buffer; // BaseTransform drops inbuf when this is a copy
        return GST_FLOW_OK;
    }

    return fallback(self, layout, inbuf, attached.unusable, outbuf);
}

GstFlowReturn gst_tensor_import_prepare_output_buffer(GstBaseTransform* trans, GstBuffer* inbuf,
                                                      GstBuffer** outbuf)
{
    return eg::guarded(trans, "prepare_output_buffer", GST_FLOW_ERROR,
                       [&] { return prepare_impl(GST_TENSOR_IMPORT(trans), inbuf, outbuf); });
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
        gst_edge_tensor_import_cache_clear(state_of(self).cache.get(), "flush-stop");
        break;
    case GST_EVENT_EOS:
        // The statistics are a courtesy: EOS goes on without them.
        eg::guarded(self, "sink_event", [self] {
            GstStructure* s = make_stats(self);
            if (!s)
                return;
            eg::GCharPtr str(gst_structure_to_string(s));
            GST_INFO_OBJECT(self, "%s", str.get());
            gst_element_post_message(GST_ELEMENT(self),
                                     gst_message_new_element(GST_OBJECT(self), s));
        });
        break;
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

    ti::install_properties(gobject_class);

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
