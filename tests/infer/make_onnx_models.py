#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the ONNX models the inference tests run, made at test time with python3-onnx.

  make_onnx_models.py OUTDIR

Exit status 77 when python3-onnx is missing (the tests skip, or fail where the lane requires
ONNX Runtime). The values are formulas the C++ tests recompute (tests/infer/onnx_models.hpp
names each model, its tensors and its formulas):

  ssd_u8.onnx      input "image" u8 [1, 16, 16, 3] (NHWC); the four TF-SSD outputs:
                   detection_boxes f32 [1, 3, 4] = box(i) constants, detection_classes f32
                   [1, 3] = 1, 2, 3, detection_scores f32 [1, 3] = mean of channel i / 255,
                   num_detections f32 [1] = 3
  conv_f32.onnx    input "input" f32 [1, 3, 8, 8] (NCHW) -> Conv 3x3 pad 1 (2 filters) + Relu
                   -> "output" f32 [1, 2, 8, 8]; weight(o, i, y, x) =
                   ((o * 27 + i * 9 + y * 3 + x) % 7 - 3) / 10, bias = 0.1, -0.2
  conv_batch.onnx  the same with the batch dimension dynamic ("N")
  nonzero.onnx     input "x" f32 [4] -> NonZero -> "indices" i64 [1, ?] (empty for zeros)
  bool.onnx        input "flags" bool [2] -> Not -> "inverted" bool [2] (no edgetensor dtype)
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


def ssd(path, detections=3, name="ssd_u8"):
    """`detections`: the outputs' detection dimension, 3 or a dynamic name such as "N"
    (tests/gst/make_tensorinfer_models.py's ssd_dyn.onnx); the values are the same."""
    image = helper.make_tensor_value_info("image", TensorProto.UINT8, [1, 16, 16, 3])
    n = detections
    outs = [
        helper.make_tensor_value_info("detection_boxes", TensorProto.FLOAT, [1, n, 4]),
        helper.make_tensor_value_info("detection_classes", TensorProto.FLOAT, [1, n]),
        helper.make_tensor_value_info("detection_scores", TensorProto.FLOAT, [1, n]),
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
    save(helper.make_graph(nodes, name, [image], outs, init), path)


def conv(path, batch):
    w = np.array([((o * 27 + i * 9 + y * 3 + x) % 7 - 3) / 10.0
                  for o in range(2) for i in range(3) for y in range(3) for x in range(3)],
                 dtype=np.float32).reshape(2, 3, 3, 3)
    b = np.array([0.1, -0.2], dtype=np.float32)
    inp = helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, 8, 8])
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch, 2, 8, 8])
    nodes = [
        helper.make_node("Conv", ["input", "w", "b"], ["c"], pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["output"]),
    ]
    init = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    save(helper.make_graph(nodes, "conv", [inp], [out], init), path)


def nonzero(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("indices", TensorProto.INT64, [1, None])
    save(helper.make_graph([helper.make_node("NonZero", ["x"], ["indices"])], "nonzero", [x],
                           [y]), path)


def boolean(path):
    x = helper.make_tensor_value_info("flags", TensorProto.BOOL, [2])
    y = helper.make_tensor_value_info("inverted", TensorProto.BOOL, [2])
    save(helper.make_graph([helper.make_node("Not", ["flags"], ["inverted"])], "bool", [x], [y]),
         path)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ssd(os.path.join(out, "ssd_u8.onnx"))
    conv(os.path.join(out, "conv_f32.onnx"), 1)
    conv(os.path.join(out, "conv_batch.onnx"), "N")
    nonzero(os.path.join(out, "nonzero.onnx"))
    boolean(os.path.join(out, "bool.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
