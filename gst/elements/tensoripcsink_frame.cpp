// SPDX-License-Identifier: MIT
//
// tensoripcsink's buffers on the wire (tensoripcsink_frame.hpp).

#include "tensoripcsink_frame.hpp"

#include "internal.hpp"
#include "tensoripc_clock.hpp"
#include "tensoripc_common.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>

#include <sys/vfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_tensor_ipc_sink_debug

namespace edgetensor::gst::tensoripcsink
{

namespace
{

constexpr guint32 DMA_BUF_FS_MAGIC = 0x444d4142u;

} // namespace

Unusable unsendable(GstBuffer* buf)
{
    const guint n = gst_buffer_n_memory(buf);
    if (n == 0)
        return {"buffers without memory", "the buffer holds no memory"};
    if (n > ipc::kMaxMemories)
        return {"buffers of " + std::to_string(n) + " memories",
                "the buffer holds " + std::to_string(n) + " memories (at most " +
                    std::to_string(ipc::kMaxMemories) + " are passed)"};
    for (guint i = 0; i < n; ++i) {
        GstMemory* mem = gst_buffer_peek_memory(buf, i);
        if (!gst_is_fd_memory(mem) || gst_fd_memory_get_fd(mem) < 0)
            return {std::string("memory of type \"") + memory_type_name(mem) + "\"",
                    std::string("memory ") + std::to_string(i) + " is of type \"" +
                        memory_type_name(mem) + "\", which has no fd to pass"};
    }
    return {};
}

Result<ipc::MemoryRecord> describe_memory(GstMemory* mem, guint index)
{
    const int fd = gst_fd_memory_get_fd(mem);
    ipc::MemoryRecord r;
    gsize offset = 0, maxsize = 0;
    const gsize size = gst_memory_get_sizes(mem, &offset, &maxsize);
    r.offset = offset;
    r.size = size;
    r.maxsize = maxsize;
    // An edgetensor memory's tensor knows what its fd is (classified by the kernel when the
    // tensor was made); any other fd is asked, once per frame.
    int kind = -1;
    if (auto t = tensor_from_memory(mem)) {
        auto d = t->describe();
        if (d && d->handle == fd &&
            (d->kind == EDGETENSOR_KIND_HOST || d->kind == EDGETENSOR_KIND_DMABUF))
            kind = int(d->kind);
        if (d && t->offset() == 0 && d->capacity >= maxsize) {
            r.desc = *d;
            r.remote_identity = t->buffer_identity().id();
        }
    }
    if (kind < 0) {
        struct statfs sfs {
        };
        if (::fstatfs(fd, &sfs) != 0)
            return unexpected(Error::io(errno, "fstatfs of a memory's fd"));
        kind =
            guint32(sfs.f_type) == DMA_BUF_FS_MAGIC ? EDGETENSOR_KIND_DMABUF : EDGETENSOR_KIND_HOST;
    }
    const bool dma = kind == int(EDGETENSOR_KIND_DMABUF);
    if (r.desc.version == 0) {
        r.desc = edgetensor_desc_init();
        r.desc.dtype = EDGETENSOR_DTYPE_U8;
        r.desc.ndim = 1;
        r.desc.shape[0] = maxsize;
        r.desc.strides[0] = 1;
        r.desc.capacity = maxsize;
    }
    r.desc.kind = dma ? EDGETENSOR_KIND_DMABUF : EDGETENSOR_KIND_HOST;
    r.desc.handle = index;
    r.desc.ptr = nullptr;
    r.desc.flags = 0;
    r.desc.sync = 0;
    return r;
}

ipc::FrameHead frame_head(GstBuffer* buf, const StreamLayout* layout)
{
    ipc::FrameHead head;
    head.pts = GST_BUFFER_PTS(buf);
    head.dts = GST_BUFFER_DTS(buf);
    head.duration = GST_BUFFER_DURATION(buf);
    head.offset = GST_BUFFER_OFFSET(buf);
    head.offset_end = GST_BUFFER_OFFSET_END(buf);
    head.flags = GST_BUFFER_FLAGS(buf) & tensoripc::kCarriedBufferFlags;
    if (!layout || !layout->video)
        return head;
    const GstVideoInfo& vinfo = layout->vinfo;
    if (GstVideoMeta* vm = gst_buffer_get_video_meta(buf)) {
        head.n_planes = std::min<guint>(vm->n_planes, ipc::kMaxPlanes);
        for (guint i = 0; i < head.n_planes; ++i) {
            head.plane_offset[i] = vm->offset[i];
            head.plane_stride[i] = vm->stride[i];
        }
    } else {
        head.n_planes = std::min<guint>(GST_VIDEO_INFO_N_PLANES(&vinfo), ipc::kMaxPlanes);
        for (guint i = 0; i < head.n_planes; ++i) {
            head.plane_offset[i] = GST_VIDEO_INFO_PLANE_OFFSET(&vinfo, i);
            head.plane_stride[i] = GST_VIDEO_INFO_PLANE_STRIDE(&vinfo, i);
        }
    }
    return head;
}

GstClockTime capture_time(GstBaseSink* sink, GstBuffer* buf)
{
    const GstClockTime pts = GST_BUFFER_PTS(buf);
    if (!GST_CLOCK_TIME_IS_VALID(pts) || sink->segment.format != GST_FORMAT_TIME)
        return GST_CLOCK_TIME_NONE;
    const GstClockTime running = gst_segment_to_running_time(&sink->segment, GST_FORMAT_TIME, pts);
    return tensoripc::running_to_monotonic(GST_ELEMENT(sink), running,
                                           gst_base_sink_get_latency(sink));
}

} // namespace edgetensor::gst::tensoripcsink
