#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whole-process batching A/B (issue 23 item 7): tensorbatch against single conversions and stock.

Every side is one whole process running a pipeline description to EOS (bench/batch_pipeline, a
gst-launch-1.0 that also adds ROI metas and prints tensorbatch's stats), alternating A, B, C,
then C, B, A, ... (measured as bench/pipeline_ab.py's run_once does: wall clock, and CPU from
the child's rusage; here its stdout is kept for tensorbatch's stats). Cases:

  streams-f32 / streams-int8: 4 x 1080p NV12 streams (videotestsrc num-buffers=1, four
    patterns, ! imagefreeze num-buffers=N) -> [4, 3, 640, 640] float32 normalised (int8:
    the same, quantized with quant-scale / quant-zero-point):
      A  tensorbatch batch-size=4 ... ! fakesink   (the four frames into one batch tensor)
      B  four tensorconvert branches, same settings, each ! fakesink (four single tensors)
      C  four `videoconvertscale ! video/x-raw,format=RGB,width=640,height=640 ! fakesink`
         branches: the stock conversion alone. It does NOT include packing the four RGB
         pictures into the normalised CHW batch (an appsink packer's copy): that costs what
         bench_batch's BM_StockPack measures in process, and is added to nothing here.
    C is the same pipeline for both dtypes and runs in streams-f32 only.
  roi-f32 / roi-int8: one 1080p frame carrying 16 GstVideoRegionOfInterestMeta (added by batch_pipeline
    --rois 16 at the identity named `roi`) -> [16, 3, 224, 224] float32 normalised:
      A  tensorbatch mode=roi batch-size=16
      B  tee, 16 branches `tensorconvert crop=X,Y,W,H` (the same regions) ! fakesink
      C  tee, 16 branches `videocrop ! videoconvertscale ! video/x-raw,format=RGB,...` !
         fakesink (packing not included, as above)
    C runs in roi-f32 only. The tee branches have no queue (one streaming thread, as tensorbatch) and their sinks
    async=false (a tee without queues cannot preroll 16 sinks otherwise).
  latency: 4 live tensortestsrc (30 fps, 640x480 NV12), one stalling after 30 frames (its
    buffers dropped, no EOS), tensorbatch batched-push-timeout=20 ms: how long after its
    oldest frame's arrival (and PTS) each full and partial batch leaves, p50/p99 (not A/B).

The throughput cases set batched-push-timeout to its maximum (wait for every stream): with
non-live sources every batch is then full (the stats printed say so), and the latency bound is
measured apart, in `latency`.

CPU per batch is steady state: each side runs N and N/5 batches and the difference is divided
by the 4N/5 batches between (start-up and negotiation left out), as bench/infer_ab.py does;
batches per second = 1 / wall per batch the same way. Medians over the rounds; the A/B and A/C
columns are CPU ratios within each round (median). Tensor sides run n-threads=1 (the default):
tensorbatch converts the four streams on its one thread, the four branches of B and C each
on their own (wall-clock fps favours B and C on a multi-core host; CPU is the target).

    bench/batch_ab.py --build-dir build                 # every case, 3 rounds, N = 250
    bench/batch_ab.py --build-dir build --quick         # CI: 1 round of N = 20
    bench/batch_ab.py --build-dir build --print-commands streams-f32
    bench/batch_ab.py --build-dir build --live streams-f32 streams-int8   # sources at 30 fps
    bench/batch_ab.py --build-dir build --distinct 8 streams-f32 streams-int8  # cameras' frames
    bench/batch_ab.py --build-dir build --distinct 8 --convert-on-arrival streams-f32  # + A+

imagefreeze repeats one buffer per stream: each of B's branches converts the frame it converted
a moment ago, still in the caches of its thread, while tensorbatch reads the four streams'
frames in turn (four times the working set). --distinct K gives every frame its own buffer, one
of K copies per stream taken in turn (batch_pipeline --distinct), as a camera's frames are: at
K = 8 the four streams' frames are 100 MB, more than the caches a core reaches, on both sides.

No timing is asserted: the exit status is 0 unless a pipeline fails.
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

MEAN = "123.675,116.28,103.53"
STD = "58.395,57.12,57.375"
# An int8 model's input quantization over ImageNet-normalised values (bench_batch.cpp's).
QUANT = "quant-scale=0.0186584 quant-zero-point=-14"
NV12 = "video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1,colorimetry=bt709"
PATTERNS = ("smpte", "ball", "gradient", "colors")
UNBOUNDED = "18446744073709551615"


def still(pattern, n, live):
    """One still 1080p frame repeated n times; live: paced at its 30 fps, as cameras are."""
    return (f"videotestsrc num-buffers=1 pattern={pattern} ! {NV12} ! "
            f"imagefreeze num-buffers={n}" + (" is-live=true" if live else ""))


def tensor_opts(dtype):
    opts = f"layout=chw mean={MEAN} std={STD}"
    return opts + (" dtype=float32" if dtype == "f32" else f" dtype=int8 {QUANT}")


def streams_case(dtype, live):
    opts = tensor_opts(dtype)

    def a(n):
        return (f"tensorbatch name=b batch-size=4 width=640 height=640 {opts} "
                f"batched-push-timeout={UNBOUNDED} ! fakesink sync=false " +
                " ".join(f"{still(p, n, live)} ! b.sink_{i}" for i, p in enumerate(PATTERNS)))

    def b(n):
        return " ".join(f"{still(p, n, live)} ! tensorconvert width=640 height=640 {opts} ! "
                        "fakesink sync=false" for p in PATTERNS)

    def c(n):
        return " ".join(f"{still(p, n, live)} ! videoconvertscale ! "
                        "video/x-raw,format=RGB,width=640,height=640 ! fakesink sync=false"
                        for p in PATTERNS)

    sides = {"A": a, "B": b}
    if dtype == "f32":
        sides["C"] = c
    return sides, 4, []


def roi_rects():
    """bench/batch_rois.hpp's 16 regions (x, y, w, h) of the 1920x1080 frame."""
    out = []
    for i in range(16):
        col, row = i % 4, i // 4
        out.append((col * 480 + 32 * (i % 3), row * 270 + 20 * (i % 2), 200 + 40 * (i % 4),
                    180 + 20 * (i % 3)))
    return out


def roi_case(dtype, live):
    opts = tensor_opts(dtype)
    src = lambda n: f"{still('smpte', n, live)} ! identity name=roi"  # noqa: E731

    def a(n):
        return (f"{src(n)} ! tensorbatch name=b mode=roi batch-size=16 width=224 height=224 "
                f"{opts} batched-push-timeout={UNBOUNDED} ! fakesink sync=false")

    def b(n):
        return f"{src(n)} ! tee name=t " + " ".join(
            f"t. ! tensorconvert crop={x},{y},{w},{h} width=224 height=224 {opts} ! "
            "fakesink sync=false async=false" for x, y, w, h in roi_rects())

    def c(n):
        return f"{src(n)} ! tee name=t " + " ".join(
            f"t. ! videocrop left={x} top={y} right={1920 - x - w} bottom={1080 - y - h} ! "
            "videoconvertscale ! video/x-raw,format=RGB,width=224,height=224 ! "
            "fakesink sync=false async=false" for x, y, w, h in roi_rects())

    sides = {"A": a, "B": b}
    if dtype == "f32":
        sides["C"] = c
    return sides, 16, ["--rois", "16"]


CASES = {
    "streams-f32": ("4 x 1080p NV12 -> [4,3,640,640] float32",
                    lambda live: streams_case("f32", live)),
    "streams-int8": ("4 x 1080p NV12 -> [4,3,640,640] int8 quantized",
                     lambda live: streams_case("int8", live)),
    "roi-f32": ("16 ROIs of one 1080p NV12 frame -> [16,3,224,224] float32",
                lambda live: roi_case("f32", live)),
    "roi-int8": ("16 ROIs of one 1080p NV12 frame -> [16,3,224,224] int8 quantized",
                 lambda live: roi_case("int8", live)),
}

LATENCY = ("tensorbatch name=b batch-size=4 width=320 height=320 layout=chw dtype=float32 "
           "std=255 batched-push-timeout=20000000 ! fakesink sync=false " + " ".join(
               f"tensortestsrc name=s{i} is-live=true num-buffers={{n}} ! "
               "video/x-raw,format=NV12,width=640,height=480,framerate=30/1,colorimetry=bt709 "
               f"! b.sink_{i}" for i in range(4)))


def arrival(launch):
    """`launch` with its tensorbatch converting each frame on arrival."""
    return launch.replace("tensorbatch name=b ", "tensorbatch name=b convert-on-arrival=true ", 1)


def run(argv, env):
    """One process: (wall s, CPU s, stdout); raises with its stderr on failure."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(f"exit status {code}: {shlex.join(argv)}\n"
                               f"{err.read().decode(errors='replace').strip()[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, text


def stat_of(text, field):
    """A field of the `stats: edgetensor-stats, ...` line batch_pipeline prints."""
    for line in text.splitlines():
        if line.startswith("stats:"):
            for part in line.split(","):
                if part.strip().startswith(field + "="):
                    return part.split(")")[-1].strip().rstrip(";")
    return "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", type=int, default=250, help="N: runs of N and N/5 batches")
    ap.add_argument("--quick", action="store_true", help="CI: one round, N = 20")
    ap.add_argument("--live", action="store_true",
                    help="sources live at 30 fps (imagefreeze is-live=true): CPU per batch as "
                         "cameras pace it; every side sleeps between frames")
    ap.add_argument("--distinct", type=int, default=0, metavar="K",
                    help="every frame a distinct buffer, one of K copies per stream in turn "
                         "(batch_pipeline --distinct K): a camera's frames, not in the caches "
                         "once K frames are larger than they are; without it each stream "
                         "repeats one buffer, which stays cached in the thread converting it")
    ap.add_argument("--convert-on-arrival", action="store_true",
                    help="streams cases: also side A+, tensorbatch convert-on-arrival=true (each "
                         "frame converted in its stream's thread), against A and B in the same "
                         "rounds; latency: also measured with it")
    ap.add_argument("--print-commands", action="store_true")
    ap.add_argument("cases", nargs="*", help=f"default all: {', '.join(CASES)}, latency")
    args = ap.parse_args()
    names = args.cases or list(CASES) + ["latency"]
    unknown = [n for n in names if n not in CASES and n != "latency"]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}")
    rounds, n = (1, 20) if args.quick else (max(1, args.rounds), max(5, args.batches))

    build = os.path.abspath(args.build_dir)
    app = os.path.join(build, "bench", "batch_pipeline")
    plugin_dir = os.path.join(build, "gst")
    if not os.path.exists(app) or not os.path.exists(os.path.join(plugin_dir,
                                                                  "libgstedgetensor.so")):
        sys.exit(f"batch_ab: no bench/batch_pipeline or plugin under {build}; build first")
    env = dict(os.environ, GST_PLUGIN_PATH=plugin_dir)
    env.setdefault("GST_REGISTRY", os.path.join(build, "bench-registry.bin"))

    print(f"# batch A/B{', live 30 fps sources' if args.live else ''}"
          f"{f', every frame one of {args.distinct} distinct buffers' if args.distinct else ''}"
          f", {rounds} round(s), "
          f"N = {n} then {n // 5} batches; {os.cpu_count()} "
          f"CPUs, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    failed = False
    rows = []
    for name in [c for c in names if c in CASES]:
        desc, make = CASES[name]
        sides, per_batch, extra = make(args.live)
        if args.convert_on_arrival and name.startswith("streams"):
            sides["A+"] = lambda k, fa=sides["A"]: arrival(fa(k))
        if args.distinct > 0:
            extra = ["--distinct", str(args.distinct)] + extra
        argv = {s: (lambda k, f=f: [app] + extra + shlex.split(f(k))) for s, f in sides.items()}
        print(f"\n## {name}: {desc}")
        if args.print_commands:
            for s, f in sides.items():
                print(f"{s}: {shlex.join([os.path.relpath(app)] + extra)} {f('N')}")
        per = {s: [] for s in sides}
        ratios = {s: [] for s in sides if s not in ("A", "A+")}
        plus = []  # A+/B CPU per round
        stats = ""
        try:
            for r in range(rounds):
                order = list(sides) if r % 2 == 0 else list(reversed(list(sides)))
                got = {}
                for s in order:
                    wall_n, cpu_n, out = run(argv[s](n), env)
                    wall_s, cpu_s, _ = run(argv[s](n // 5), env)
                    batches = n - n // 5
                    got[s] = ((wall_n - wall_s) / batches, (cpu_n - cpu_s) / batches)
                    per[s].append(got[s])
                    if s == "A":
                        stats = out
                for s in ratios:
                    ratios[s].append(got["A"][1] / got[s][1])
                if "A+" in got:
                    plus.append(got["A+"][1] / got["B"][1])
        except RuntimeError as e:
            print(f"FAILED: {e}")
            failed = True
            continue
        med = {s: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
               for s, v in per.items()}
        for s, (w, c) in med.items():
            print(f"{s}: CPU {c * 1e3:.2f} ms/batch ({c * 1e3 / per_batch:.2f} ms/frame), "
                  f"{1 / w:.0f} batches/s; rounds (CPU ms/batch): "
                  + ", ".join(f"{cc * 1e3:.2f}" for _, cc in per[s]))
        for s, v in ratios.items():
            print(f"A/{s} CPU per round: " + ", ".join(f"{x:.2f}" for x in v))
        if plus:
            print("A+/B CPU per round: " + ", ".join(f"{x:.2f}" for x in plus) +
                  f"; median {statistics.median(plus):.2f}x (A/B {statistics.median(ratios['B']):.2f}x)"
                  f"; batches/s A+ {1 / med['A+'][0]:.0f}, A {1 / med['A'][0]:.0f}, "
                  f"B {1 / med['B'][0]:.0f}")
        print(f"A stats (N = {n}): batches {stat_of(stats, 'batches')}, partial "
              f"{stat_of(stats, 'partial-batches')}, copies {stat_of(stats, 'copies')}, "
              f"streamed {stat_of(stats, 'streamed')} of {stat_of(stats, 'frames')} frames")
        rows.append((name, med, {s: statistics.median(v) for s, v in ratios.items()},
                     stat_of(stats, "copies"), stat_of(stats, "partial-batches")))

    if rows:
        print("\n| case | A CPU ms/batch | B CPU ms/batch | C CPU ms/batch | A/B CPU | A/C CPU | "
              "A batches/s | B batches/s | C batches/s | A copies | A partial |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for name, med, ratio, copies, partial in rows:
            def cell(s, f):
                return f(med[s]) if s in med else "-"
            print(f"| {name} | {cell('A', lambda m: f'{m[1] * 1e3:.2f}')} | "
                  f"{cell('B', lambda m: f'{m[1] * 1e3:.2f}')} | "
                  f"{cell('C', lambda m: f'{m[1] * 1e3:.2f}')} | "
                  f"**{ratio['B']:.2f}x** | "
                  + (f"{ratio['C']:.2f}x" if "C" in ratio else "-") + " | "
                  f"{cell('A', lambda m: f'{1 / m[0]:.0f}')} | "
                  f"{cell('B', lambda m: f'{1 / m[0]:.0f}')} | "
                  f"{cell('C', lambda m: f'{1 / m[0]:.0f}')} | {copies} | {partial} |")
        print("\ntarget: A/B CPU <= 1.05x (tensorbatch vs the same conversions as single "
              "tensors), copies 0")

    if "latency" in names:
        frames = 45 if args.quick else 150
        launch = LATENCY.format(n=frames)
        if args.convert_on_arrival:
            launch = arrival(launch)
        cmd = [app, "--latency", "--stall", "s3:30"] + shlex.split(launch)
        print(f"\n## latency: 4 live 30 fps streams, s3 stalls after 30 frames, {frames} frames")
        if args.print_commands:
            print(shlex.join([os.path.relpath(app), "--latency", "--stall", "s3:30"]) + " " +
                  launch)
        try:
            _, _, out = run(cmd, env)
            print(out.rstrip())
        except RuntimeError as e:
            print(f"FAILED: {e}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
