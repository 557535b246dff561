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

# save() and the SSD graph are the inference library tests' (one definition of the
# values both suites' C++ recomputes).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "infer"))
from make_onnx_models import save, ssd  # noqa: E402


def yolo_box(i):
    return [4.0 + 6.0 * i, 5.0 + 4.0 * i, 6.0, 8.0]


def ssd_dyn(path):
    ssd(path, detections="N", name="ssd_dyn")


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
