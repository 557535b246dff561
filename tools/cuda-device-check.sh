#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cuda-device-check.sh - the CUDA checks of docs/cuda.md on a machine with an NVIDIA GPU and
# the CUDA runtime (the toolkit's headers too, for the ABI check). CI has no GPU: there the
# cuda suite runs against the simulated runtime of tests/cuda; this script runs the same test
# binaries against the real libcudart.
#
#   tools/cuda-device-check.sh            build build-cuda/, then run every step below
#   SKIP_BUILD=1 BUILD_DIR=DIR tools/cuda-device-check.sh
#                                         run DIR's test binaries as they are: a build made on
#                                         another machine (a GPU server without Debian's
#                                         packages) with DIR/lib/tensor and DIR/tests/{cuda,gl}
#                                         copied over, their libraries (libdrm.so.2) findable
#
# Steps, each reported as PASS/FAIL/SKIP, then one line "N passed, N failed, N skipped":
#   device     the runtime loads and cudaGetDeviceCount() reports a device (else the steps
#              that need one are skipped)
#   abi        compiles a C++ file against the toolkit's cuda_runtime_api.h that checks the
#              layouts and values edgetensor declares itself (lib/tensor/src/cuda/cuda_api.hpp)
#              against CUDA's own
#   table      cuda_table_test: the runtime loads through EDGETENSOR_CUDART, a device answers
#   dma        cuda_dma_test: DMA-BUF tensors imported as CUDA external memory (needs a DMA-BUF
#              provider: /dev/dma_heap/system or /dev/udmabuf, else it skips)
#   gpu-dmabuf cuda_device_dmabuf_test: GPU memory CUDA exports as a DMA-BUF, through from_fd,
#              a CPU map, cuda_map() and the GL converter: the bytes, or each refusal's reason
#   host       cuda_host_test: shared-memory and large heap tensors registered in place
#              (cudaHostRegister): the device reads what the CPU wrote and writes what it reads
#   pbo        cuda_pbo_test: PBOs registered through the GL thread (needs an EGL context on the
#              NVIDIA GPU: set EDGETENSOR_GL_DEVICE=/dev/dri/renderD* if EGL picks another one)
#   roundtrip  the converter's output in a DMA-BUF and in a PBO, cuda_map(), cudaMemcpy back to
#              the host: equal to the CPU output (the ConverterOutput* tests of dma and pbo)
#   gl         gl_convert_test, gl_pbo_test, gl_dma_buf_formats_test on the GPU's own GL
#              (FAIL when the context is a software renderer): every format against the CPU
#              engine and the reference, and the DMA-BUF formats and modifiers the driver lists
#   absent     with EDGETENSOR_CUDART pointing nowhere, the same machine runs without CUDA
#
# Environment: EDGETENSOR_CUDART (the runtime to test; default: the first libcudart found by
# ldconfig, in $CUDA_HOME/lib64 or /usr/local/cuda/lib64), CUDA_HOME (default /usr/local/cuda),
# BUILD_DIR (default build-cuda), SKIP_DEPS=1 (do not install Debian packages), SKIP_BUILD=1.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
dir=${BUILD_DIR:-build-cuda}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
passed=0 failed=0 skipped=0

log() { printf '==> %s\n' "$*" >&2; }
result() { # result NAME STATUS DETAIL
    printf '%-10s %s%s\n' "$1" "$2" "${3:+  ($3)}"
    case $2 in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    *) skipped=$((skipped + 1)) ;;
    esac
}

find_cudart() {
    if [ -n "${EDGETENSOR_CUDART:-}" ]; then
        echo "$EDGETENSOR_CUDART"
        return
    fi
    local p
    p=$(ldconfig -p 2>/dev/null | awk '/libcudart\.so/ {print $NF; exit}')
    if [ -z "$p" ]; then
        for p in "$cuda_home"/lib64/libcudart.so* /usr/local/cuda/lib64/libcudart.so*; do
            [ -e "$p" ] && break
            p=
        done
    fi
    echo "$p"
}

cudart=$(find_cudart)
if [ -z "$cudart" ]; then
    echo "no libcudart found: install the CUDA runtime or set EDGETENSOR_CUDART" >&2
    exit 77
fi
log "CUDA runtime: $cudart"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >&2

