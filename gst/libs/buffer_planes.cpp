// SPDX-License-Identifier: MIT
//
// Plane classification of an upstream buffer (buffer_planes.hpp).

#include "buffer_planes.hpp"

#include "errno_name.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>

#include <algorithm>
#include <string>
#include <utility>

namespace edgetensor::gst
{

namespace
{

Classified refuse(PlanesVerdict v, std::string why, ErrorCode code = ErrorCode::InvalidArgument)
{
    return Classified{v, std::move(why), code};
}

// The buffer's real plane layout: its GstVideoMeta where it has one, else the caps'. Fills
// `offsets` (within the buffer) and the plane count.
Classified video_planes(const StreamLayout& layout, GstBuffer* buffer, BufferPlanes* p,
                        std::array<gsize, kMaxBufferPlanes>* offsets)
{
    p->vinfo = layout.vinfo;
    if (GstVideoMeta* vm = gst_buffer_get_video_meta(buffer)) {
        if (vm->n_planes > kMaxBufferPlanes)
            return refuse(PlanesVerdict::NotImportable, "more than 4 planes");
        if (vm->format != GST_VIDEO_INFO_FORMAT(&layout.vinfo) ||
            vm->width != guint(GST_VIDEO_INFO_WIDTH(&layout.vinfo)) ||
            vm->height != guint(GST_VIDEO_INFO_HEIGHT(&layout.vinfo)))
            return refuse(PlanesVerdict::NotImportable,
                          "the buffer's GstVideoMeta does not match the caps");
        for (guint i = 0; i < vm->n_planes; ++i) {
            p->vinfo.offset[i] = vm->offset[i];
            p->vinfo.stride[i] = vm->stride[i];
        }
    }
    const guint n = GST_VIDEO_INFO_N_PLANES(&p->vinfo);
    if (n > kMaxBufferPlanes)
        return refuse(PlanesVerdict::NotImportable, "more than 4 planes");
    for (guint i = 0; i < n; ++i)
        if (GST_VIDEO_INFO_PLANE_STRIDE(&p->vinfo, i) < 0)
            return refuse(PlanesVerdict::NotImportable,
                          "plane " + std::to_string(i) +
                              " has a negative stride (a bottom-up frame), which a tensor's "
                              "plane layout cannot describe");
    for (guint i = 0; i < n; ++i)
        (*offsets)[i] = GST_VIDEO_INFO_PLANE_OFFSET(&p->vinfo, i);
    p->n_planes = n;
    return {};
}

// Which memory, fd and fd offset hold each plane.
Classified place_planes(GstBuffer* buffer, const std::array<gsize, kMaxBufferPlanes>& offsets,
                        BufferPlanes* p)
{
    for (guint i = 0; i < p->n_planes; ++i) {
        guint idx = 0, len = 0;
        gsize skip = 0;
        if (!gst_buffer_find_memory(buffer, offsets[i], 1, &idx, &len, &skip))
            return refuse(PlanesVerdict::NotImportable,
                          "plane " + std::to_string(i) + " at offset " +
                              std::to_string(offsets[i]) + " lies beyond the buffer");
        GstMemory* mem = gst_buffer_peek_memory(buffer, idx);
        if (!gst_is_fd_memory(mem))
            return refuse(PlanesVerdict::NotImportable,
                          std::string("plane ") + std::to_string(i) + " is in memory of type \"" +
                              memory_type_name(mem) + "\", which has no fd to import");
        PlanePlace& place = p->places[i];
        place.mem = mem;
        place.fd = gst_fd_memory_get_fd(mem);
        place.fd_offset = guint64(mem->offset) + skip;
        place.stride = p->video ? GST_VIDEO_INFO_PLANE_STRIDE(&p->vinfo, i) : 0;
        if (place.fd < 0)
            return refuse(PlanesVerdict::NotImportable,
                          "plane " + std::to_string(i) + "'s memory has no fd");
    }
    return {};
}

// The kernel object behind each plane's fd.
Classified identify_planes(BufferPlanes* p)
{
    for (guint i = 0; i < p->n_planes; ++i) {
        PlanePlace& place = p->places[i];
        if (i > 0 && place.mem == p->places[i - 1].mem) {
            place.object = p->places[i - 1].object;
        } else if (auto id = memory_identity(place.mem)) {
            place.object = *id;
        } else {
            return refuse(PlanesVerdict::Failed,
                          "fstat of plane " + std::to_string(i) + "'s fd " +
                              std::to_string(place.fd) +
                              " failed: " + detail::errno_text(id.error().sys_errno()),
                          ErrorCode::Io);
        }
        if (i > 0 && place.object != p->places[0].object)
            p->single_object = false;
    }
    return {};
}

} // namespace

Classified classify_planes(const StreamLayout& layout, GstBuffer* buffer, BufferPlanes* p)
{
    if (gst_buffer_n_memory(buffer) == 0)
        return refuse(PlanesVerdict::NotImportable, "the buffer holds no memory");

    std::array<gsize, kMaxBufferPlanes> offsets{};
    p->video = layout.video;
    p->n_planes = 1;
    if (layout.video) {
        if (Classified c = video_planes(layout, buffer, p, &offsets);
            c.verdict != PlanesVerdict::Ok)
            return c;
    } else if (gst_buffer_n_memory(buffer) != 1) {
        return refuse(PlanesVerdict::NotImportable,
                      "an other/tensors buffer in " + std::to_string(gst_buffer_n_memory(buffer)) +
                          " memories cannot be one tensor");
    }
    if (Classified c = place_planes(buffer, offsets, p); c.verdict != PlanesVerdict::Ok)
        return c;
    if (Classified c = identify_planes(p); c.verdict != PlanesVerdict::Ok)
        return c;

    if (!p->single_object) {
        const auto info = pixel_format_info(layout.pixel_format);
        if (!info || info->layout != PixelLayout::SemiPlanar || p->n_planes != 2)
            return refuse(
                PlanesVerdict::NotImportable,
                std::string(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&p->vinfo))) +
                    " with planes in separate buffers cannot be described by one tensor "
                    "(only semi-planar NV12/NV16/NV24 can)");
    }
    p->edgetensor_memory = gst_is_edge_tensor_memory(p->places[0].mem);
    for (guint i = 1; i < p->n_planes; ++i)
        p->edgetensor_memory = p->edgetensor_memory && p->places[i].mem == p->places[0].mem;
    if (p->edgetensor_memory && !layout.video) {
        // The allocator's memory (a writer that allocated its output from it) holds flat bytes;
        // the caps' dtype and shape come from importing its fd like any other.
        const auto t = tensor_from_memory(p->places[0].mem);
        p->edgetensor_memory = t && t->dtype() == layout.tensor.dtype &&
                               shapes_equal_padded(t->shape(), layout.tensor.shape);
    }
    return {};
}

