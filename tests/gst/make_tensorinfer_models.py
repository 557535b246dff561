#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the detector-shaped ONNX models tensorinfer's decoder tests run, with python3-onnx.

  make_tensorinfer_models.py OUTDIR

Exit status 77 when python3-onnx is missing. The C++ tests recompute every value
(tests/gst/tensorinfer_models.hpp):

  ssd_dyn.onnx   input "image" u8 [1, 16, 16, 3]; the four TF-SSD outputs of
                 tests/infer/make_onnx_models.py's ssd_u8.onnx (boxes box(i), classes 1, 2, 3,
                 scores the mean of channel i / 255, num_detections 3), declared with a dynamic
                 detection count "N" ([1, N, 4], [1, N], [1, N], [1]), as GStreamer 1.28.8's
                 tensordecodebin wants them
  yolo.onnx      input "image" u8 [1, 16, 16, 3] -> "output0" f32 [1, 6, 2]: two candidates,
                 rows cx, cy, w, h (input pixels: yolo_box(i)), then two class scores,
                 candidate i scoring 0.9 for class i and 0.05 for the other
  two_inputs.onnx  inputs "a" and "b" f32 [4] -> Add -> "sum" f32 [4] (one input too many)
"""

import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover - depends on the host
    print(f"python3-onnx (or numpy) is missing: {e}", file=sys.stderr)
    sys.exit(77)

OPSET = 13
IR_VERSION = 8  # what ONNX Runtime 1.21 and later read


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="edgetensor-tests")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx.save(model, path)


def box(i):
    return [0.1 * i, 0.2, 0.5 + 0.1 * i, 0.9]


def yolo_box(i):
    return [4.0 + 6.0 * i, 5.0 + 4.0 * i, 6.0, 8.0]


def ssd_dyn(path):
    image = helper.make_tensor_value_info("image", TensorProto.UINT8, [1, 16, 16, 3])
    outs = [
        helper.make_tensor_value_info("detection_boxes", TensorProto.FLOAT, [1, "N", 4]),
        helper.make_tensor_value_info("detection_classes", TensorProto.FLOAT, [1, "N"]),
        helper.make_tensor_value_info("detection_scores", TensorProto.FLOAT, [1, "N"]),
        helper.make_tensor_value_info("num_detections", TensorProto.FLOAT, [1]),
    ]
    boxes = np.array([[box(i) for i in range(3)]], dtype=np.float32)
    nodes = [
        helper.make_node("Cast", ["image"], ["x"], to=TensorProto.FLOAT),
        helper.make_node("ReduceMean", ["x"], ["mean"], axes=[1, 2], keepdims=0),
        helper.make_node("Div", ["mean", "k255"], ["detection_scores"]),
        helper.make_node("Identity", ["boxes"], ["detection_boxes"]),
        helper.make_node("Identity", ["classes"], ["detection_classes"]),
        helper.make_node("Identity", ["num"], ["num_detections"]),
    ]
    init = [
        numpy_helper.from_array(np.array(255.0, dtype=np.float32), "k255"),
        numpy_helper.from_array(boxes, "boxes"),
        numpy_helper.from_array(np.array([[1, 2, 3]], dtype=np.float32), "classes"),
        numpy_helper.from_array(np.array([3], dtype=np.float32), "num"),
    ]
    save(helper.make_graph(nodes, "ssd_dyn", [image], outs, init), path)


def yolo(path):
    image = helper.make_tensor_value_info("image", TensorProto.UINT8, [1, 16, 16, 3])
    out = helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 6, 2])
    rows = np.zeros((1, 6, 2), dtype=np.float32)
    for i in range(2):
        rows[0, 0:4, i] = yolo_box(i)
        rows[0, 4 + i, i] = 0.9
        rows[0, 5 - i, i] = 0.05
    # The image reaches the output (times 0), so the runtime reads it.
    nodes = [
        helper.make_node("Cast", ["image"], ["x"], to=TensorProto.FLOAT),
        helper.make_node("ReduceMean", ["x"], ["m"], axes=[1, 2, 3], keepdims=0),
        helper.make_node("Mul", ["m", "zero"], ["z"]),
        helper.make_node("Add", ["rows", "z"], ["output0"]),
    ]
    init = [
        numpy_helper.from_array(rows, "rows"),
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"),
    ]
    save(helper.make_graph(nodes, "yolo", [image], [out], init), path)


def two_inputs(path):
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [4])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("sum", TensorProto.FLOAT, [4])
    save(helper.make_graph([helper.make_node("Add", ["a", "b"], ["sum"])], "two_inputs", [a, b],
                           [y]), path)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ssd_dyn(os.path.join(out, "ssd_dyn.onnx"))
    yolo(os.path.join(out, "yolo.onnx"))
    two_inputs(os.path.join(out, "two_inputs.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
