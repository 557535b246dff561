#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A project that uses edgetensor as a meson subproject (dependency('edgetensor') and
# dependency('gstreamer-edgetensor-1.0'), met by meson.override_dependency) configures, builds
# and runs. The consumer is copied into a scratch directory with this source tree linked in as
# subprojects/edgetensor, as a project vendoring it would have it.
#   check-consumer.sh SOURCE_ROOT CONSUMER_DIR
set -eu
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
