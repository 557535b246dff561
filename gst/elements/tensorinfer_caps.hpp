// SPDX-License-Identifier: MIT
//
// tensorinfer's caps: the two ways a tensor reaches the model and how the outputs leave.
//
//  - other/tensors in (tensorconvert, tensorbatch, NNStreamer; no frame travels): the tensor is
//    the buffer; out goes NNStreamer's other/tensors with one tensor per model output (one
//    memory each, num_tensors = the outputs), static shapes only (a dynamic batch takes the
//    input's), for NNStreamer and GStreamer 1.22; on 1.26+ the same tensors in a GstTensorMeta.
//  - video/x-raw in (tensorconvert output-mode=meta): the frame passes through untouched, the
//    tensor rides on it (attached_tensors.hpp) and the outputs ride on it out, as GstTensorMeta
//    for upstream's decoders; on 1.28 the src caps describe them in the `tensors` field
//    (tensorgroups / tensor/strided, 0 for a dynamic dimension), which 1.28's decoders and
//    tensordecodebin match.

#pragma once

#include "tensorinfer_naming.hpp"

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

#include <edgetensor/infer.hpp>

#include <optional>
#include <vector>

namespace edgetensor::gst::tensorinfer
{

extern GstStaticPadTemplate sink_template;
extern GstStaticPadTemplate src_template;

/// What caps need to know of the open model (a snapshot made at start).
struct ModelCaps {
    InferTensorInfo input;
    std::vector<InferTensorInfo> outputs;
    OutputNaming naming;
};

/// The batch an input of `in_shape` carries for `input`: its first dimension when it has the
/// model's rank and the model's first dimension is dynamic, else 1.
size_t batch_of(const InferTensorInfo& input, const Shape& in_shape) noexcept;

/// Each output's shape for a batch of `batch`: the model's static dimensions, a dynamic first
/// dimension the batch when the input's first dimension is dynamic too; nullopt for an output
/// with another dynamic dimension (known only after a run).
std::vector<std::optional<Shape>> output_shapes(const ModelCaps& m, size_t batch);

/// other/tensors with one static tensor per output (`shapes` all set), NNStreamer's spelling
/// (types and dimensions comma-separated, dimensions innermost first), `framerate` when
/// `fps_d` > 0.
GstCaps* output_tensors_caps(const ModelCaps& m, const std::vector<Shape>& shapes, int fps_n,
                             int fps_d);

/// GstBaseTransform::transform_caps. `m` null: no model open yet (templates only).
GstCaps* transform_caps(const ModelCaps* m, GstPadDirection direction, GstCaps* caps,
                        GstCaps* filter);

/// On GStreamer 1.28, sets the `tensors` field describing the outputs on `s` (video/x-raw);
/// elsewhere nothing.
void set_tensors_field(GstStructure* s, const ModelCaps& m);

} // namespace edgetensor::gst::tensorinfer
