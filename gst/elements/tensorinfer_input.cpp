// SPDX-License-Identifier: MIT
//
// tensorinfer's input (tensorinfer_input.hpp).

#include "tensorinfer_input.hpp"

#include "import_cache.hpp"
#include "memory_identity.hpp"
#include "tensor_caps.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.hpp>

#include <utility>

namespace edgetensor::gst::tensorinfer
{

namespace
{

CopyPolicy copy_policy(const InferBufferRules& rules)
{
    CopyPolicy p;
    p.action = "bind";
    p.acting = "binding";
    p.done = "read by the runtime where it lies";
    p.offer = "the edgetensor pool tensorinfer proposes (tensorconvert, tensorbatch and "
              "tensorimport do)";
    p.pool.trailing_bytes = rules.trailing_bytes;
    return p;
}

// The tensor `buf`'s only memory is, when it is our memory over the whole tensor: shaped as the
// layout says (the pool's tensor may be larger: spare bytes past it).
std::optional<TensorDyn> own_tensor(GstBuffer* buf, const TensorCaps& tc)
{
    if (gst_buffer_n_memory(buf) != 1)
        return std::nullopt;
    GstMemory* mem = gst_buffer_peek_memory(buf, 0);
    if (mem->offset != 0 || !gst_is_edge_tensor_memory(mem))
        return std::nullopt;
    auto t = tensor_from_memory(mem);
    if (!t || t->dtype() != tc.dtype || t->offset() != 0)
        return std::nullopt;
    if (t->shape() != tc.shape && !t->set_logical_shape(tc.shape))
        return std::nullopt;
    return t;
}

StreamLayoutPtr layout_of(const TensorRecord& r)
{
    Shape shape(r.dims.begin(), r.dims.end());
    MiniObjectPtr<GstCaps> caps(gst_caps_new_simple(
        kTensorsMediaType, "num_tensors", G_TYPE_INT, 1, "format", G_TYPE_STRING, "static", "types",
        G_TYPE_STRING, tensor_type_name(r.dtype), "dimensions", G_TYPE_STRING,
        dimensions_string(shape).c_str(), nullptr));
    auto l = stream_layout_from_caps(caps.get());
    return l ? *l : nullptr;
}

} // namespace

InputSource::InputSource() = default;
InputSource::~InputSource()
{
    stop();
}

void InputSource::start(const InferBufferRules& rules)
{
    stop();
    cache_.reset(gst_edge_tensor_import_cache_new(GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE));
    fallback_ = std::make_unique<CopyFallback>(copy_policy(rules));
    fallback_->start();
}

void InputSource::stop()
{
    if (fallback_)
        fallback_->retire_pool_unless(nullptr);
    if (cache_)
        gst_edge_tensor_import_cache_clear(cache_.get(), "stop");
    layout_.reset();
    rider_layout_.reset();
}

void InputSource::set_layout(StreamLayoutPtr layout)
{
    layout_ = std::move(layout);
    if (cache_)
        import_cache_set_layout(cache_.get(), layout_);
}

guint64 InputSource::copies() const noexcept
{
    return fallback_ ? fallback_->copies() : 0;
}

GstFlowReturn InputSource::from_buffer(GstElement* element, CopyMode mode,
                                       const StreamLayoutPtr& layout, GstBuffer* buf,
                                       bool importable, Input* out)
{
    if (auto t = own_tensor(buf, layout->tensor)) {
        out->tensor = std::move(*t);
        out->keep.reset(gst_buffer_ref(buf));
        return GST_FLOW_OK;
    }
    GstMemory* first = gst_buffer_n_memory(buf) ? gst_buffer_peek_memory(buf, 0) : nullptr;
    Unusable what;
    if (importable && cache_ && first && gst_is_fd_memory(first)) {
        GstEdgeTensorImportResult res = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
        if (auto t = import_tensor(cache_.get(), buf, &res)) {
            if (t->dtype() == layout->tensor.dtype &&
                (t->shape() == layout->tensor.shape ||
                 t->set_logical_shape(layout->tensor.shape))) {
                out->tensor = std::move(*t);
                out->keep.reset(gst_buffer_ref(buf));
                return GST_FLOW_OK;
            }
        }
        what.why = res == GST_EDGE_TENSOR_IMPORT_FAILED
                       ? "its import failed (GST_DEBUG=edgetensorimport:4 says why)"
                       : "it is not one fd range holding the whole tensor";
        what.failed = res == GST_EDGE_TENSOR_IMPORT_FAILED;
    } else {
        what.why = first ? "only edgetensor pool memory and fd memory (memfd, DMA-BUF) can be "
                           "read where they lie"
                         : "the buffer is empty";
    }
    what.sent = first ? std::string("memory of type \"") + memory_type_name(first) + "\""
                      : std::string("empty buffers");
    GstBuffer* copy = nullptr;
    const GstFlowReturn ret = fallback_->copy(element, mode, layout, what, buf, &copy);
    if (ret != GST_FLOW_OK)
        return ret;
    MiniObjectPtr<GstBuffer> owned(copy);
    auto t = own_tensor(copy, layout->tensor);
    if (!t) {
        GST_ELEMENT_ERROR(element, CORE, FAILED, ("The copied input holds no tensor."), (nullptr));
        return GST_FLOW_ERROR;
    }
    out->tensor = std::move(*t);
    out->keep = std::move(owned);
    return GST_FLOW_OK;
}

GstFlowReturn InputSource::from_tensor_buffer(GstElement* element, CopyMode mode, GstBuffer* inbuf,
                                              Input* out)
{
    if (!layout_ || layout_->video) {
        GST_ELEMENT_ERROR(element, CORE, NEGOTIATION, ("tensorinfer received data before caps."),
                          (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    return from_buffer(element, mode, layout_, inbuf, true, out);
}

GstFlowReturn InputSource::from_frame(GstElement* element, CopyMode mode, GstBuffer* frame,
                                      const std::string& input_name, Input* out, bool* found)
{
    *found = false;
    std::optional<AttachedTensor> rider;
    for (AttachedTensor& a : attached_tensors(frame)) {
        if (a.tensor.id == input_name || !rider) {
            const bool exact = a.tensor.id == input_name;
            rider = std::move(a);
            if (exact)
                break;
        }
    }
    if (!rider)
        if (auto r = find_gst_tensor(frame, input_name))
            rider = AttachedTensor{std::move(*r), std::nullopt};
    if (!rider || !rider->tensor.data)
        return GST_FLOW_OK;
    *found = true;
    for (size_t d : rider->tensor.dims)
        if (d == 0) {
            GST_ELEMENT_ERROR(
                element, STREAM, FORMAT,
                ("The tensor riding on the frame (\"%s\") is empty.", rider->tensor.id.c_str()),
                (nullptr));
            return GST_FLOW_ERROR;
        }
    if (!rider_layout_ || rider_layout_->tensor.dtype != rider->tensor.dtype ||
        rider_layout_->tensor.shape != Shape(rider->tensor.dims.begin(), rider->tensor.dims.end()))
        rider_layout_ = layout_of(rider->tensor);
    if (!rider_layout_) {
        GST_ELEMENT_ERROR(element, STREAM, FORMAT,
                          ("The tensor riding on the frame (\"%s\") has a shape other/tensors "
                           "cannot describe (more than 8 dimensions?).",
                           rider->tensor.id.c_str()),
                          (nullptr));
        return GST_FLOW_ERROR;
    }
    const GstFlowReturn ret =
        from_buffer(element, mode, rider_layout_, rider->tensor.data.get(), false, out);
    out->transform = rider->transform;
    out->attached_id = rider->tensor.id;
    return ret;
}

} // namespace edgetensor::gst::tensorinfer
