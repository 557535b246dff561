#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs issue 6's "done when" pipeline from a build tree and says what happened:
#
#   tensortestsrc ! video/x-raw,format=NV12,width=1920,height=1080 !
#   tensorconvert width=640 height=640 letterbox=true ! video/x-raw,format=RGB !
#   pngenc ! filesink location=<out.png>
#
# Usage: tools/demo-pipeline.sh BUILD_DIR [OUT_PNG]
#   BUILD_DIR  a meson build directory (its gst/ holds the edgetensor plugin)
#   OUT_PNG    where to write the picture (default: BUILD_DIR/out.png)
#
# Prints the negotiated caps around tensorconvert, the letterbox figures it reports
# (scale and padding, to map detections back to the camera frame) and the file written.
# Exits non-zero when the pipeline fails or the PNG is not the expected 640x640 picture.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 BUILD_DIR [OUT_PNG]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
out=${2:-$build/out.png}
plugin_dir=$build/gst

if ! ls "$plugin_dir"/libgstedgetensor.so >/dev/null 2>&1; then
    echo "demo-pipeline: no edgetensor plugin in $plugin_dir (build first: meson compile -C $1)" >&2
    exit 1
fi
if ! command -v gst-launch-1.0 >/dev/null 2>&1; then
    echo "demo-pipeline: gst-launch-1.0 not found (Debian package gstreamer1.0-tools)" >&2
    exit 1
fi
mkdir -p "$(dirname "$out")"
rm -f "$out"

# The build's plugin first, system plugins (pngenc, filesink) after; a registry file of our own
# so the user's registry cache is left alone.
export GST_PLUGIN_PATH=$plugin_dir${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
export GST_REGISTRY=$build/gst/demo-registry.bin

pipeline=(tensortestsrc num-buffers=1
    '!' 'video/x-raw,format=NV12,width=1920,height=1080'
    '!' tensorconvert name=convert width=640 height=640 letterbox=true
    '!' 'video/x-raw,format=RGB'
    '!' pngenc '!' filesink location="$out")

echo "== edgetensor demo: camera frame -> letterboxed 640x640 RGB tensor -> PNG"
echo "   GST_PLUGIN_PATH=$plugin_dir"
echo "   gst-launch-1.0 ${pipeline[*]}"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! gst-launch-1.0 -v "${pipeline[@]}" >"$log" 2>&1; then
    echo "demo-pipeline: the pipeline failed:" >&2
    cat "$log" >&2
    exit 1
fi

# gst-launch -v prints every pad's caps and every notified property of the pipeline.
caps_of() {
    grep -F "/GstTensorConvert:convert.GstPad:$1: caps = " "$log" | tail -n 1 |
        sed 's/.*caps = //'
}
prop_of() {
    grep -F "/GstTensorConvert:convert: $1 = " "$log" | tail -n 1 | sed 's/.* = //'
}
echo "== tensorconvert negotiated"
echo "   in:  $(caps_of sink)"
echo "   out: $(caps_of src)"
scale=$(prop_of letterbox-scale)
echo "== letterbox: scale $(printf '%.6f' "$scale"), padding left $(prop_of letterbox-left)," \
    "top $(prop_of letterbox-top), right $(prop_of letterbox-right)," \
    "bottom $(prop_of letterbox-bottom)"

# PNG: 8-byte signature, then the IHDR chunk with width and height as big-endian u32.
if [ ! -s "$out" ]; then
    echo "demo-pipeline: $out was not written" >&2
    exit 1
fi
sig=$(od -An -tx1 -N8 "$out" | tr -d ' \n')
# (No process substitution: /dev/fd is missing in minimal environments such as the VM lane.)
dims=$(od -An -tu1 -j16 -N8 "$out" |
    awk '{ print $1*16777216 + $2*65536 + $3*256 + $4, $5*16777216 + $6*65536 + $7*256 + $8 }')
w=${dims% *}
h=${dims#* }
if [ "$sig" != "89504e470d0a1a0a" ] || [ "$w" != 640 ] || [ "$h" != 640 ]; then
    echo "demo-pipeline: $out is not a 640x640 PNG (signature $sig, ${w}x${h})" >&2
    exit 1
fi
echo "== wrote $out: ${w}x${h} PNG, $(stat -c %s "$out") bytes" \
    "(picture in rows $(prop_of letterbox-top)..$((640 - $(prop_of letterbox-bottom) - 1)), black bars above and below)"
