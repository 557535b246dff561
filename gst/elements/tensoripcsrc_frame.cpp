// SPDX-License-Identifier: MIT
//
// tensoripcsrc's received frames and the caps they follow (tensoripcsrc_frame.hpp).

#include "tensoripcsrc_frame.hpp"

#include "tensoripc_common.hpp"

#include <gst/allocators/allocators.h>

#include <algorithm>

namespace edgetensor::gst::tensoripcsrc
{

namespace
{

using FrameReleasePtr = std::shared_ptr<ipc::FrameRelease>;

GQuark release_quark()
{
    static GQuark q = g_quark_from_static_string("GstTensorIpcSrc.release");
    return q;
}

void free_release(gpointer p)
{
    delete static_cast<FrameReleasePtr*>(p);
}

Unexpected refuse(std::string why)
{
    return make_error(ErrorCode::InvalidArgument, std::move(why));
}

} // namespace

void hold_release(GstMemory* mem, const std::shared_ptr<ipc::FrameRelease>& release)
{
    gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), release_quark(),
                              new FrameReleasePtr(release), free_release);
}

Result<StreamLayoutPtr> read_sender_caps(const std::string& text, GstCaps* produced)
{
    // Appended piecewise: `"\"" + std::string` makes GCC 12 at -O3 report a -Wrestrict
    // overlap that cannot happen (GCC bug 105329).
    std::string quoted = "\"";
    quoted.append(text, 0, 200);
    quoted += '"';
    MiniObjectPtr<GstCaps> caps(gst_caps_from_string(text.c_str()));
    if (!caps || gst_caps_get_size(caps.get()) != 1 || !gst_caps_is_fixed(caps.get()))
        return refuse("CAPS " + quoted + " are not fixed caps");
    if (!gst_caps_is_subset(caps.get(), produced))
        return refuse("CAPS " + quoted + " are not caps this element produces");
    auto layout = stream_layout_from_caps(caps.get());
    if (layout)
        return layout;
    if (gst_structure_has_name(gst_caps_get_structure(caps.get(), 0), "video/x-raw"))
        return refuse("cannot parse video CAPS " + quoted);
    return refuse("CAPS: " + layout.error().message());
}

std::string check_layout(const StreamLayout& s, const ipc::Frame& f)
{
    const guint64 total = f.total_size();
    if (!s.video) {
        const guint64 bytes = s.frame_bytes;
        if (total < bytes)
            return "the frame has " + std::to_string(total) + " bytes, the caps need " +
                   std::to_string(bytes);
        return {};
    }
    const GstVideoInfo& vi = s.vinfo;
    const guint n = GST_VIDEO_INFO_N_PLANES(&vi);
    if (f.head.n_planes == 0) {
        if (total < GST_VIDEO_INFO_SIZE(&vi))
            return "the frame has " + std::to_string(total) + " bytes, the caps need " +
                   std::to_string(GST_VIDEO_INFO_SIZE(&vi));
        return {};
    }
    if (f.head.n_planes != n)
        return "the frame has " + std::to_string(f.head.n_planes) + " planes, " +
               gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&vi)) + " has " + std::to_string(n);
    for (guint p = 0; p < n; ++p) {
        gint comp[GST_VIDEO_MAX_COMPONENTS];
        gst_video_format_info_component(vi.finfo, p, comp);
        const gint c = comp[0] >= 0 ? comp[0] : 0;
        const guint64 row = guint64(GST_VIDEO_INFO_COMP_PSTRIDE(&vi, c)) *
                            guint64(GST_VIDEO_INFO_COMP_WIDTH(&vi, c));
        const guint64 rows = guint64(GST_VIDEO_INFO_COMP_HEIGHT(&vi, c));
        const guint64 stride = guint64(f.head.plane_stride[p]);
        if (stride < row)
            return "plane " + std::to_string(p) + " stride " + std::to_string(stride) +
                   " is shorter than its " + std::to_string(row) + "-byte rows";
        const guint64 end = f.head.plane_offset[p] + stride * (rows - 1) + row;
        if (end > total)
            return "plane " + std::to_string(p) + " ends at byte " + std::to_string(end) +
                   ", beyond the frame's " + std::to_string(total) + " bytes";
    }
    return {};
}