if [ "${SKIP_BUILD:-0}" = 1 ]; then
    log "using the binaries in $dir as they are (SKIP_BUILD=1)"
else
    if [ "${SKIP_DEPS:-0}" != 1 ]; then
        tools/dev.sh deps || log "could not install the Debian packages; building with what is here"
    fi
    log "building $dir"
    if [ -f "$dir/build.ninja" ]; then
        meson setup --reconfigure "$dir" --wrap-mode=nodownload -Dtests=enabled >/dev/null
    else
        meson setup "$dir" --wrap-mode=nodownload -Dtests=enabled -Dbenchmarks=disabled >/dev/null
    fi >&2 || exit 1
    meson compile -C "$dir" >&2 || exit 1
fi

# abi: our declarations against CUDA's headers.
if [ -f "$cuda_home/include/cuda_runtime_api.h" ]; then
    tmp=$(mktemp -d)
    cat >"$tmp/abi.cpp" <<'EOF'
#include <cuda_runtime_api.h>
#include "cuda/cuda_api.hpp"
#include <cstddef>
#include <cstdio>
namespace o = edgetensor::detail::cuda;
#define SAME_OFFSET(T, U, f) static_assert(offsetof(T, f) == offsetof(U, f), #f)
static_assert(sizeof(o::cudaExternalMemoryHandleDesc) >= sizeof(cudaExternalMemoryHandleDesc));
SAME_OFFSET(o::cudaExternalMemoryHandleDesc, cudaExternalMemoryHandleDesc, type);
SAME_OFFSET(o::cudaExternalMemoryHandleDesc, cudaExternalMemoryHandleDesc, handle);
SAME_OFFSET(o::cudaExternalMemoryHandleDesc, cudaExternalMemoryHandleDesc, size);
SAME_OFFSET(o::cudaExternalMemoryHandleDesc, cudaExternalMemoryHandleDesc, flags);
static_assert(sizeof(o::cudaExternalMemoryBufferDesc) >= sizeof(cudaExternalMemoryBufferDesc));
SAME_OFFSET(o::cudaExternalMemoryBufferDesc, cudaExternalMemoryBufferDesc, offset);
SAME_OFFSET(o::cudaExternalMemoryBufferDesc, cudaExternalMemoryBufferDesc, size);
SAME_OFFSET(o::cudaExternalMemoryBufferDesc, cudaExternalMemoryBufferDesc, flags);
static_assert(o::cudaErrorNoDevice == cudaErrorNoDevice);
static_assert(o::cudaExternalMemoryHandleTypeOpaqueFd == cudaExternalMemoryHandleTypeOpaqueFd);
static_assert(o::cudaGraphicsRegisterFlagsNone == cudaGraphicsRegisterFlagsNone);
static_assert(o::kHostRegisterMapped == cudaHostRegisterMapped);
static_assert(o::kHostRegisterReadOnly == cudaHostRegisterReadOnly);
static_assert(o::cudaErrorHostMemoryAlreadyRegistered == cudaErrorHostMemoryAlreadyRegistered);
static_assert(int(o::cudaMemcpyDeviceToHost) == int(cudaMemcpyDeviceToHost));
static_assert(int(o::cudaMemcpyHostToDevice) == int(cudaMemcpyHostToDevice));
static_assert(sizeof(cudaError_t) == sizeof(o::cudaError_t));
int main()
{
    std::printf("cudaExternalMemoryHandleDesc %zu (ours %zu), cudaExternalMemoryBufferDesc %zu "
                "(ours %zu)\n",
                sizeof(cudaExternalMemoryHandleDesc), sizeof(o::cudaExternalMemoryHandleDesc),
                sizeof(cudaExternalMemoryBufferDesc), sizeof(o::cudaExternalMemoryBufferDesc));
}
EOF
    if c++ -std=c++20 -I"$cuda_home/include" -Ilib/tensor/src -Ilib/tensor/include \
        "$tmp/abi.cpp" -o "$tmp/abi" 2>"$tmp/abi.log" && "$tmp/abi"; then
        result abi PASS "layouts and values match $cuda_home/include"
    else
        cat "$tmp/abi.log" >&2
        result abi FAIL "see the compiler output above"
    fi
    rm -rf "$tmp"
else
    result abi SKIP "no $cuda_home/include/cuda_runtime_api.h (set CUDA_HOME)"
