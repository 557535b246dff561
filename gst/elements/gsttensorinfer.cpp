// SPDX-License-Identifier: MIT
//
// tensorinfer: a model run on our tensors where they lie (edgetensor::InferSession). The
// GstBaseTransform adapter; the per-buffer run in tensorinfer_run, the state both share in
// tensorinfer_element.hpp, caps in tensorinfer_caps, the input's way to the runtime in
// tensorinfer_input, output pools in tensorinfer_outputs, output ids in tensorinfer_naming,
// boxes onto the frame in tensorinfer_boxes, properties in tensorinfer_properties.

// Launch lines stay one per line, as users paste them.
// clang-format off
/**
 * SECTION:element-tensorinfer
 * @title: tensorinfer
 *
 * Runs an ONNX (ONNX Runtime) or TensorFlow Lite model on the tensors tensorconvert and
 * tensorbatch make, reading them where they lie: ONNX Runtime gets a value over the tensor's
 * own mapping, TensorFlow Lite a custom allocation, and a DMA-BUF is handed to a TensorFlow
 * Lite delegate that can take it (docs/inference.md). An input the runtime cannot read in place
 * is copied, counted (#GstTensorInfer:copies) and warned about once, or refused
 * (#GstTensorInfer:copy-mode). Outputs are written by the runtime straight into pooled tensors.
 *
 * Two ways in:
 *
 * - `other/tensors` (one tensor; a batch `[N, ...]` feeds a model whose first dimension is
 *   dynamic): out goes `other/tensors` with one tensor per model output (NNStreamer's
 *   convention, static shapes), and on GStreamer 1.26+ the same tensors in a GstTensorMeta.
 *   A tensor the model cannot take (dtype, layout, shape) is refused at caps time, naming both.
 * - `video/x-raw` with the tensor riding on the frame (`tensorconvert output-mode=meta`): the
 *   frame passes through untouched and the outputs ride on it as GstTensorMeta (1.26+), tensor
 *   ids from the output names (#GstTensorInfer:tensor-ids), so upstream's decoders
 *   (ssdobjectdetector; ssdtensordec, yolov8tensordec, tensordecodebin on 1.28) decode them.
 *   With a crop or letterbox, SSD and YOLOv8 boxes are mapped onto the frame
 *   (#GstTensorInfer:map-boxes).
 *
 * The model is opened at start (READY to PAUSED); a missing or corrupt model, a runtime absent
 * at run time, an execution provider or delegate that cannot be had are element errors naming
 * the file and the cause. The plugin needs neither runtime to load. At EOS the element posts an
 * element message `edgetensor-infer-stats` (the #GstTensorInfer:stats structure).
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src io-mode=dmabuf ! tensorconvert width=300 height=300 letterbox=true output-mode=meta ! tensorinfer model=ssd.onnx ! ssdobjectdetector ! objectdetectionoverlay ! autovideosink
 * gst-launch-1.0 tensortestsrc num-buffers=100 ! video/x-raw,format=NV12,width=1920,height=1080 ! tensorconvert width=224 height=224 dtype=float32 layout=chw ! tensorinfer model=classifier.onnx ! fakesink
 * ]|
 */
// clang-format on

#include "gsttensorinfer.h"

#include "attached_tensors.hpp"
#include "glib_raii.hpp"
#include "internal.hpp"
#include "pool_negotiation.hpp"
#include "tensorinfer_caps.hpp"
#include "tensorinfer_element.hpp"
#include "tensorinfer_input.hpp"
#include "tensorinfer_naming.hpp"
#include "tensorinfer_outputs.hpp"
#include "tensorinfer_properties.hpp"
#include "tensorinfer_run.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <edgetensor/infer.hpp>

#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

GST_DEBUG_CATEGORY(gst_tensor_infer_debug);
#define GST_CAT_DEFAULT gst_tensor_infer_debug

namespace
{

namespace eg = edgetensor::gst;
namespace et = edgetensor;
namespace ti = edgetensor::gst::tensorinfer;

constexpr const char* kStatsName = "edgetensor-infer-stats";

// The element's state (tensorinfer_element.hpp), shared with tensorinfer_run.cpp.
using ti::code_of;
using ti::ModelInfo;
using ti::settings_snapshot;
using ti::State;
using ti::state_of;
using ti::Streaming;

} // namespace

