// SPDX-License-Identifier: MIT
//
// tensorconvert's per-buffer run (tensorconvert_run.hpp).

#include "tensorconvert_run.hpp"

#include "dma_drm.hpp"
#include "frame_check.hpp"
#include "gst_tensor_meta.hpp"
#include "tensorbatch_provenance.hpp"
#include "tensorconvert_element.hpp"
#include "tensorconvert_frame.hpp"
#include "tensorconvert_input.hpp"

#include <gst/edgetensor/edgetensor.hpp>

#include <mutex>
#include <string>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

namespace edgetensor::gst::tensorconvert
{

namespace
{

namespace eg = edgetensor::gst;
namespace cs = edgetensor::gst::tensorconvert;

// The output meta says what the values are, what the conversion applied and how they are
// quantized (the pool's meta only knows the output caps); the batch meta (a batch of one) maps
// the picture back to its frame.
void record_colorimetry(const Streaming& st, GstBuffer* inbuf, GstBuffer* outbuf)
{
    eg::record_conversion(outbuf, *st.converter, GST_BUFFER_PTS(inbuf), st.out_colorimetry,
                          st.applied_colorimetry);
}

// On 1.26+ an other/tensors output describes itself in a GstTensorMeta as well, as tensorbatch's
// batches do (a video/x-raw output is a picture, not a tensor).
void describe_tensor(GstTensorConvert* self, const Streaming& st, GstBuffer* outbuf)
{
    if (!eg::have_gst_tensor_meta() || !st.out.layout || st.out.layout->video)
        return;
    const TensorCaps& t = st.out.layout->tensor;
    if (auto r = eg::describe_buffer_as_gst_tensor(outbuf, st.tensor_id, t.dtype, t.shape); !r)
        GST_WARNING_OBJECT(self, "the tensor goes without a GstTensorMeta: %s",
                           r.error().message().c_str());
}

// Drops `inbuf`, which does not match the caps (`why`), as stock converters do (a switch of
// input-selector, a glitching producer); messages are posted outside `mu`.
GstFlowReturn drop_input(GstTensorConvert* self, GstBuffer* inbuf, const std::string& why)
{
    guint64 dropped;
    guint in_row;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        dropped = ++state_of(self).streaming.counters.dropped;
        in_row = ++state_of(self).streaming.counters.consecutive_drops;
    }
    return cs::report_drop(GST_ELEMENT(self), GST_CAT_DEFAULT, inbuf, why, dropped, in_row);
}

// A tiled drm-format has one reader, the GL import with its modifier: mapping the frame would
// read tiles as rows. So the tensor path must take it, or the stream fails naming it.
GstFlowReturn convert_frame(GstTensorConvert* self, const cs::FrameJob& job, GstBuffer* inbuf,
                            GstBuffer* outbuf)
{
    const uint64_t modifier = job.in.drm.modifier;
    std::string refused;
    if (cs::convert_tensors(GST_ELEMENT(self), job, inbuf, outbuf,
                            modifier != eg::kDrmLinear ? &refused : nullptr))
        return GST_FLOW_OK;
    if (modifier != eg::kDrmLinear) {
        GST_ELEMENT_ERROR(self, STREAM, DECODE,
                          ("Cannot read a frame of drm-format %s: %s. A tiled or compressed "
                           "frame is never read as linear rows.",
                           eg::drm_format_name(job.in.drm.fourcc, modifier).c_str(),
                           refused.c_str()),
                          ("buffer %" GST_PTR_FORMAT, inbuf));
        return GST_FLOW_ERROR;
    }
    return cs::convert_mapped(GST_ELEMENT(self), job, inbuf, outbuf);
}

GstFlowReturn transform_impl(GstTensorConvert* self, GstBuffer* inbuf, GstBuffer* outbuf)
{
    std::lock_guard<std::mutex> lock(state_of(self).mu);
    Streaming& st = state_of(self).streaming;
    if (!st.converter) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("tensorconvert received data before caps."),
                          (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    st.counters.consecutive_drops = 0; // the frame matched the caps (checked by the caller)
    const cs::FrameJob job{*st.converter, *st.in, st.out, st.cache.get(), st.scratch};
    if (const GstFlowReturn ret = convert_frame(self, job, inbuf, outbuf); ret != GST_FLOW_OK)
        return ret;
    st.frames++;
    record_colorimetry(st, inbuf, outbuf);
    describe_tensor(self, st, outbuf);
    return GST_FLOW_OK;
}

} // namespace

// Every plane's first and last byte inside the mapped memory, before the engine (or
// gst_video_frame_map, which checks only each plane's first byte) touches the frame.
GstFlowReturn check_and_transform(GstTensorConvert* self, GstBuffer* inbuf, GstBuffer* outbuf)
{
    eg::StreamLayoutPtr in; // null before caps
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        if (state_of(self).streaming.converter)
            in = state_of(self).streaming.in;
    }
    std::string why;
    if (in && !eg::check_video_frame(inbuf, &in->vinfo, &why))
        return drop_input(self, inbuf, why);
    return transform_impl(self, inbuf, outbuf);
}

