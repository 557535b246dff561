// SPDX-License-Identifier: MIT
//
// A GstEdgeTensorBufferPool's config, read: what it asks for (memory kind, CPU access, the
// VIDEO_META and VIDEO_ALIGNMENT options, the allocator, size and counts), the frame layout its
// caps give under the row-stride rule, and the corrections written back into the config where
// it asked for something the pool cannot do (GstBufferPool's set_config contract: the caller
// may accept them and set the config again). The pool file keeps the pool's state and
// vfuncs. Not installed.

#pragma once

#include "frame_layout.hpp"
#include "glib_raii.hpp"

#include <gst/edgetensor/gstedgetensorbufferpool.h>
#include <gst/video/video.h>

#include <edgetensor/types.hpp>

#include <memory>

namespace edgetensor::gst
{

/// What one configuration of a pool hands out.
struct PoolConfig {
    FrameLayout layout;
    GstEdgeTensorMemoryKind kind = GST_EDGE_TENSOR_MEMORY_AUTO; ///< resolved: never AUTO
    CpuAccess access = CpuAccess::ReadWrite;
    bool video_meta = false; ///< buffers carry GstVideoMeta
    bool alignment = false;  ///< VIDEO_ALIGNMENT applies (only with video_meta)
    GstVideoAlignment align{};
    guint size = 0; ///< bytes of one buffer
};

/// A config, read.
struct ReadConfig {
    std::shared_ptr<const PoolConfig> config; ///< null: refused (a warning on the pool says why)
    GstObjectPtr<GstAllocator> allocator;     ///< an edgetensor allocator
    guint min_buffers = 0;
    guint max_buffers = 0;
    bool corrected = false; ///< `config` was rewritten: the caller's set_config returns FALSE
};

/// Reads `config` (writable) for `pool`: refuses one without caps or parameters, or whose caps
/// no pool can hold; corrects (writing back) a DMA-BUF kind on a host without a provider,
/// alignment masks that are not 2^n - 1, a missing VIDEO_META where 64-byte rows differ from
/// the default layout, a foreign allocator, allocation prefix/padding, a size below one frame
/// and max-buffers below min-buffers.
ReadConfig read_pool_config(GstBufferPool* pool, GstStructure* config);

} // namespace edgetensor::gst