G_DEFINE_TYPE(GstTensorInfer, gst_tensor_infer, GST_TYPE_BASE_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE(tensorinfer, "tensorinfer", GST_RANK_NONE, GST_TYPE_TENSOR_INFER)

GType gst_tensor_infer_backend_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_INFER_BACKEND_AUTO,
         "By the model file: a TensorFlow Lite flatbuffer or .tflite, else .onnx or an ONNX "
         "protobuf",
         "auto"},
        {GST_TENSOR_INFER_BACKEND_ONNXRUNTIME, "ONNX Runtime", "onnxruntime"},
        {GST_TENSOR_INFER_BACKEND_TFLITE, "TensorFlow Lite", "tflite"},
        {0, nullptr, nullptr},
    };
    if (g_once_init_enter(&type)) {
        GType t = g_enum_register_static("GstTensorInferBackend", values);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

GType gst_tensor_infer_copy_mode_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_INFER_COPY_AUTO,
         "Copy an input the runtime cannot read where it lies (counted, warned once)", "auto"},
        {GST_TENSOR_INFER_COPY_NEVER, "Refuse such an input (element error)", "never"},
        {0, nullptr, nullptr},
    };
    if (g_once_init_enter(&type)) {
        GType t = g_enum_register_static("GstTensorInferCopyMode", values);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

namespace
{

// ---- statistics ----------------------------------------------------------------------------

GstStructure* make_stats(GstTensorInfer* self)
{
    State& st = state_of(self);
    const ModelInfo m = st.model();
    const et::InferStats s = m.stats();
    const guint64 element_copies = st.element_copies.load();
    const guint64 frames = st.frames.load();
    const guint64 copies = s.copies + element_copies;
    return gst_structure_new(
        kStatsName, "frames", G_TYPE_UINT64, frames, "runs", G_TYPE_UINT64, guint64(s.runs),
        "copies", G_TYPE_UINT64, copies, "input-copies", G_TYPE_UINT64,
        guint64(s.input_copies) + element_copies, "output-copies", G_TYPE_UINT64,
        guint64(s.output_copies), "inputs-in-place", G_TYPE_UINT64, guint64(s.inputs_in_place),
        "dmabuf-handoffs", G_TYPE_UINT64, guint64(s.dmabuf_handoffs), "zero-copy", G_TYPE_BOOLEAN,
        gboolean(frames > 0 && copies == 0), "backend", G_TYPE_STRING, m.backend.c_str(),
        "execution-provider", G_TYPE_STRING, m.execution_provider.c_str(), "runtime-version",
        G_TYPE_STRING, m.runtime_version.c_str(), nullptr);
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_infer_set_property(GObject* object, guint prop_id, const GValue* value,
                                   GParamSpec* pspec)
{
    eg::guarded(object, "set_property", [&] {
        eg::store_setting(object, ti::setting_fields(), state_of(object).settings, prop_id, value,
                          pspec);
    });
}

void get_property_impl(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec)
{
    auto* self = GST_TENSOR_INFER(object);
    State& st = state_of(self);
    if (eg::load_setting(object, ti::setting_fields(), st.settings, prop_id, value))
        return;
    switch (prop_id) {
    case ti::PROP_COPIES: {
        g_value_set_uint64(value, st.model().stats().copies + st.element_copies.load());
        break;
    }
    case ti::PROP_STATS:
        g_value_take_boxed(value, make_stats(self));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
}

void gst_tensor_infer_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec)
{
    eg::guarded(object, "get_property", [&] { get_property_impl(object, prop_id, value, pspec); });
}

void gst_tensor_infer_finalize(GObject* object)
{
    auto* self = GST_TENSOR_INFER(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_infer_parent_class)->finalize(object);
}

// ---- start / stop --------------------------------------------------------------------------

// The model's open failure as an element error: which file, why, what to do.
void post_open_error(GstTensorInfer* self, const ti::Settings& s, const et::Error& e)
{
    const std::string debug = "edgetensor error " + code_of(e) + "; backend " +
                              std::string(et::infer_backend_name(et::InferBackend(s.backend))) +
                              ", execution-provider \"" + s.execution_provider + "\", delegate \"" +
                              s.delegate + "\"";
    if (e.code() == et::ErrorCode::Io && e.sys_errno() == ENOENT)
        GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("%s", e.message().c_str()),
                          ("%s", debug.c_str()));
    else if (e.code() == et::ErrorCode::Io)
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("%s", e.message().c_str()),
                          ("%s", debug.c_str()));
    else
        GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("%s", e.message().c_str()), ("%s", debug.c_str()));
}

