#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the producer of an IPC sender pays for the buffers it cycles through.

bench/ipc_ab.py's producer (tensortestsrc pattern=frame-counter: a memset of every frame into a
buffer of its pool) costs the same instructions in every pipeline, but not the same time: a
buffer written a frame ago may still be in the caches, one written three frames ago is not (a 4K
NV12 frame is 12.4 MB). How many buffers a producer cycles through depends on what holds them
downstream, so the sender of each transport pays a different producer. Measured here, CPU per
frame in steady state (runs of N and N/5 frames, the difference over the 4N/5 between, as
ipc_ab.py measures):

  producer, 1 buffer   into fakesink enable-last-sample=false (keeps nothing)
  producer, 2 buffers  into fakesink (keeps its last sample: ipc_ab.py's "producer alone")
  producer, 3 buffers  into a queue max-size-buffers=2 and fakesink
  <transport> sender   ipc_ab.py's sender, its receiver into fakesink (the sender's CPU only)

and, for each, how many distinct buffers the producer's pool handed out between two uses of
one (the reuse distance, from GStreamer's log of buffers returned to their pool, GST_BUFFER at
TRACE, in a separate short run: the log costs time).

    bench/producer_rotation.py --build-dir build                    # 4K, 3 rounds
    tools/compat-root.sh run 1.26 bench/producer_rotation.py --build-dir build-compat-1.26
    bench/producer_rotation.py --build-dir build --quick            # CI smoke run (1080p)

No timing is asserted; the exit status is 0 unless a pipeline fails.
"""

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import ipc_ab

RELEASE = re.compile(r"release (0x[0-9a-f]+) to pool")


def cases_of(methods):
    """case -> (what follows the producer in its one process, None) or (None, transport)."""
    out = {
        "producer, 1 buffer": ("fakesink sync=false enable-last-sample=false", None),
        "producer, 2 buffers": ("fakesink sync=false", None),
        "producer, 3 buffers": ("queue max-size-buffers=2 ! fakesink sync=false", None),
    }
    for m in methods:
        out[f"{ipc_ab.NAMES[m]} sender"] = (None, m)
    return out


def reuse_distance(size, frames, tail, method, env, tmp, show):
    """Median number of buffers handed out between two uses of one, in one run of `frames`."""
    env = dict(env, GST_DEBUG="GST_BUFFER:7", GST_DEBUG_NO_COLOR="1")
    log = os.path.join(tmp, "pool.log")
    with open(log, "w") as err:
        if method is None:
            cmd = ipc_ab.launch(ipc_ab.producer(size, frames, 30, False) + " ! " + tail)
            if show:
                print("#   " + shlex.join(cmd), flush=True)
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, check=True)
        else:
            sock = os.path.join(tmp, "rot.sock")
            if os.path.exists(sock):
                os.unlink(sock)
            tx_cmd = ipc_ab.launch(ipc_ab.producer(size, frames * 3, 30, False) + " ! " +
                                   ipc_ab.sink_of(method, sock, size))
            rx_cmd = ipc_ab.launch(ipc_ab.src_of(method, sock, size, 30, frames) +
                                   " ! fakesink sync=false")
            if show:
                print("#   " + shlex.join(tx_cmd) + "\n#   " + shlex.join(rx_cmd), flush=True)
            tx = subprocess.Popen(tx_cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
            try:
                ipc_ab.wait_for(sock, tx)
                subprocess.run(rx_cmd, env=dict(env, GST_DEBUG="*:1"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            finally:
                ipc_ab.stop(tx)
    last, dist = {}, []
    with open(log, errors="replace") as f:
        for i, m in enumerate(RELEASE.finditer(f.read())):
            b = m.group(1)
            if b in last:
                dist.append(i - last[b])
            last[b] = i
    if not dist:
        # GStreamer's log line changed, or the pool was never reused: either way no figure.
        raise RuntimeError(f"no buffer returned to its pool twice in {log} ({tail or method})")
    return statistics.median(dist[len(dist) // 5:])  # the pool's filling left out


def producer_cpu(size, frames, tail, env, show):
    """CPU ms per frame of the producer alone into `tail`, N and N/5 frames."""
    def once(count):
        cmd = ipc_ab.launch(ipc_ab.producer(size, count, 30, False) + " ! " + tail)
        if show:
            print("#   " + shlex.join(cmd), flush=True)
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{shlex.join(cmd)}: {p.stderr.read().decode()[-2000:]}")
        return ru.ru_utime + ru.ru_stime

    few = max(frames // 5, 1)
    return max(once(frames) - once(few), 0.0) * 1e3 / (frames - few)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", default="4k", choices=sorted(ipc_ab.SIZES))
    ap.add_argument("--frames", type=int, default=0, help="N (default 1500; --quick 30)")
    ap.add_argument("--methods", default="auto",
                    help="transports from ipc,unixfd (default: those whose elements exist)")
    ap.add_argument("--quick", action="store_true", help="1080p, N = 30, one round: a smoke run")
    ap.add_argument("--print-commands", action="store_true")
    args = ap.parse_args()
    size = "1080p" if args.quick else args.size
    frames = args.frames or (30 if args.quick else 1500)
    rounds = 1 if args.quick else max(1, args.rounds)

    env = dict(os.environ)
    plugins = os.path.join(os.path.abspath(args.build_dir), "gst")
    if not os.path.exists(os.path.join(plugins, "libgstedgetensor.so")):
        sys.exit(f"producer_rotation: no plugin under {plugins}; build first")
    env["GST_PLUGIN_PATH"] = plugins + os.pathsep + env.get("GST_PLUGIN_PATH", "")
    env.setdefault("GST_DEBUG", "*:1")
    if args.methods == "auto":
        methods = ipc_ab.available_methods(("ipc", "unixfd"), env)
    else:
        methods = [m for m in args.methods.split(",") if m]
    print("# " + shlex.join(["bench/producer_rotation.py"] + sys.argv[1:]))
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {ipc_ab.host_line()}; "
          f"{size} NV12, N = {frames} then {max(frames // 5, 1)}")
    cpu = {}
    with tempfile.TemporaryDirectory(prefix="et-rotation-") as tmp:
        cases = cases_of(methods)
        for r in range(rounds):
            order = list(cases) if r % 2 == 0 else list(reversed(list(cases)))
            for name in order:
                tail, method = cases[name]
                if method:
                    res = ipc_ab.throughput(method, size, frames, tmp, env, args.print_commands)
                    v = res["snd"]
                else:
                    v = producer_cpu(size, frames, tail, env, args.print_commands)
                cpu.setdefault(name, []).append(v)
                print(f"round {r + 1}: {name:30} {v:.3f} ms/frame", flush=True)
        print("\n| case | buffers handed out between two uses of one (median) "
              "| CPU ms/frame (median) | rounds |")
        print("|---|---|---|---|")
        for name, (tail, method) in cases.items():
            dist = reuse_distance(size, 30 if args.quick else 300, tail, method, env, tmp,
                                  args.print_commands)
            v = cpu[name]
            print(f"| {name} | {dist:g} | {statistics.median(v):.3f} | "
                  + ", ".join(f"{x:.3f}" for x in v) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
