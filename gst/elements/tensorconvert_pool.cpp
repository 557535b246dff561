// SPDX-License-Identifier: MIT
//
// tensorconvert's buffer pools (tensorconvert_pool.hpp).

#include "tensorconvert_pool.hpp"

#include "glib_raii.hpp"
#include "internal.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/video/video.h>

#include <algorithm>
#include <exception>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

namespace edgetensor::gst::tensorconvert
{

namespace
{

constexpr guint DEFAULT_MIN_BUFFERS = 2;

// Picks the memory kind for a pool of `caps`: DMA-BUF unless its 64-byte rows would differ
// from the default layout and the other side cannot read GstVideoMeta.
GstEdgeTensorMemoryKind pool_memory_kind(GstBaseTransform* self, GstCaps* caps, bool video_meta)
{
    GstEdgeTensorMemoryKind kind = resolve_memory_kind(GST_EDGE_TENSOR_MEMORY_AUTO);
    const bool video = gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw");
    if (video && !video_meta && kind == GST_EDGE_TENSOR_MEMORY_DMA) {
        auto aligned = layout_from_caps(caps, GST_EDGE_TENSOR_ROW_ALIGNMENT, nullptr);
        if (aligned && aligned->differs_from_default) {
            GST_INFO_OBJECT(self,
                            "the peer cannot read GstVideoMeta and 64-byte DMA-BUF rows differ "
                            "from the default layout of %" GST_PTR_FORMAT
                            ": using shared memory in the default layout",
                            caps);
            kind = GST_EDGE_TENSOR_MEMORY_SHM;
        }
    }
    return kind;
}

// Configures `pool` for `caps`; accepts the pool's corrections once, as GStreamer elements do.
bool configure_pool(GstBufferPool* pool, GstCaps* caps, guint min, guint max,
                    GstEdgeTensorMemoryKind kind, GstEdgeTensorCpuAccess access, bool video_meta,
                    guint* size)
{
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, 0, min, max);
    gst_edge_tensor_buffer_pool_config_set_memory_kind(config, kind);
    gst_edge_tensor_buffer_pool_config_set_cpu_access(config, access);
    if (video_meta)
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool, config)) {
        config = gst_buffer_pool_get_config(pool);
        if (!gst_buffer_pool_config_validate_params(config, caps, 0, min, max) ||
            !gst_buffer_pool_set_config(pool, config))
            return false;
    }
    config = gst_buffer_pool_get_config(pool);
    guint sz = 0;
    gst_buffer_pool_config_get_params(config, nullptr, &sz, nullptr, nullptr);
    gst_structure_free(config);
    if (size)
        *size = sz;
    return true;
}

gboolean decide_allocation_impl(GstBaseTransform* self, GstQuery* query)
{
    GstCaps* caps = nullptr;
    gst_query_parse_allocation(query, &caps, nullptr);
    if (!caps) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("allocation query without caps"));
        return FALSE;
    }

    GstObjectPtr<GstBufferPool> pool;
    guint size = 0, min = 0, max = 0;
    const bool have_pool = gst_query_get_n_allocation_pools(query) > 0;
    if (have_pool) {
        GstBufferPool* p = nullptr;
        gst_query_parse_nth_allocation_pool(query, 0, &p, &size, &min, &max);
        // Only an edgetensor pool's memory holds a tensor a GstEdgeTensorMeta can describe;
        // another pool's buffers would leave downstream without the descriptor.
        if (p && GST_IS_EDGE_TENSOR_BUFFER_POOL(p)) {
            GST_DEBUG_OBJECT(self, "using downstream's pool %s", GST_OBJECT_NAME(p));
            pool.reset(p);
        } else if (p) {
            GST_DEBUG_OBJECT(self, "downstream offers %s, not an edgetensor pool: using ours",
                             GST_OBJECT_NAME(p));
            gst_object_unref(p);
        }
    }
    if (!pool)
        pool.reset(gst_edge_tensor_buffer_pool_new());
    min = std::max(min, DEFAULT_MIN_BUFFERS);
    // Bounded even when downstream sets no bound: each buffer holds an fd (see internal.hpp).
    max = std::max(max ? max : kDefaultMaxBuffers, min);

    const bool video = gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw");
    const bool downstream_meta =
        gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
    const GstEdgeTensorMemoryKind kind = pool_memory_kind(self, caps, downstream_meta);
    if (!configure_pool(pool.get(), caps, min, max, kind, GST_EDGE_TENSOR_CPU_ACCESS_WRITE,
                        video && downstream_meta, &size)) {
        GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Cannot configure the output buffer pool."),
                          ("%" GST_PTR_FORMAT " was refused", caps));
        return FALSE;
    }
    GST_INFO_OBJECT(
        self, "output pool %s: %s memory, %u bytes, %u..%u buffers", GST_OBJECT_NAME(pool.get()),
        memory_kind_name(gst_edge_tensor_buffer_pool_get_memory_kind(pool.get())), size, min, max);
    if (have_pool)
        gst_query_set_nth_allocation_pool(query, 0, pool.get(), size, min, max);
    else
        gst_query_add_allocation_pool(query, pool.get(), size, min, max);
    return TRUE;
}

} // namespace

gboolean decide_allocation(GstBaseTransform* self, GstQuery* query)
{
    try {
        return decide_allocation_impl(self, query);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Cannot set up output buffers."),
                          ("%s", e.what()));
    }
    return FALSE;
}

gboolean propose_allocation(GstBaseTransform* self, GstQuery* decide_query, GstQuery* query)
{
    (void)decide_query;
    try {
        // Frames are read through gst_video_frame_map(), which honours GstVideoMeta.
        gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);

        GstCaps* caps = nullptr;
        gboolean need_pool = FALSE;
        gst_query_parse_allocation(query, &caps, &need_pool);
        if (!need_pool || !caps || !gst_caps_is_fixed(caps))
            return TRUE;
        // Offer upstream our (DMA-BUF where possible) pool so it writes straight into tensors.
        // Upstream has not said whether it reads GstVideoMeta, so keep the default layout
        // unless the DMA-BUF layout equals it.
        GstObjectPtr<GstBufferPool> pool(gst_edge_tensor_buffer_pool_new());
        const GstEdgeTensorMemoryKind kind = pool_memory_kind(self, caps, false);
        guint size = 0;
        if (!configure_pool(pool.get(), caps, DEFAULT_MIN_BUFFERS, kDefaultMaxBuffers, kind,
                            GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE, false, &size)) {
            GST_DEBUG_OBJECT(self, "not proposing a pool for %" GST_PTR_FORMAT, caps);
            return TRUE;
        }
        gst_query_add_allocation_pool(query, pool.get(), size, DEFAULT_MIN_BUFFERS,
                                      kDefaultMaxBuffers);
        return TRUE;
    } catch (const std::exception& e) {
        GST_ERROR_OBJECT(self, "propose_allocation failed: %s", e.what());
    }
    return TRUE;
}

} // namespace edgetensor::gst::tensorconvert