// ---- output-mode=meta ----------------------------------------------------------------------

namespace
{

// The pool the riding tensors come from, made at the first frame after caps: by then downstream
// has the frame's caps and can say (allocation query) what a riding tensor needs. The query runs
// with no lock held. False after an element error.
bool ensure_meta_pool(GstTensorConvert* self)
{
    eg::MiniObjectPtr<GstCaps> caps;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        const Streaming& st = state_of(self).streaming;
        if (!st.meta_caps || st.meta.configured())
            return true;
        caps.reset(gst_caps_ref(st.meta_caps.get()));
    }
    const size_t trailing = cs::query_trailing_bytes(GST_BASE_TRANSFORM(self));
    std::lock_guard<std::mutex> lock(state_of(self).mu);
    if (!state_of(self).streaming.meta.configure(GST_ELEMENT(self), caps.get(), trailing)) {
        GST_ELEMENT_ERROR(
            self, RESOURCE, SETTINGS,
            ("Cannot make a pool for the tensors that ride on the frames."),
            ("%" GST_PTR_FORMAT " with %zu trailing bytes was refused", caps.get(), trailing));
        return false;
    }
    return true;
}

// Converts `frame` (writable, its data untouched) into a tensor of our pool and hangs it on it.
GstFlowReturn convert_onto_frame(GstTensorConvert* self, GstBuffer* frame)
{
    std::lock_guard<std::mutex> lock(state_of(self).mu);
    Streaming& st = state_of(self).streaming;
    if (!st.converter || !st.meta_caps) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("tensorconvert received data before caps."),
                          (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    st.counters.consecutive_drops = 0;
    GstBuffer* raw = nullptr;
    const GstFlowReturn got = st.meta.acquire(GST_ELEMENT(self), &raw);
    if (got != GST_FLOW_OK)
        return got;
    eg::MiniObjectPtr<GstBuffer> tensor(raw);
    const cs::FrameJob job{*st.converter, *st.in, st.out, st.cache.get(), st.scratch};
    if (const GstFlowReturn ret = convert_frame(self, job, frame, tensor.get()); ret != GST_FLOW_OK)
        return ret;
    record_colorimetry(st, frame, tensor.get());
    st.meta.attach(GST_ELEMENT(self), frame, tensor.get(), st.tensor_id, st.transform);
    st.frames++;
    return GST_FLOW_OK;
}

} // namespace

GstFlowReturn meta_transform_ip(GstTensorConvert* self, GstBuffer* frame)
{
    if (!ensure_meta_pool(self))
        return GST_FLOW_ERROR;
    eg::StreamLayoutPtr in;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        if (state_of(self).streaming.converter)
            in = state_of(self).streaming.in;
    }
    std::string why;
    if (in && !eg::check_video_frame(frame, &in->vinfo, &why))
        return drop_input(self, frame, why);
    return convert_onto_frame(self, frame);
}

} // namespace edgetensor::gst::tensorconvert