fi

# run NAME BINARY [gtest args]: one test binary against the real runtime.
run() {
    local name=$1 bin=$2
    shift 2
    if [ ! -x "$bin" ]; then
        result "$name" SKIP "$bin not built"
        return
    fi
    local out rc=0
    out=$(env -u EDGETENSOR_TEST_SIMCUDA EDGETENSOR_CUDART="$cudart" \
        EDGETENSOR_TEST_REQUIRE_CUDA=1 EDGETENSOR_DEBUG="${EDGETENSOR_DEBUG:-cuda:4,gl:3,*:2}" \
        "$bin" --gtest_brief=0 "$@" 2>&1) || rc=$?
    printf '%s\n' "$out" | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|Failure|Skipped|CUDA runtime' >&2
    local skips
    skips=$(printf '%s\n' "$out" | grep -c '^\[  SKIPPED \] .*(' || true)
    if [ $rc -ne 0 ]; then
        result "$name" FAIL "exit status $rc"
    elif ! printf '%s\n' "$out" | grep -q '^\[       OK \]'; then
        result "$name" SKIP "every test skipped"
    else
        result "$name" PASS "$skips skipped (simulator-only or no provider)"
    fi
}

# The runtime must load and a device must answer before the rest means anything.
why=$(env -u EDGETENSOR_TEST_SIMCUDA EDGETENSOR_CUDART="$cudart" \
    "$dir/tests/cuda/cuda_absent_test" --gtest_filter='*TheReasonSaysWhy' 2>&1 | sed -n 's/^reason: //p')
if [ -n "$why" ]; then
    result device FAIL "$why"
    for step in table dma gpu-dmabuf host pbo roundtrip; do
        result "$step" SKIP "no CUDA device"
    done
else
    result device PASS "$cudart loads and reports a device"
    run table "$dir/tests/cuda/cuda_table_test"
    run dma "$dir/tests/cuda/cuda_dma_test"
    run gpu-dmabuf "$dir/tests/cuda/cuda_device_dmabuf_test"
    run host "$dir/tests/cuda/cuda_host_test"
    run pbo "$dir/tests/cuda/cuda_pbo_test"
    run roundtrip "$dir/tests/cuda/cuda_dma_test" --gtest_filter='*ConverterOutput*dma_buf*'
    run roundtrip "$dir/tests/cuda/cuda_pbo_test" --gtest_filter='*ConverterOutput*'
fi

# gl: the GL suites on the GPU's own driver (a software renderer proves nothing here).
gl_out=$(EDGETENSOR_DEBUG=gl:3 "$dir/tests/gl/gl_pbo_test" --gtest_filter='GlContext.SharedContextIsHeadless*' 2>&1)
renderer=$(printf '%s\n' "$gl_out" | sed -n 's/^GL: [^|]*| \([^|]*\) |.*/\1/p' | head -1)
if [ ! -x "$dir/tests/gl/gl_convert_test" ]; then
    result gl SKIP "$dir/tests/gl not built"
elif [ -z "$renderer" ]; then
    printf '%s\n' "$gl_out" >&2
    result gl FAIL "no GL context"
elif printf '%s' "$renderer" | grep -q -E 'llvmpipe|softpipe|swrast|Software'; then
    result gl FAIL "the GL context is a software renderer ($renderer): set EDGETENSOR_GL_DEVICE"
else
    gl_rc=0
    for t in gl_convert gl_pbo gl_dma_buf_formats; do
        EDGETENSOR_TEST_REQUIRE_GL=1 "$dir/tests/gl/${t}_test" --gtest_brief=1 >&2 || gl_rc=1
    done
    if [ $gl_rc -eq 0 ]; then
        result gl PASS "on $renderer"
    else
        result gl FAIL "on $renderer; see the output above"
    fi
fi

if [ -x "$dir/tests/cuda/cuda_absent_test" ]; then
    if EDGETENSOR_CUDART=/nonexistent/libcudart.so.12 \
        EDGETENSOR_TEST_CUDA_WHY='cannot load the CUDA runtime' \
        "$dir/tests/cuda/cuda_absent_test" --gtest_brief=1 >&2; then
        result absent PASS "no runtime: Unavailable, nothing else affected"
    else
        result absent FAIL
    fi
else
    result absent SKIP "not built"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
