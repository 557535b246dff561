#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whole-process pipeline A/B: our elements against the stock element users would run instead.

Each case is two gst-launch-1.0 command lines doing the same job. They run as whole processes
(start-up, negotiation, allocation and teardown included, as users run them), alternating
A, B, B, A, ... so drift on a shared machine hits both sides alike. For each side the median of
the runs is reported: wall-clock seconds, CPU seconds (user + system, from the child's rusage)
and frames per second; the ratio is B's median wall time over A's (how many times the frames
per second of stock).

    bench/pipeline_ab.py --build-dir build                # every case, 5 pairs each
    bench/pipeline_ab.py --build-dir build --pairs 9 convert-rgb
    bench/pipeline_ab.py --build-dir build --quick        # CI: 1 pair, few frames

No timing is asserted: the exit status is 0 unless a pipeline fails. Targets are printed beside
the figures so a reader sees the gap.
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

NV12_1080P_STILL = (
    "videotestsrc num-buffers=1 pattern=smpte ! "
    "video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1 ! imagefreeze num-buffers={n}"
)

# name: (description, A (ours), B (stock), frames, target ratio or None)
CASES = {
    "convert-rgb": (
        "NV12 1080p -> RGB 640x640, bilinear, one thread (issue 10's A/B)",
        NV12_1080P_STILL + " ! tensorconvert n-threads=1 method=bilinear width=640 height=640 ! "
        "video/x-raw,format=RGB ! fakesink sync=false",
        NV12_1080P_STILL + " ! videoconvertscale n-threads=1 method=bilinear ! "
        "video/x-raw,format=RGB,width=640,height=640 ! fakesink sync=false",
        600,
        3.0,
    ),
    "convert-rgb-defaults": (
        "NV12 1080p -> RGB 640x640, both elements with their defaults",
        NV12_1080P_STILL + " ! tensorconvert width=640 height=640 ! "
        "video/x-raw,format=RGB ! fakesink sync=false",
        NV12_1080P_STILL + " ! videoconvertscale ! "
        "video/x-raw,format=RGB,width=640,height=640 ! fakesink sync=false",
        600,
        None,
    ),
    "letterbox": (
        "NV12 1080p -> RGB 640x640 letterboxed (stock: add-borders, its default)",
        NV12_1080P_STILL + " ! tensorconvert n-threads=1 width=640 height=640 letterbox=true ! "
        "video/x-raw,format=RGB ! fakesink sync=false",
        NV12_1080P_STILL + " ! videoconvertscale n-threads=1 ! "
        "video/x-raw,format=RGB,width=640,height=640,pixel-aspect-ratio=1/1 ! fakesink sync=false",
        600,
        None,
    ),
    "convert-4k": (
        "NV12 4K -> RGB 640x640, one thread",
        "videotestsrc num-buffers=1 pattern=smpte ! "
        "video/x-raw,format=NV12,width=3840,height=2160,framerate=30/1 ! imagefreeze "
        "num-buffers={n} ! tensorconvert n-threads=1 width=640 height=640 ! "
        "video/x-raw,format=RGB ! fakesink sync=false",
        "videotestsrc num-buffers=1 pattern=smpte ! "
        "video/x-raw,format=NV12,width=3840,height=2160,framerate=30/1 ! imagefreeze "
        "num-buffers={n} ! videoconvertscale n-threads=1 ! "
        "video/x-raw,format=RGB,width=640,height=640 ! fakesink sync=false",
        300,
        None,
    ),
    "convert-yuy2-720p": (
        "YUY2 720p -> RGB 320x320, one thread",
        "videotestsrc num-buffers=1 pattern=smpte ! "
        "video/x-raw,format=YUY2,width=1280,height=720,framerate=30/1 ! imagefreeze "
        "num-buffers={n} ! tensorconvert n-threads=1 width=320 height=320 ! "
        "video/x-raw,format=RGB ! fakesink sync=false",
        "videotestsrc num-buffers=1 pattern=smpte ! "
        "video/x-raw,format=YUY2,width=1280,height=720,framerate=30/1 ! imagefreeze "
        "num-buffers={n} ! videoconvertscale n-threads=1 ! "
        "video/x-raw,format=RGB,width=320,height=320 ! fakesink sync=false",
        1000,
        None,
    ),
    "convert-gl": (
        "NV12 1080p -> RGB 640x640, compute=gl (llvmpipe without a GPU) against compute=cpu",
        NV12_1080P_STILL + " ! tensorconvert compute=gl width=640 height=640 ! "
        "video/x-raw,format=RGB ! fakesink sync=false",
        NV12_1080P_STILL + " ! tensorconvert compute=cpu n-threads=1 width=640 height=640 ! "
        "video/x-raw,format=RGB ! fakesink sync=false",
        100,
        None,
    ),
    "import": (
        "tensortestsrc ! tensorimport ! fakesink vs tensortestsrc ! identity ! fakesink "
        "(NV12 1080p)",
        "tensortestsrc num-buffers={n} ! video/x-raw,format=NV12,width=1920,height=1080 ! "
        "tensorimport ! fakesink sync=false",
        "tensortestsrc num-buffers={n} ! video/x-raw,format=NV12,width=1920,height=1080 ! "
        "identity ! fakesink sync=false",
        600,
        0.9,
    ),
}


def run_once(cmd, env):
    """Runs one gst-launch-1.0 process; returns (wall s, cpu s) or raises on failure."""
    # stderr into a file, not a pipe: a process that writes more than a pipe holds (ONNX
    # Runtime prints ~116 KB of schema notices at start) would block on it while we wait4.
    with tempfile.TemporaryFile() as errfile:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=errfile)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        errfile.seek(0)
        err = errfile.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(
            f"exit status {proc.returncode}: {shlex.join(cmd)}\n{err.strip()[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime


def launch_argv(pipeline):
    return ["gst-launch-1.0", "-q"] + shlex.split(pipeline)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="build", help="meson build directory (its gst/ "
                    "holds the edgetensor plugin)")
    ap.add_argument("--pairs", type=int, default=5, help="A/B pairs per case (default 5)")
    ap.add_argument("--frames", type=int, default=0, help="frames per run (default: per case)")
    ap.add_argument("--quick", action="store_true", help="CI: one pair of 20-frame runs")
    ap.add_argument("--print-commands", action="store_true", help="print each command line")
    ap.add_argument("cases", nargs="*", help=f"cases to run (default all): {', '.join(CASES)}")
    args = ap.parse_args()

    names = args.cases or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    pairs = 1 if args.quick else max(1, args.pairs)

    plugin_dir = os.path.join(os.path.abspath(args.build_dir), "gst")
    if not os.path.exists(os.path.join(plugin_dir, "libgstedgetensor.so")):
        sys.exit(f"pipeline_ab: no edgetensor plugin in {plugin_dir}; build first")
    env = dict(os.environ)
    env["GST_PLUGIN_PATH"] = plugin_dir + (":" + env["GST_PLUGIN_PATH"]
                                           if env.get("GST_PLUGIN_PATH") else "")
    env.setdefault("GST_REGISTRY", os.path.join(os.path.abspath(args.build_dir),
                                                "bench-registry.bin"))

    cpus = os.cpu_count()
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    print(f"# pipeline A/B, {pairs} pair(s) per case, alternating; {cpus} CPUs, load {load}")
    print(f"# {subprocess.run(['gst-launch-1.0', '--version'], capture_output=True, text=True).stdout.splitlines()[1]}")
    rows = []
    failed = False
    for name in names:
        desc, a_tmpl, b_tmpl, frames, target = CASES[name]
        n = 20 if args.quick else (args.frames or frames)
        a_cmd = launch_argv(a_tmpl.format(n=n))
        b_cmd = launch_argv(b_tmpl.format(n=n))
        print(f"\n## {name}: {desc}, {n} frames")
        print(f"A: gst-launch-1.0 -q {a_tmpl.format(n=n)}")
        print(f"B: gst-launch-1.0 -q {b_tmpl.format(n=n)}")
        runs = {"A": [], "B": []}
        try:
            run_once(a_cmd, env)  # warm the registry and page cache; not counted
            for i in range(pairs):
                order = ("A", "B") if i % 2 == 0 else ("B", "A")
                for side in order:
                    runs[side].append(run_once(a_cmd if side == "A" else b_cmd, env))
        except RuntimeError as e:
            print(f"FAILED: {e}")
            failed = True
            continue
        med = {}
        for side in ("A", "B"):
            wall = statistics.median(w for w, _ in runs[side])
            cpu = statistics.median(c for _, c in runs[side])
            med[side] = (wall, cpu)
            print(f"{side}: median wall {wall:.3f} s ({n / wall:.0f} fps), CPU {cpu:.3f} s "
                  f"({cpu / n * 1000:.2f} ms/frame); runs: "
                  + ", ".join(f"{w:.3f}" for w, _ in runs[side]))
        ratio = med["B"][0] / med["A"][0]
        cpu_ratio = med["B"][1] / med["A"][1]
        verdict = ""
        if target is not None:
            verdict = f" (target >= {target:g}x: {'met' if ratio >= target else 'NOT met'})"
        print(f"ratio: A runs at {ratio:.2f}x the fps of B (wall), {cpu_ratio:.2f}x less CPU"
              f"{verdict}")
        rows.append((name, n, med["A"], med["B"], ratio, cpu_ratio, target))

    print("\n| case | frames | A wall s | B wall s | A CPU ms/frame | B CPU ms/frame | "
          "fps ratio | CPU ratio | target |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, n, a, b, ratio, cpu_ratio, target in rows:
        t = "" if target is None else f">= {target:g}x {'met' if ratio >= target else 'NOT met'}"
        print(f"| {name} | {n} | {a[0]:.3f} | {b[0]:.3f} | {a[1] / n * 1000:.2f} | "
              f"{b[1] / n * 1000:.2f} | {ratio:.2f}x | {cpu_ratio:.2f}x | {t} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