FdPlanes fd_planes_of(const BufferPlanes& p, const StreamLayout& layout)
{
    FdPlanes out;
    out.n_planes = p.n_planes;
    out.separate_buffers = !p.single_object;
    for (guint i = 0; i < p.n_planes; ++i)
        out.planes[i] = {p.places[i].fd, p.places[i].fd_offset, size_t(p.places[i].stride)};
    if (!p.video) {
        out.dtype = layout.tensor.dtype;
        out.shape = layout.tensor.shape;
        return out;
    }
    out.format = layout.pixel_format;
    out.width = GST_VIDEO_INFO_WIDTH(&p.vinfo);
    out.height = GST_VIDEO_INFO_HEIGHT(&p.vinfo);
    // Where the core has no image for the planes: the memory's bytes from byte 0, flat.
    const GstMemory* mem = p.places[0].mem;
    out.dtype = DType::U8;
    out.shape = {size_t(mem->offset + mem->size)};
    return out;
}

MetaPlanes meta_planes_of(const BufferPlanes& p, const TensorDyn& tensor)
{
    MetaPlanes planes;
    planes.n_planes = p.video ? p.n_planes : 1;
    for (guint i = 0; i < std::min<guint>(planes.n_planes, GST_EDGE_TENSOR_META_MAX_PLANES); ++i) {
        planes.offsets[i] = gsize(p.places[i].fd_offset);
        planes.strides[i] = p.places[i].stride;
    }
    if (!p.video)
        planes.strides[0] = tensor.strides().empty() ? 0 : gint(tensor.strides().front());
    return planes;
}

} // namespace edgetensor::gst
