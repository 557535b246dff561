#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A project that uses edgetensor as a meson subproject (dependency('edgetensor') and
# dependency('gstreamer-edgetensor-1.0'), met by meson.override_dependency) configures, builds
# and runs. The consumer is copied into a scratch directory with this source tree linked in as
# subprojects/edgetensor, as a project vendoring it would have it.
#   check-consumer.sh SOURCE_ROOT CONSUMER_DIR
set -eu
# A debug build: ccache would hash the working directory into every entry (it is in the debug
# info), and this tree is a new temporary directory each run, so nothing would ever be reused.
# The compile commands themselves use paths relative to the tree, the same every run; with the
# directory left out of the hash, a run after the first (CI makes the tree once beforehand, in
# idle time: .ci/prebuild) replays its compiles. Only the debug info's directory is then stale.
export CCACHE_NOHASHDIR=true
src=$(cd "$1" && pwd)
consumer=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

cp -R "$consumer" "$tmp/project"
mkdir -p "$tmp/project/subprojects"
ln -s "$src" "$tmp/project/subprojects/edgetensor"
meson setup "$tmp/build" "$tmp/project" --wrap-mode=nodownload \
    --force-fallback-for=edgetensor,gstreamer-edgetensor-1.0 >"$tmp/setup.log" 2>&1 ||
    { cat "$tmp/setup.log"; exit 1; }
grep -q "Subproject edgetensor finished" "$tmp/setup.log" ||
    { cat "$tmp/setup.log"; echo "FAIL: edgetensor was not configured as a subproject"; exit 1; }
ninja -C "$tmp/build" >"$tmp/build.log" 2>&1 || { tail -n 60 "$tmp/build.log"; exit 1; }
"$tmp/build/consumer"
"$tmp/build/camera-consumer"
echo "PASS: built and ran against edgetensor as a subproject"
