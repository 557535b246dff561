// SPDX-License-Identifier: MIT
//
// GstEdgeTensorBufferPool: buffers of edgetensor tensors, recycled for the pool's life.
//
// Recycling has two layers. GstBufferPool recycles whole buffers. When it discards one (its
// memory was replaced, resized or shared), the tensor still comes back: the memory's release
// handler hands it to `spares` once the last GstMemory wrapping it is gone, and the next
// allocation reuses it. So the set of tensors (and BufferIdentities, and fd inodes) a pool
// hands out stays the same while it is active.

#include "glib_raii.hpp"
#include "internal.hpp"
#include "pool_acquire.hpp" // kPoolFailureQuark: the pool keeps its failures there
#include "pool_config.hpp"
#include "vfunc_guard.hpp"

#include <gst/video/gstvideopool.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#define GST_CAT_DEFAULT gst_edge_tensor_pool_debug

namespace
{

using edgetensor::CpuAccess;
using edgetensor::DType;
using edgetensor::ErrorCode;
using edgetensor::make_error;
using edgetensor::PixelFormat;
using edgetensor::PlaneLayout;
using edgetensor::Result;
using edgetensor::TensorDyn;
namespace eg = edgetensor::gst;

using eg::PoolConfig;

// Outlives the pool for as long as a memory of it is alive (memories hold it weakly).
struct PoolShared {
    std::mutex mu;
    std::vector<TensorDyn> spares;
    uint64_t generation = 0;
    bool accepting = false;
};

struct PoolPrivate {
    std::mutex mu; // guards config and allocator
    std::shared_ptr<const PoolConfig> config;
    eg::GstObjectPtr<GstAllocator> allocator;
    std::shared_ptr<PoolShared> shared = std::make_shared<PoolShared>();
    uint64_t allocated = 0;

    // Waiting for a buffer. GstBufferPool 1.22 parks waiters on a GstPoll token that loses
    // wake-ups when several threads wait and the pool is flushed; ours wait here instead.
    // `released` is bumped by every release (a buffer queued or discarded) and flush; a
    // releaser takes wait_mu and notifies only when someone waits, so the common
    // acquire/release pair touches no lock of ours. Both counters are sequentially consistent:
    // a waiter registers before re-checking `released`, a releaser bumps it before looking
    // for waiters, so one of them always sees the other.
    std::mutex wait_mu;
    std::condition_variable wait_cv;
    std::atomic<uint64_t> released{0};
    std::atomic<uint32_t> waiters{0};

