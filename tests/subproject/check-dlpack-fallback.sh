#!/bin/sh
# SPDX-License-Identifier: MIT
#
# `meson setup --force-fallback-for=dlpack` works offline: it configures with the DLPack header
# shipped in subprojects/dlpack (wraps may not download anything), reports that subproject,
# and the DLPack code compiles against that header, not the system's.
#   check-dlpack-fallback.sh SOURCE_ROOT
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

meson setup "$tmp/build" "$src" --force-fallback-for=dlpack --wrap-mode=nodownload \
    -Dtests=disabled -Dbenchmarks=disabled -Dgstreamer=disabled -Dintrospection=disabled \
    >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
grep -q "Subproject dlpack finished" "$tmp/setup.log" ||
    { cat "$tmp/setup.log"; echo "FAIL: the dlpack subproject was not used"; exit 1; }
python3 - "$tmp/build" "$src" <<'PY'
import json, os, sys
build, src = sys.argv[1], os.path.realpath(sys.argv[2])
cmds = json.load(open(os.path.join(build, "compile_commands.json")))
dl = [c for c in cmds if c["file"].endswith("interop/dlpack.cpp")]
if not dl:
    sys.exit("FAIL: dlpack.cpp is not compiled")
want = "subprojects/dlpack/include"
if want not in dl[0]["command"]:
    sys.exit("FAIL: dlpack.cpp is not compiled against " + want + ": " + dl[0]["command"])
print("dlpack.cpp compiles with -I.../" + want)
PY
obj=$(cd "$tmp/build" && ninja -t targets all | sed -n 's/^\(.*src_interop_dlpack\.cpp\.o\):.*/\1/p')
[ -n "$obj" ] || { echo "FAIL: no object target for dlpack.cpp"; exit 1; }
ninja -C "$tmp/build" "$obj" >/dev/null
echo "PASS: configured offline with the shipped DLPack header and compiled $obj"
