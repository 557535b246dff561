// SPDX-License-Identifier: MIT
//
// tensorinfer's output pools (tensorinfer_outputs.hpp).

#include "tensorinfer_outputs.hpp"

#include "pool_acquire.hpp"
#include "pool_negotiation.hpp"
#include "stream_layout.hpp"
#include "tensor_caps.hpp"

#include <gst/edgetensor/edgetensor.hpp>

#include <algorithm>
#include <string>

namespace edgetensor::gst::tensorinfer
{

namespace
{

PoolPolicy output_policy()
{
    PoolPolicy p;
    p.memory = GST_EDGE_TENSOR_MEMORY_SHM;
    p.access = GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE;
    return p;
}

MiniObjectPtr<GstCaps> tensor_caps(DType dtype, const Shape& shape)
{
    return MiniObjectPtr<GstCaps>(gst_caps_new_simple(
        kTensorsMediaType, "num_tensors", G_TYPE_INT, 1, "format", G_TYPE_STRING, "static", "types",
        G_TYPE_STRING, tensor_type_name(dtype), "dimensions", G_TYPE_STRING,
        dimensions_string(shape).c_str(), nullptr));
}

} // namespace

bool OutputPools::configure(GstElement* element, const ModelCaps& m,
                            const std::vector<std::optional<Shape>>& shapes)
{
    stop();
    shapes_ = shapes;
    pools_.resize(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
        // The session takes a caller's tensor only for an output the model declares static; a
        // dynamic one (a batch too) is allocated by the session and copied out (counted).
        const auto& declared = m.outputs[i].shape;
        if (!shapes[i] ||
            std::any_of(declared.begin(), declared.end(), [](int64_t d) { return d <= 0; }))
            continue;
        auto caps = tensor_caps(m.outputs[i].dtype, *shapes[i]);
        auto layout = stream_layout_from_caps(caps.get());
        if (!layout) {
            GST_WARNING_OBJECT(element, "output %zu: %s", i, layout.error().message().c_str());
            return false;
        }
        NegotiatedPool made = make_pool(element, *layout, output_policy());
        if (!made)
            return false;
        pools_[i] = std::move(made.pool);
    }
    return true;
}

GstFlowReturn OutputPools::acquire(GstElement* element, RunOutputs* out)
{
    out->tensors.assign(pools_.size(), TensorDyn());
    out->buffers.clear();
    out->buffers.resize(pools_.size());
    for (size_t i = 0; i < pools_.size(); ++i) {
        GstBufferPool* pool = pools_[i].get();
        if (!pool)
            continue;
        if (!activate_pool(element, pool, "the output tensors"))
            return GST_FLOW_ERROR;
        GstBuffer* buf = nullptr;
        const GstFlowReturn ret = gst_buffer_pool_acquire_buffer(pool, &buf, nullptr);
        if (ret != GST_FLOW_OK) {
            if (ret != GST_FLOW_FLUSHING)
                post_acquire_error(element, pool, ret, "an output tensor");
            return ret;
        }
        out->buffers[i].reset(buf);
        auto t = tensor_from_buffer(buf);
        if (!t) {
            GST_ELEMENT_ERROR(element, CORE, FAILED, ("An output buffer holds no tensor."),
                              ("pool %s", GST_OBJECT_NAME(pool)));
            return GST_FLOW_ERROR;
        }
        out->tensors[i] = std::move(*t);
    }
    return GST_FLOW_OK;
}

Result<std::vector<TensorRecord>> OutputPools::records(const ModelCaps& m, RunOutputs& run) const
{
    std::vector<TensorRecord> out;
    out.reserve(m.outputs.size());
    for (size_t i = 0; i < m.outputs.size(); ++i) {
        TensorRecord r;
        r.id = m.naming.outputs[i].id;
        r.order = m.naming.outputs[i].order;
        r.dtype = m.outputs[i].dtype;
        const TensorDyn& t = i < run.tensors.size() ? run.tensors[i] : TensorDyn();
        if (i < run.buffers.size() && run.buffers[i]) {
            r.dims = t.shape();
            r.data.reset(gst_buffer_ref(run.buffers[i].get()));
        } else if (t.is_valid()) {
            auto mem = wrap_tensor(nullptr, t, t.size());
            if (!mem)
                return mem.error();
            GstBuffer* b = gst_buffer_new();
            gst_buffer_append_memory(b, *mem);
            r.dims = t.shape();
            r.data.reset(b);
        } else {
            // Empty in this run (a dimension of 0): the model's shape with its dynamic
            // dimensions 0.
            for (int64_t d : m.outputs[i].shape)
                r.dims.push_back(d > 0 ? size_t(d) : 0);
            r.data.reset(gst_buffer_new());
        }
        out.push_back(std::move(r));
    }
    return out;
}

void OutputPools::stop()
{
    for (auto& p : pools_)
        if (p)
            gst_buffer_pool_set_active(p.get(), FALSE);
    pools_.clear();
    shapes_.clear();
}

} // namespace edgetensor::gst::tensorinfer
