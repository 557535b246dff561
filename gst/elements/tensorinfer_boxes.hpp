// SPDX-License-Identifier: MIT
//
// Detector outputs rewritten from the tensor's picture onto the frame it was converted from:
// the crop and letterbox tensorconvert recorded (FrameTransform) undone on the box outputs the
// decoders read, in place, so that `tensorconvert width=640 height=640 letterbox=true
// output-mode=meta ! tensorinfer ! ssdobjectdetector ! objectdetectionoverlay` draws on the
// 1080p frame where the objects are. Pure; the element calls it after each run.

#pragma once

#include "frame_transform.hpp"
#include "tensorinfer_naming.hpp"

#include <edgetensor/error.hpp>
#include <edgetensor/tensor_dyn.hpp>

namespace edgetensor::gst::tensorinfer
{

/// Rewrites the boxes of `output` (`format`, shaped `shape`) from tensor to frame coordinates
/// under `t`. SSD boxes stay normalised (now to the frame) and are clamped to it (0..1), as a
/// box in the letterbox padding would otherwise point outside the frame; YOLO centres and sizes
/// become frame pixels. InvalidShape when the output is not the format's shape or dtype; None
/// and an identity transform change nothing.
Result<void> map_boxes(BoxFormat format, TensorDyn& output, const Shape& shape,
                       const FrameTransform& t);

} // namespace edgetensor::gst::tensorinfer