    // Free buffers, most recently released last: acquire takes the newest. GstBufferPool's own
    // queue is FIFO, which cycles every buffer the pool ever grew to even when the consumer
    // returns each one at once; the newest is the one whose lines the caches most likely still
    // hold, so the next frame's writes hit them rather than fetch and write back lines of DRAM
    // (docs/gstreamer.md, "Newest first"). Buffers GstBufferPool would discard never come here.
    // Emptied into GstBufferPool's queue at stop, which frees them.
    std::mutex free_mu;
    std::vector<GstBuffer*> free;
    std::atomic<guint> buffer_size{0}; ///< GstBufferPool's configured size
    /// EDGETENSOR_POOL_ORDER=fifo at set_config: GstBufferPool's own order, for A/B runs and
    /// for a consumer that keeps reading a buffer after it let go of it.
    std::atomic<bool> fifo{false};
};

// Why the last allocation failed, kept on the pool for the element that acquired
// (take_pool_error(), post_acquire_error() in pool_acquire.hpp).
void record_failure(GstBufferPool* pool, const edgetensor::Error& e)
{
    GstStructure* failure =
        gst_structure_new("edgetensor-pool-failure", "message", G_TYPE_STRING, e.message().c_str(),
                          "errno", G_TYPE_INT, e.sys_errno(), nullptr);
    g_object_set_qdata_full(G_OBJECT(pool), g_quark_from_static_string(eg::kPoolFailureQuark),
                            failure, GDestroyNotify(gst_structure_free));
}

// Every caller is one of our vfuncs or a public function that checked the type already, so
// no checked cast here: acquire/release are per-buffer hot paths and each g_type_check costs
// about as much as the rest of our share of them.
PoolPrivate* priv_of(GstBufferPool* pool)
{
    return static_cast<PoolPrivate*>(reinterpret_cast<GstEdgeTensorBufferPool*>(pool)->priv);
}

Result<TensorDyn> make_tensor(const PoolConfig& cfg, const std::string& name, GstObject* pool)
{
    const eg::FrameLayout& l = cfg.layout;
    const eg::StreamLayout& stream = *l.stream;
    if (!stream.video) {
        const size_t elem = edgetensor::dtype_size(stream.tensor.dtype);
        auto t = TensorDyn::create(stream.tensor.dtype, {(size_t(cfg.size) + elem - 1) / elem},
                                   eg::core_memory(cfg.kind), name);
        if (!t)
            return t;
        EDGETENSOR_TRY(t->set_logical_shape(stream.tensor.shape));
        return t;
    }

    auto base = TensorDyn::create(DType::U8, {size_t(cfg.size)}, eg::core_memory(cfg.kind), name);
    if (!base)
        return base;
    base->set_colorimetry(stream.colorimetry);
    if (stream.pixel_format == PixelFormat::None)
        return base;

    // Formats the core knows become edgetensor images with exactly the pool's layout (the same
    // storage reinterpreted), so TensorDyn users see the real geometry on every backend.
    const GstVideoInfo& vi = l.vinfo;
    const auto info = edgetensor::pixel_format_info(stream.pixel_format);
    std::vector<PlaneLayout> planes;
    planes.push_back(
        {GST_VIDEO_INFO_PLANE_OFFSET(&vi, 0), size_t(GST_VIDEO_INFO_PLANE_STRIDE(&vi, 0))});
    if (info && info->layout == edgetensor::PixelLayout::SemiPlanar)
        planes.push_back(
            {GST_VIDEO_INFO_PLANE_OFFSET(&vi, 1), size_t(GST_VIDEO_INFO_PLANE_STRIDE(&vi, 1))});
    if (info && info->layout == edgetensor::PixelLayout::Planar) {
        // The core's planar images stack the channels at one pitch, back to back.
        const size_t plane_bytes =
            size_t(GST_VIDEO_INFO_PLANE_STRIDE(&vi, 0)) * GST_VIDEO_INFO_HEIGHT(&vi);
        for (guint c = 1; c < GST_VIDEO_INFO_N_PLANES(&vi); ++c)
            if (GST_VIDEO_INFO_PLANE_STRIDE(&vi, c) != GST_VIDEO_INFO_PLANE_STRIDE(&vi, 0) ||
                GST_VIDEO_INFO_PLANE_OFFSET(&vi, c) !=
                    GST_VIDEO_INFO_PLANE_OFFSET(&vi, 0) + c * plane_bytes)
                return base;
    }
    auto img = base->as_image(GST_VIDEO_INFO_WIDTH(&vi), GST_VIDEO_INFO_HEIGHT(&vi),
                              stream.pixel_format, planes, cfg.access);
    if (!img) {
        GST_DEBUG_OBJECT(pool, "keeping a flat tensor: the core refused the image layout (%s)",
                         img.error().message().c_str());
        return base;
    }
    img->set_colorimetry(stream.colorimetry);
    return img;
}

} // namespace

G_DEFINE_TYPE(GstEdgeTensorBufferPool, gst_edge_tensor_buffer_pool, GST_TYPE_BUFFER_POOL)

static GstBufferPoolClass* parent_pool_class()
{
    return static_cast<GstBufferPoolClass*>(gst_edge_tensor_buffer_pool_parent_class);
}

static const gchar** gst_edge_tensor_buffer_pool_get_options(GstBufferPool*)
{
    static const gchar* options[] = {GST_BUFFER_POOL_OPTION_VIDEO_META,
                                     GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT, nullptr};
    return options;
}

static bool fifo_order_asked(GstBufferPool* pool)
{
    const char* order = g_getenv("EDGETENSOR_POOL_ORDER");
    if (!order || !*order || g_str_equal(order, "newest"))
        return false;
    if (g_str_equal(order, "fifo"))
        return true;
    g_warning("EDGETENSOR_POOL_ORDER=%s is not an order (newest, fifo): newest first", order);
    GST_WARNING_OBJECT(pool, "EDGETENSOR_POOL_ORDER=%s ignored", order);
    return false;
}

