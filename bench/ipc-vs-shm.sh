#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tensoripcsink/tensoripcsrc against stock shmsink/shmsrc (gstreamer1.0-plugins-bad), as
# users run them: two whole gst-launch-1.0 processes per run, A/B alternating in one run, at
# full speed (sync=false), NV12 1080p and 4K. The sender repeats one tensortestsrc frame
# (imagefreeze), so what is measured is the transport, not the drawing of test patterns.
#
#   bench/ipc-vs-shm.sh [BUILD_DIR] [RUNS]
#
# Per run: frames received / receiver wall time (fps), and CPU time (user + system) of both
# processes divided by the frames received. Both elements run with back-pressure (shmsink
# blocks while its area is full; tensoripcsink block=true) so every frame reaches the receiver.
# Prints one line per run and the medians per configuration.
set -euo pipefail

build=${1:-build}
runs=${2:-5}
export GST_PLUGIN_PATH=$(cd "$build" && pwd)/gst
tick=$(getconf CLK_TCK)
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"; rm -f /dev/shm/shmpipe.* 2>/dev/null || true' EXIT

cpu_of() { # utime+stime of a pid, in seconds
    awk -v t="$tick" '{ print ($14 + $15) / t }' "/proc/$1/stat"
}

run_one() { # method width height frames -> "fps cpu_ms_per_frame snd_ms rcv_ms"
    local method=$1 w=$2 h=$3 n=$4
    local caps="video/x-raw,format=NV12,width=$w,height=$h,framerate=30/1"
    local sock="$tmp/$method.sock"
    rm -f "$sock"
    local src="tensortestsrc num-buffers=1 pattern=checkers ! $caps ! imagefreeze num-buffers=$((n * 4))"
    if [ "$method" = ipc ]; then
        gst-launch-1.0 -q $src ! tensoripcsink socket-path="$sock" sync=false \
            wait-for-connection=true block=true >/dev/null 2>&1 &
    else
        gst-launch-1.0 -q $src ! shmsink socket-path="$sock" sync=false \
            wait-for-connection=true >/dev/null 2>&1 &
    fi
    local spid=$!
    for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.02; done
    local snd0
    snd0=$(cpu_of $spid)
    local t0 t1
    t0=$(date +%s.%N)
    if [ "$method" = ipc ]; then
        /usr/bin/time -f "%U %S" -o "$tmp/rcv" gst-launch-1.0 -q tensoripcsrc socket-path="$sock" \
            num-buffers=$n ! fakesink sync=false >/dev/null 2>&1
    else
        /usr/bin/time -f "%U %S" -o "$tmp/rcv" gst-launch-1.0 -q shmsrc socket-path="$sock" \
            num-buffers=$n ! "$caps" ! fakesink sync=false >/dev/null 2>&1
    fi
    t1=$(date +%s.%N)
    local snd1
    snd1=$(cpu_of $spid)
    kill $spid 2>/dev/null || true
    wait $spid 2>/dev/null || true
    read -r ru rs <"$tmp/rcv"
    awk -v n="$n" -v t0="$t0" -v t1="$t1" -v s0="$snd0" -v s1="$snd1" -v ru="$ru" -v rs="$rs" \
        'BEGIN { snd = s1 - s0; rcv = ru + rs;
                 printf "%.0f %.4f %.4f %.4f\n", n / (t1 - t0), (snd + rcv) * 1000 / n,
                        snd * 1000 / n, rcv * 1000 / n }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "# $(date -u +%Y-%m-%d) $(uname -srm), $(nproc) CPUs, $(gst-launch-1.0 --version | sed -n 2p)"
echo "# size method run fps cpu_ms_per_frame(sender+receiver) sender_ms receiver_ms"
for size in 1920x1080 3840x2160; do
    w=${size%x*}
    h=${size#*x}
    n=3000
    [ "$w" -gt 1920 ] && n=1000
    for r in $(seq "$runs"); do
        for m in ipc shm; do
            line=$(run_one $m "$w" "$h" $n)
            echo "$size $m $r $line" | tee -a "$tmp/all"
        done
    done
done
echo "# medians: size method fps cpu_ms_per_frame sender_ms receiver_ms"
for size in 1920x1080 3840x2160; do
    for m in ipc shm; do
        f=$(awk -v s=$size -v m=$m '$1 == s && $2 == m { print $4 }' "$tmp/all" | median)
        c=$(awk -v s=$size -v m=$m '$1 == s && $2 == m { print $5 }' "$tmp/all" | median)
        a=$(awk -v s=$size -v m=$m '$1 == s && $2 == m { print $6 }' "$tmp/all" | median)
        b=$(awk -v s=$size -v m=$m '$1 == s && $2 == m { print $7 }' "$tmp/all" | median)
        echo "median $size $m fps=$f cpu_ms_per_frame=$c sender_ms=$a receiver_ms=$b"
    done
done