bool start_impl(GstTensorInfer* self)
{
    state_of(self).refusal.reset();
    const ti::Settings s = settings_snapshot(self);
    if (s.model.empty()) {
        GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND,
                          ("tensorinfer has no model: set the \"model\" property to an ONNX "
                           "(.onnx) or TensorFlow Lite (.tflite) file."),
                          (nullptr));
        return false;
    }
    auto opened = et::InferSession::open(s.model, ti::infer_options(s));
    if (!opened) {
        post_open_error(self, s, opened.error());
        return false;
    }
    auto session = std::make_shared<et::InferSession>(std::move(*opened));
    if (session->inputs().size() != 1) {
        std::string names;
        for (const auto& i : session->inputs())
            names += (names.empty() ? "" : ", ") + i.name;
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("Model '%s' has %zu inputs (%s); tensorinfer feeds a model one tensor.",
                           s.model.c_str(), session->inputs().size(), names.c_str()),
                          (nullptr));
        return false;
    }
    auto naming = ti::name_outputs(session->outputs(), s.model, s.tensor_ids, s.tensor_group,
                                   ti::this_release());
    if (!naming) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("%s", naming.error().message().c_str()),
                          (nullptr));
        return false;
    }
    auto caps = std::make_shared<ti::ModelCaps>();
    caps->input = session->inputs()[0];
    caps->outputs = session->outputs();
    caps->naming = std::move(*naming);

    std::string version;
    if (auto info = et::infer_runtime_info(session->backend()))
        version = info->runtime_version;
    GST_INFO_OBJECT(self, "model %s: %s %s (%s), input '%s' %s %s", s.model.c_str(),
                    std::string(et::infer_backend_name(session->backend())).c_str(),
                    version.c_str(), session->execution_provider().c_str(),
                    caps->input.name.c_str(),
                    std::string(et::dtype_name(caps->input.dtype)).c_str(),
                    et::infer_shape_string(caps->input.shape, caps->input.dim_names).c_str());
    for (size_t i = 0; i < caps->outputs.size(); ++i)
        GST_INFO_OBJECT(self, "output '%s' %s %s -> tensor id '%s'", caps->outputs[i].name.c_str(),
                        std::string(et::dtype_name(caps->outputs[i].dtype)).c_str(),
                        et::infer_shape_string(caps->outputs[i].shape).c_str(),
                        caps->naming.outputs[i].id.c_str());

    State& st = state_of(self);
    st.trailing_bytes = session->input_rules().trailing_bytes;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        st.streaming.input.start(session->input_rules());
        st.streaming.checked.reset();
        st.streaming.warned_input_copy = false;
        st.streaming.warned_output_copy = false;
        st.streaming.last_output_copies = 0;
    }
    st.frames = 0;
    st.element_copies = 0;
    ModelInfo info;
    info.backend = et::infer_backend_name(session->backend());
    info.execution_provider = session->execution_provider();
    info.session = std::move(session);
    info.caps = std::move(caps);
    info.runtime_version = std::move(version);
    std::lock_guard<std::mutex> lock(st.info_mu);
    st.info = std::move(info);
    return true;
}

gboolean gst_tensor_infer_start(GstBaseTransform* trans)
{
    return eg::guarded(trans, "start", FALSE,
                       [trans] { return start_impl(GST_TENSOR_INFER(trans)) ? TRUE : FALSE; });
}

gboolean gst_tensor_infer_stop(GstBaseTransform* trans)
{
    return eg::guarded(trans, "stop", FALSE, [trans]() -> gboolean {
        State& st = state_of(trans);
        {
            std::lock_guard<std::mutex> lock(st.mu);
            st.streaming.input.stop();
            st.streaming.outputs.stop();
            st.streaming.checked.reset();
        }
        // The session goes last, outside both locks: closing it may join runtime threads.
        // Its counters stay readable until the next start.
        std::shared_ptr<et::InferSession> session;
        {
            std::lock_guard<std::mutex> lock(st.info_mu);
            st.info.closed_stats = st.info.stats();
            session = std::move(st.info.session);
            st.info.caps.reset();
        }
        session.reset();
        return TRUE;
    });
}

// ---- caps ----------------------------------------------------------------------------------

GstCaps* gst_tensor_infer_transform_caps(GstBaseTransform* trans, GstPadDirection direction,
                                         GstCaps* caps, GstCaps* filter)
{
    return eg::guarded(
        trans, "transform_caps", [] { return gst_caps_new_empty(); },
        [&] {
            const ModelInfo m = state_of(trans).model();
            return ti::transform_caps(m.caps.get(), direction, caps, filter);
        });
}

