#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whole-process inference A/B (issue 24 item 8): tensorconvert ! tensorinfer vs the stock chain.

`tensorconvert ! tensorinfer` against what users of stock GStreamer run, `videoconvertscale !
onnxinference` (1.26, 1.28) and `videoconvertscale ! tfliteinference` (1.28): 1080p NV12 frames
(one frame, frozen) converted to 640x640 and run through the same model, both sides whole
gst-launch-1.0 processes alternating A, B, B, A (bench/pipeline_ab.py's runner), every element
with its defaults. Reported per side: CPU per frame and frames per second. The models are made
here, without a download: `tiny` (u8 NHWC [1, 640, 640, 3] in, a cast and a mean, the four
TF-SSD outputs) and `heavy` (the same after four float32 3x3 convolutions 3 -> 16 -> 16 -> 16 -> 3
over the whole image), as ONNX with python3-onnx and as TensorFlow Lite with the build's
bench/make_tflite_models (bench/make_tflite_models.cpp, built where libtensorflow-lite-dev is).
GStreamer 1.28's onnxinference and tfliteinference refuse a model without MODEL.modelinfo; it is
written beside each model. Issue 24's target with the tiny model: CPU per frame <= 1/3 of the
stock chain's.

Run it inside a lane's root, where the runtimes and upstream's elements are:

    tools/compat-root.sh run 1.26 bench/infer_ab.py --build-dir build-compat-1.26
    tools/compat-root.sh run 1.28 bench/infer_ab.py --build-dir build-compat-1.28
    ... --tflite-model M.tflite     # also your own u8 [1, 640, 640, 3] model (with its .modelinfo)
    ... --quick                     # CI: one pair of 20- and 4-frame runs per case
    ... --session-options           # heavy.onnx in-process under each element's ONNX Runtime
                                    # session options (why onnxinference costs more CPU on it)

CPU per frame is steady state: each side runs N and N/5 frames and the difference is divided by
the 4N/5 frames between (start-up, model load and ONNX Runtime's schema registration left out).
A case whose stock element, runtime module or model maker is missing is skipped with the reason;
the exit status is 77 (skipped) when no case can run, 1 when a pipeline fails. No timing is
asserted.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline_ab import NV12_1080P_STILL, launch_argv, run_once  # noqa: E402

SIZE = 640
# The four TF-SSD outputs both model formats give: (tensor name, dims, modelinfo id suffix).
SSD_OUTPUTS = (("detection_boxes", "1,3,4", "boxes"),
               ("detection_classes", "1,3", "classes"),
               ("detection_scores", "1,3", "scores"),
               ("num_detections", "1", "num-detections"))


def make_onnx_models(out):
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
        write_modelinfo(os.path.join(out, f"{name}.onnx"))


def make_tflite_models(out, maker):
    """tiny.tflite and heavy.tflite (bench/make_tflite_models.cpp): the same graphs in NHWC."""
    subprocess.run([maker, out, str(SIZE)], check=True)
    for name in ("tiny", "heavy"):
        write_modelinfo(os.path.join(out, f"{name}.tflite"))


def write_modelinfo(model):
    """GStreamer 1.28's onnxinference and tfliteinference refuse a model without its modelinfo
    (an ini file per tensor: id, type, dims, direction), read from MODEL.modelinfo; 1.26 reads
    none. Both model formats here name their tensors alike."""
    text = "[modelinfo]\nversion=1.0\ngroup-id=ssd-mobilenet-v1-variant-1-out\n\n"
    text += (f"[image]\nid=image\ntype=uint8\ndims=1,{SIZE},{SIZE},3\ndir=input\n"
             "ranges=0.0,255.0;0.0,255.0;0.0,255.0\n\n")
    for tensor, dims, tid in SSD_OUTPUTS:
        text += (f"[{tensor}]\nid=ssd-mobilenet-v1-variant-1-out-{tid}\ntype=float32\n"
                 f"dims={dims}\ndir=output\n\n")
    with open(model + ".modelinfo", "w") as f:
        f.write(text)


def pair(model, stock):
    frozen = NV12_1080P_STILL
    return (frozen + f" ! tensorconvert width={SIZE} height={SIZE} ! tensorinfer model={model} "
            "! fakesink sync=false",
            frozen + f" ! videoconvertscale ! video/x-raw,format=RGB,width={SIZE},height={SIZE} "
            f"! {stock} model-file={model} ! fakesink sync=false")


def element_exists(name, env):
    return subprocess.run(["gst-inspect-1.0", "--exists", name], env=env).returncode == 0


def cases(build, models, tflite_model, env):
    """{name: (A, B)} of every case that can run here, and {name: why not} of the others."""
    module_dir = env["EDGETENSOR_INFER_MODULE_DIR"]
    ok, skipped = {}, {}
    for kind, ext, stock in (("onnx", "onnx", "onnxinference"),
                             ("tflite", "tflite", "tfliteinference")):
        module = f"edgetensor-infer-{'onnxruntime' if kind == 'onnx' else 'tflite'}.so"
        given = {"tflite-given": os.path.abspath(tflite_model)} if kind == "tflite" and \
            tflite_model else {}
        why = ""
        if not element_exists(stock, env):
            why = f"no {stock} in this GStreamer"
        elif not os.path.exists(os.path.join(module_dir, module)):
            why = f"this build has no {module} (its runtime's dev package was not found)"
        if why:
            skipped.update({n: why for n in [f"{kind}-tiny", f"{kind}-heavy", *given]})
            continue
        ok.update({n: pair(m, stock) for n, m in given.items()})
        try:
            if kind == "onnx":
                make_onnx_models(models)
            else:
                maker = os.path.join(build, "bench", "make_tflite_models")
                if not os.path.exists(maker):
                    raise RuntimeError(f"no {maker} (built where libtensorflow-lite-dev is)")
                make_tflite_models(models, maker)
        except (ImportError, RuntimeError, subprocess.CalledProcessError) as e:
            skipped.update({f"{kind}-{m}": f"cannot make the {kind} models: {e}"
                            for m in ("tiny", "heavy")})
            continue
        ok.update({f"{kind}-{m}": pair(os.path.join(models, f"{m}.{ext}"), stock)
                   for m in ("tiny", "heavy")})
    return ok, skipped


def steady(cmd_of, n, env):
    """(wall s, CPU s) per frame in steady state: a run of n frames minus a run of n/5, over
    the 4n/5 frames between, so the runtime's start-up (model load, ONNX Runtime's schema
    registration) is left out."""
    wall_n, cpu_n = run_once(launch_argv(cmd_of(n)), env)
    wall_s, cpu_s = run_once(launch_argv(cmd_of(n // 5)), env)
    frames = n - n // 5
    return (wall_n - wall_s) / frames, (cpu_n - cpu_s) / frames


def session_options(models, runs):
    """Why the heavy model costs onnxinference more CPU than tensorinfer: the same heavy.onnx in
    ONNX Runtime's Python binding, in this process, under the two session options in which the
    elements differ: the graph optimisation level (onnxinference's optimization-level defaults
    to disable-all, tensorinfer leaves ONNX Runtime's default, all) and spinning of the
    intra-op workers (tensorinfer turns it off, onnxinference leaves it on). Threads: ONNX
    Runtime's default in both. CPU per run is the process's user + system time."""
    import numpy as np
    import onnxruntime as ort

    make_onnx_models(models)
    x = np.full((1, SIZE, SIZE, 3), 128, dtype=np.uint8)
    levels = (("disable-all (onnxinference)", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
              ("all (tensorinfer)", ort.GraphOptimizationLevel.ORT_ENABLE_ALL))
    print(f"# heavy.onnx in onnxruntime {ort.__version__} (Python), {runs} runs after 3 warm-up")
    print("| graph optimisation | intra-op spinning | CPU ms/run | wall ms/run |")
    print("|---|---|---|---|")
    for level_name, level in levels:
        for spin in ("1", "0"):
            so = ort.SessionOptions()
            so.graph_optimization_level = level
            so.add_session_config_entry("session.intra_op.allow_spinning", spin)
            s = ort.InferenceSession(os.path.join(models, "heavy.onnx"), so,
                                     providers=["CPUExecutionProvider"])
            for _ in range(3):
                s.run(None, {"image": x})
            t0, c0 = time.monotonic(), time.process_time()
            for _ in range(runs):
                s.run(None, {"image": x})
            cpu, wall = time.process_time() - c0, time.monotonic() - t0
            spin_name = "on (onnxinference)" if spin == "1" else "off (tensorinfer)"
            print(f"| {level_name} | {spin_name} | {cpu / runs * 1e3:.1f} | "
                  f"{wall / runs * 1e3:.1f} |", flush=True)
            del s
    return 0


def ratio(a, b):
    return a / b if b > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--frames", type=int, default=500, help="N: runs of N and N/5 frames")
    ap.add_argument("--tflite-model", default="",
                    help="also a u8 [1, 640, 640, 3] .tflite model of yours (case tflite-given)")
    ap.add_argument("--cases", default="", help="comma-separated subset (default all): "
                    "onnx-tiny, onnx-heavy, tflite-tiny, tflite-heavy, tflite-given")
    ap.add_argument("--quick", action="store_true", help="CI: one pair of 20- and 4-frame runs")
    ap.add_argument("--print-commands", action="store_true")
    ap.add_argument("--session-options", action="store_true",
                    help="instead: heavy.onnx in-process under each element's ONNX Runtime "
                    "session options (why onnxinference costs more CPU on it)")
    args = ap.parse_args()
    if args.session_options:
        with tempfile.TemporaryDirectory(prefix="infer-ab-") as models:
            return session_options(models, 10 if args.quick else 40)
    pairs, frames = (1, 20) if args.quick else (max(1, args.pairs), max(5, args.frames))
    build = os.path.abspath(args.build_dir)
    if not os.path.exists(os.path.join(build, "gst", "libgstedgetensor.so")):
        sys.exit(f"infer_ab: no edgetensor plugin in {build}/gst; build first")
    env = dict(os.environ, GST_PLUGIN_PATH=os.path.join(build, "gst"),
               EDGETENSOR_INFER_MODULE_DIR=os.path.join(build, "lib/tensor/src/infer/module"))
    env.setdefault("GST_REGISTRY", os.path.join(build, "bench-registry.bin"))
    version = subprocess.run(["gst-launch-1.0", "--version"], capture_output=True, text=True,
                             env=env).stdout.splitlines()[1]
    print(f"# inference A/B, {pairs} pair(s) of N = {frames} and N/5 frames per case; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {version}", flush=True)
    failed = False
    with tempfile.TemporaryDirectory(prefix="infer-ab-") as models:
        chosen, skipped = cases(build, models, args.tflite_model, env)
        if args.cases:
            wanted = args.cases.split(",")
            chosen = {k: v for k, v in chosen.items() if k in wanted}
            skipped = {k: v for k, v in skipped.items() if k in wanted}
        for name, why in skipped.items():
            print(f"# {name}: skipped: {why}")
        if not chosen:
            print("infer_ab: no case can run here")
            return 77
        if args.print_commands:
            for name, (a, b) in chosen.items():
                print(f"{name} A: gst-launch-1.0 {a.format(n='N')}")
                print(f"{name} B: gst-launch-1.0 {b.format(n='N')}")
        print("| case | A (ours) CPU ms/frame | B (stock) CPU ms/frame | A fps | B fps | "
              "A/B CPU (rounds) | tiny target A/B <= 1/3 |")
        print("|---|---|---|---|---|---|---|")
        for name, (a, b) in chosen.items():
            runs = {"A": [], "B": []}
            ratios = []
            try:
                for i in range(pairs):
                    got = {}
                    for side in (("A", "B") if i % 2 == 0 else ("B", "A")):
                        pipe = a if side == "A" else b
                        got[side] = steady(lambda n, p=pipe: p.format(n=n), frames, env)
                        runs[side].append(got[side])
                    ratios.append(ratio(got["A"][1], got["B"][1]))
            except RuntimeError as e:
                print(f"FAILED {name}: {e}", flush=True)
                failed = True
                continue
            med = {k: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
                   for k, r in runs.items()}
            r = statistics.median(ratios)
            target = ("met" if r <= 1 / 3 else "NOT met") if name.endswith("-tiny") else ""
            print(f"| {name} | {med['A'][1] * 1e3:.2f} | {med['B'][1] * 1e3:.2f} | "
                  f"{ratio(1, med['A'][0]):.0f} | {ratio(1, med['B'][0]):.0f} | "
                  f"**{r:.2f}** ({', '.join(f'{x:.2f}' for x in ratios)}) | {target} |",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
