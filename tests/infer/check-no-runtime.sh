#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-no-runtime.sh BUILD_ROOT [PLUGIN_DIR SYSTEM_PLUGIN_DIR]
# Neither inference runtime is a link-time dependency of the library or the plugin (only the
# backend modules link them), and with the modules unreachable the plugin still registers.
set -eu
build=$1
plugins=${2:-}
system=${3:-}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

libs="$build/lib/tensor/libedgetensor.so"
[ -z "$plugins" ] || libs="$libs $build/gst/libs/libgstedgetensor-1.0.so $plugins/libgstedgetensor.so"
for lib in $libs; do
    [ -e "$lib" ] || fail "$lib was not built"
    if readelf -d "$lib" | grep NEEDED | grep -i -e onnxruntime -e tensorflow -e flatbuffers; then
        fail "$lib links an inference runtime"
    fi
    echo "ok: $lib needs no inference runtime"
done
for module in "$build"/lib/tensor/src/infer/module/edgetensor-infer-*.so; do
    [ -e "$module" ] || continue
    readelf -d "$module" | grep NEEDED | grep -q -i -e onnxruntime -e tensorflow-lite ||
        fail "$module does not link its runtime"
    echo "ok: $(basename "$module") links its runtime"
done

[ -n "$plugins" ] || exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export EDGETENSOR_INFER_MODULE_DIR="$tmp/no-modules"
export GST_PLUGIN_PATH="$plugins" GST_PLUGIN_PATH_1_0="$plugins"
export GST_PLUGIN_SYSTEM_PATH_1_0="$system" GST_REGISTRY="$tmp/registry.bin"
export GST_REGISTRY_1_0="$tmp/registry.bin" GST_REGISTRY_FORK=no
gst-inspect-1.0 edgetensor >"$tmp/inspect.txt" 2>&1 || {
    cat "$tmp/inspect.txt"
    fail "gst-inspect-1.0 edgetensor failed without the inference modules"
}
grep -q tensorconvert "$tmp/inspect.txt" || fail "the plugin lists no tensorconvert"
echo "ok: gst-inspect-1.0 edgetensor works without the inference modules"
