// SPDX-License-Identifier: MIT
//
// tensorinfer's per-buffer run (tensorinfer_run.hpp).

#include "tensorinfer_run.hpp"

#include "attached_tensors.hpp"
#include "gst_tensor_meta.hpp"
#include "internal.hpp"
#include "tensorinfer_boxes.hpp"
#include "tensorinfer_caps.hpp"
#include "tensorinfer_element.hpp"
#include "tensorinfer_input.hpp"
#include "tensorinfer_naming.hpp"
#include "tensorinfer_outputs.hpp"
#include "tensorinfer_properties.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <edgetensor/infer.hpp>

#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_infer_debug);
#define GST_CAT_DEFAULT gst_tensor_infer_debug

namespace edgetensor::gst::tensorinfer
{

namespace
{

namespace eg = edgetensor::gst;
namespace et = edgetensor;
namespace ti = edgetensor::gst::tensorinfer;

// After a run: copies are counted (the session's and ours) and said once; copy-mode=never
// refuses an input the runtime could not read in place.
GstFlowReturn account_copies(GstTensorInfer* self, Streaming& s, et::InferSession& session,
                             const ti::Settings& set, const ti::Input& input)
{
    const et::InferInputBinding b = session.input_binding(0);
    if (b.kind == et::InferBinding::Copied) {
        if (set.copy_mode == GST_TENSOR_INFER_COPY_NEVER) {
            GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                              ("The runtime cannot read the input where it lies (%s), and "
                               "copy-mode is \"never\".",
                               b.reason.c_str()),
                              ("model %s", session.model_path().c_str()));
            return GST_FLOW_ERROR;
        }
        if (!std::exchange(s.warned_input_copy, true))
            GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                                ("Copying the input: the runtime cannot read it where it lies "
                                 "(%s); every copy is counted (property \"copies\").",
                                 b.reason.c_str()),
                                ("model %s, input from %s memory", session.model_path().c_str(),
                                 std::string(et::memory_name(input.tensor.memory())).c_str()));
    }
    const guint64 out_copies = session.stats().output_copies;
    if (out_copies > s.last_output_copies && !std::exchange(s.warned_output_copy, true))
        GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                            ("Copying outputs: an output of model '%s' has a shape known only "
                             "after the run, so the runtime allocates it and it is copied out; "
                             "every copy is counted (property \"copies\").",
                             session.model_path().c_str()),
                            (nullptr));
    s.last_output_copies = out_copies;
    return GST_FLOW_OK;
}

} // namespace

