// SPDX-License-Identifier: MIT
//
// tensoripcsink's pools (tensoripcsink_allocation.hpp).

#include "tensoripcsink_allocation.hpp"

#include "vfunc_guard.hpp"

namespace edgetensor::gst::tensoripcsink
{

namespace
{

constexpr guint COPY_POOL_MIN_BUFFERS = 2;
constexpr guint PROPOSED_MIN_BUFFERS = 2;

} // namespace

// The pools tensoripcsink makes (the one it proposes upstream and the one it copies into):
// frames described by GstVideoMeta (writers map them with gst_video_frame_map()).
PoolPolicy pool_policy(guint min)
{
    PoolPolicy p;
    p.min_buffers = min;
    p.max_buffers = 0;
    p.unbounded_because = "tensoripcsink holds buffers for its receivers: max-held-bytes, "
                          "max-clients and max-pending bound them";
    p.default_layout_unless_peer_reads_meta = false;
    return p;
}

// Memory without an fd is copied into a pool of ours (copy-mode=auto) or refused (never).
CopyPolicy copy_policy()
{
    CopyPolicy p;
    p.action = "pass";
    p.acting = "passing";
    p.done = "passed";
    p.offer = "the edgetensor pool tensoripcsink proposes";
    p.pool = pool_policy(COPY_POOL_MIN_BUFFERS);
    return p;
}

gboolean propose_allocation(GstBaseSink* sink, GstQuery* query)
{
    guarded(sink, "propose_allocation",
            [&] { propose_pool(GST_ELEMENT(sink), query, pool_policy(PROPOSED_MIN_BUFFERS), {}); });
    return TRUE;
}

} // namespace edgetensor::gst::tensoripcsink
