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
#   tools/dev.sh compat 1.26|1.28
#                        the GStreamer compatibility lane: in a cached Debian 13 (1.26) or Debian
#                        testing (1.28) root (tools/compat-root.sh), build build-compat-VERSION/
#                        (-Dwerror=true) and run every suite but vm; then, for 1.26, the guest:
#                        the VM lane's DMA, V4L2 and GStreamer tests in one qemu guest that boots
#                        the root's kernel with the root as its / (ETVM_TESTS picks others)
#   tools/dev.sh compat 1.28 tsan
#                        the tsan lane in that root (build build-compat-VERSION-tsan/): what
#                        Debian 12 cannot build runs under ThreadSanitizer there, tensorinfer on
#                        ONNX Runtime and TensorFlow Lite and upstream's tensor decoders above all
#   tools/dev.sh deps    only install the Debian packages in tools/debian-packages.txt
#
# Each verb builds in a directory of its own and sets every option its build depends on, so the
# verbs compose in one clone in any order, repeated (demo then test, test then demo, ...).
# Meson wraps are never downloaded (--wrap-mode=nodownload): the Debian packages provide gtest,
# benchmark and dlpack, and dlpack's fallback ships in subprojects/.
#
# Environment: BUILD_DIR (the verb's build directory instead of its default; give each verb its
# own), SKIP_DEPS=1 (do not touch apt), MESON_ARGS (extra setup arguments),
# EDGETENSOR_BUILD_ONLY=1 (asan, tsan, fuzz, compat: configure and build what the lane runs, run
# nothing; CI builds the later lanes so while the main lane's tests leave a core idle). Every
# test verb ends with one line "N passed, N failed, N skipped".
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

log() { printf '==> %s\n' "$*" >&2; }

# shellcheck source=tools/cpu-seconds.sh
. "$here/tools/cpu-seconds.sh"

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
    mapfile -t pkgs < <(grep -v '^\s*#' tools/debian-packages.txt | sed '/^\s*$/d')
    install_packages "${pkgs[@]}"
}

