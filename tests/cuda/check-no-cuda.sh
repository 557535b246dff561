#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-no-cuda.sh BUILD_ROOT PLUGIN_DIR SYSTEM_PLUGIN_DIR
# The library and the plugin have no link-time CUDA dependency, and with no CUDA runtime to
# be found the plugin registers and runs a tensorconvert pipeline as usual.
set -eu
build=$1
plugins=$2
system=$3

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

for lib in "$build/lib/tensor/libedgetensor.so" "$build/gst/libs/libgstedgetensor-1.0.so" \
    "$plugins/libgstedgetensor.so"; do
    [ -e "$lib" ] || fail "$lib was not built"
    if readelf -d "$lib" | grep NEEDED | grep -i -e cuda -e nvidia; then
        fail "$lib links against CUDA"
    fi
    echo "ok: $lib needs no CUDA library"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export EDGETENSOR_CUDART="$tmp/no-such/libcudart.so.12"
export GST_PLUGIN_PATH="$plugins" GST_PLUGIN_PATH_1_0="$plugins"
export GST_PLUGIN_SYSTEM_PATH_1_0="$system" GST_REGISTRY="$tmp/registry.bin"
export GST_REGISTRY_1_0="$tmp/registry.bin" GST_REGISTRY_FORK=no
export EDGETENSOR_DEBUG=4 # info: the library says why CUDA is unavailable, if it looks

gst-inspect-1.0 edgetensor >"$tmp/inspect.txt" 2>&1 || {
    cat "$tmp/inspect.txt"
    fail "gst-inspect-1.0 edgetensor failed without CUDA"
}
grep -q tensorconvert "$tmp/inspect.txt" || fail "the plugin lists no tensorconvert"
echo "ok: gst-inspect-1.0 edgetensor lists its elements"

gst-launch-1.0 -q tensortestsrc num-buffers=5 ! video/x-raw,format=NV12,width=64,height=48 ! \
    tensorconvert width=32 height=32 dtype=float32 ! fakesink >"$tmp/launch.txt" 2>&1 || {
    cat "$tmp/launch.txt"
    fail "a tensorconvert pipeline failed without CUDA"
}
echo "ok: tensortestsrc ! tensorconvert ! fakesink runs"
