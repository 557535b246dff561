// SPDX-License-Identifier: MIT
//
// Pool negotiation (pool_negotiation.hpp).

#include "pool_negotiation.hpp"

#include "frame_layout.hpp"
#include "internal.hpp"
#include "stream_layout.hpp"

#include <gst/video/video.h>

#include <algorithm>

#define GST_CAT_DEFAULT gst_edge_tensor_pool_debug

namespace edgetensor::gst
{

namespace
{

// Video whose frames GstVideoMeta may describe under `policy` (none when the caps could not be
// read: not fixed, or no format the stream layout knows). DMA_DRM frames always are: their
// caps give no strides, the meta is where a reader finds them.
bool meta_described(const StreamLayout* stream, const PoolPolicy& policy)
{
    return stream && stream->video &&
           (policy.video_meta_on_dmabuf_caps || stream->memory == StreamMemory::Any ||
            stream->memory == StreamMemory::DmaDrm);
}

// DMA-BUF unless its 64-byte rows would differ from the default layout and nobody describes
// them with GstVideoMeta.
GstEdgeTensorMemoryKind memory_kind_for(GstElement* element, const StreamLayoutPtr& stream,
                                        const PoolPolicy& policy, bool video_meta)
{
    GstEdgeTensorMemoryKind kind = resolve_memory_kind(policy.memory);
    if (!video_meta && kind == GST_EDGE_TENSOR_MEMORY_DMA &&
        policy.default_layout_unless_peer_reads_meta && stream->video) {
        auto aligned = pooled_frame_layout(stream, GST_EDGE_TENSOR_ROW_ALIGNMENT, nullptr);
        if (aligned && aligned->differs_from_default) {
            GST_INFO_OBJECT(element,
                            "the peer cannot read GstVideoMeta and 64-byte DMA-BUF rows differ "
                            "from the default layout of %" GST_PTR_FORMAT
                            ": using shared memory in the default layout",
                            stream->caps.get());
            kind = GST_EDGE_TENSOR_MEMORY_SHM;
        }
    }
    return kind;
}

// The bounds of both sides: the larger minimum; the policy's maximum when it is the user's,
// else the peer's when it sets one, else the policy's (0: none). Never below the minimum.
void combine_bounds(const PoolPolicy& policy, guint* min, guint* max)
{
    *min = std::max(*min, policy.min_buffers);
    if (policy.max_overrides_peer && policy.max_buffers)
        *max = policy.max_buffers;
    else if (!*max)
        *max = policy.max_buffers;
    if (*max)
        *max = std::max(*max, *min);
}

// The pool refused `stream`'s caps: its layout's reason when there is one (the pool reads
// the caps the same way), else the caps named.
NegotiatedPool refused(const StreamLayoutPtr& stream)
{
    NegotiatedPool none;
    auto layout = pooled_frame_layout(stream, 1, nullptr);
    if (!layout) {
        none.why = layout.error().message();
    } else {
        GCharPtr caps(gst_caps_to_string(stream->caps.get()));
        none.why = std::string("the edgetensor pool refused ") + (caps ? caps.get() : "the caps");
    }
    return none;
}

} // namespace

NegotiatedPool configure_pool(GstElement* element, const StreamLayoutPtr& stream,
                              const PoolPolicy& policy, bool peer_reads_video_meta, guint min,
                              guint max, GstBufferPool* reuse, guint size)
{
    NegotiatedPool out;
    out.pool.reset(reuse ? GST_BUFFER_POOL(gst_object_ref(reuse))
                         : gst_edge_tensor_buffer_pool_new());
    // DMA_DRM caps state no strides: their frames carry GstVideoMeta whatever the peer says.
    const bool video_meta =
        meta_described(stream.get(), policy) &&
        (peer_reads_video_meta || !policy.default_layout_unless_peer_reads_meta ||
         stream->memory == StreamMemory::DmaDrm);
    const GstEdgeTensorMemoryKind kind = memory_kind_for(element, stream, policy, video_meta);

    GstStructure* config = gst_buffer_pool_get_config(out.pool.get());
    GstCaps* caps = stream->caps.get();
    // A reused pool (the peer's) is also accessed as its owner said: its tensors are declared
    // for both sides' CPU access (the writer's here, the reader's there), so neither side's
    // maps count as unplanned.
    const auto access = GstEdgeTensorCpuAccess(
        policy.access | (reuse ? gst_edge_tensor_buffer_pool_config_get_cpu_access(config)
                               : GST_EDGE_TENSOR_CPU_ACCESS_NONE));
    gst_buffer_pool_config_set_params(config, caps, size, min, max);
    gst_edge_tensor_buffer_pool_config_set_memory_kind(config, kind);
    gst_edge_tensor_buffer_pool_config_set_cpu_access(config, access);
    if (video_meta)
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    // A FALSE set_config wrote its corrections into the config: accept them once, as GStreamer
    // elements do, unless they changed what was asked for.
    if (!gst_buffer_pool_set_config(out.pool.get(), config)) {
        config = gst_buffer_pool_get_config(out.pool.get());
        if (!gst_buffer_pool_config_validate_params(config, caps, 0, min, max) ||
            !gst_buffer_pool_set_config(out.pool.get(), config)) {
            GST_WARNING_OBJECT(element, "the edgetensor pool refused %" GST_PTR_FORMAT, caps);
            return refused(stream);
        }
    }
    config = gst_buffer_pool_get_config(out.pool.get());
    gst_buffer_pool_config_get_params(config, nullptr, &out.size, &out.min, &out.max);
    gst_structure_free(config);
    // The pool sized one frame (or what was asked); trailing bytes go past the frame it sized.
    if (policy.trailing_bytes && size == 0) {
        const guint want = out.size + guint(policy.trailing_bytes);
        config = gst_buffer_pool_get_config(out.pool.get());
        gst_buffer_pool_config_set_params(config, caps, want, out.min, out.max);
        if (!gst_buffer_pool_set_config(out.pool.get(), config)) {
            GST_WARNING_OBJECT(element, "the edgetensor pool refused %u bytes per buffer", want);
            NegotiatedPool none;
            none.why = "the edgetensor pool refused " + std::to_string(want) + " bytes per buffer";
            return none;
        }
        out.size = want;
    }
    if (!out.max)
        GST_INFO_OBJECT(element, "pool %s is unbounded: %s", GST_OBJECT_NAME(out.pool.get()),
                        policy.unbounded_because ? policy.unbounded_because : "(no reason given)");
    return out;
}

NegotiatedPool make_pool(GstElement* element, const StreamLayoutPtr& stream,
                         const PoolPolicy& policy)
{
    return configure_pool(element, stream, policy, false, policy.min_buffers, policy.max_buffers);
}

NegotiatedPool decide_pool(GstElement* element, GstQuery* query, const PoolPolicy& policy,
                           const char* what)
{
    GstCaps* caps = nullptr;
    gst_query_parse_allocation(query, &caps, nullptr);
    if (!caps) {
        GST_ELEMENT_ERROR(element, CORE, NEGOTIATION, (nullptr), ("allocation query without caps"));
        return {};
    }
    GstObjectPtr<GstBufferPool> theirs;
    guint size = 0, min = 0, max = 0, their_size = 0;
    const bool have_pool = gst_query_get_n_allocation_pools(query) > 0;
    if (have_pool) {
        GstBufferPool* p = nullptr;
        gst_query_parse_nth_allocation_pool(query, 0, &p, &size, &min, &max);
        // Only an edgetensor pool's memory holds a tensor a GstEdgeTensorMeta can describe;
        // another pool's buffers would leave downstream without the descriptor.
        if (p && GST_IS_EDGE_TENSOR_BUFFER_POOL(p)) {
            GST_DEBUG_OBJECT(element, "using downstream's pool %s (%u bytes)", GST_OBJECT_NAME(p),
                             size);
            theirs.reset(p);
            their_size = size;
        } else if (p) {
            GST_DEBUG_OBJECT(element, "downstream offers %s, not an edgetensor pool: using ours",
                             GST_OBJECT_NAME(p));
            gst_object_unref(p);
        }
    }
    combine_bounds(policy, &min, &max);
    const bool peer_meta = gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
    auto stream = stream_layout_from_caps(caps);
    NegotiatedPool out;
    if (stream)
        out =
            configure_pool(element, *stream, policy, peer_meta, min, max, theirs.get(), their_size);
    if (!out) {
        const std::string why = stream ? out.why : stream.error().message();
        GST_ELEMENT_ERROR(element, RESOURCE, SETTINGS,
                          ("Cannot configure %s: %s.", what, why.c_str()),
                          ("%" GST_PTR_FORMAT " was refused", caps));
        return {};
    }
    GST_INFO_OBJECT(element, "%s %s: %s memory, %u bytes, %u..%u buffers", what,
                    GST_OBJECT_NAME(out.pool.get()),
                    memory_kind_name(gst_edge_tensor_buffer_pool_get_memory_kind(out.pool.get())),
                    out.size, out.min, out.max);
    if (have_pool)
        gst_query_set_nth_allocation_pool(query, 0, out.pool.get(), out.size, out.min, out.max);
    else
        gst_query_add_allocation_pool(query, out.pool.get(), out.size, out.min, out.max);
    return out;
}

void propose_pool(GstElement* element, GstQuery* query, const PoolPolicy& policy,
                  const PoolProposal& proposal)
{
    GstCaps* caps = nullptr;
    gboolean need_pool = FALSE;
    gst_query_parse_allocation(query, &caps, &need_pool);
    if (!caps)
        return;
    // Read once here; caps the stream layout cannot read get no pool (the pool would refuse
    // them).
    const auto stream = stream_layout_from_caps(caps);
    const bool described = meta_described(stream ? stream->get() : nullptr, policy);
    if ((proposal.video_meta_for_any_caps || described) &&
        !gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr))
        gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
    if ((proposal.only_when_asked && !need_pool) || !stream)
        return;

