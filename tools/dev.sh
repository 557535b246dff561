#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# One entry point for people and CI on a Debian 12 machine.
#
#   tools/dev.sh demo    install dependencies, build, run the demo (the README's main command)
#   tools/dev.sh test    install dependencies, build, run every test suite (unit, gst, vm, ...)
#   tools/dev.sh asan    build with AddressSanitizer + UndefinedBehaviorSanitizer, run unit suites
#   tools/dev.sh tsan    build with ThreadSanitizer, run the concurrency tests
#   tools/dev.sh fuzz    build the fuzz targets with clang-14 (libFuzzer, ASan+UBSan), bounded runs
#   tools/dev.sh deps    only install the Debian packages in tools/debian-packages.txt
#
# Environment: BUILD_DIR (default build), SKIP_DEPS=1 (do not touch apt), MESON_ARGS (extra
# setup arguments). Every test verb ends with one line "N passed, N failed, N skipped".
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

log() { printf '==> %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        log "need root (or sudo) to run: $*"
        return 1
    fi
}

install_deps() {
    [ "${SKIP_DEPS:-0}" = 1 ] && return 0
    mapfile -t pkgs < <(grep -v '^\s*#' tools/debian-packages.txt | sed '/^\s*$/d')
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        log "dependencies already installed"
        return 0
    fi
    log "installing: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# setup DIR [meson args...]: configure (or reconfigure) a build directory.
setup() {
    local dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson setup --reconfigure "$dir" "$@" ${MESON_ARGS:-} >/dev/null
    else
        meson setup "$dir" "$@" ${MESON_ARGS:-} >/dev/null
    fi
    log "building in $dir"
    meson compile -C "$dir"
}

# meson_setup_only DIR [meson args...]: configure (or reconfigure) without building.
meson_setup_only() {
    local dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson setup --reconfigure "$dir" "$@" ${MESON_ARGS:-} >/dev/null
    else
        meson setup "$dir" "$@" ${MESON_ARGS:-} >/dev/null
    fi
}

# summary DIR: the closing line, from meson's machine-readable test log.
summary() {
    python3 - "$1/meson-logs/testlog.json" <<'EOF'
import json, sys
passed = failed = skipped = 0
try:
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)["result"]
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
except FileNotFoundError:
    failed = 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
EOF
}

# run_tests DIR [meson test args...]
run_tests() {
    local dir=$1
    shift
    local rc=0
    meson test -C "$dir" --print-errorlogs --num-processes 2 "$@" || rc=$?
    summary "$dir"
    return $rc
}

verb=${1:-}
case "$verb" in
deps)
    install_deps
    ;;
demo)
    install_deps
    dir=${BUILD_DIR:-build}
    setup "$dir" -Dbuildtype=release
    log "running the demo"
    "$dir/examples/edgetensor-demo"
    if [ -x tools/demo-pipeline.sh ] && [ -d "$dir/gst" ]; then
        log "running the camera-to-tensor pipeline"
        tools/demo-pipeline.sh "$dir" "$dir/out.png"
    fi
    ;;
test)
    install_deps
    dir=${BUILD_DIR:-build}
    setup "$dir" -Dwerror=true
    run_tests "$dir"
    ;;
asan)
    install_deps
    dir=${BUILD_DIR:-build-asan}
    setup "$dir" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dbuildtype=debug -Dbenchmarks=disabled
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        run_tests "$dir" --no-suite vm --no-suite bench --no-suite install --timeout-multiplier 4
    ;;
tsan)
    install_deps
    dir=${BUILD_DIR:-build-tsan}
    setup "$dir" -Dwerror=true -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug \
        -Dbenchmarks=disabled
    TSAN_OPTIONS=halt_on_error=1 run_tests "$dir" --suite tsan --timeout-multiplier 4
    ;;
fuzz)
    install_deps
    dir=${BUILD_DIR:-build-fuzz}
    # Only the fuzz suite's targets: libFuzzer needs clang, and the rest of the tree is
    # covered by the other lanes.
    CC=clang-14 CXX=clang++-14 meson_setup_only "$dir" -Dwerror=true \
        -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug \
        -Dbenchmarks=disabled -Dvm_lane=disabled
    log "building the fuzz targets in $dir"
    meson compile -C "$dir" fuzz_from_desc_libfuzzer fuzz_ipc_message_libfuzzer \
        test_fuzz_from_desc test_fuzz_ipc_message
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        run_tests "$dir" --no-rebuild --suite fuzz --timeout-multiplier 4
    ;;
*)
    sed -n '4,14p' "$0" >&2
    exit 2
    ;;
esac
