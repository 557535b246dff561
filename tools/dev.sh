#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# One entry point for people and CI on a Debian 12 machine.
#
#   tools/dev.sh demo    install dependencies, build build/ (release), run the demo (the README's
#                        main command)
#   tools/dev.sh test    install dependencies, build build-test/ (-Dwerror=true), run every test
#                        suite (unit, gst, vm, ...)
#   tools/dev.sh asan    build build-asan/ with AddressSanitizer + UBSan, run the unit suites
#   tools/dev.sh tsan    build build-tsan/ with ThreadSanitizer, run the concurrency tests
#   tools/dev.sh fuzz    build build-fuzz/ with clang-14 (libFuzzer, ASan+UBSan), bounded runs
#   tools/dev.sh deps    only install the Debian packages in tools/debian-packages.txt
#
# Each verb builds in a directory of its own and sets every option its build depends on, so the
# verbs compose in one clone in any order, repeated (demo then test, test then demo, ...).
# Meson wraps are never downloaded (--wrap-mode=nodownload): the Debian packages provide gtest,
# benchmark and dlpack, and dlpack's fallback ships in subprojects/.
#
# Environment: BUILD_DIR (the verb's build directory instead of its default; give each verb its
# own), SKIP_DEPS=1 (do not touch apt), MESON_ARGS (extra setup arguments). Every test verb ends
# with one line "N passed, N failed, N skipped".
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

# meson_setup_only DIR [meson args...]: configure (or reconfigure) without building.
meson_setup_only() {
    local dir=$1
    shift
    if [ -f "$dir/build.ninja" ]; then
        meson setup --reconfigure "$dir" --wrap-mode=nodownload "$@" ${MESON_ARGS:-} >/dev/null
    else
        meson setup "$dir" --wrap-mode=nodownload "$@" ${MESON_ARGS:-} >/dev/null
    fi
}

# setup DIR [meson args...]: configure (or reconfigure) a build directory and build it.
setup() {
    meson_setup_only "$@"
    log "building in $1"
    meson compile -C "$1"
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
    # Only what the demo runs: the library, the plugin and the examples.
    setup "$dir" -Dbuildtype=release -Dwerror=false -Db_sanitize=none -Dtests=disabled \
        -Dbenchmarks=disabled
    log "running the demo"
    "$dir/examples/edgetensor-demo"
    if [ -x tools/demo-pipeline.sh ] && [ -d "$dir/gst" ]; then
        log "running the camera-to-tensor pipeline"
        tools/demo-pipeline.sh "$dir" "$dir/out.png"
    fi
    ;;
test)
    install_deps
    dir=${BUILD_DIR:-build-test}
    setup "$dir" -Dbuildtype=debugoptimized -Dwerror=true -Db_sanitize=none -Dtests=auto \
        -Dbenchmarks=auto
    run_tests "$dir"
    ;;
asan)
    install_deps
    dir=${BUILD_DIR:-build-asan}
    # No introspection: the scanner's dumper and python cannot load an instrumented library.
    setup "$dir" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dbuildtype=debug -Dbenchmarks=disabled -Dintrospection=disabled
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        run_tests "$dir" --no-suite vm --no-suite bench --no-suite install --no-suite build \
        --timeout-multiplier 4
    ;;
tsan)
    install_deps
    dir=${BUILD_DIR:-build-tsan}
    setup "$dir" -Dwerror=true -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug \
        -Dbenchmarks=disabled -Dintrospection=disabled
    TSAN_OPTIONS=halt_on_error=1 run_tests "$dir" --suite tsan --timeout-multiplier 4
    ;;
fuzz)
    install_deps
    dir=${BUILD_DIR:-build-fuzz}
    # Only the fuzz suite's targets: libFuzzer needs clang, and the rest of the tree is
    # covered by the other lanes.
    CC=clang-14 CXX=clang++-14 meson_setup_only "$dir" -Dwerror=true \
        -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug \
        -Dbenchmarks=disabled -Dvm_lane=disabled -Dintrospection=disabled
    log "building the fuzz targets in $dir"
    meson compile -C "$dir" fuzz_from_desc_libfuzzer fuzz_ipc_message_libfuzzer \
        fuzz_tensor_meta_libfuzzer test_fuzz_from_desc test_fuzz_ipc_message test_fuzz_tensor_meta
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        run_tests "$dir" --no-rebuild --suite fuzz --timeout-multiplier 4
    ;;
*)
    sed -n '4,23p' "$0" >&2
    exit 2
    ;;
esac
