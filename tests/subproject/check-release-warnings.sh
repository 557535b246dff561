#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The README's main command builds a release configuration (tools/dev.sh demo: -O3, warnings
# not errors) that no test lane compiles: GCC's -O3 false positives (-Wrestrict in inlined
# std::string operator+, GCC bug 105329) reached new users there unseen. The same configuration,
# with this machine's compiler, in a tree of its own; any compiler or linker warning fails.
#   check-release-warnings.sh SOURCE_ROOT [BUILD_DIR]
#
# The tree is SOURCE_ROOT/<BUILD_DIR's name>-release (build-release-check without BUILD_DIR),
# made afresh each run: one per lane, and at the depth of the demo's build/. Its options are
# exactly the demo's, -Dwerror=false included: the compile commands are then the demo's build/
# ones, byte for byte (same depth below the source, so the same relative paths), and where
# ccache is installed (meson uses it when it finds it) a tree the demo built is replayed from the
# cache, its warnings with it, instead of compiled a second time. -Werror would change every
# command and so miss the cache; the warnings are read from the log instead. CI's prebuild of a
# compat lane (tools/dev.sh) runs this script with the lane's BUILD_DIR to fill that cache.
set -eu
src=$(cd "$1" && pwd)
name=build-release-check
[ $# -lt 2 ] || name="$(basename "$2")-release"
dir="$src/$name"
log=$(mktemp)
trap 'rm -f "$log"' EXIT INT TERM

rm -rf "$dir"
meson setup "$dir" "$src" --wrap-mode=nodownload -Dbuildtype=release -Dwerror=false \
    -Db_sanitize=none -Dtests=disabled -Dbenchmarks=disabled >"$log" 2>&1 ||
    { cat "$log"; exit 1; }
compiler="$(${CXX:-c++} --version | head -n 1)"
if ! ninja -C "$dir" >"$log" 2>&1; then
    grep -E -B3 -A12 'error' "$log" | head -n 120
    echo "FAIL: the release build ($compiler) does not compile"
    exit 1
fi
# GCC's and ld's diagnostics both say "warning:"; colour codes never split the word.
if grep -q -E 'warning:' "$log"; then
    grep -E -B3 -A12 'warning:' "$log" | head -n 120
    echo "FAIL: the release build ($compiler) has warnings"
    exit 1
fi
hits=''
if command -v ccache >/dev/null 2>&1 && grep -q ccache "$dir/meson-logs/meson-log.txt"; then
    hits=', compiled through ccache'
fi
rm -rf "$dir"
echo "PASS: the release build compiles without a warning ($compiler$hits)"
