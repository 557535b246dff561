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
#include "memory_identity.hpp"
#include "stream_layout.hpp"

#include <edgetensor/error.hpp>

#include <gst/gst.h>
#include <gst/video/video.h>

#include <list>
#include <memory>
#include <mutex>
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

/// The sender's memfds and DMA-BUFs as the receiver maps them: one fd (or dmabuf) memory per
/// file (st_dev, st_ino), mapped once and kept mapped, each frame's memory a read-only share of
/// it. A fresh fd memory per frame (what unixfdsrc hands out) is mmapped and munmapped by every
/// consumer that reads it, and its pages faulted in again: about 1 ms a 1080p frame on the
/// project's host, five times what the transport costs. A DMA-BUF share is still dmabuf memory
/// (its fd, its offset), and GStreamer's dmabuf allocator brackets every map of it with
/// DMA_BUF_IOCTL_SYNC, kept mapping or not. The files are the ones the import cache holds,
/// under the same bound (`cache-size`), least recently used dropped first; buffers in flight
/// keep theirs.
class MappedFiles final : public ipc::KeptFiles
{
public:
    /// A memory of `alloc` (the fd or the dmabuf allocator) for [offset, offset + size) of
    /// `fd` (a file of `maxsize` bytes), holding nothing of the frame yet; `fd` is adopted:
    /// kept as the file's memory the first time, closed when the file already has one.
    /// `file` is what the receiver's checks read of `fd` (asked here when they did not). Null,
    /// with `why`, when `fd` cannot be examined.
    GstMemory* share(GstAllocator* alloc, UniqueFd fd, const ipc::FdFile& file, gsize maxsize,
                     gsize offset, gsize size, guint bound, std::string* why);
    /// Drops every file's memory (the sender's caps changed, the element stopped).
    void clear();
    /// A memfd of this file is kept (its fd open in the memory): the receiver's checks of
    /// each frame's fds need not ask for its seals again. Any thread.
    bool kept(uint64_t dev, uint64_t ino) const noexcept override;

private:
    struct Entry {
        MemoryIdentity id;
        MiniObjectPtr<GstMemory> mem;
    };
    mutable std::mutex mu_;
    std::list<Entry> lru_; // front: the most recently used
};

/// A buffer of one memory per fd (DMA-BUF or fd memory, as each record's kind says, with its
/// window on the fd), each holding `release`; a GstVideoMeta from the plane layout; the
/// sender's timestamps and carried flags. The fds wrapped are adopted, each frame's memories
/// shares of `files`' kept ones. Empty, with `why`, when a memory cannot be made (the fds not
/// yet wrapped stay in `f`).
MiniObjectPtr<GstBuffer> assemble_buffer(ipc::Frame& f, const StreamLayout& stream,
                                         const std::shared_ptr<ipc::FrameRelease>& release,
                                         GstAllocator* dmabuf_alloc, GstAllocator* fd_alloc,
                                         MappedFiles& files, guint bound, std::string* why);

} // namespace edgetensor::gst::tensoripcsrc