// The config read (pool_config.cpp), then installed: new buffers follow it, and spares of the
// previous one are not reused.
static gboolean set_config_impl(GstBufferPool* pool, GstStructure* config)
{
    PoolPrivate* p = priv_of(pool);
    eg::ReadConfig read = eg::read_pool_config(pool, config);
    if (!read.config)
        return FALSE;
    GST_DEBUG_OBJECT(pool,
                     "configured %" GST_PTR_FORMAT ": %s memory, %u bytes/frame, %u..%u buffers, "
                     "video meta %d, alignment %d",
                     read.config->layout.stream->caps.get(),
                     eg::memory_kind_name(read.config->kind), read.config->size, read.min_buffers,
                     read.max_buffers, read.config->video_meta, read.config->alignment);
    {
        std::lock_guard<std::mutex> lock(p->mu);
        p->config = std::move(read.config);
        std::swap(p->allocator, read.allocator);
    }
    {
        std::lock_guard<std::mutex> lock(p->shared->mu);
        ++p->shared->generation;
    }
    // The corrected config is applied too: GstBufferPool keeps the config it was given either
    // way and, once configured, treats re-setting an equal config as a no-op that never reaches
    // this function, so the pool's state must already match the corrected config.
    const gboolean ok = parent_pool_class()->set_config(pool, config);
    guint size = 0;
    if (gst_buffer_pool_config_get_params(config, nullptr, &size, nullptr, nullptr))
        p->buffer_size.store(size);
    p->fifo.store(fifo_order_asked(pool));
    return read.corrected ? FALSE : ok;
}

static gboolean gst_edge_tensor_buffer_pool_set_config(GstBufferPool* pool, GstStructure* config)
{
    return eg::guarded(pool, "set_config", FALSE, [&] { return set_config_impl(pool, config); });
}

static GstFlowReturn alloc_buffer_impl(GstBufferPool* pool, GstBuffer** buffer)
{
    PoolPrivate* p = priv_of(pool);
    std::shared_ptr<const PoolConfig> cfg;
    eg::GstObjectPtr<GstAllocator> allocator;
    uint64_t n = 0;
    {
        std::lock_guard<std::mutex> lock(p->mu);
        cfg = p->config;
        if (p->allocator)
            allocator.reset(GST_ALLOCATOR_CAST(gst_object_ref(p->allocator.get())));
        n = p->allocated++;
    }
    if (!cfg || !allocator) {
        GST_ERROR_OBJECT(pool, "allocating from an unconfigured pool");
        return GST_FLOW_NOT_NEGOTIATED;
    }

    const std::shared_ptr<PoolShared>& shared = p->shared;
    std::optional<TensorDyn> tensor;
    uint64_t generation = 0;
    {
        std::lock_guard<std::mutex> lock(shared->mu);
        generation = shared->generation;
        if (!shared->spares.empty()) {
            tensor = std::move(shared->spares.back());
            shared->spares.pop_back();
        }
    }
    if (tensor) {
        GST_DEBUG_OBJECT(pool, "reusing tensor %" G_GUINT64_FORMAT " from a discarded buffer",
                         tensor->buffer_identity().id());
    } else {
        const std::string name =
            std::string(GST_OBJECT_NAME(pool) ? GST_OBJECT_NAME(pool) : "edgetensorpool") + "-" +
            std::to_string(n);
        auto made = make_tensor(*cfg, name, GST_OBJECT(pool));
        if (!made) {
            GST_ERROR_OBJECT(pool, "cannot allocate a %s tensor of %u bytes: %s",
                             eg::memory_kind_name(cfg->kind), cfg->size,
                             made.error().message().c_str());
            record_failure(pool, made.error());
            return GST_FLOW_ERROR;
        }
        tensor = std::move(*made);
        GST_DEBUG_OBJECT(pool, "allocated tensor %" G_GUINT64_FORMAT " (%s, %s)",
                         tensor->buffer_identity().id(),
                         std::string(edgetensor::memory_name(tensor->memory())).c_str(),
                         std::string(tensor->provider()).c_str());
    }

    std::weak_ptr<PoolShared> weak = shared;
    auto recycle = [weak, generation](TensorDyn&& t) {
        if (auto s = weak.lock()) {
            std::unique_lock<std::mutex> lock(s->mu);
            if (s->accepting && s->generation == generation) {
                s->spares.push_back(std::move(t));
                return;
            }
        }
        // Not recycled: `t` dies with the caller's holder, outside any lock.
    };
    auto mem = eg::wrap_tensor(allocator.get(), *tensor, cfg->size, recycle);
    if (!mem) {
        GST_ERROR_OBJECT(pool, "cannot wrap tensor in a GstMemory: %s",
                         mem.error().message().c_str());
        record_failure(pool, mem.error());
        return GST_FLOW_ERROR;
    }
    GstBuffer* buf = gst_buffer_new();
    gst_buffer_append_memory(buf, *mem);

    const GstVideoInfo* vinfo = cfg->layout.stream->video ? &cfg->layout.vinfo : nullptr;
    if (vinfo && cfg->video_meta) {
        GstVideoMeta* vmeta = gst_buffer_add_video_meta_full(
            buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(vinfo),
            GST_VIDEO_INFO_WIDTH(vinfo), GST_VIDEO_INFO_HEIGHT(vinfo),
            GST_VIDEO_INFO_N_PLANES(vinfo), const_cast<gsize*>(vinfo->offset),
            const_cast<gint*>(vinfo->stride));
        if (vmeta && cfg->alignment)
            gst_video_meta_set_alignment(vmeta, cfg->align);
    }
    if (!gst_buffer_add_edge_tensor_meta(buf, vinfo, cfg->layout.stream->colorimetry_from_caps)) {
        gst_buffer_unref(buf);
        GST_ERROR_OBJECT(pool, "cannot attach GstEdgeTensorMeta");
        return GST_FLOW_ERROR;
    }
    *buffer = buf;
    return GST_FLOW_OK;
}

