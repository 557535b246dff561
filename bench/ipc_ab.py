#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cross-process A/B: tensoripcsink/src against unixfdsink/src and shmsink/shmsrc.

Distinct frames from a producer's pool (tensortestsrc pattern=frame-counter; its gradient or
videotestsrc pattern=ball with --producer: see PRODUCERS), NV12 1080p and 4K, each
transport in whole processes, the transports alternated within every round (A B C, then C B A)
so drift on a shared machine hits all alike. Two kinds of run:

throughput  two gst-launch-1.0 processes at full speed (sync=false), every sink with
            back-pressure (tensoripcsink block=true; shmsink and unixfdsink never drop); the
            receiver takes N frames (num-buffers), and again N/5. Reported, over the 4N/5
            frames between the two (steady state: start-up and the first touch of the pool's
            pages left out): fps and CPU ms per frame, the sender's CPU time from the
            receiver's start to its end (/proc/PID/schedstat, every thread) plus the
            receiver's (its rusage, user + system). A "producer" row runs the same producer
            into fakesink, one process, measured the same way: what drawing the frames costs,
            so "net" = CPU - producer is what the transport costs. With --consumer the
            receiver (and the producer row, in its one process) makes a 640x640 RGB input of
            every frame instead of dropping it unread, so "net" is what the transport costs a
            receiver that reads its frames.
live        the same pipelines in two Python processes (Gst.parse_launch, no per-frame Python
            on the throughput path) with a live producer at the caps' frame rate, started once
            the receiver plays (so no backlog of its start-up is counted): the sender
            stamps each frame's capture time (base time + PTS, CLOCK_MONOTONIC, the system
            clock both processes share) into its first 8 bytes before the sink; the receiver
            reads it on arrival at its sink. Reported: frames delivered of those sent, and the
            receiver-visible latency p50/p99 (capture to arrival), the first 10 frames (the
            receiver connecting and starting) left out.

    bench/ipc_ab.py --build-dir build-compat-1.26            # 3 rounds, both sizes, both kinds
    bench/ipc_ab.py --build-dir build --rounds 1 --quick     # a smoke run (CI-sized)
    bench/ipc_ab.py --build-dir build --methods ipc,shm      # some of them (default: all here)
    bench/ipc_ab.py --build-dir build --consumer videoconvertscale --kinds throughput
    tools/compat-root.sh run 1.26 bench/ipc_ab.py --build-dir build-compat-1.26   # with unixfd
    # a camera as the producer: vivid in the VM lane's guest (its capture node found in sysfs)
    tools/compat-root.sh run 1.26 tests/vm/run-in-vm.sh --timeout=1800 -- \
        bench/ipc_ab.py --build-dir build-compat-1.26 --producer vivid --sizes 480p

No timing is asserted; the exit status is 0 unless a pipeline fails. Targets (issue 22 item 6)
are printed beside the medians: CPU <= 0.8x unixfd's and <= 1/5 of shm's, latency no worse
than unixfd's, every frame delivered.
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

SIZES = {"1080p": (1920, 1080), "4k": (3840, 2160), "480p": (640, 480), "720p": (1280, 720)}
METHODS = ("ipc", "unixfd", "shm")
NAMES = {"ipc": "tensoripcsink/src", "unixfd": "unixfdsink/src", "shm": "shmsink/shmsrc",
         "producer": "producer alone"}
TICK = os.sysconf("SC_CLK_TCK")
WARMUP = 10  # live frames left out of the latency figures


def caps_of(size, fps):
    w, h = SIZES[size]
    rate = RATES.get(size, f"{fps}/1")
    return f"video/x-raw,format=NV12,width={w},height={h}" + (f",framerate={rate}" if rate else "")


def hz(size, fps):
    """The producer's frame rate (for time-outs; vivid's slowest when v4l2src picks it)."""
    num, den = (RATES.get(size, f"{fps}/1") or "1/1").split("/")
    return int(num) / int(den)


