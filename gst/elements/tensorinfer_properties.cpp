// SPDX-License-Identifier: MIT
//
// tensorinfer's properties (tensorinfer_properties.hpp).

#include "tensorinfer_properties.hpp"

namespace edgetensor::gst::tensorinfer
{

void install_properties(GObjectClass* klass)
{
    const auto rw_ready =
        GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
    const auto ro = GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_property(
        klass, PROP_MODEL,
        g_param_spec_string("model", "Model",
                            "The model file: ONNX (.onnx) or TensorFlow Lite (.tflite); opened "
                            "when the element starts (READY to PAUSED)",
                            nullptr, rw_ready));
    g_object_class_install_property(
        klass, PROP_BACKEND,
        g_param_spec_enum("backend", "Backend",
                          "The runtime that runs the model: auto = by the file (a TensorFlow Lite "
                          "flatbuffer or .tflite; .onnx or an ONNX protobuf)",
                          GST_TYPE_TENSOR_INFER_BACKEND, DEFAULT_BACKEND, rw_ready));
    g_object_class_install_property(
        klass, PROP_EXECUTION_PROVIDER,
        g_param_spec_string(
            "execution-provider", "Execution provider",
            "ONNX Runtime's execution provider: cpu (always there) or one this process's ONNX "
            "Runtime has (dnnl, xnnpack, ...: the error at start lists them); cpu for "
            "TensorFlow Lite, which takes a delegate instead",
            DEFAULT_EXECUTION_PROVIDER, rw_ready));
    g_object_class_install_property(
        klass, PROP_DELEGATE,
        g_param_spec_string("delegate", "Delegate",
                            "TensorFlow Lite external delegate library (a path or a soname, as "
                            "NPU vendors ship them: libvx_delegate.so, libethosu_delegate.so, "
                            "...); empty = none",
                            nullptr, rw_ready));
    g_object_class_install_property(
        klass, PROP_DELEGATE_OPTIONS,
        g_param_spec_string("delegate-options", "Delegate options",
                            "Options for the delegate: key=value;key=value (passed in order to "
                            "tflite_plugin_create_delegate)",
                            nullptr, rw_ready));
    g_object_class_install_property(
        klass, PROP_N_THREADS,
        g_param_spec_uint("n-threads", "Threads",
                          "Threads the runtime may use for one run (0 = the runtime's default)", 0,
                          MAX_N_THREADS, DEFAULT_N_THREADS, rw_ready));
    g_object_class_install_property(
        klass, PROP_TENSOR_IDS,
        g_param_spec_string(
            "tensor-ids", "Tensor ids",
            "The GstTensorMeta id of each model output: output=id,output=id (the others keep "
            "their default: the id this GStreamer's decoders read for the TF-SSD outputs "
            "detection_boxes/scores/classes, num_detections and a YOLOv8 output0; else the "
            "output's name)",
            nullptr, rw_ready));
    g_object_class_install_property(
        klass, PROP_TENSOR_GROUP,
        g_param_spec_string(
            "tensor-group", "Tensor group",
            "The tensor group the outputs are described as in GStreamer 1.28's caps (the "
            "tensors field decoders and tensordecodebin match); empty = the decoders' group for "
            "the outputs they know, else the model file's name without extension",
            nullptr, rw_ready));
    g_object_class_install_property(
        klass, PROP_MAP_BOXES,
        g_param_spec_boolean(
            "map-boxes", "Map boxes",
            "When the tensor rides on its frame with the crop/letterbox it was converted with "
            "(tensorconvert output-mode=meta), rewrite the box outputs the decoders read (SSD "
            "boxes, YOLOv8) from the tensor's coordinates to the frame's, so boxes land on it",
            DEFAULT_MAP_BOXES, rw_ready));
    g_object_class_install_property(
        klass, PROP_COPY_MODE,
        g_param_spec_enum("copy-mode", "Copy mode",
                          "What to do with an input the runtime cannot read where it lies "
                          "(system memory, misaligned, padded rows, no spare bytes after it for "
                          "TensorFlow Lite): auto = copy it, counted and warned once; never = "
                          "element error",
                          GST_TYPE_TENSOR_INFER_COPY_MODE, DEFAULT_COPY_MODE, rw_ready));
    g_object_class_install_property(
        klass, PROP_COPIES,
        g_param_spec_uint64("copies", "Copies",
                            "Tensor copies since the last start: inputs copied before the "
                            "runtime read them and outputs copied out of the runtime's buffers; 0 "
                            "means the stream was zero-copy",
                            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        klass, PROP_STATS,
        g_param_spec_boxed("stats", "Statistics",
                           "edgetensor-infer-stats: frames, runs, copies, input-copies, "
                           "output-copies, inputs-in-place, dmabuf-handoffs, zero-copy, backend, "
                           "execution-provider, runtime-version (also posted at EOS)",
                           GST_TYPE_STRUCTURE, ro));
}

std::span<const SettingField<Settings>> setting_fields()
{
    static constexpr SettingField<Settings> kFields[] = {
        setting_field<&Settings::model>(PROP_MODEL),
        setting_field<&Settings::backend>(PROP_BACKEND),
        setting_field<&Settings::execution_provider>(PROP_EXECUTION_PROVIDER),
        setting_field<&Settings::delegate>(PROP_DELEGATE),
        setting_field<&Settings::delegate_options>(PROP_DELEGATE_OPTIONS),
        setting_field<&Settings::n_threads>(PROP_N_THREADS),
        setting_field<&Settings::tensor_ids>(PROP_TENSOR_IDS),
        setting_field<&Settings::tensor_group>(PROP_TENSOR_GROUP),
        setting_field<&Settings::map_boxes>(PROP_MAP_BOXES),
        setting_field<&Settings::copy_mode>(PROP_COPY_MODE),
    };
    return kFields;
}

InferOptions infer_options(const Settings& s)
{
    InferOptions o;
    o.backend = InferBackend(s.backend);
    o.execution_provider = s.execution_provider;
    o.delegate = s.delegate;
    o.delegate_options = s.delegate_options;
    o.threads = int(s.n_threads);
    // Outputs whose shape is known only after a run (dynamic) are allocated by the session:
    // heap memory, wrapped for the buffer as it is.
    o.output_memory = TensorMemory::Mem;
    return o;
}

} // namespace edgetensor::gst::tensorinfer
