// SPDX-License-Identifier: MIT
//
// tensoripcsink's view of one buffer: whether its memories can be passed as they are, the
// FRAME head and per-memory records that describe it on the wire, and, for memory without an
// fd, the pooled copy that can be passed instead.

#pragma once

#include "glib_raii.hpp"
#include "ipc_wire.hpp"

#include <edgetensor/error.hpp>

#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>

namespace edgetensor::gst::tensoripcsink
{

/// Why `buf` cannot be sent as it is (empty when it can).
std::string unsendable(GstBuffer* buf);

/// The record for one fd memory: the tensor behind it, or the memory's bytes as a flat u8.
Result<ipc::MemoryRecord> describe_memory(GstMemory* mem, guint index);

/// Timestamps, carried flags and plane layout of `buf` (its GstVideoMeta, else `vinfo`'s);
/// seq and caps_seq are the server's to set.
ipc::FrameHead frame_head(GstBuffer* buf, bool video, const GstVideoInfo& vinfo);

/// Copies the frame in `src` into `dst` (a pooled buffer for the same caps).
/// False when either cannot be mapped or `dst` is too small.
bool copy_frame(GstBuffer* dst, GstBuffer* src, bool video, const GstVideoInfo& vinfo);

} // namespace edgetensor::gst::tensoripcsink