def find_vivid():
    """vivid's video capture node (its other nodes output, or capture VBI/radio/SDR/touch)."""
    base = "/sys/class/video4linux"
    for node in sorted(os.listdir(base) if os.path.isdir(base) else []):
        try:
            with open(os.path.join(base, node, "name")) as f:
                if f.read().strip().endswith("-vid-cap") and node.startswith("video"):
                    return "/dev/" + node
        except OSError:
            pass
    raise RuntimeError("no vivid capture node in /sys/class/video4linux: load the vivid module "
                       "(the VM lane does: tests/vm/run-in-vm.sh)")


def probe_rates(args):
    """`--probe DEVICE WxH...`: the NV12 frame rates the device offers at each size, as JSON
    {"WxH": {"list": ["N/D", ...]} or {"range": ["N/D", "N/D"]}}; vivid's webcam input offers
    fewer rates the larger the frame."""
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst

    Gst.init(None)
    src = Gst.ElementFactory.make("v4l2src")
    src.set_property("device", args.pipeline)
    src.set_state(Gst.State.READY)
    caps = src.get_static_pad("src").query_caps(None)
    src.set_state(Gst.State.NULL)
    out = {}
    # From the caps' text (PyGObject's structure wrappers differ by release). v4l2src merges
    # structures that differ in one field, so a format, width or height may be a list.
    for text in caps.to_string().split(";"):
        text = text.strip()
        if not text.startswith("video/x-raw,") or "NV12" not in field_of(text, "format")[1]:
            continue
        rate = field_of(text, "framerate")
        for w in field_of(text, "width")[1]:
            for h in field_of(text, "height")[1]:
                out[f"{w}x{h}"] = {"range" if rate[0] else "list": rate[1]}
    print(caps.to_string(), file=sys.stderr)
    print(json.dumps(out))
    return 0


def field_of(text, name):
    """A field of a structure's text: (is a range, its values as strings)."""
    m = re.search(rf"(?:^|, ){name}=\(\w+\)(\[[^\]]*\]|{{[^}}]*}}|[^,]+)", text)
    if not m:
        return False, []
    value = m.group(1)
    return value.startswith("["), re.findall(r"[\w/]+", value)


def pick_rate(offer, want):
    """The frame rate to ask: `want` ("N/D") where offered, else the highest offered below it."""
    def val(r):
        num, den = r.split("/")
        return int(num) / int(den)

    if "range" in offer:
        lo, hi = offer["range"]
        return want if val(lo) <= val(want) <= val(hi) else hi
    below = [r for r in offer["list"] if val(r) <= val(want)]
    return max(below, key=val) if below else min(offer["list"], key=val)


# The producers: each writes every byte of every frame into a buffer of a pool (never the same
# memory twice in a row, never a frozen frame). tensortestsrc, like a camera, fills its own pool
# of fd memory whatever the sink proposes: pattern=frame-counter (every byte of frame n is n mod
# 256: a memset, the cheapest whole-frame write, so the transport is most of what is measured;
# the default) or its gradient (scrolls a pixel a frame). videotestsrc writes into what the sink
# proposes (our pool, unixfdsink's GstShmAllocator memfds, shmsink's own area), but its ball
# costs many times a transport's CPU per frame, which drowns the comparison.
PRODUCERS = {
    "counter": "tensortestsrc num-buffers={n} pattern=frame-counter is-live={live}",
    "gradient": "tensortestsrc num-buffers={n} pattern=gradient is-live={live}",
    "ball": "videotestsrc num-buffers={n} pattern=ball is-live={live}",
    # A camera: vivid's frames are written by its kernel thread, not by the sender's threads, and
    # exported as DMA-BUFs (VIDIOC_EXPBUF); v4l2src is live whatever is-live says, so the
    # throughput run goes at the camera's rate.
    "vivid": "v4l2src device={device} num-buffers={n} io-mode=dmabuf",
}
PRODUCER = "counter"
# What the receiver does with each frame. fakesink leaves the frame unread: the transport alone.
# A consumer that reads the pixels is what every real receiver is, and what it pays to reach
# them differs by transport: an fd that arrives as a new GstFdMemory every frame (unixfdsrc) is
# mapped and its pages faulted in again on every frame, memories a receiver keeps mapped across
# frames (tensoripcsrc's cache, shmsrc's one area) are not. videoconvertscale is the stock
# consumer an NPU input is made with; tensorimport ! tensorconvert reads fds through its
# import cache (as test_unixfd.cpp does).
CONSUMERS = {
    "fakesink": "fakesink sync=false",
    "videoconvertscale": ("videoconvertscale ! video/x-raw,format=RGB,width=640,height=640 ! "
                          "fakesink sync=false"),
    "tensorconvert": ("tensorimport ! tensorconvert width=640 height=640 ! "
                      "video/x-raw,format=RGB ! fakesink sync=false"),
}
CONSUMER = "fakesink"
DEVICE = ""  # vivid's capture node, found at start (find_vivid)
RATES = {}  # size -> the frame rate the caps ask of the producer, "N/D" (vivid: what it offers)


