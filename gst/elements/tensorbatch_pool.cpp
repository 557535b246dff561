// SPDX-License-Identifier: MIT
//
// tensorbatch's buffer pools (tensorbatch_pool.hpp): what it asks of gst/libs/pool_negotiation.

#include "tensorbatch_pool.hpp"

#include "glib_raii.hpp"
#include "pool_acquire.hpp"
#include "pool_negotiation.hpp"
#include "vfunc_guard.hpp"

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_batch_debug);
#define GST_CAT_DEFAULT gst_tensor_batch_debug

namespace edgetensor::gst::tensorbatch
{

namespace
{

// The batch is written by the CPU engine, slot by slot. Bounded: every buffer holds an fd.
PoolPolicy batch_policy()
{
    PoolPolicy p;
    p.access = GST_EDGE_TENSOR_CPU_ACCESS_WRITE;
    return p;
}

} // namespace

gboolean decide_allocation(GstAggregator* self, GstQuery* query)
{
    return guarded(self, "decide_allocation", FALSE, [&]() -> gboolean {
        return decide_pool(GST_ELEMENT(self), query, batch_policy(), "the batch buffer pool")
                   ? TRUE
                   : FALSE;
    });
}

gboolean propose_allocation(GstAggregator* self, GstAggregatorPad* pad, GstQuery* decide_query,
                            GstQuery* query)
{
    (void)pad;
    (void)decide_query;
    // Frames are read through gst_video_frame_map(), which honours GstVideoMeta.
    PoolProposal proposal;
    proposal.video_meta_for_any_caps = true;
    proposal.only_when_asked = true;
    proposal.with_allocator = false;
    guarded(self, "propose_allocation",
            [&] { propose_pool(GST_ELEMENT(self), query, PoolPolicy{}, proposal); });
    return TRUE;
}

GstFlowReturn acquire_batch(GstAggregator* self, GstBuffer** out)
{
    GstObjectPtr<GstBufferPool> pool(gst_aggregator_get_buffer_pool(self));
    if (!pool) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("tensorbatch has no batch buffer pool."),
                          ("the output was not negotiated"));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    if (!activate_pool(GST_ELEMENT(self), pool.get(), "the batch buffers"))
        return GST_FLOW_ERROR;
    const GstFlowReturn ret = gst_buffer_pool_acquire_buffer(pool.get(), out, nullptr);
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING)
        post_acquire_error(GST_ELEMENT(self), pool.get(), ret, "a batch buffer");
    return ret;
}

} // namespace edgetensor::gst::tensorbatch
