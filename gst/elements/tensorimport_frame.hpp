// SPDX-License-Identifier: MIT
//
// tensorimport's steps for one buffer, in the order prepare_output_buffer takes them: check it
// against the caps, locate the tensor in its memories, attach the meta of the cached tensor.
// What cannot be attached goes to the copy fallback (gst/libs/copy_fallback.hpp) with the
// Unusable these steps describe.

#pragma once

#include "copy_fallback.hpp"
#include "stream_layout.hpp"
#include "tensor_memories.hpp"

#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/gst.h>

#include <string>

namespace edgetensor::gst::tensorimport
{

/// Check: true when `inbuf` is what the caps say: a video frame whose every plane lies inside
/// its memory, or a tensor of exactly the caps' size in one memory (never padded, never cut).
/// Several memories are sized up by locate(). True before caps (`layout` null): the import
/// and the copy say so.
bool matches_caps(const StreamLayout* layout, GstBuffer* inbuf, std::string* why);

/// Locate: which memories of `inbuf` hold its tensor, and what arrived, for messages.
struct Located {
    TensorMemories where; ///< Single for video and single-memory buffers
    size_t tensor_bytes = 0;
    std::string sent; ///< `memory of type "SystemMemory"`, or the memory layout
    bool usable() const noexcept { return where.layout != TensorMemories::Layout::Unusable; }
};
Located locate(const StreamLayout* layout, GstBuffer* inbuf);

/// Attach: the buffer that leaves (`inbuf` when writable, else a copy sharing its memory, with
/// the tensor made its one memory) carrying the GstEdgeTensorMeta of the cached tensor.
struct Attached {
    GstBuffer* buffer = nullptr; ///< null when not attached (a copy made meanwhile is dropped)
    GstEdgeTensorImportResult result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    guint64 identity = 0;
    Unusable unusable; ///< why not, for the copy fallback
};
Attached attach(GstEdgeTensorImportCache* cache, GstBuffer* inbuf, const Located& located);

} // namespace edgetensor::gst::tensorimport