static GstFlowReturn gst_edge_tensor_buffer_pool_alloc_buffer(GstBufferPool* pool,
                                                              GstBuffer** buffer,
                                                              GstBufferPoolAcquireParams*)
{
    return eg::guarded(pool, "alloc_buffer", GST_FLOW_ERROR,
                       [&] { return alloc_buffer_impl(pool, buffer); });
}

static GstBuffer* take_newest(PoolPrivate* p)
{
    std::lock_guard<std::mutex> lock(p->free_mu);
    if (p->free.empty())
        return nullptr;
    GstBuffer* b = p->free.back();
    p->free.pop_back();
    return b;
}

static GstFlowReturn gst_edge_tensor_buffer_pool_acquire_buffer(GstBufferPool* pool,
                                                                GstBuffer** buffer,
                                                                GstBufferPoolAcquireParams* params)
{
    PoolPrivate* p = priv_of(pool);
    GstBufferPoolAcquireParams dontwait{};
    if (params)
        dontwait = *params;
    dontwait.flags =
        GstBufferPoolAcquireFlags(dontwait.flags | GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT);
    const bool may_wait = !(params && (params->flags & GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT));
    auto* parent = parent_pool_class();
    while (true) {
        const uint64_t seen = p->released.load();
        if (GST_BUFFER_POOL_IS_FLUSHING(pool))
            return GST_FLOW_FLUSHING;
        if (GstBuffer* newest = take_newest(p)) {
            *buffer = newest;
            return GST_FLOW_OK;
        }
        // The queue, or a new buffer while below max-buffers; EOS means "all are out".
        const GstFlowReturn r = parent->acquire_buffer(pool, buffer, &dontwait);
        if (r != GST_FLOW_EOS || !may_wait)
            return r;
        GST_LOG_OBJECT(pool, "all buffers are out; waiting for one to come back");
        std::unique_lock<std::mutex> lock(p->wait_mu);
        p->waiters.fetch_add(1);
        p->wait_cv.wait(
            lock, [&] { return p->released.load() != seen || GST_BUFFER_POOL_IS_FLUSHING(pool); });
        p->waiters.fetch_sub(1);
    }
}

static void wake_waiters(GstBufferPool* pool)
{
    PoolPrivate* p = priv_of(pool);
    p->released.fetch_add(1);
    if (p->waiters.load() == 0)
        return;
    // Taking the lock orders this notify after a waiter that registered but has not yet
    // blocked: it is inside wait() (lock released) by the time we get the lock.
    {
        std::lock_guard<std::mutex> lock(p->wait_mu);
    }
    p->wait_cv.notify_all();
}

// What GstBufferPool's release keeps rather than discards: memory untouched, the configured
// size, every memory exclusive to the buffer.
static bool reusable(PoolPrivate* p, GstBuffer* buffer)
{
    return !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_TAG_MEMORY) &&
           gst_buffer_get_size(buffer) == p->buffer_size.load() &&
           gst_buffer_is_all_memory_writable(buffer);
}

static void gst_edge_tensor_buffer_pool_release_buffer(GstBufferPool* pool, GstBuffer* buffer)
{
    PoolPrivate* p = priv_of(pool);
    if (!p->fifo.load(std::memory_order_relaxed) && reusable(p, buffer)) {
        std::lock_guard<std::mutex> lock(p->free_mu);
        p->free.push_back(buffer);
    } else {
        // GstBufferPool's queue (EDGETENSOR_POOL_ORDER=fifo), or discarded as it does.
        parent_pool_class()->release_buffer(pool, buffer);
    }
    wake_waiters(pool);
}

