// SPDX-License-Identifier: MIT
//
// What tensorinfer calls each model output in GstTensorMeta, so that upstream's tensor decoders
// find it: the tensor id (what a decoder looks tensors up by), the dimension order it reads
// them in, the group GStreamer 1.28 describes them under in caps, and which outputs hold boxes
// (rewritten onto the frame when the tensor came with a frame transform). The decoders' ids
// differ between releases: 1.26's ssdobjectdetector reads Gst.Model.ObjectDetector.*, 1.28's
// ssdtensordec (and its deprecated ssdobjectdetector) ssd-mobilenet-v1-variant-1-out-* and
// generic-variant-1-out-count, 1.28's yolov8tensordec yolo-v8-out. Pure (no GObject); the
// element calls it at start.

#pragma once

#include "gst_tensor_meta.hpp"

#include <edgetensor/error.hpp>
#include <edgetensor/infer.hpp>

#include <string>
#include <utility>
#include <vector>

namespace edgetensor::gst::tensorinfer
{

/// How an output holds boxes a frame transform applies to.
enum class BoxFormat {
    None,
    /// [..., N, 4] float32: ymin, xmin, ymax, xmax normalised to the input picture (TF-SSD).
    SsdNormalizedYxyx,
    /// [1, 4 + classes, N] float32: rows cx, cy, w, h in input-picture pixels, then class
    /// scores (YOLOv8 and later, Ultralytics' export).
    YoloCxcywhPixels,
};

/// Which GStreamer's decoders the default ids are for.
enum class DecoderRelease {
    Gst126, ///< 1.26: ssdobjectdetector
    Gst128, ///< 1.28: ssdtensordec, yolov8tensordec, tensordecodebin
};

/// The release this build's GStreamer is (1.26 and older than 1.28 read 1.26's ids).
DecoderRelease this_release() noexcept;

struct OutputName {
    std::string id;
    TensorDimOrder order = TensorDimOrder::RowMajor;
    BoxFormat boxes = BoxFormat::None;
    /// A dimension GStreamer 1.28's caps state as 0 (any size) whatever the model says, as the
    /// decoder of this id declares it (SSD's detection count: ssdtensordec's sink template has
    /// 0 there, and its accept-caps wants a subset); -1: none.
    int caps_any_dim = -1;
};

struct OutputNaming {
    std::vector<OutputName> outputs; ///< one per model output, in the model's order
    std::string group;               ///< the caps' tensor group (1.28)
};

/// "a=b, c=d" -> {{a, b}, {c, d}}; spaces around names trimmed. InvalidArgument naming the
/// piece for one without '=', an empty name or id, or a name given twice.
Result<std::vector<std::pair<std::string, std::string>>> parse_tensor_ids(const std::string& s);

/// The names of `outputs` (a model's, `model` its file for messages) under `release`'s
/// decoders, with `tensor_ids` (the property, parsed) and `group` (the property; empty: the
/// default) applied. InvalidArgument when a mapping names no output (listing the outputs) or two
/// outputs would get one id.
Result<OutputNaming> name_outputs(const std::vector<InferTensorInfo>& outputs,
                                  const std::string& model, const std::string& tensor_ids,
                                  const std::string& group, DecoderRelease release);

} // namespace edgetensor::gst::tensorinfer