    const guint n = gst_query_get_n_allocation_pools(query);
    if (n > 0) {
        GstBufferPool* first = nullptr;
        gst_query_parse_nth_allocation_pool(query, 0, &first, nullptr, nullptr, nullptr);
        const bool ours = first && GST_IS_EDGE_TENSOR_BUFFER_POOL(first);
        if (first)
            gst_object_unref(first);
        if (ours)
            return; // downstream's edgetensor pool serves just as well
    }
    // The writer upstream has said nothing about GstVideoMeta: the policy decides whether the
    // pool relies on it.
    NegotiatedPool made = make_pool(element, *stream, policy);
    if (!made)
        return;
    if (n > 0)
        gst_query_set_nth_allocation_pool(query, 0, made.pool.get(), made.size, made.min, made.max);
    else
        gst_query_add_allocation_pool(query, made.pool.get(), made.size, made.min, made.max);
    if (proposal.with_allocator) {
        if (GstAllocator* alloc = gst_edge_tensor_allocator_get()) {
            GstAllocationParams params;
            gst_allocation_params_init(&params);
            gst_query_add_allocation_param(query, alloc, &params);
            gst_object_unref(alloc);
        }
    }
    GST_DEBUG_OBJECT(element, "proposing pool %s (%u bytes, %u..%u buffers) for %" GST_PTR_FORMAT,
                     GST_OBJECT_NAME(made.pool.get()), made.size, made.min, made.max, caps);
}

} // namespace edgetensor::gst