// Hands the free buffers to GstBufferPool's queue, whose stop frees them.
static void return_free_buffers(GstBufferPool* pool)
{
    PoolPrivate* p = priv_of(pool);
    std::vector<GstBuffer*> buffers;
    {
        std::lock_guard<std::mutex> lock(p->free_mu);
        buffers.swap(p->free);
    }
    for (GstBuffer* b : buffers)
        parent_pool_class()->release_buffer(pool, b);
}

static void gst_edge_tensor_buffer_pool_flush_start(GstBufferPool* pool)
{
    // GstBufferPool sets the flushing flag before calling this; waiters re-check it.
    wake_waiters(pool);
}

static gboolean gst_edge_tensor_buffer_pool_stop(GstBufferPool* pool);

static gboolean gst_edge_tensor_buffer_pool_start(GstBufferPool* pool)
{
    PoolPrivate* p = priv_of(pool);
    {
        std::lock_guard<std::mutex> lock(p->shared->mu);
        p->shared->accepting = true;
    }
    if (parent_pool_class()->start(pool))
        return TRUE;
    // GstBufferPool (1.22) gives up at the first preallocation that fails and leaves the buffers
    // it did allocate in its queue, where nothing frees them (their fds and tensors leak): stop
    // flushes the queue.
    gst_edge_tensor_buffer_pool_stop(pool);
    return FALSE;
}

static gboolean gst_edge_tensor_buffer_pool_stop(GstBufferPool* pool)
{
    PoolPrivate* p = priv_of(pool);
    return_free_buffers(pool);
    const gboolean ok = parent_pool_class()->stop(pool);
    std::vector<TensorDyn> dropped;
    {
        std::lock_guard<std::mutex> lock(p->shared->mu);
        p->shared->accepting = false;
        ++p->shared->generation;
        dropped.swap(p->shared->spares);
    }
    GST_DEBUG_OBJECT(pool, "stopped; released %zu spare tensors", dropped.size());
    return ok;
}

static void gst_edge_tensor_buffer_pool_finalize(GObject* object)
{
    auto* self = GST_EDGE_TENSOR_BUFFER_POOL(object);
    delete static_cast<PoolPrivate*>(self->priv);
    self->priv = nullptr;
    G_OBJECT_CLASS(gst_edge_tensor_buffer_pool_parent_class)->finalize(object);
}

static void gst_edge_tensor_buffer_pool_class_init(GstEdgeTensorBufferPoolClass* klass)
{
    gst_edge_tensor_init();
    G_OBJECT_CLASS(klass)->finalize = gst_edge_tensor_buffer_pool_finalize;
    GstBufferPoolClass* pc = GST_BUFFER_POOL_CLASS(klass);
    pc->get_options = gst_edge_tensor_buffer_pool_get_options;
    pc->set_config = gst_edge_tensor_buffer_pool_set_config;
    pc->alloc_buffer = gst_edge_tensor_buffer_pool_alloc_buffer;
    pc->acquire_buffer = gst_edge_tensor_buffer_pool_acquire_buffer;
    pc->release_buffer = gst_edge_tensor_buffer_pool_release_buffer;
    pc->flush_start = gst_edge_tensor_buffer_pool_flush_start;
    pc->start = gst_edge_tensor_buffer_pool_start;
    pc->stop = gst_edge_tensor_buffer_pool_stop;
}

static void gst_edge_tensor_buffer_pool_init(GstEdgeTensorBufferPool* self)
{
    // A pool without its state would be unusable; new failing here is an out-of-memory abort,
    // like g_new.
    self->priv = new PoolPrivate();
}

extern "C" GstBufferPool* gst_edge_tensor_buffer_pool_new(void)
{
    gst_edge_tensor_init();
    auto* pool = GST_BUFFER_POOL_CAST(g_object_new(GST_TYPE_EDGE_TENSOR_BUFFER_POOL, nullptr));
    gst_object_ref_sink(pool);
    return pool;
}

extern "C" GstEdgeTensorMemoryKind gst_edge_tensor_buffer_pool_get_memory_kind(GstBufferPool* pool)
{
    g_return_val_if_fail(GST_IS_EDGE_TENSOR_BUFFER_POOL(pool), GST_EDGE_TENSOR_MEMORY_AUTO);
    PoolPrivate* p = priv_of(pool);
    std::lock_guard<std::mutex> lock(p->mu);
    return p->config ? p->config->kind : GST_EDGE_TENSOR_MEMORY_AUTO;
}
