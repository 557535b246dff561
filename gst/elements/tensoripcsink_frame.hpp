// SPDX-License-Identifier: MIT
//
// tensoripcsink's view of one buffer: whether its memories can be passed as they are, and the
// FRAME head and per-memory records that describe it on the wire. (Memory without an fd is
// copied by the copy fallback, gst/libs/copy_fallback.hpp.)

#pragma once

#include "copy_fallback.hpp"
#include "ipc_wire.hpp"
#include "stream_layout.hpp"

#include <edgetensor/error.hpp>

#include <gst/base/gstbasesink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>

namespace edgetensor::gst::tensoripcsink
{

/// Why `buf` cannot be sent as it is: what arrived and the reason (an empty `why` when it can).
Unusable unsendable(GstBuffer* buf);

/// The record for one fd memory: the tensor behind it, or the memory's bytes as a flat u8.
Result<ipc::MemoryRecord> describe_memory(GstMemory* mem, guint index);

/// Timestamps, carried flags and plane layout of `buf` (its GstVideoMeta, else the layout's;
/// none for other/tensors or before caps, `layout` null); seq and caps_seq are the server's to
/// set.
ipc::FrameHead frame_head(GstBuffer* buf, const StreamLayout* layout);

/// When `buf` is due at `sink` (its running time + base time + the sink's latency) on
/// CLOCK_MONOTONIC, the FRAME's capture time; NONE without a PTS, a TIME segment or a clock.
GstClockTime capture_time(GstBaseSink* sink, GstBuffer* buf);

} // namespace edgetensor::gst::tensoripcsink
