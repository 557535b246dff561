// SPDX-License-Identifier: MIT
//
// tensorconvert output-mode=meta (tensorconvert_meta.hpp).

#include "tensorconvert_meta.hpp"

#include "attached_tensors.hpp"
#include "enum_type.hpp"
#include "gsttensorconvert.h"
#include "pool_acquire.hpp"
#include "pool_negotiation.hpp"
#include "tensorconvert_caps.hpp"
#include "tensorconvert_properties.hpp"

#include <utility>
#include <vector>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_convert_debug);
#define GST_CAT_DEFAULT gst_tensor_convert_debug

GType gst_tensor_convert_output_mode_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_CONVERT_OUTPUT_MODE_TENSOR, "The tensor is the output buffer", "tensor"},
        {GST_TENSOR_CONVERT_OUTPUT_MODE_META,
         "The source frame passes through untouched, the tensor riding on it", "meta"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstTensorConvertOutputMode", values);
}

namespace edgetensor::gst::tensorconvert
{

bool set_output_mode(GstElement* self, Settings* s, guint prop_id, const GValue* value,
                     GParamSpec* pspec)
{
    if (prop_id != PROP_OUTPUT_MODE)
        return false;
    if (refuse_unless_ready(self, pspec))
        return true;
    ObjectLockGuard lock(self);
    s->output_mode = GstTensorConvertOutputMode(g_value_get_enum(value));
    return true;
}

bool get_output_mode(const Settings& s, guint prop_id, GValue* value)
{
    if (prop_id != PROP_OUTPUT_MODE)
        return false;
    g_value_set_enum(value, s.output_mode);
    return true;
}

GstCaps* meta_transform_caps(GstBaseTransform* self, GstCaps* caps, GstCaps* filter)
{
    MiniObjectPtr<GstCaps> frames(gst_pad_get_pad_template_caps(GST_BASE_TRANSFORM_SINK_PAD(self)));
    GstCaps* result = gst_caps_intersect_full(caps, frames.get(), GST_CAPS_INTERSECT_FIRST);
    if (filter) {
        GstCaps* tmp = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(result);
        result = tmp;
    }
    return result;
}

GstCaps* meta_tensor_caps(GstBaseTransform* self, const Settings& s, GstCaps* incaps)
{
    MiniObjectPtr<GstCaps> tensors(gst_caps_from_string("other/tensors"));
    GstCaps* possible = transform_caps(self, s, GST_PAD_SINK, incaps, tensors.get());
    if (gst_caps_is_empty(possible)) {
        gst_caps_unref(possible);
        return nullptr;
    }
    return fixate_caps(self, s, GST_PAD_SINK, incaps, possible);
}

size_t attached_trailing_bytes(GstQuery* query)
{
    guint index = 0;
    if (!query || !gst_query_find_allocation_meta(query, attached_tensors_meta_api_type(), &index))
        return 0;
    const GstStructure* params = nullptr;
    gst_query_parse_nth_allocation_meta(query, index, &params);
    guint trailing = 0;
    if (params && gst_structure_has_name(params, kAttachedTensorParams))
        gst_structure_get_uint(params, "trailing-bytes", &trailing);
    return trailing;
}

size_t query_trailing_bytes(GstBaseTransform* self)
{
    MiniObjectPtr<GstCaps> caps(gst_pad_get_current_caps(GST_BASE_TRANSFORM_SRC_PAD(self)));
    if (!caps)
        return 0;
    MiniObjectPtr<GstQuery> query(gst_query_new_allocation(caps.get(), FALSE));
    if (!gst_pad_peer_query(GST_BASE_TRANSFORM_SRC_PAD(self), query.get()))
        return 0;
    return attached_trailing_bytes(query.get());
}

bool MetaOutput::configure(GstElement* element, GstCaps* tensor_caps, size_t trailing_bytes)
{
    stop();
    auto layout = stream_layout_from_caps(tensor_caps);
    if (!layout) {
        GST_WARNING_OBJECT(element, "no tensor layout for %" GST_PTR_FORMAT ": %s", tensor_caps,
                           layout.error().message().c_str());
        return false;
    }
    PoolPolicy p;
    p.access = GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE; // written here, read by the consumer
    p.trailing_bytes = trailing_bytes;
    NegotiatedPool made = make_pool(element, *layout, p);
    if (!made)
        return false;
    GST_INFO_OBJECT(element, "tensors ride on the frames: %" GST_PTR_FORMAT ", %u bytes each",
                    tensor_caps, made.size);
    pool_ = std::move(made.pool);
    layout_ = std::move(*layout);
    return true;
}

GstFlowReturn MetaOutput::acquire(GstElement* element, GstBuffer** tensor)
{
    if (!pool_) {
        GST_ELEMENT_ERROR(element, CORE, NEGOTIATION, ("tensorconvert received data before caps."),
                          (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    if (!activate_pool(element, pool_.get(), "the tensors that ride on the frames"))
        return GST_FLOW_ERROR;
    const GstFlowReturn ret = gst_buffer_pool_acquire_buffer(pool_.get(), tensor, nullptr);
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING)
        post_acquire_error(element, pool_.get(), ret, "a tensor to ride on the frame");
    return ret;
}

bool MetaOutput::attach(GstElement* element, GstBuffer* frame, GstBuffer* tensor,
                        const std::string& id, const FrameTransform& transform) const
{
    AttachedTensor a;
    a.tensor.id = id;
    a.tensor.dtype = layout_->tensor.dtype;
    a.tensor.dims.assign(layout_->tensor.shape.begin(), layout_->tensor.shape.end());
    a.tensor.data.reset(gst_buffer_ref(tensor));
    a.transform = transform;
    std::vector<AttachedTensor> v;
    v.push_back(std::move(a));
    if (auto r = attach_tensors(frame, std::move(v), true); !r) {
        GST_WARNING_OBJECT(element, "the tensor rides without a GstTensorMeta: %s",
                           r.error().message().c_str());
        return false;
    }
    return true;
}

void MetaOutput::stop()
{
    if (pool_)
        gst_buffer_pool_set_active(pool_.get(), FALSE);
    pool_.reset();
    layout_.reset();
}

} // namespace edgetensor::gst::tensorconvert
