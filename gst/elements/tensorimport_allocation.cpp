// SPDX-License-Identifier: MIT
//
// tensorimport's proposals and pools (tensorimport_allocation.hpp).

#include "tensorimport_allocation.hpp"

#include "internal.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <vector>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_import_debug);
#define GST_CAT_DEFAULT gst_tensor_import_debug

namespace edgetensor::gst::tensorimport
{

namespace
{

constexpr guint PROPOSED_MIN_BUFFERS = 2;

gboolean propose_allocation_impl(GstBaseTransform* self, GstQuery* decide_query, GstQuery* query)
{
    // In place, BaseTransform makes no downstream query of its own: ask downstream for its
    // metas (and pool) first, then put our pool in front.
    if (!decide_query)
        gst_pad_peer_query(GST_BASE_TRANSFORM_SRC_PAD(self), query);

    GstCaps* caps = nullptr;
    gst_query_parse_allocation(query, &caps, nullptr);
    if (!caps)
        return TRUE;
    if (gst_structure_has_name(gst_caps_get_structure(caps, 0), kTensorsMediaType)) {
        // A pool's buffers come full: elements that append their output to the buffer they
        // are handed, or refuse a non-empty one (NNStreamer), break on them. Our allocator
        // alone keeps writers zero-copy and leaves those an empty buffer.
        propose_allocator_first(query);
        GST_DEBUG_OBJECT(self, "proposing the edgetensor allocator (no pool) for %" GST_PTR_FORMAT,
                         caps);
        return TRUE;
    }
    propose_pool(GST_ELEMENT(self), query, pool_policy(PROPOSED_MIN_BUFFERS), PoolProposal{});
    return TRUE;
}

} // namespace

// Bounded, DMA-BUF where the host has it, frames described by GstVideoMeta (writers map them
// with gst_video_frame_map()); memory:DMABuf caps get no GstVideoMeta, as they never did.
PoolPolicy pool_policy(guint min)
{
    PoolPolicy p;
    p.min_buffers = min;
    p.default_layout_unless_peer_reads_meta = false;
    p.video_meta_on_dmabuf_caps = false;
    return p;
}

gboolean propose_allocation(GstBaseTransform* self, GstQuery* decide_query, GstQuery* query)
{
    return guarded(self, "propose_allocation", TRUE,
                   [&] { return propose_allocation_impl(self, decide_query, query); });
}

void propose_allocator_first(GstQuery* query)
{
    struct Param {
        GstAllocator* allocator;
        GstAllocationParams params;
    };
    std::vector<Param> others;
    while (gst_query_get_n_allocation_params(query) > 0) {
        Param p{nullptr, {}};
        gst_query_parse_nth_allocation_param(query, 0, &p.allocator, &p.params);
        gst_query_remove_nth_allocation_param(query, 0);
        others.push_back(p);
    }
    GstAllocationParams params;
    gst_allocation_params_init(&params);
    if (GstAllocator* alloc = gst_edge_tensor_allocator_get()) {
        gst_query_add_allocation_param(query, alloc, &params);
        gst_object_unref(alloc);
    }
    for (Param& p : others) {
        if (p.allocator && GST_IS_EDGE_TENSOR_ALLOCATOR(p.allocator)) {
            gst_object_unref(p.allocator);
            continue;
        }
        gst_query_add_allocation_param(query, p.allocator, &p.params);
        if (p.allocator)
            gst_object_unref(p.allocator);
    }
}

} // namespace edgetensor::gst::tensorimport
