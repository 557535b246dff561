// SPDX-License-Identifier: MIT
//
// tensorconvert's buffer pools (tensorconvert_pool.hpp): what it asks of the pool negotiation
// module (gst/libs/pool_negotiation.hpp).

#include "tensorconvert_pool.hpp"

#include "glib_raii.hpp"
#include "internal.hpp"
#include "pool_negotiation.hpp"
#include "vfunc_guard.hpp"

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

namespace edgetensor::gst::tensorconvert
{

namespace
{

// Bounded even when downstream sets no bound: each buffer holds an fd. The output is written
// by the CPU (or GL) engine; the pool proposed upstream is written by the producer and read
// here. Neither side is known to read GstVideoMeta unless it says so: frames whose 64-byte
// DMA-BUF rows differ from the default layout go to shared memory in the default layout.
PoolPolicy output_policy()
{
    PoolPolicy p;
    p.access = GST_EDGE_TENSOR_CPU_ACCESS_WRITE;
    return p;
}

PoolPolicy input_policy()
{
    return PoolPolicy{};
}

} // namespace

gboolean decide_allocation(GstBaseTransform* self, GstQuery* query)
{
    return guarded(self, "decide_allocation", FALSE, [&]() -> gboolean {
        return decide_pool(GST_ELEMENT(self), query, output_policy(), "the output buffer pool")
                   ? TRUE
                   : FALSE;
    });
}

gboolean propose_allocation(GstBaseTransform* self, GstQuery* decide_query, GstQuery* query)
{
    (void)decide_query;
    // Frames are read through gst_video_frame_map(), which honours GstVideoMeta.
    PoolProposal proposal;
    proposal.video_meta_for_any_caps = true;
    proposal.only_when_asked = true;
    proposal.with_allocator = false;
    guarded(self, "propose_allocation",
            [&] { propose_pool(GST_ELEMENT(self), query, input_policy(), proposal); });
    return TRUE;
}

} // namespace edgetensor::gst::tensorconvert
