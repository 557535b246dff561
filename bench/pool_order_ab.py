#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whole-process A/B of the pools' order: the buffer released last handed out first (the
default) against GstBufferPool's FIFO (EDGETENSOR_POOL_ORDER=fifo), same binary, same frames.

A consumer that lets go of each output at once (an inference element; `fakesink
enable-last-sample=false` here) leaves one free buffer in the pool: newest-first writes every
frame into it while its lines are still in the caches, FIFO walks all the buffers the pool
holds. Cases (1080p NV12 sources, every frame one of 8 distinct buffers per stream as
`batch_pipeline --distinct 8` makes them, so the sources are as cold as a camera's):

  single     one tensorconvert to 640x640 RGB
  single-f32 one tensorconvert to 640x640 normalised CHW float32
  streams    four tensorconvert branches to 640x640 CHW float32
  batch      tensorbatch batch-size=4 to [4,3,640,640] float32

CPU = user + system time of the process, the difference between runs of N and N/5 frames over
the 4N/5 between (start-up left out); the two orders alternate within every round.
"""

import argparse
import datetime
import os
import statistics
import sys

# The frames, the tensor options and the process runner are batch_ab.py's: the same pipelines
# as its A and B sides, only the consumer differs.
from batch_ab import PATTERNS, UNBOUNDED, run, still, tensor_opts

F32 = tensor_opts("f32")


def cases(sink):
    src = lambda p, n: still(p, n, False)  # noqa: E731
    return {
        "single": lambda n: f"{src('smpte', n)} ! tensorconvert width=640 height=640 ! {sink}",
        "single-f32": lambda n: (f"{src('smpte', n)} ! tensorconvert width=640 height=640 "
                                 f"{F32} ! {sink}"),
        "streams": lambda n: " ".join(
            f"{src(p, n)} ! tensorconvert width=640 height=640 {F32} ! {sink}"
            for p in PATTERNS),
        "batch": lambda n: (
            f"tensorbatch name=b batch-size=4 width=640 height=640 {F32} "
            f"batched-push-timeout={UNBOUNDED} ! {sink} " +
            " ".join(f"{src(p, n)} ! b.sink_{i}" for i, p in enumerate(PATTERNS))),
    }


def cpu_seconds(argv, env):
    return run(argv, env)[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--frames", type=int, default=500, help="N: runs of N and N/5 frames")
    ap.add_argument("--sink", default="fakesink enable-last-sample=false sync=false",
                    help="the consumer (default: one that keeps no buffer)")
    ap.add_argument("--quick", action="store_true", help="CI: one round, N = 20")
    ap.add_argument("--print-commands", action="store_true")
    ap.add_argument("cases", nargs="*", help="default all: single, single-f32, streams, batch")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.frames = 1, 20
    build = os.path.abspath(args.build_dir)
    exe = os.path.join(build, "bench", "batch_pipeline")
    env = dict(os.environ, GST_PLUGIN_PATH=os.path.join(build, "gst"))
    env.setdefault("GST_REGISTRY", os.path.join(build, "bench-registry.bin"))
    env.pop("EDGETENSOR_POOL_ORDER", None)
    table = cases(args.sink)
    chosen = args.cases or list(table)
    for c in chosen:
        if c not in table:
            sys.exit(f"unknown case {c!r}: {', '.join(table)}")

    n, m = args.frames, max(1, args.frames // 5)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# pool order A/B, {args.rounds} round(s), N = {n} then {m} frames; "
          f"{os.cpu_count()} CPUs, load {load}, {now}; consumer: {args.sink}\n")
    rows = []
    for name in chosen:
        def argv(k):
            return [exe, "--distinct", "8"] + table[name](k).split()
        if args.print_commands:
            print(f"{name}: {' '.join(argv('N'))}")
        got = {"newest": [], "fifo": []}
        for r in range(args.rounds):
            order = ["newest", "fifo"] if r % 2 == 0 else ["fifo", "newest"]
            for o in order:
                e = dict(env, EDGETENSOR_POOL_ORDER=o)
                full, short = cpu_seconds(argv(n), e), cpu_seconds(argv(m), e)
                got[o].append((full - short) / (n - m) * 1000.0)
        ratios = [a / b for a, b in zip(got["newest"], got["fifo"])]
        rows.append((name, statistics.median(got["newest"]), statistics.median(got["fifo"]),
                     statistics.median(ratios), ratios))
        print(f"{name}: newest-first {rows[-1][1]:.3f} ms/frame, FIFO {rows[-1][2]:.3f}; "
              f"rounds {', '.join(f'{x:.2f}' for x in ratios)}", flush=True)
    print("\n| case | newest-first CPU ms/frame | FIFO CPU ms/frame | newest / FIFO (median of "
          "rounds) |")
    print("|---|---|---|---|")
    for name, a, b, r, _ in rows:
        print(f"| {name} | {a:.3f} | {b:.3f} | **{r:.2f}x** |")


if __name__ == "__main__":
    main()
