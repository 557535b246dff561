// SPDX-License-Identifier: MIT
//
// Pool negotiation for the elements: the one place that makes, decides and proposes
// edgetensor buffer pools. "Reuse downstream's edgetensor pool, else make one; shared memory in
// the default layout when 64-byte DMA-BUF rows differ from it and the other side reads no
// GstVideoMeta; accept the pool's corrections once." Each element states what it wants in a
// PoolPolicy. Element helpers, compiled into the plugin; not installed.
//
// Call sites: tensorconvert (decide_allocation, propose_allocation: tensorconvert_pool.cpp),
// tensortestsrc (decide_allocation), tensorimport (propose_allocation; its copy pool through
// copy_fallback), tensoripcsink (propose_allocation; its copy pool through copy_fallback).
// tensoripcsrc makes no pool. Caps are read here as stream layouts (stream_layout.hpp).

#pragma once

#include "glib_raii.hpp"
#include "stream_layout.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <string>

namespace edgetensor::gst
{

/// The max-buffers the elements give their pools when nobody asks for a bound: every pooled
/// buffer holds an fd, so an unbounded pool behind a deep queue runs the process out of fds.
inline constexpr guint kDefaultMaxBuffers = 32;

/// What an element wants of a pool it makes or configures.
struct PoolPolicy {
    guint min_buffers = 2;
    /// 0: no bound, and then `unbounded_because` says why (each buffer holds an fd).
    guint max_buffers = kDefaultMaxBuffers;
    const char* unbounded_because = nullptr;
    /// `max_buffers` is the user's (a property) and beats the peer's bound; otherwise a bound
    /// the peer sets beats ours.
    bool max_overrides_peer = false;
    GstEdgeTensorMemoryKind memory = GST_EDGE_TENSOR_MEMORY_AUTO;
    GstEdgeTensorCpuAccess access = GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE;
    /// The other side may not read GstVideoMeta: when 64-byte DMA-BUF rows would differ from
    /// GStreamer's default layout, use shared memory in the default layout (true); or describe
    /// the frames with GstVideoMeta all the same (false: writers that map frames through
    /// gst_video_frame_map() honour it).
    bool default_layout_unless_peer_reads_meta = true;
    /// GstVideoMeta for video/x-raw(memory:DMABuf) caps as for plain video/x-raw (false: such
    /// caps get neither the meta offered nor the pool's VIDEO_META option, as tensorimport has
    /// always done).
    bool video_meta_on_dmabuf_caps = true;
    /// Bytes every buffer holds past one frame: a reader that loads beyond a tensor's end
    /// (TensorFlow Lite's vector kernels, InferSession::input_rules()) reads it in place only
    /// when they are there. The pool's size is then one frame plus these.
    size_t trailing_bytes = 0;
};

/// A configured pool and what it was configured with.
struct NegotiatedPool {
    GstObjectPtr<GstBufferPool> pool;
    guint size = 0;
    guint min = 0;
    guint max = 0;
    /// Empty pool: why the caps were refused, for the element's error (the pool's own
    /// reason where it has one, e.g. "interlaced video is not supported").
    std::string why;
    explicit operator bool() const noexcept { return bool(pool); }
};

/// An inactive edgetensor pool for the stream `stream` (its caps) configured under `policy` with
/// `min`..`max` buffers (`reuse`, when not null, is configured instead of a new pool).
/// `peer_reads_video_meta`: the other side reads GstVideoMeta (see PoolPolicy). `size`: the
/// bytes per buffer asked for (0: one frame; the pool raises a smaller one to a frame), raised
/// to a frame plus the policy's trailing bytes. Corrections the pool asks for are accepted
/// once. Empty, with `why` said and a warning in `element`'s name, when the pool refuses
/// the caps.
NegotiatedPool configure_pool(GstElement* element, const StreamLayoutPtr& stream,
                              const PoolPolicy& policy, bool peer_reads_video_meta, guint min,
                              guint max, GstBufferPool* reuse = nullptr, guint size = 0);

/// configure_pool() with the policy's own bounds: the pool an element copies into.
NegotiatedPool make_pool(GstElement* element, const StreamLayoutPtr& stream,
                         const PoolPolicy& policy);

/// decide_allocation: downstream's first pool when it is an edgetensor pool (with the size
/// downstream asked for: a consumer that reads past a tensor's end asks for more than a frame),
/// else a new one, configured for the query's caps with the bounds of both sides, put first in
/// `query`.
/// Posts the element error (`what`: "the output buffer pool") and returns empty when the
/// query has no caps or the pool refuses them. The pool is left inactive.
NegotiatedPool decide_pool(GstElement* element, GstQuery* query, const PoolPolicy& policy,
                           const char* what);

/// What an element offers upstream besides the pool.
struct PoolProposal {
    /// GstVideoMeta whatever the caps (the element reads every frame with
    /// gst_video_frame_map()); otherwise for video caps only.
    bool video_meta_for_any_caps = false;
    /// A pool only when the query asks for one (need_pool).
    bool only_when_asked = false;
    /// The edgetensor allocator too, so writers that take no pool allocate tensors.
    bool with_allocator = true;
};

/// propose_allocation: GstVideoMeta, then (unless downstream's edgetensor pool is first in
/// `query` already) a new pool for the query's caps under `policy`, first in the query, and
/// the allocator. Never fails: a query without fixed caps, or caps the pool refuses, gets no
/// pool.
void propose_pool(GstElement* element, GstQuery* query, const PoolPolicy& policy,
                  const PoolProposal& proposal);

} // namespace edgetensor::gst