def producer(size, frames, fps, live):
    return (PRODUCERS[PRODUCER].format(n=frames, live=str(live).lower(), device=DEVICE) + " ! "
            + caps_of(size, fps))


def sink_of(method, sock, size):
    if method == "ipc":
        return (f"tensoripcsink socket-path={sock} sync=false wait-for-connection=true "
                "block=true")
    if method == "unixfd":
        return f"unixfdsink socket-path={sock} sync=false wait-for-connection=true"
    w, h = SIZES[size]
    # Five frames of room; shmsink blocks (never drops) while its area is full.
    return (f"shmsink socket-path={sock} sync=false wait-for-connection=true "
            f"shm-size={w * h * 3 // 2 * 5 + 4096}")


def src_of(method, sock, size, fps, frames=0):
    n = f" num-buffers={frames}" if frames else ""
    if method == "ipc":
        return f"tensoripcsrc socket-path={sock}{n}"
    if method == "unixfd":
        return f"unixfdsrc socket-path={sock}{n}"
    return f"shmsrc socket-path={sock}{n} is-live=true ! " + caps_of(size, fps)


def cpu_of(pid):
    """CPU seconds of a live process: the scheduler's nanosecond counts of its threads (all
    alive while measured), else utime + stime in clock ticks (10 ms: too coarse for short
    runs)."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK


def wait_for(path, proc, timeout=30):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if os.path.exists(path):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"the sender exited ({proc.returncode}) before listening")
        time.sleep(0.01)
    raise RuntimeError(f"no socket at {path} after {timeout} s")


def stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def available_methods(methods, env):
    """The transports of `methods` whose sink element exists here (unixfd needs 1.24+)."""
    sinks = {"ipc": "tensoripcsink", "unixfd": "unixfdsink", "shm": "shmsink"}
    return [m for m in methods if subprocess.run(["gst-inspect-1.0", sinks[m]], env=env,
                                                 capture_output=True).returncode == 0]


def host_line():
    """CPUs, GStreamer version and load average, for a run's header."""
    version = subprocess.run(["gst-launch-1.0", "--version"], capture_output=True,
                             text=True).stdout.splitlines()[1]
    load = os.getloadavg()
    return (f"{os.cpu_count()} CPUs, {version}, load average "
            f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def launch(pipeline):
    return ["gst-launch-1.0", "-q"] + shlex.split(pipeline)


def throughput(method, size, frames, tmp, env, show):
    """One throughput run; returns a dict of figures.

    Steady state: each pair (or the producer alone) runs twice, taking N and N/5 frames, and
    the figures are the difference over the 4N/5 frames between. That leaves out what does not
    recur per frame: the processes' start-up, and the first touch of every page of the
    producer's pool (12 MB a 4K buffer), which depends on how many buffers the receiver holds
    at once and would otherwise be charged to the transport."""
    few = max(frames // 5, 1)
    if method == "producer":
        def once(count):
            cmd = launch(producer(size, count, 30, False) + " ! " + CONSUMERS[CONSUMER])
            if show:
                print("#   " + shlex.join(cmd), flush=True)
            t0 = time.monotonic()
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.monotonic() - t0
            if os.waitstatus_to_exitcode(status) != 0:
                raise RuntimeError(f"{shlex.join(cmd)}: {p.stderr.read().decode()[-2000:]}")
            return wall, ru.ru_utime + ru.ru_stime, 0.0

        many_run, few_run = once(frames), once(few)
    else:
        many_run = pair(method, size, frames, tmp, env, show)
        few_run = pair(method, size, few, tmp, env, show)
    n = frames - few
    snd = max(many_run[1] - few_run[1], 0.0) * 1e3 / n
    rcv = max(many_run[2] - few_run[2], 0.0) * 1e3 / n
    return {"fps": n / max(many_run[0] - few_run[0], 1e-9), "cpu": snd + rcv, "snd": snd,
            "rcv": rcv}


def pair(method, size, frames, tmp, env, show):
    """A sender and a receiver taking `frames`: (receiver wall s, sender CPU s while the
    receiver ran, receiver CPU s)."""
    sock = os.path.join(tmp, f"{method}.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    # The sender makes more frames than the receiver takes, so it never ends first.
    tx_cmd = launch(producer(size, frames * 3, 30, False) + " ! " + sink_of(method, sock, size))
    rx_cmd = launch(src_of(method, sock, size, 30, frames) + " ! " + CONSUMERS[CONSUMER])
    if show:
        print("#   " + shlex.join(tx_cmd) + "\n#   " + shlex.join(rx_cmd), flush=True)
    tx = subprocess.Popen(tx_cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(sock, tx)
        snd0 = cpu_of(tx.pid)
        t0 = time.monotonic()
        rx = subprocess.Popen(rx_cmd, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        _, status, ru = os.wait4(rx.pid, 0)
        wall = time.monotonic() - t0
        snd1 = cpu_of(tx.pid)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{shlex.join(rx_cmd)}: {rx.stderr.read().decode()[-2000:]}")
    finally:
        stop(tx)
    return wall, snd1 - snd0, ru.ru_utime + ru.ru_stime


# The live run's two sides, run as `ipc_ab.py --side sender|receiver PIPELINE ...`.
def side(args):
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst

    Gst.init(None)
    pipe = Gst.parse_launch(args.pipeline)
    stamps = []
    if args.side == "sender":
        sink = pipe.get_by_name("sink")

        def stamp(pad, info):
            buf = info.get_buffer()
            # Capture time on CLOCK_MONOTONIC, which the system clock of both processes is.
            # The memory, not the buffer (which Python's reference makes unwritable), is mapped.
            t = pipe.get_base_time() + buf.pts
            mi = buf.peek_memory(0).map(Gst.MapFlags.WRITE)
            if mi.__parent__ is not None:
                mi.data[0:8] = t.to_bytes(8, "little")
                mi.__parent__.unmap(mi)
            return Gst.PadProbeReturn.OK

        sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, stamp)
    else:
        sink = pipe.get_by_name("sink")
        gi.require_version("GstAllocators", "1.0")
        from gi.repository import GstAllocators

        kinds, inodes = set(), set()

        def arrive(pad, info):
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            # What arrived: the kind of file behind the memory's fd ("dmabuf" for a camera's
            # buffers passed as they are, "memfd" for a copy into a pool or area) and the
            # distinct buffers (inodes) among them.
            mem = info.get_buffer().peek_memory(0)
            if GstAllocators.is_fd_memory(mem):
                fd = GstAllocators.fd_memory_get_fd(mem)
                kinds.add(os.readlink(f"/proc/self/fd/{fd}").lstrip("/").split(":")[0])
                inodes.add(os.fstat(fd).st_ino)
            else:
                kinds.add("no fd")
            ok, m = info.get_buffer().map(Gst.MapFlags.READ)
            if ok:
                stamps.append(now - int.from_bytes(bytes(m.data[:8]), "little"))
                info.get_buffer().unmap(m)
            return Gst.PadProbeReturn.OK

        sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, arrive)
    # No backlog at the start: the sender listens (its sink is started in PAUSED, where a live
    # source draws nothing) until the receiver is playing, and only then starts capturing; else
    # the frames a slow-starting receiver missed queue up and count as latency.
    if args.side == "sender":
        pipe.set_state(Gst.State.PAUSED)
        until = time.monotonic() + args.timeout
        while not os.path.exists(args.ready) and time.monotonic() < until:
            time.sleep(0.005)
        pipe.set_state(Gst.State.PLAYING)
    else:
        pipe.set_state(Gst.State.PLAYING)
        pipe.get_state(10 * Gst.SECOND)
        open(args.ready, "w").close()
    bus = pipe.get_bus()
    msg = bus.timed_pop_filtered(args.timeout * Gst.SECOND,
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    rc = 0
    if msg is None or msg.type == Gst.MessageType.ERROR:
        err = msg.parse_error()[0].message if msg else "timeout"
        print(f"{args.side}: {err}", file=sys.stderr)
        rc = 0 if args.side == "receiver" and msg is None else 1
    if args.side == "sender" and "copies" in [p.name for p in sink.list_properties()]:
        # tensoripcsink's own count of frames it had to copy (memory without an fd).
        with open(args.ready + ".tx", "w") as f:
            json.dump({"copies": sink.get_property("copies")}, f)
    pipe.set_state(Gst.State.NULL)
    if args.side == "receiver":
        print(json.dumps({"latencies": stamps, "memory": ",".join(sorted(kinds)),
                          "buffers": len(inodes)}))
    return rc


def live(method, size, frames, fps, tmp, env, show):
    sock = os.path.join(tmp, f"live-{method}.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    # Debian's interpreter, where python3-gi and python3-gst-1.0 live, even when another
    # python3 comes first on PATH.
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    me = [py, os.path.abspath(__file__)]
    tx_pipe = producer(size, frames, fps, True) + " ! " + sink_of(method, sock, size).replace(
        "sync=false", "name=sink sync=false")
    # shmsrc sends no EOS: the receiver stops after what was sent, or at its timeout.
    rx_pipe = (src_of(method, sock, size, fps, frames if method == "shm" else 0)
               + " ! fakesink name=sink sync=false")
    ready = os.path.join(tmp, f"live-{method}.ready")
    for stale in (ready, ready + ".tx"):
        if os.path.exists(stale):
            os.unlink(stale)
    secs = int(frames / hz(size, fps))
    tx_cmd = me + ["--side", "sender", "--ready", ready, "--timeout", str(secs + 60), tx_pipe]
    rx_cmd = me + ["--side", "receiver", "--ready", ready, "--timeout", str(secs + 30), rx_pipe]
    if show:
        print("#   " + shlex.join(tx_cmd) + "\n#   " + shlex.join(rx_cmd), flush=True)
    tx = subprocess.Popen(tx_cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(sock, tx)
        rx = subprocess.run(rx_cmd, env=env, capture_output=True, text=True)
        if rx.returncode != 0:
            raise RuntimeError(f"{shlex.join(rx_cmd)}: {rx.stderr[-2000:]}")
        try:
            tx.wait(timeout=10)  # it writes its sink's counts at its EOS
        except subprocess.TimeoutExpired:
            pass
    finally:
        stop(tx)
    got = json.loads(rx.stdout.strip().splitlines()[-1])
    arrived = got["latencies"]
    copies = "-"
    if os.path.exists(ready + ".tx"):
        with open(ready + ".tx") as f:
            copies = json.load(f)["copies"]
    seen = {"memory": got["memory"], "buffers": got["buffers"], "copies": copies}
    # The first frames wait for the receiver to connect and start: not steady state.
    lat = sorted(arrived[WARMUP:])
    if not lat:
        return {"delivered": len(arrived), "sent": frames, "p50": float("nan"),
                "p99": float("nan"), **seen}
    return {"delivered": len(arrived), "sent": frames, **seen,
            "p50": lat[len(lat) // 2] / 1e6, "p99": lat[min(len(lat) - 1, len(lat) * 99 // 100)] / 1e6}


FAILED = []


def attempt(run, method, *rest):
    """One run; a failed pipeline is reported and left out, and the others still run (the exit
    status says so at the end)."""
    try:
        return run(method, *rest)
    except (RuntimeError, OSError, ValueError, KeyError, IndexError) as e:
        FAILED.append(method)
        print(f"# FAILED {run.__name__} {NAMES[method]}: {e}", flush=True)
        return None


def main():
    global PRODUCER, DEVICE, CONSUMER
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--rounds", type=int, default=3, help="A/B rounds (default 3)")
    ap.add_argument("--sizes", default="",
                    help=f"from {','.join(SIZES)} (default 1080p,4k; with --producer vivid 480p)")
    ap.add_argument("--methods", default="auto",
                    help="transports, comma-separated from ipc,unixfd,shm (default: those whose "
                    "elements exist here; unixfd needs GStreamer 1.24+)")
    ap.add_argument("--kinds", default="throughput,live")
    ap.add_argument("--producer", default=PRODUCER, choices=sorted(PRODUCERS),
                    help="what draws the frames (default counter: tensortestsrc "
                    "pattern=frame-counter; vivid: the vivid camera's capture node, DMA-BUFs, "
                    "at 30 fps or the highest rate below that it offers at the size)")
    ap.add_argument("--consumer", default=CONSUMER, choices=list(CONSUMERS),
                    help="what the receiver (and the producer row) does with each frame "
                    "(default fakesink: nothing, the transport alone; videoconvertscale or "
                    "tensorconvert: a 640x640 RGB input made of it, the pixels read); "
                    "throughput only")
    ap.add_argument("--quick", action="store_true", help="few frames: a smoke run")
    ap.add_argument("--frames", type=int, default=0,
                    help="frames a throughput run takes (default 1500 at 1080p, 500 at 4K, "
                    "300 from vivid)")
    ap.add_argument("--live-frames", type=int, default=0,
                    help="frames a live run sends (default 300)")
    ap.add_argument("--print-commands", action="store_true")
    ap.add_argument("--side", choices=["sender", "receiver"], help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=int, default=60, help=argparse.SUPPRESS)
    ap.add_argument("--ready", help=argparse.SUPPRESS)
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("pipeline", nargs="?", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        return side(args)
    if args.probe:
        return probe_rates(args)

    PRODUCER = args.producer
    CONSUMER = args.consumer
    if CONSUMER != "fakesink" and "live" in args.kinds.split(","):
        # The live receiver reads its stamp at a fakesink: pass --kinds throughput.
        ap.error(f"--consumer {CONSUMER} measures throughput only (--kinds throughput)")
    env = dict(os.environ)
    plugins = os.path.join(os.path.abspath(args.build_dir), "gst")
    env["GST_PLUGIN_PATH"] = plugins + os.pathsep + env.get("GST_PLUGIN_PATH", "")
    env.setdefault("GST_DEBUG", "*:1")
    if args.methods == "auto":
        methods = available_methods(METHODS, env)
    else:
        methods = [m for m in args.methods.split(",") if m]
    sizes = [s for s in (args.sizes or ("480p" if PRODUCER == "vivid" else "1080p,4k")).split(",")
             if s]
    notes = []
    if PRODUCER == "vivid":
        DEVICE = find_vivid()
        py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        probe = subprocess.run([py, os.path.abspath(__file__), "--probe", DEVICE], env=env,
                               capture_output=True, text=True)
        offers = json.loads(probe.stdout) if probe.returncode == 0 else {}
        for size in sizes:
            w, h = SIZES[size]
            offer = offers.get(f"{w}x{h}")
            if offer:
                RATES[size] = pick_rate(offer, "30/1")
                notes.append(f"{w}x{h} at {RATES[size]} (offered {offer})")
            else:
                # Not understood: v4l2src picks the rate (the fps column says which it was).
                RATES[size] = ""
                notes.append(f"{w}x{h} at v4l2src's choice of rate")
                print(f"# the probe found no NV12 {w}x{h} in {DEVICE}'s caps:\n# "
                      + probe.stderr.strip()[-3000:].replace("\n", "\n# "))
    kinds = [k for k in args.kinds.split(",") if k]
    print("# " + shlex.join(["bench/ipc_ab.py"] + sys.argv[1:]))
    print(f"# {time.strftime('%Y-%m-%d', time.gmtime())} {os.uname().sysname} "
          f"{os.uname().release}, {host_line()}, producer {PRODUCER} {DEVICE}, "
          f"consumer {CONSUMER}"
          + (": " + "; ".join(notes) if notes else ""))
    results = {}
    with tempfile.TemporaryDirectory(prefix="et-ipc-ab-") as tmp:
        for size in sizes:
            n = args.frames or (30 if args.quick else 300 if PRODUCER == "vivid"
                                else {"1080p": 1500, "4k": 500}[size])
            live_n = args.live_frames or (300 if not args.quick else 30)
            for r in range(args.rounds):
                order = methods if r % 2 == 0 else list(reversed(methods))
                if "throughput" in kinds:
                    for m in ["producer"] + order:
                        res = attempt(throughput, m, size, n, tmp, env, args.print_commands)
                        results.setdefault(("throughput", size, m), []).append(res)
                        if res:
                            print(f"{size} throughput {NAMES[m]:18} round {r + 1}: "
                                  f"fps {res['fps']:7.0f}  cpu {res['cpu']:.3f} ms/frame "
                                  f"(sender {res['snd']:.3f}, receiver {res['rcv']:.3f})",
                                  flush=True)
                if "live" in kinds:
                    for m in order:
                        res = attempt(live, m, size, live_n, 30, tmp, env,
                                      args.print_commands)
                        results.setdefault(("live", size, m), []).append(res)
                        if res:
                            print(f"{size} live       {NAMES[m]:18} round {r + 1}: "
                                  f"delivered {res['delivered']}/{res['sent']}  latency p50 "
                                  f"{res['p50']:.2f} ms p99 {res['p99']:.2f} ms  memory "
                                  f"{res['memory']} ({res['buffers']} buffers), sink copies "
                                  f"{res['copies']}", flush=True)

    def med(kind, size, m, key):
        v = [x[key] for x in results.get((kind, size, m), []) if x]
        return statistics.median(v) if v else float("nan")

    print("# medians")
    for size in sizes:
        if "throughput" in kinds:
            base = med("throughput", size, "producer", "cpu")
            for m in ["producer"] + methods:
                c = med("throughput", size, m, "cpu")
                print(f"{size} | {NAMES[m]} | fps {med('throughput', size, m, 'fps'):.0f} | "
                      f"cpu {c:.3f} ms/frame | net of producer {c - base:.3f} | sender "
                      f"{med('throughput', size, m, 'snd'):.3f} | receiver "
                      f"{med('throughput', size, m, 'rcv'):.3f}")
            if "ipc" in methods:
                # Ratios within each round (the runs of a round are minutes apart at most, so
                # drift of a shared machine cancels), then their median.
                def ratios(other, net):
                    out = []
                    for r, ours in enumerate(results[("throughput", size, "ipc")]):
                        theirs = results[("throughput", size, other)][r]
                        base_r = results[("throughput", size, "producer")][r]
                        if not (ours and theirs and base_r):
                            continue
                        theirs, base_r = theirs["cpu"], base_r["cpu"] if net else 0
                        if theirs - base_r > 0:
                            out.append((ours["cpu"] - base_r) / (theirs - base_r))
                    return statistics.median(out) if out else float("nan")

                for other, target in (("unixfd", 0.8), ("shm", 0.2)):
                    if other in methods:
                        print(f"{size} | cpu ipc/{other}: median of rounds {ratios(other, False):.2f} "
                              f"(net of producer {ratios(other, True):.2f}); target <= {target}")
        if "live" in kinds:
            for m in methods:
                print(f"{size} | {NAMES[m]} | delivered {med('live', size, m, 'delivered'):.0f}"
                      f"/{med('live', size, m, 'sent'):.0f} | latency p50 "
                      f"{med('live', size, m, 'p50'):.2f} ms | p99 "
                      f"{med('live', size, m, 'p99'):.2f} ms")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
