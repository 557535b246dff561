// SPDX-License-Identifier: MIT
//
// One frame through tensorconvert's converter (tensorconvert_frame.hpp).

#include "tensorconvert_frame.hpp"

#include "frame_check.hpp"
#include "internal.hpp"
#include "tensorconvert_input.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.hpp>

#include <string>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

namespace edgetensor::gst::tensorconvert
{

namespace
{

// The input frame's planes for the engine, a top-down copy of a bottom-up frame.
SourceFrame source_of(GstElement* self, const FrameJob& job, GstVideoFrame* in)
{
    SourceFrame src;
    if (frame_is_bottom_up(in)) {
        GST_LOG_OBJECT(self, "bottom-up frame: converting a top-down copy");
        top_down_copy(in, &job.in.vinfo, &job.scratch, &src);
        return src;
    }
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(in) && p < src.planes.size(); ++p)
        src.planes[p] = {static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(in, p)),
                         size_t(GST_VIDEO_FRAME_PLANE_STRIDE(in, p))};
    return src;
}

// Into the mapped output: a video frame (its stride) or a tensor (the engine's pitches).
GstFlowReturn run_into_output(GstElement* self, const FrameJob& job, const SourceFrame& src,
                              GstBuffer* outbuf)
{
    Result<void> r;
    if (job.out.layout->video) {
        GstVideoFrame out;
        if (!gst_video_frame_map(&out, &job.out.layout->vinfo, outbuf, GST_MAP_WRITE)) {
            GST_ELEMENT_ERROR(self, RESOURCE, WRITE,
                              ("Cannot map the output frame%s.", take_map_failure().c_str()),
                              ("gst_video_frame_map failed on %" GST_PTR_FORMAT, outbuf));
            return GST_FLOW_ERROR;
        }
        DestFrame dst{static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&out, 0)),
                      size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&out, 0)), 0};
        r = job.converter.run(src, dst);
        gst_video_frame_unmap(&out);
    } else {
        GstMapInfo map;
        if (!gst_buffer_map(outbuf, &map, GST_MAP_WRITE)) {
            GST_ELEMENT_ERROR(self, RESOURCE, WRITE,
                              ("Cannot map the output tensor%s.", take_map_failure().c_str()),
                              ("gst_buffer_map failed on %" GST_PTR_FORMAT, outbuf));
            return GST_FLOW_ERROR;
        }
        if (map.size < job.out.bytes) {
            gst_buffer_unmap(outbuf, &map);
            GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("The output buffer is too small."),
                              ("%zu bytes, the tensor needs %zu", size_t(map.size), job.out.bytes));
            return GST_FLOW_ERROR;
        }
        DestFrame dst{map.data, job.converter.min_row_stride(), job.converter.min_plane_stride()};
        r = job.converter.run(src, dst);
        gst_buffer_unmap(outbuf, &map);
    }
    if (!r) {
        GST_ELEMENT_ERROR(
            self, STREAM, FAILED, ("Conversion failed: %s", r.error().message().c_str()),
            ("edgetensor error %s", std::string(error_code_name(r.error().code())).c_str()));
        return GST_FLOW_ERROR;
    }
    return GST_FLOW_OK;
}

} // namespace

bool convert_tensors(GstElement* self, const FrameJob& job, GstBuffer* inbuf, GstBuffer* outbuf,
                     std::string* refused)
{
    // Foreign fd memory (a camera's DMA-BUFs, a memfd) goes through the import cache, so the
    // source is the same tensor, with the same identity, whenever its buffer comes back, and
    // the converter reads it as a tensor. Our own pool's memory already is a tensor, system
    // memory has no fd: both are mapped, as is anything the tensor path refuses. The GL backend
    // imports tensors (an EGLImage per buffer, kept across frames), so with it our own pool's
    // memory takes the tensor path too.
    GstMemory* first = gst_buffer_n_memory(inbuf) > 0 ? gst_buffer_peek_memory(inbuf, 0) : nullptr;
    const bool gl = job.converter.compute() == ConvertCompute::Gl;
    const bool ours = first && gst_is_edge_tensor_memory(first);
    if (!first || !((job.cache && gst_is_fd_memory(first) && !ours) || (gl && ours))) {
        if (refused)
            *refused = "its memory is no DMA-BUF (or other fd memory) to import";
        return false;
    }
    GstEdgeTensorImportResult res = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    auto src_tensor = ours ? tensor_from_buffer(inbuf) : import_tensor(job.cache, inbuf, &res);
    auto dst_tensor = tensor_from_buffer(outbuf);
    if (!src_tensor || !src_tensor->is_image() || !dst_tensor) {
        GST_LOG_OBJECT(self, "input not imported as an image (result %d): mapping it", res);
        if (refused)
            *refused =
                "it was not imported as an image (import result " + std::to_string(res) + ")";
        return false;
    }
    auto r = job.converter.run(*src_tensor, *dst_tensor);
    if (!r) {
        GST_DEBUG_OBJECT(self, "tensor path refused (%s): mapping the frame instead",
                         r.error().message().c_str());
        if (refused)
            *refused = r.error().message();
    }
    return bool(r);
}

GstFlowReturn convert_mapped(GstElement* self, const FrameJob& job, GstBuffer* inbuf,
                             GstBuffer* outbuf)
{
    GstVideoFrame in;
    if (!gst_video_frame_map(&in, &job.in.vinfo, inbuf, GST_MAP_READ)) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ,
                          ("Cannot map the input frame%s.", take_map_failure().c_str()),
                          ("gst_video_frame_map failed on %" GST_PTR_FORMAT
                           " (its size or GstVideoMeta does not match the caps)",
                           inbuf));
        return GST_FLOW_ERROR;
    }
    const GstFlowReturn ret = run_into_output(self, job, source_of(self, job, &in), outbuf);
    gst_video_frame_unmap(&in);
    return ret;
}

} // namespace edgetensor::gst::tensorconvert
