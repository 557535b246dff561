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

constexpr const char* kMemoryKindField = "edgetensor-memory-kind";
constexpr const char* kCpuAccessField = "edgetensor-cpu-access";
constexpr size_t kRowAlignment = GST_EDGE_TENSOR_ROW_ALIGNMENT;

struct PoolConfig {
    eg::FrameLayout layout;
    GstEdgeTensorMemoryKind kind = GST_EDGE_TENSOR_MEMORY_AUTO;
    CpuAccess access = CpuAccess::ReadWrite;
    bool video_meta = false;
    bool alignment = false;
    GstVideoAlignment align{};
    guint size = 0;
};

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

guint mask_up(guint mask)
{
    // A stride mask is 2^n - 1; round anything else up to the next such value.
    guint m = 0;
    while (m < mask)
        m = (m << 1) | 1u;
    return m;
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

static gboolean set_config_impl(GstBufferPool* pool, GstStructure* config)
{
    PoolPrivate* p = priv_of(pool);
    GstCaps* caps = nullptr;
    guint size = 0, min_buffers = 0, max_buffers = 0;
    if (!gst_buffer_pool_config_get_params(config, &caps, &size, &min_buffers, &max_buffers)) {
        GST_WARNING_OBJECT(pool, "invalid config: no size/min/max parameters");
        return FALSE;
    }
    if (!caps) {
        GST_WARNING_OBJECT(pool, "invalid config: no caps");
        return FALSE;
    }

    bool corrected = false;
    auto cfg = std::make_shared<PoolConfig>();

    // Memory kind
    const GstEdgeTensorMemoryKind asked =
        gst_edge_tensor_buffer_pool_config_get_memory_kind(config);
    GstEdgeTensorMemoryKind kind = eg::resolve_memory_kind(asked);
    if (kind == GST_EDGE_TENSOR_MEMORY_DMA && !edgetensor::is_dma_available()) {
        GST_WARNING_OBJECT(pool, "DMA-BUF memory was asked for but this host has no DMA-BUF "
                                 "provider; correcting the config to shared memory");
        kind = GST_EDGE_TENSOR_MEMORY_SHM;
        gst_edge_tensor_buffer_pool_config_set_memory_kind(config, kind);
        corrected = true;
    }
    cfg->kind = kind;
    cfg->access = CpuAccess(gst_edge_tensor_buffer_pool_config_get_cpu_access(config));

    // Options
    cfg->video_meta = gst_buffer_pool_config_has_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    const bool want_align =
        gst_buffer_pool_config_has_option(config, GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
    gst_video_alignment_reset(&cfg->align);
    if (want_align) {
        if (!gst_buffer_pool_config_get_video_alignment(config, &cfg->align)) {
            GST_WARNING_OBJECT(pool, "VIDEO_ALIGNMENT option without an alignment; using none");
            gst_video_alignment_reset(&cfg->align);
            gst_buffer_pool_config_set_video_alignment(config, &cfg->align);
            corrected = true;
        }
        bool bad_mask = false;
        for (guint i = 0; i < GST_VIDEO_MAX_PLANES; ++i) {
            const guint m = mask_up(cfg->align.stride_align[i]);
            bad_mask = bad_mask || m != cfg->align.stride_align[i];
            cfg->align.stride_align[i] = m;
        }
        if (bad_mask) {
            GST_WARNING_OBJECT(pool, "stride_align masks must be 2^n - 1; rounded up");
            gst_buffer_pool_config_set_video_alignment(config, &cfg->align);
            corrected = true;
        }
    }
    // As in GstVideoBufferPool, alignment only means something to consumers of GstVideoMeta.
    cfg->alignment = want_align && cfg->video_meta;
    const size_t row_align =
        (kind == GST_EDGE_TENSOR_MEMORY_DMA || cfg->alignment) ? kRowAlignment : 1;

    auto layout = eg::layout_from_caps(caps, row_align, cfg->alignment ? &cfg->align : nullptr);
    if (!layout) {
        GST_WARNING_OBJECT(pool, "caps %" GST_PTR_FORMAT " refused: %s", caps,
                           layout.error().message().c_str());
        return FALSE;
    }
    cfg->layout = std::move(*layout);
    if (cfg->layout.stream->video && cfg->layout.differs_from_default && !cfg->video_meta) {
        GST_WARNING_OBJECT(pool, "64-byte-aligned DMA-BUF rows differ from GStreamer's default "
                                 "layout; only GstVideoMeta can describe them: adding the "
                                 "VIDEO_META option");
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
        corrected = true;
    }
    if (cfg->alignment) {
        // Write back what the pool really applies (GstVideoBufferPool does the same).
        GstVideoAlignment eff = cfg->align;
        for (guint i = 0; i < GST_VIDEO_MAX_PLANES; ++i)
            eff.stride_align[i] |= guint(kRowAlignment - 1);
        cfg->align = eff;
        gst_buffer_pool_config_set_video_alignment(config, &eff);
    }

    // Allocator
    GstAllocator* allocator = nullptr;
    GstAllocationParams params;
    gst_buffer_pool_config_get_allocator(config, &allocator, &params);
    eg::GstObjectPtr<GstAllocator> our_allocator;
    if (allocator && GST_IS_EDGE_TENSOR_ALLOCATOR(allocator)) {
        our_allocator.reset(GST_ALLOCATOR_CAST(gst_object_ref(allocator)));
    } else {
        our_allocator.reset(gst_edge_tensor_allocator_get());
        if (!our_allocator) {
            GST_ERROR_OBJECT(pool, "the edgetensor allocator is unavailable");
            return FALSE;
        }
        if (allocator) {
            GST_WARNING_OBJECT(pool, "allocator %s is not an edgetensor allocator; replaced",
                               GST_OBJECT_NAME(allocator));
            corrected = true;
        }
    }
    if (params.prefix || params.padding || params.align > 4095) {
        GST_WARNING_OBJECT(pool, "allocation prefix/padding are not supported and alignment is "
                                 "at most a page; corrected");
        params.prefix = 0;
        params.padding = 0;
        params.align = std::min<gsize>(params.align, 4095);
        corrected = true;
    }
    gst_buffer_pool_config_set_allocator(config, our_allocator.get(), &params);

    // Size and counts
    if (size < cfg->layout.size) {
        if (size != 0) {
            GST_WARNING_OBJECT(pool, "size %u is smaller than one frame (%zu bytes); corrected",
                               size, cfg->layout.size);
            corrected = true;
        }
        size = guint(cfg->layout.size);
    }
    if (max_buffers != 0 && max_buffers < min_buffers) {
        GST_WARNING_OBJECT(pool, "max-buffers %u is below min-buffers %u; corrected", max_buffers,
                           min_buffers);
        max_buffers = min_buffers;
        corrected = true;
    }
    gst_buffer_pool_config_set_params(config, caps, size, min_buffers, max_buffers);
    cfg->size = size;

    GST_DEBUG_OBJECT(pool,
                     "configured %" GST_PTR_FORMAT ": %s memory, %u bytes/frame, %u..%u buffers, "
                     "video meta %d, alignment %d",
                     caps, eg::memory_kind_name(kind), size, min_buffers, max_buffers,
                     cfg->video_meta, cfg->alignment);
    {
        std::lock_guard<std::mutex> lock(p->mu);
        p->config = std::move(cfg);
        std::swap(p->allocator, our_allocator);
    }
    {
        std::lock_guard<std::mutex> lock(p->shared->mu);
        ++p->shared->generation;
    }
    // The corrected config is applied too: GstBufferPool keeps the config it was given either
    // way and, once configured, treats re-setting an equal config as a no-op that never reaches
    // this function, so the pool's state must already match the corrected config.
    const gboolean ok = parent_pool_class()->set_config(pool, config);
    return corrected ? FALSE : ok;
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

static void gst_edge_tensor_buffer_pool_release_buffer(GstBufferPool* pool, GstBuffer* buffer)
{
    parent_pool_class()->release_buffer(pool, buffer);
    wake_waiters(pool);
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

namespace
{
// An enum field of a pool config, `fallback` when it is missing.
gint config_enum(GstStructure* config, const char* field, GType type, gint fallback)
{
    gint v = fallback;
    return gst_structure_get_enum(config, field, type, &v) ? v : fallback;
}
} // namespace

extern "C" void gst_edge_tensor_buffer_pool_config_set_memory_kind(GstStructure* config,
                                                                   GstEdgeTensorMemoryKind kind)
{
    g_return_if_fail(config != nullptr);
    gst_structure_set(config, kMemoryKindField, GST_TYPE_EDGE_TENSOR_MEMORY_KIND, kind, nullptr);
}

extern "C" GstEdgeTensorMemoryKind
gst_edge_tensor_buffer_pool_config_get_memory_kind(GstStructure* config)
{
    g_return_val_if_fail(config != nullptr, GST_EDGE_TENSOR_MEMORY_AUTO);
    return GstEdgeTensorMemoryKind(config_enum(
        config, kMemoryKindField, GST_TYPE_EDGE_TENSOR_MEMORY_KIND, GST_EDGE_TENSOR_MEMORY_AUTO));
}

extern "C" void gst_edge_tensor_buffer_pool_config_set_cpu_access(GstStructure* config,
                                                                  GstEdgeTensorCpuAccess access)
{
    g_return_if_fail(config != nullptr);
    gst_structure_set(config, kCpuAccessField, GST_TYPE_EDGE_TENSOR_CPU_ACCESS, access, nullptr);
}

extern "C" GstEdgeTensorCpuAccess
gst_edge_tensor_buffer_pool_config_get_cpu_access(GstStructure* config)
{
    g_return_val_if_fail(config != nullptr, GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE);
    return GstEdgeTensorCpuAccess(config_enum(config, kCpuAccessField,
                                              GST_TYPE_EDGE_TENSOR_CPU_ACCESS,
                                              GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE));
}

extern "C" GstEdgeTensorMemoryKind gst_edge_tensor_buffer_pool_get_memory_kind(GstBufferPool* pool)
{
    g_return_val_if_fail(GST_IS_EDGE_TENSOR_BUFFER_POOL(pool), GST_EDGE_TENSOR_MEMORY_AUTO);
    PoolPrivate* p = priv_of(pool);
    std::lock_guard<std::mutex> lock(p->mu);
    return p->config ? p->config->kind : GST_EDGE_TENSOR_MEMORY_AUTO;
}
