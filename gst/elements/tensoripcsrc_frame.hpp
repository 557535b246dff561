// SPDX-License-Identifier: MIT
//
// tensoripcsrc's reconstruction of a received FRAME: the sender's caps read as a stream layout
// (the one parse, shared with the import cache), the checks that need it (the wire parser
// cannot make them), and the GstBuffer rebuilt as the sender had it, its memories wrapping the
// received fds and releasing the frame when the last of them dies.

#pragma once

#include "glib_raii.hpp"
#include "internal.hpp"
#include "ipc_connection.hpp"
#include "ipc_wire.hpp"
#include "stream_layout.hpp"

#include <edgetensor/error.hpp>

#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>
#include <string>

namespace edgetensor::gst::tensoripcsrc
{

/// The sender's CAPS string (untrusted) as a stream layout (its caps, its frames): one fixed
/// structure, a subset of `produced` (what the element's pad produces), parseable video info
/// or one static tensor. Errors (InvalidArgument) say which, quoting the caps' first 200 bytes.
Result<StreamLayoutPtr> read_sender_caps(const std::string& text, GstCaps* produced);

/// Why the frame's layout does not fit its memories for `stream` (empty when it does).
std::string check_layout(const StreamLayout& stream, const ipc::Frame& f);

/// Makes `mem` hold `release` (as qdata): the frame is released to the sender once the last
/// memory holding it is gone.
void hold_release(GstMemory* mem, const std::shared_ptr<ipc::FrameRelease>& release);

/// A buffer of one memory per fd (DMA-BUF or fd memory, as each record's kind says, with its
/// window on the fd), each holding `release`; a GstVideoMeta from the plane layout; the
/// sender's timestamps and carried flags. The fds wrapped are adopted. Empty, with `why`, when
/// a memory cannot be made (the fds not yet wrapped stay in `f`).
MiniObjectPtr<GstBuffer> assemble_buffer(ipc::Frame& f, const StreamLayout& stream,
                                         const std::shared_ptr<ipc::FrameRelease>& release,
                                         GstAllocator* dmabuf_alloc, GstAllocator* fd_alloc,
                                         std::string* why);

} // namespace edgetensor::gst::tensoripcsrc
