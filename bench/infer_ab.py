#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whole-process inference A/B (issue 24 item 8): tensorconvert ! tensorinfer vs the stock chain.

`tensorconvert ! tensorinfer` against what users of stock GStreamer run, `videoconvertscale !
onnxinference` (1.26, 1.28) and `videoconvertscale ! tfliteinference` (1.28): 1080p NV12 frames
(one frame, frozen) converted to 640x640 and run through the same model, both sides whole
gst-launch-1.0 processes alternating A, B, B, A (bench/pipeline_ab.py's runner). Reported per
side: CPU per frame and frames per second. Two ONNX models are made here with python3-onnx:
`tiny` (the TF-SSD shape of tests/infer/make_onnx_models.py at 640x640: Cast, ReduceMean and
constants) and `heavy` (four 3x3 convolutions over the 640x640 RGB input). Issue 24's target
with the tiny model: CPU per frame <= 1/3 of the stock chain's.

Run it inside a lane's root, where the runtimes and upstream's elements are:

    tools/compat-root.sh run 1.26 bench/infer_ab.py --build-dir build-compat-1.26
    tools/compat-root.sh run 1.28 bench/infer_ab.py --build-dir build-compat-1.28 \\
        --tflite-model /path/to/model_640x640_u8.tflite

CPU per frame is steady state: each side runs N and N/5 frames and the difference is divided by
the 4N/5 frames between (start-up, model load and ONNX Runtime's schema registration left out).
Not yet: a TensorFlow Lite model made here (the test writers are C++, tests/infer/tflite). No
timing is asserted.
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline_ab import NV12_1080P_STILL, launch_argv, run_once  # noqa: E402

SIZE = 640


def make_models(out):
    """tiny.onnx and heavy.onnx, u8 NHWC [1, 640, 640, 3] input (what onnxinference feeds)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def save(graph, path):
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, path)

    image = helper.make_tensor_value_info("image", TensorProto.UINT8, [1, SIZE, SIZE, 3])
    outs = [helper.make_tensor_value_info("detection_boxes", TensorProto.FLOAT, [1, 3, 4]),
            helper.make_tensor_value_info("detection_classes", TensorProto.FLOAT, [1, 3]),
            helper.make_tensor_value_info("detection_scores", TensorProto.FLOAT, [1, 3]),
            helper.make_tensor_value_info("num_detections", TensorProto.FLOAT, [1])]
    init = [numpy_helper.from_array(np.array(255.0, dtype=np.float32), "k255"),
            numpy_helper.from_array(np.full((1, 3, 4), 0.25, dtype=np.float32), "boxes"),
            numpy_helper.from_array(np.array([[1, 2, 3]], dtype=np.float32), "classes"),
            numpy_helper.from_array(np.array([3], dtype=np.float32), "num")]
    head = [helper.make_node("Cast", ["image"], ["x"], to=TensorProto.FLOAT),
            helper.make_node("Identity", ["boxes"], ["detection_boxes"]),
            helper.make_node("Identity", ["classes"], ["detection_classes"]),
            helper.make_node("Identity", ["num"], ["num_detections"])]
    tiny = head + [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1, 2], keepdims=0),
                   helper.make_node("Div", ["m", "k255"], ["detection_scores"])]
    save(helper.make_graph(tiny, "tiny", [image], outs, init), os.path.join(out, "tiny.onnx"))

    # heavy: NHWC -> NCHW, four 3x3 convolutions (3 -> 16 -> 16 -> 16 -> 3), then the same head.
    rng = np.random.default_rng(1)
    convs, prev, chans = [helper.make_node("Transpose", ["x"], ["c0"], perm=[0, 3, 1, 2])], "c0", 3
    for i, co in enumerate([16, 16, 16, 3]):
        w = numpy_helper.from_array((rng.standard_normal((co, chans, 3, 3)) * 0.1).astype(
            np.float32), f"w{i}")
        init.append(w)
        convs.append(helper.make_node("Conv", [prev, f"w{i}"], [f"c{i + 1}"], pads=[1, 1, 1, 1]))
        prev, chans = f"c{i + 1}", co
    heavy = head + convs + [
        helper.make_node("ReduceMean", [prev], ["m"], axes=[2, 3], keepdims=0),
        helper.make_node("Div", ["m", "k255"], ["detection_scores"])]
    save(helper.make_graph(heavy, "heavy", [image], outs, init), os.path.join(out, "heavy.onnx"))
    for name in ("tiny", "heavy"):
        write_modelinfo(os.path.join(out, name))


def write_modelinfo(stem):
    """GStreamer 1.28's onnxinference refuses a model without its .modelinfo (an ini file per
    tensor: id, type, dims, direction), read from MODEL.onnx.modelinfo; 1.26 reads none."""
    text = "[modelinfo]\nversion=1.0\ngroup-id=ssd-mobilenet-v1-variant-1-out\n\n"
    text += (f"[image]\nid=image\ntype=uint8\ndims=1,{SIZE},{SIZE},3\ndir=input\n"
             "ranges=0.0,255.0;0.0,255.0;0.0,255.0\n\n")
    for tensor, dims, tid in (("detection_boxes", "1,3,4", "boxes"),
                              ("detection_classes", "1,3", "classes"),
                              ("detection_scores", "1,3", "scores"),
                              ("num_detections", "1", "num-detections")):
        text += (f"[{tensor}]\nid=ssd-mobilenet-v1-variant-1-out-{tid}\ntype=float32\n"
                 f"dims={dims}\ndir=output\n\n")
    with open(stem + ".onnx.modelinfo", "w") as f:
        f.write(text)


def cases(models, tflite_model):
    frozen = NV12_1080P_STILL
    stock_rgb = f" ! videoconvertscale ! video/x-raw,format=RGB,width={SIZE},height={SIZE} ! "
    ours = f" ! tensorconvert width={SIZE} height={SIZE} ! tensorinfer model="
    out = {}
    for name in ("tiny", "heavy"):
        m = os.path.join(models, f"{name}.onnx")
        out[f"onnx-{name}"] = (frozen + ours + m + " ! fakesink sync=false",
                               frozen + stock_rgb + f"onnxinference model-file={m} ! "
                               "fakesink sync=false")
    if tflite_model:
        out["tflite"] = (frozen + ours + tflite_model + " ! fakesink sync=false",
                         frozen + stock_rgb + f"tfliteinference model-file={tflite_model} ! "
                         "fakesink sync=false")
    return out


def steady(cmd_of, n, env):
    """(wall s, CPU s) per frame in steady state: a run of n frames minus a run of n/5, over
    the 4n/5 frames between, so the runtime's start-up (model load, ONNX Runtime's schema
    registration) is left out."""
    wall_n, cpu_n = run_once(launch_argv(cmd_of(n)), env)
    wall_s, cpu_s = run_once(launch_argv(cmd_of(n // 5)), env)
    frames = n - n // 5
    return (wall_n - wall_s) / frames, (cpu_n - cpu_s) / frames


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--frames", type=int, default=500, help="N: runs of N and N/5 frames")
    ap.add_argument("--tflite-model", default="", help="a u8 [1, 640, 640, 3] .tflite model")
    ap.add_argument("--cases", default="", help="comma-separated subset (default all)")
    ap.add_argument("--print-commands", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build_dir)
    env = dict(os.environ, GST_PLUGIN_PATH=os.path.join(build, "gst"),
               EDGETENSOR_INFER_MODULE_DIR=os.path.join(build, "lib/tensor/src/infer/module"))
    with tempfile.TemporaryDirectory(prefix="infer-ab-") as models:
        make_models(models)
        chosen = cases(models, args.tflite_model)
        if args.cases:
            chosen = {k: v for k, v in chosen.items() if k in args.cases.split(",")}
        if args.print_commands:
            for name, (a, b) in chosen.items():
                print(f"{name} A: gst-launch-1.0 {a.format(n='N')}")
                print(f"{name} B: gst-launch-1.0 {b.format(n='N')}")
        print("| case | A (ours) CPU ms/frame | B (stock) CPU ms/frame | A fps | B fps | "
              "A/B CPU (rounds) |")
        print("|---|---|---|---|---|---|")
        for name, (a, b) in chosen.items():
            runs = {"A": [], "B": []}
            ratios = []
            for i in range(args.pairs):
                got = {}
                for side in (("A", "B") if i % 2 == 0 else ("B", "A")):
                    pipe = a if side == "A" else b
                    got[side] = steady(lambda n, p=pipe: p.format(n=n), args.frames, env)
                    runs[side].append(got[side])
                ratios.append(got["A"][1] / got["B"][1])
            med = {k: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
                   for k, r in runs.items()}
            print(f"| {name} | {med['A'][1] * 1e3:.2f} | {med['B'][1] * 1e3:.2f} | "
                  f"{1 / med['A'][0]:.0f} | {1 / med['B'][0]:.0f} | "
                  f"**{statistics.median(ratios):.2f}** "
                  f"({', '.join(f'{r:.2f}' for r in ratios)}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