bool set_caps_impl(GstTensorInfer* self, GstCaps* incaps)
{
    State& st = state_of(self);
    const ModelInfo m = st.model();
    if (!m.session || !m.caps) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("tensorinfer has no model open."), (nullptr));
        return false;
    }
    auto layout = eg::stream_layout_from_caps(incaps);
    if (!layout) {
        GST_ELEMENT_ERROR(
            self, CORE, NEGOTIATION,
            ("Cannot take %" GST_PTR_FORMAT ": %s", incaps, layout.error().message().c_str()),
            (nullptr));
        return false;
    }
    const ti::ModelCaps& mc = *m.caps;
    std::vector<std::optional<et::Shape>> shapes;
    const bool frame_mode = (*layout)->video;
    if (!frame_mode) {
        const eg::TensorCaps& tc = (*layout)->tensor;
        if (auto ok = m.session->check_input(0, tc.dtype, tc.shape); !ok) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("%s", ok.error().message().c_str()),
                              ("caps %" GST_PTR_FORMAT, incaps));
            return false;
        }
        shapes = ti::output_shapes(mc, ti::batch_of(mc.input, tc.shape));
        for (size_t i = 0; i < shapes.size(); ++i) {
            if (!shapes[i]) {
                GST_ELEMENT_ERROR(
                    self, CORE, NEGOTIATION,
                    ("Output '%s' of model '%s' has a dynamic shape %s; other/tensors needs "
                     "static shapes. Feed tensorinfer frames with the tensor riding on them "
                     "(tensorconvert output-mode=meta) to get it as GstTensorMeta.",
                     mc.outputs[i].name.c_str(), m.session->model_path().c_str(),
                     et::infer_shape_string(mc.outputs[i].shape, mc.outputs[i].dim_names).c_str()),
                    (nullptr));
                return false;
            }
        }
    } else {
        shapes = ti::output_shapes(mc, 1);
    }
    std::lock_guard<std::mutex> lock(st.mu);
    Streaming& s = st.streaming;
    s.frame_mode = frame_mode;
    s.checked.reset();
    s.input.set_layout(frame_mode ? nullptr : *layout);
    if (!s.outputs.configure(GST_ELEMENT(self), mc, shapes)) {
        GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Cannot set up the output tensors' pools."),
                          ("caps %" GST_PTR_FORMAT, incaps));
        return false;
    }
    gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), frame_mode);
    GST_DEBUG_OBJECT(self, "%s mode for %" GST_PTR_FORMAT, frame_mode ? "frame" : "tensor", incaps);
    return true;
}

gboolean gst_tensor_infer_set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* outcaps)
{
    return eg::guarded(trans, "set_caps", FALSE, [&] {
        return state_of(trans).refusal.set_caps(
                   GST_CAT_DEFAULT, GST_OBJECT(trans), incaps, outcaps, 0,
                   [&] { return set_caps_impl(GST_TENSOR_INFER(trans), incaps); })
                   ? TRUE
                   : FALSE;
    });
}

// ---- allocation ----------------------------------------------------------------------------

// Tensors: our pool, whose buffers carry the spare bytes the runtime reads past a tensor.
// Frames: downstream's answer (the frame goes there untouched), plus what a tensor riding on
// it needs (the attached-tensor meta's parameters), for tensorconvert output-mode=meta.
gboolean gst_tensor_infer_propose_allocation(GstBaseTransform* trans, GstQuery*, GstQuery* query)
{
    return eg::guarded(trans, "propose_allocation", TRUE, [&]() -> gboolean {
        GstCaps* caps = nullptr;
        gst_query_parse_allocation(query, &caps, nullptr);
        if (!caps || gst_caps_is_empty(caps))
            return TRUE;
        const size_t trailing = state_of(trans).trailing_bytes.load();
        if (gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw")) {
            gst_pad_peer_query(GST_BASE_TRANSFORM_SRC_PAD(trans), query);
            eg::StructurePtr params(gst_structure_new(eg::kAttachedTensorParams, "alignment",
                                                      G_TYPE_UINT, 64u, "trailing-bytes",
                                                      G_TYPE_UINT, guint(trailing), nullptr));
            gst_query_add_allocation_meta(query, eg::attached_tensors_meta_api_type(),
                                          params.get());
            return TRUE;
        }
        eg::PoolPolicy policy;
        policy.trailing_bytes = trailing;
        eg::PoolProposal proposal;
        proposal.with_allocator = true;
        eg::propose_pool(GST_ELEMENT(trans), query, policy, proposal);
        return TRUE;
    });
}