# install_packages PKG...: the ones not installed yet, unless SKIP_DEPS=1.
install_packages() {
    [ "${SKIP_DEPS:-0}" = 1 ] && return 0
    local missing=() p
    for p in "$@"; do
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

# suite_query DIR any|outputs SUITE...: the tests of DIR in any of these suites (meson names
# a suite "project:name"; the name is matched). `any`: exit 0 if there is one. `outputs`: the
# build outputs they run (their executables and the targets they declare they depend on),
# relative to DIR, one a line.
suite_query() {
    meson introspect "$1" --tests --targets | python3 -c '
import json, os, sys
d = json.load(sys.stdin)
build, mode, want = sys.argv[1], sys.argv[2], set(sys.argv[3:])
tests = [t for t in d["tests"] if want & {s.split(":")[-1] for s in t["suite"]}]
if mode == "any":
    sys.exit(0 if tests else 1)
files = {t["id"]: t["filename"] for t in d["targets"]}
out = set()
for t in tests:
    for dep in t.get("depends", []):
        out.update(os.path.relpath(f, build) for f in files.get(dep, []))
print("\n".join(sorted(out)))
' "$@"
}

# build_suites DIR SUITE...: configure was done; build only what the tests of these suites run,
# not the whole tree.
build_suites() {
    local dir=$1
    shift
    local outputs
    outputs=$(suite_query "$dir" outputs "$@")
    [ -n "$outputs" ] || {
        log "no test of suite(s) $* in $dir"
        return 1
    }
    log "building in $dir what suite(s) $* run: $(echo "$outputs" | wc -l) targets"
    # shellcheck disable=SC2086 # one output path a line, none with spaces
    ninja -C "$dir" $outputs
}

# summary DIR [LOGBASE...]: the closing line, from meson's machine-readable test logs
# (meson test --logbase; default testlog), counted together.
summary() {
    local dir=$1 logs=() base
    shift
    for base in "${@:-testlog}"; do
        logs+=("$dir/meson-logs/$base.json")
    done
    python3 - "${logs[@]}" <<'EOF'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        with open(path) as f:
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
        failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
EOF
}

# build_only: whether EDGETENSOR_BUILD_ONLY=1 (build what the lane runs, run nothing).
build_only() { [ "${EDGETENSOR_BUILD_ONLY:-0}" = 1 ]; }

# built_only NAME: with EDGETENSOR_BUILD_ONLY=1, end the verb here, its build done.
built_only() {
    build_only || return 0
    log "$1: built, not run (EDGETENSOR_BUILD_ONLY=1)"
    exit 0
}

# tsan_lane DIR [meson args...]: build in DIR only the tsan suite's targets (the rest of the tree
# is the asan and test lanes' to build) with ThreadSanitizer, and run that suite.
tsan_lane() {
    local dir=$1
    shift
    meson_setup_only "$dir" -Dwerror=true -Db_sanitize=thread -Db_lundef=false \
        -Dbuildtype=debug -Dbenchmarks=disabled -Dintrospection=disabled "$@"
    build_suites "$dir" tsan
    built_only tsan
    TSAN_OPTIONS=halt_on_error=1 run_tests "$dir" --no-rebuild --suite tsan \
        --timeout-multiplier 4
}

# fresh_registries DIR: forget the GStreamer registries DIR's tests wrote. Making one is part of
# what a test does on CI's fresh build (every plugin of the test's path loaded in-process, under
# the lane's sanitizer); a registry kept from an earlier run in a warm build hid a TSan report
# that failed every fresh run.
fresh_registries() {
    find "$1" -name '*registry*.bin' -type f -delete 2>/dev/null || true
}

# run_tests DIR [meson test args...]
run_tests() {
    local dir=$1
    shift
    local rc=0
    fresh_registries "$dir"
    meson test -C "$dir" --print-errorlogs --num-processes 2 "$@" || rc=$?
    summary "$dir"
    return $rc
}

# has_suite DIR SUITE: whether any test of DIR is in SUITE.
has_suite() {
    suite_query "$1" any "$2"
}

# run_lane_tests DIR: every test of the README's test command. The vivid soak (suite vm-soak) is
# paced by vivid's 60 fps, not by the CPU: its guest uses about 0.6 of one of the two cores for
# six minutes. So it runs while the build suite compiles its three trees, niced so that the
# guest keeps its pace, instead of alone after them: the same tests, ~4 minutes less (testing.md).
run_lane_tests() {
    local dir=$1 rc=0 soak_pid='' console=$1/meson-logs/vm-soak-console.txt
    local logs=(testlog)
    fresh_registries "$dir"
    meson test -C "$dir" --print-errorlogs --num-processes 2 --no-suite vm-soak --no-suite build ||
        rc=$?
    if has_suite "$dir" vm-soak; then
        log "the vivid soak runs in its guest beside the build suite; its output follows that"
        meson test -C "$dir" --no-rebuild --print-errorlogs --logbase vm-soak --suite vm-soak \
            >"$console" 2>&1 &
        soak_pid=$!
        logs+=(vm-soak)
    fi
    if has_suite "$dir" build; then
        nice -n 10 meson test -C "$dir" --no-rebuild --print-errorlogs --logbase build \
            --suite build || rc=$?
        logs+=(build)
    fi
    if [ -n "$soak_pid" ]; then
        wait "$soak_pid" || rc=$?
        cat "$console"
    fi
    summary "$dir" "${logs[@]}"
    return $rc
}

main() {
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
        run_lane_tests "$dir"
        ;;
    asan)
        install_deps
        dir=${BUILD_DIR:-build-asan}
        # No introspection: the scanner's dumper and python cannot load an instrumented library.
        setup "$dir" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
            -Dbuildtype=debug -Dbenchmarks=disabled -Dintrospection=disabled
        built_only asan
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            run_tests "$dir" --no-suite vm --no-suite bench --no-suite install --no-suite build \
            --timeout-multiplier 4
        ;;
    tsan)
        install_deps
        tsan_lane "${BUILD_DIR:-build-tsan}"
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
            fuzz_tensor_meta_libfuzzer test_fuzz_from_desc test_fuzz_ipc_message \
            test_fuzz_tensor_meta
        built_only fuzz
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            run_tests "$dir" --no-rebuild --suite fuzz --timeout-multiplier 4
        ;;
    compat)
        version=${2:-} variant=${3:-}
        case "$version:$variant" in
        1.26: | 1.28: | 1.26:tsan | 1.28:tsan) ;;
        *)
            log "usage: tools/dev.sh compat 1.26|1.28 [tsan]"
            exit 2
            ;;
        esac
        dir=${BUILD_DIR:-build-compat-$version${variant:+-$variant}}
        if [ ! -f /etc/edgetensor-compat-root ]; then
            # On the host: make (or reuse) the root, then run this verb again inside it.
            install_packages debootstrap
            t0=$SECONDS
            as_root tools/compat-root.sh ensure "$version" >/dev/null
            log "compat $version: root ready after $((SECONDS - t0)) s"
            as_root tools/compat-root.sh run "$version" env BUILD_DIR="$dir" \
                tools/dev.sh compat "$version" ${variant:+"$variant"}
            exit
        fi
        # Inside the root. Suite vm is the VM lane's (tests/vm): registered only where the guest
        # step below runs it, and required there, so a root that cannot boot a guest fails at
        # configure time.
        guest=0 vm_lane=disabled
        if [ "$version" = 1.26 ]; then
            guest=1 vm_lane=enabled
        fi
        # What this release packages must be built and tested here, never skipped: the
        # inference runtimes (docs/inference.md) are required, and their tests fail rather than
        # skip when a runtime is missing.
        case "$version" in
        1.26) runtimes=(onnxruntime) ;;
        1.28) runtimes=(onnxruntime tflite) ;;
        esac
        runtime_opts=()
        for r in "${runtimes[@]}"; do runtime_opts+=("-D$r=enabled"); done
        EDGETENSOR_TEST_REQUIRE_INFER=$(IFS=,; echo "${runtimes[*]}")
        export EDGETENSOR_TEST_REQUIRE_INFER
        # Every lane release has unixfdsink/src, GstTensorMeta and the analytics library: the
        # unixfd-neighbour and cross-process meta tests (tests/gst) fail rather than skip here.
        export EDGETENSOR_TEST_REQUIRE_GST126=1
        if [ "$variant" = tsan ]; then
            tsan_lane "$dir" "${runtime_opts[@]}"
            exit
        fi
        t0=$SECONDS c0=$(cpu_seconds)
        setup "$dir" -Dbuildtype=debugoptimized -Dwerror=true -Db_sanitize=none -Dtests=auto \
            -Dbenchmarks=auto -Dvm_lane=$vm_lane "${runtime_opts[@]}"
        log "compat $version: configured and built in $((SECONDS - t0)) s (CPU $(($(cpu_seconds) - c0)) s)"
        if build_only; then
            # The trees suite build's tests make, made once here so that their compiles are in
            # this release's ccache when the tests make them again (a cache, not a result: the
            # tests compile, or replay, every file themselves).
            sh tests/subproject/check-release-warnings.sh "$here" "$dir" || true
            sh tests/subproject/check-consumer.sh "$here" tests/subproject/consumer || true
        fi
        built_only "compat $version"
        t0=$SECONDS c0=$(cpu_seconds)
        rc=0
        run_tests "$dir" --no-suite vm || rc=$?
        log "compat $version: tests ran in $((SECONDS - t0)) s (CPU $(($(cpu_seconds) - c0)) s)"
        [ "$guest" = 1 ] || exit $rc
        # The guest (issue 22): this release's kernel (vivid, dma-heap, udmabuf, vgem) boots
        # once with this root as its / and runs, with every provider required, the part of the
        # VM lane whose outcome depends on the GStreamer version (v4l2src's DMA_DRM above all)
        # or on the kernel: DMA, V4L2, the GStreamer layer and its fault scenarios. Left to the
        # Debian 12 lane for cost: GL (Mesa's, ~7 min in TCG), the docs' vm blocks (~7 min;
        # this lane's docs suite already runs the vivid chain on 1.26), the map-cost
        # measurement, Python, CUDA and the library-only tests.
        export ETVM_TESTS=${ETVM_TESTS:-'dma* v4l2-* gst-* fault-gst-* !gst-map-cost !gst-tensorconvert-gl'}
        t0=$SECONDS c0=$(cpu_seconds)
        log "compat $version: the guest runs the VM lane's ETVM_TESTS='$ETVM_TESTS'"
        meson test -C "$dir" --no-rebuild --print-errorlogs --logbase guest lane || rc=$?
        log "compat $version: the guest ran in $((SECONDS - t0)) s (CPU $(($(cpu_seconds) - c0)) s)"
        summary "$dir" testlog guest
        exit $rc
        ;;
    *)
        sed -n '4,28p' "$0" >&2
        exit 2
        ;;
    esac
}

# One line, read whole before it runs: editing this file under a running lane is safe.
main "$@"; exit $?