GstMemory* MappedFiles::share(GstAllocator* alloc, UniqueFd fd, const ipc::FdFile& file,
                              gsize maxsize, gsize offset, gsize size, guint bound,
                              std::string* why)
{
    MemoryIdentity id{file.dev, file.ino};
    if (!file.known) {
        auto asked = fd_file_identity(fd.get());
        if (!asked) {
            *why = asked.error().message();
            return nullptr;
        }
        id = *asked;
    }
    MiniObjectPtr<GstMemory> parent;
    std::list<Entry> dropped; // freed after the lock: a memory's free munmaps and closes
    {
        std::lock_guard<std::mutex> lock(mu_);
        // The allocator is part of the key: a file the sender once described as a memfd and
        // now as a DMA-BUF (a confused or hostile sender) gets the memory its record says.
        auto it = std::find_if(lru_.begin(), lru_.end(), [&](const Entry& e) {
            return e.id == id && e.mem->allocator == alloc;
        });
        // A file that grew since it was kept (a sender may resize a memfd it reuses) is
        // mapped again at its new size.
        if (it != lru_.end() && it->mem->maxsize >= maxsize) {
            lru_.splice(lru_.begin(), lru_, it);
        } else {
            if (it != lru_.end())
                dropped.splice(dropped.end(), lru_, it);
            // A dmabuf allocator is an fd allocator: its memories (and their shares) map
            // through the fd allocator and add DMA_BUF_IOCTL_SYNC around every map.
            GstMemory* m =
                gst_fd_allocator_alloc(alloc, fd.get(), maxsize, GST_FD_MEMORY_FLAG_KEEP_MAPPED);
            if (!m) {
                *why = "gst_fd_allocator_alloc failed";
                return nullptr;
            }
            (void)fd.release(); // the memory owns it now
            // The import cache downstream keys this file's shares by it: told here, it need
            // not fstat() them again.
            remember_memory_identity(m, id);
            lru_.push_front(Entry{id, MiniObjectPtr<GstMemory>(m)});
            while (lru_.size() > std::max<guint>(bound, 1))
                dropped.splice(dropped.end(), lru_, std::prev(lru_.end()));
        }
        parent.reset(gst_memory_ref(lru_.front().mem.get()));
    }
    // Read-only, like every share: the pages are the sender's, and a consumer that writes
    // gets a copy from GStreamer instead of writing into the sender's pool.
    GstMemory* mem = gst_memory_share(parent.get(), gssize(offset), gssize(size));
    if (!mem)
        *why = "the memory cannot be shared";
    return mem;
}

bool MappedFiles::kept(uint64_t dev, uint64_t ino) const noexcept
{
    const MemoryIdentity id{dev, ino};
    std::lock_guard<std::mutex> lock(mu_);
    // Memfds only: a DMA-BUF's checks are not a memfd's.
    return std::any_of(lru_.begin(), lru_.end(), [&](const Entry& e) {
        return e.id == id && !gst_is_dmabuf_memory(e.mem.get());
    });
}

void MappedFiles::clear()
{
    std::list<Entry> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(lru_);
}

MiniObjectPtr<GstBuffer> assemble_buffer(ipc::Frame& f, const StreamLayout& stream,
                                         const std::shared_ptr<ipc::FrameRelease>& release,
                                         GstAllocator* dmabuf_alloc, GstAllocator* fd_alloc,
                                         MappedFiles& files, guint bound, std::string* why)
{
    MiniObjectPtr<GstBuffer> buf(gst_buffer_new());
    for (guint32 i = 0; i < f.head.n_memories; ++i) {
        const ipc::MemoryRecord& r = f.memories[i];
        const bool dma = r.desc.kind == EDGETENSOR_KIND_DMABUF;
        std::string because;
        GstMemory* mem = files.share(dma ? dmabuf_alloc : fd_alloc, std::move(f.fds[i]), f.files[i],
                                     r.maxsize, r.offset, r.size, bound, &because);
        if (!mem) {
            *why = "cannot wrap memory " + std::to_string(i) + " of FRAME " +
                   std::to_string(f.head.seq) + (because.empty() ? "" : ": " + because);
            return {};
        }
        hold_release(mem, release);
        gst_buffer_append_memory(buf.get(), mem);
    }
    if (stream.video && f.head.n_planes > 0) {
        gsize offsets[GST_VIDEO_MAX_PLANES] = {};
        gint strides[GST_VIDEO_MAX_PLANES] = {};
        for (guint p = 0; p < f.head.n_planes; ++p) {
            offsets[p] = gsize(f.head.plane_offset[p]);
            strides[p] = f.head.plane_stride[p];
        }
        gst_buffer_add_video_meta_full(
            buf.get(), GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(&stream.vinfo),
            GST_VIDEO_INFO_WIDTH(&stream.vinfo), GST_VIDEO_INFO_HEIGHT(&stream.vinfo),
            f.head.n_planes, offsets, strides);
    }
    GST_BUFFER_PTS(buf.get()) = f.head.pts;
    GST_BUFFER_DTS(buf.get()) = f.head.dts;
    GST_BUFFER_DURATION(buf.get()) = f.head.duration;
    GST_BUFFER_OFFSET(buf.get()) = f.head.offset;
    GST_BUFFER_OFFSET_END(buf.get()) = f.head.offset_end;
    GST_BUFFER_FLAG_SET(buf.get(), f.head.flags & tensoripc::kCarriedBufferFlags);
    return buf;
}

} // namespace edgetensor::gst::tensoripcsrc