// Output buffers are made here (tensors) or are the frames themselves: no pool downstream.
gboolean gst_tensor_infer_decide_allocation(GstBaseTransform*, GstQuery*)
{
    return TRUE;
}

GstFlowReturn gst_tensor_infer_prepare_output_buffer(GstBaseTransform* trans, GstBuffer* inbuf,
                                                     GstBuffer** outbuf)
{
    if (gst_base_transform_is_in_place(trans))
        return GST_BASE_TRANSFORM_CLASS(gst_tensor_infer_parent_class)
            ->prepare_output_buffer(trans, inbuf, outbuf);
    GstBuffer* out = gst_buffer_new();
    gst_buffer_copy_into(
        out, inbuf, GstBufferCopyFlags(GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS), 0, -1);
    *outbuf = out;
    return GST_FLOW_OK;
}

GstFlowReturn gst_tensor_infer_transform(GstBaseTransform* trans, GstBuffer* inbuf,
                                         GstBuffer* outbuf)
{
    return eg::guarded(trans, "transform", GST_FLOW_ERROR,
                       [&] { return ti::run_buffer(GST_TENSOR_INFER(trans), inbuf, outbuf); });
}

GstFlowReturn gst_tensor_infer_transform_ip(GstBaseTransform* trans, GstBuffer* buf)
{
    return gst_tensor_infer_transform(trans, buf, buf);
}

gboolean gst_tensor_infer_sink_event(GstBaseTransform* trans, GstEvent* event)
{
    auto* self = GST_TENSOR_INFER(trans);
    if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) {
        eg::guarded(self, "sink_event", [self] {
            GstStructure* s = make_stats(self);
            eg::GCharPtr str(gst_structure_to_string(s));
            GST_INFO_OBJECT(self, "%s", str.get());
            gst_element_post_message(GST_ELEMENT(self),
                                     gst_message_new_element(GST_OBJECT(self), s));
        });
    }
    return GST_BASE_TRANSFORM_CLASS(gst_tensor_infer_parent_class)->sink_event(trans, event);
}

} // namespace

static void gst_tensor_infer_class_init(GstTensorInferClass* klass)
{
    gst_edge_tensor_init();
    GST_DEBUG_CATEGORY_INIT(gst_tensor_infer_debug, "tensorinfer", 0,
                            "edgetensor inference (ONNX Runtime, TensorFlow Lite)");

    GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    GstBaseTransformClass* bt = GST_BASE_TRANSFORM_CLASS(klass);

    gobject_class->set_property = gst_tensor_infer_set_property;
    gobject_class->get_property = gst_tensor_infer_get_property;
    gobject_class->finalize = gst_tensor_infer_finalize;

    ti::install_properties(gobject_class);

    gst_element_class_add_static_pad_template(element_class, &ti::sink_template);
    gst_element_class_add_static_pad_template(element_class, &ti::src_template);
    gst_element_class_set_static_metadata(
        element_class, "Tensor inference", "Filter/Tensor/Inference",
        "Runs an ONNX (ONNX Runtime) or TensorFlow Lite model on edgetensor tensors where they "
        "lie, without copying them; outputs as other/tensors, or riding on the frame as "
        "GstTensorMeta for upstream's tensor decoders. Example: gst-launch-1.0 v4l2src ! "
        "tensorconvert width=300 height=300 output-mode=meta ! tensorinfer model=ssd.onnx ! "
        "ssdobjectdetector ! objectdetectionoverlay ! autovideosink",
        "edgetensor developers");

    bt->start = gst_tensor_infer_start;
    bt->stop = gst_tensor_infer_stop;
    bt->transform_caps = gst_tensor_infer_transform_caps;
    bt->set_caps = gst_tensor_infer_set_caps;
    bt->propose_allocation = gst_tensor_infer_propose_allocation;
    bt->decide_allocation = gst_tensor_infer_decide_allocation;
    bt->prepare_output_buffer = gst_tensor_infer_prepare_output_buffer;
    bt->transform = gst_tensor_infer_transform;
    bt->transform_ip = gst_tensor_infer_transform_ip;
    bt->sink_event = gst_tensor_infer_sink_event;
    bt->passthrough_on_same_caps = FALSE;
    bt->transform_ip_on_passthrough = FALSE;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_INFER_BACKEND, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_INFER_COPY_MODE, GstPluginAPIFlags(0));
}

static void gst_tensor_infer_init(GstTensorInfer* self)
{
    self->state = new State();
    gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
}
