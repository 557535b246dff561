// SPDX-License-Identifier: MIT
//
// A GstEdgeTensorBufferPool's config (pool_config.hpp), and the public accessors of the fields
// it adds to GstBufferPool's config (memory kind, CPU access).

#include "pool_config.hpp"

#include "internal.hpp"

#include <gst/video/gstvideopool.h>

#include <edgetensor/dma.hpp>

#include <algorithm>
#include <utility>

#define GST_CAT_DEFAULT gst_edge_tensor_pool_debug

namespace edgetensor::gst
{

namespace
{

constexpr const char* kMemoryKindField = "edgetensor-memory-kind";
constexpr const char* kCpuAccessField = "edgetensor-cpu-access";
constexpr size_t kRowAlignment = GST_EDGE_TENSOR_ROW_ALIGNMENT;

guint mask_up(guint mask)
{
    // A stride mask is 2^n - 1; round anything else up to the next such value.
    guint m = 0;
    while (m < mask)
        m = (m << 1) | 1u;
    return m;
}

// The memory kind asked for, resolved; DMA-BUF on a host without a provider becomes shared
// memory.
GstEdgeTensorMemoryKind read_kind(GstBufferPool* pool, GstStructure* config, bool* corrected)
{
    GstEdgeTensorMemoryKind kind =
        resolve_memory_kind(gst_edge_tensor_buffer_pool_config_get_memory_kind(config));
    if (kind == GST_EDGE_TENSOR_MEMORY_DMA && !is_dma_available()) {
        GST_WARNING_OBJECT(pool, "DMA-BUF memory was asked for but this host has no DMA-BUF "
                                 "provider; correcting the config to shared memory");
        kind = GST_EDGE_TENSOR_MEMORY_SHM;
        gst_edge_tensor_buffer_pool_config_set_memory_kind(config, kind);
        *corrected = true;
    }
    return kind;
}

// VIDEO_META and VIDEO_ALIGNMENT, with stride masks rounded up to 2^n - 1.
void read_options(GstBufferPool* pool, GstStructure* config, PoolConfig* cfg, bool* corrected)
{
    cfg->video_meta = gst_buffer_pool_config_has_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    const bool want_align =
        gst_buffer_pool_config_has_option(config, GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
    gst_video_alignment_reset(&cfg->align);
    if (want_align) {
        if (!gst_buffer_pool_config_get_video_alignment(config, &cfg->align)) {
            GST_WARNING_OBJECT(pool, "VIDEO_ALIGNMENT option without an alignment; using none");
            gst_video_alignment_reset(&cfg->align);
            gst_buffer_pool_config_set_video_alignment(config, &cfg->align);
            *corrected = true;
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
            *corrected = true;
        }
    }
    // As in GstVideoBufferPool, alignment only means something to consumers of GstVideoMeta.
    cfg->alignment = want_align && cfg->video_meta;
}

// The frame layout of `caps` under the row-stride rule; false (warned) when no pool holds them.
bool read_layout(GstBufferPool* pool, GstStructure* config, GstCaps* caps, PoolConfig* cfg,
                 bool* corrected)
{
    const size_t row_align =
        (cfg->kind == GST_EDGE_TENSOR_MEMORY_DMA || cfg->alignment) ? kRowAlignment : 1;
    auto stream = stream_layout_from_caps(caps);
    auto layout =
        stream ? pooled_frame_layout(*stream, row_align, cfg->alignment ? &cfg->align : nullptr)
               : unexpected(std::move(stream).error());
    if (!layout) {
        GST_WARNING_OBJECT(pool, "caps %" GST_PTR_FORMAT " refused: %s", caps,
                           layout.error().message().c_str());
        return false;
    }
    cfg->layout = std::move(*layout);
    if (cfg->layout.stream->video && cfg->layout.differs_from_default && !cfg->video_meta) {
        GST_WARNING_OBJECT(pool, "64-byte-aligned DMA-BUF rows differ from GStreamer's default "
                                 "layout; only GstVideoMeta can describe them: adding the "
                                 "VIDEO_META option");
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
        *corrected = true;
    }
    if (cfg->alignment) {
        // Write back what the pool really applies (GstVideoBufferPool does the same).
        GstVideoAlignment eff = cfg->align;
        for (guint i = 0; i < GST_VIDEO_MAX_PLANES; ++i)
            eff.stride_align[i] |= guint(kRowAlignment - 1);
        cfg->align = eff;
        gst_buffer_pool_config_set_video_alignment(config, &eff);
    }
    return true;
}

// An edgetensor allocator (the config's, else the shared one) without prefix or padding.
GstObjectPtr<GstAllocator> read_allocator(GstBufferPool* pool, GstStructure* config,
                                          bool* corrected)
{
    GstAllocator* allocator = nullptr;
    GstAllocationParams params;
    gst_buffer_pool_config_get_allocator(config, &allocator, &params);
    GstObjectPtr<GstAllocator> ours;
    if (allocator && GST_IS_EDGE_TENSOR_ALLOCATOR(allocator)) {
        ours.reset(GST_ALLOCATOR_CAST(gst_object_ref(allocator)));
    } else {
        ours.reset(gst_edge_tensor_allocator_get());
        if (!ours) {
            GST_ERROR_OBJECT(pool, "the edgetensor allocator is unavailable");
            return {};
        }
        if (allocator) {
            GST_WARNING_OBJECT(pool, "allocator %s is not an edgetensor allocator; replaced",
                               GST_OBJECT_NAME(allocator));
            *corrected = true;
        }
    }
    if (params.prefix || params.padding || params.align > 4095) {
        GST_WARNING_OBJECT(pool, "allocation prefix/padding are not supported and alignment is "
                                 "at most a page; corrected");
        params.prefix = 0;
        params.padding = 0;
        params.align = std::min<gsize>(params.align, 4095);
        *corrected = true;
    }
    gst_buffer_pool_config_set_allocator(config, ours.get(), &params);
    return ours;
}

// An enum field of a pool config, `fallback` when it is missing.
gint config_enum(GstStructure* config, const char* field, GType type, gint fallback)
{
    gint v = fallback;
    return gst_structure_get_enum(config, field, type, &v) ? v : fallback;
}

} // namespace

ReadConfig read_pool_config(GstBufferPool* pool, GstStructure* config)
{
    ReadConfig out;
    GstCaps* caps = nullptr;
    guint size = 0, min_buffers = 0, max_buffers = 0;
    if (!gst_buffer_pool_config_get_params(config, &caps, &size, &min_buffers, &max_buffers)) {
        GST_WARNING_OBJECT(pool, "invalid config: no size/min/max parameters");
        return out;
    }
    if (!caps) {
        GST_WARNING_OBJECT(pool, "invalid config: no caps");
        return out;
    }
    auto cfg = std::make_shared<PoolConfig>();
    cfg->kind = read_kind(pool, config, &out.corrected);
    cfg->access = CpuAccess(gst_edge_tensor_buffer_pool_config_get_cpu_access(config));
    read_options(pool, config, cfg.get(), &out.corrected);
    if (!read_layout(pool, config, caps, cfg.get(), &out.corrected))
        return out;
    out.allocator = read_allocator(pool, config, &out.corrected);
    if (!out.allocator)
        return out;

    if (size < cfg->layout.size) {
        if (size != 0) {
            GST_WARNING_OBJECT(pool, "size %u is smaller than one frame (%zu bytes); corrected",
                               size, cfg->layout.size);
            out.corrected = true;
        }
        size = guint(cfg->layout.size);
    }
    if (max_buffers != 0 && max_buffers < min_buffers) {
        GST_WARNING_OBJECT(pool, "max-buffers %u is below min-buffers %u; corrected", max_buffers,
                           min_buffers);
        max_buffers = min_buffers;
        out.corrected = true;
    }
    gst_buffer_pool_config_set_params(config, caps, size, min_buffers, max_buffers);
    cfg->size = size;
    out.min_buffers = min_buffers;
    out.max_buffers = max_buffers;
    out.config = std::move(cfg);
    return out;
}

} // namespace edgetensor::gst

extern "C" void gst_edge_tensor_buffer_pool_config_set_memory_kind(GstStructure* config,
                                                                   GstEdgeTensorMemoryKind kind)
{
    g_return_if_fail(config != nullptr);
    gst_structure_set(config, edgetensor::gst::kMemoryKindField, GST_TYPE_EDGE_TENSOR_MEMORY_KIND,
                      kind, nullptr);
}

extern "C" GstEdgeTensorMemoryKind
gst_edge_tensor_buffer_pool_config_get_memory_kind(GstStructure* config)
{
    g_return_val_if_fail(config != nullptr, GST_EDGE_TENSOR_MEMORY_AUTO);
    return GstEdgeTensorMemoryKind(edgetensor::gst::config_enum(
        config, edgetensor::gst::kMemoryKindField, GST_TYPE_EDGE_TENSOR_MEMORY_KIND,
        GST_EDGE_TENSOR_MEMORY_AUTO));
}

extern "C" void gst_edge_tensor_buffer_pool_config_set_cpu_access(GstStructure* config,
                                                                  GstEdgeTensorCpuAccess access)
{
    g_return_if_fail(config != nullptr);
    gst_structure_set(config, edgetensor::gst::kCpuAccessField, GST_TYPE_EDGE_TENSOR_CPU_ACCESS,
                      access, nullptr);
}

extern "C" GstEdgeTensorCpuAccess
gst_edge_tensor_buffer_pool_config_get_cpu_access(GstStructure* config)
{
    g_return_val_if_fail(config != nullptr, GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE);
    return GstEdgeTensorCpuAccess(edgetensor::gst::config_enum(
        config, edgetensor::gst::kCpuAccessField, GST_TYPE_EDGE_TENSOR_CPU_ACCESS,
        GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE));
}