GstFlowReturn run_buffer(GstTensorInfer* self, GstBuffer* inbuf, GstBuffer* outbuf)
{
    State& st = state_of(self);
    const ti::Settings set = settings_snapshot(self);
    const ModelInfo m = st.model();
    if (!m.session || !m.caps) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("tensorinfer has no model open."), (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    et::InferSession& session = *m.session;
    const ti::ModelCaps& mc = *m.caps;
    const auto mode = eg::CopyMode(set.copy_mode);

    std::lock_guard<std::mutex> lock(st.mu);
    Streaming& s = st.streaming;
    ti::Input input;
    const guint64 copies_before = s.input.copies();
    GstFlowReturn ret;
    if (s.frame_mode) {
        bool found = false;
        ret = s.input.from_frame(GST_ELEMENT(self), mode, inbuf, mc.input.name, &input, &found);
        if (ret == GST_FLOW_OK && !found) {
            GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                              ("A frame reached tensorinfer with no tensor riding on it."),
                              ("put tensorconvert output-mode=meta upstream (or feed "
                               "other/tensors); frame %" GST_PTR_FORMAT,
                               inbuf));
            return GST_FLOW_ERROR;
        }
        if (ret == GST_FLOW_OK) {
            auto key = std::make_pair(input.tensor.dtype(), input.tensor.shape());
            if (s.checked != key) {
                if (auto ok = session.check_input(0, key.first, key.second); !ok) {
                    GST_ELEMENT_ERROR(
                        self, STREAM, FORMAT, ("%s", ok.error().message().c_str()),
                        ("the tensor riding on the frame as \"%s\"", input.attached_id.c_str()));
                    return GST_FLOW_ERROR;
                }
                s.checked = key;
            }
        }
    } else {
        ret = s.input.from_tensor_buffer(GST_ELEMENT(self), mode, inbuf, &input);
    }
    st.element_copies += s.input.copies() - copies_before;
    if (ret != GST_FLOW_OK)
        return ret;

    ti::RunOutputs run;
    if ((ret = s.outputs.acquire(GST_ELEMENT(self), &run)) != GST_FLOW_OK)
        return ret;
    if (auto r = session.run_into(std::span(&input.tensor, 1), run.tensors); !r) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("%s", r.error().message().c_str()),
                          ("edgetensor error %s", code_of(r.error()).c_str()));
        return GST_FLOW_ERROR;
    }
    if ((ret = account_copies(self, s, session, set, input)) != GST_FLOW_OK)
        return ret;

    if (s.frame_mode && set.map_boxes && input.transform) {
        for (size_t i = 0; i < mc.outputs.size(); ++i) {
            et::TensorDyn& t = run.tensors[i];
            if (mc.naming.outputs[i].boxes == ti::BoxFormat::None || !t.is_valid())
                continue;
            if (auto r = ti::map_boxes(mc.naming.outputs[i].boxes, t, t.shape(), *input.transform);
                !r)
                GST_WARNING_OBJECT(self, "boxes of output '%s' left as they are: %s",
                                   mc.outputs[i].name.c_str(), r.error().message().c_str());
        }
    }
    auto records = s.outputs.records(mc, run);
    if (!records) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED,
                          ("Cannot hand the outputs on: %s", records.error().message().c_str()),
                          (nullptr));
        return GST_FLOW_ERROR;
    }

    if (s.frame_mode) {
        // The input has been read: it leaves the frame (its pool buffer goes back now) and the
        // outputs ride on instead.
        if (!input.attached_id.empty())
            eg::detach_tensor(outbuf, input.attached_id);
        std::vector<eg::AttachedTensor> riders;
        for (auto& r : *records)
            riders.push_back(eg::AttachedTensor{std::move(r), std::nullopt});
        if (auto r = eg::attach_tensors(outbuf, std::move(riders), true); !r)
            GST_WARNING_OBJECT(self, "no GstTensorMeta for the outputs: %s",
                               r.error().message().c_str());
    } else {
        // other/tensors: each output as the caps said (a dynamic batch is the input's).
        const auto& shapes = s.outputs.shapes();
        for (size_t i = 0; i < records->size(); ++i) {
            const auto& r = (*records)[i];
            if (i < shapes.size() && shapes[i] &&
                et::Shape(r.dims.begin(), r.dims.end()) != *shapes[i]) {
                GST_ELEMENT_ERROR(
                    self, STREAM, FAILED,
                    ("Output '%s' of model '%s' came out %s; its caps say %s.",
                     mc.outputs[i].name.c_str(), session.model_path().c_str(),
                     et::infer_shape_string(std::vector<int64_t>(r.dims.begin(), r.dims.end()))
                         .c_str(),
                     eg::dimensions_string(*shapes[i]).c_str()),
                    (nullptr));
                return GST_FLOW_ERROR;
            }
        }
        for (const auto& r : *records)
            gst_buffer_append_memory(outbuf, gst_buffer_get_memory(r.data.get(), 0));
        if (eg::have_gst_tensor_meta())
            if (auto r = eg::add_gst_tensor_meta(outbuf, *records); !r)
                GST_WARNING_OBJECT(self, "no GstTensorMeta for the outputs: %s",
                                   r.error().message().c_str());
        if (records->size() == 1)
            gst_buffer_add_edge_tensor_meta(outbuf, nullptr, FALSE);
    }
    st.frames++;
    GST_LOG_OBJECT(self, "run %" G_GUINT64_FORMAT ": input %s", st.frames.load(),
                   std::string(et::infer_binding_name(session.input_binding(0).kind)).c_str());
    return GST_FLOW_OK;
}

} // namespace edgetensor::gst::tensorinfer
