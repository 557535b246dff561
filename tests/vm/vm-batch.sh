#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vm-batch.sh - run several test commands one after the other, inside one VM boot.
#
#   usage: vm-batch.sh --test NAME COMMAND [ARGS...] [--test NAME COMMAND [ARGS...]]...
#
# Runs every test even when an earlier one fails, prints a PASS/FAIL line with the time of
# each, and exits 0 only when all exited 0. Exit 77 (a skip) counts as a failure: the lane
# exists to run what the host has to skip, so a skip there means the lane is broken.
# Meant to be the command given to run-in-vm.sh (tests/vm/meson.build does that).
#
# ETVM_TESTS (run-in-vm.sh hands it to the guest) selects a part of the batch: shell patterns
# separated by spaces, a test runs when its name matches one of them (or none is given) and no
# pattern written !PATTERN. A pattern that matches no test is an error, so a renamed test
# cannot silently drop out of a selection. Example: ETVM_TESTS='dma* gst-* !gst-map-cost'.
set -u

names=()
declare -A cmds=()
i=-1
while [ $# -gt 0 ]; do
    if [ "$1" = --test ]; then
        [ $# -ge 3 ] || {
            echo "vm-batch: --test needs a NAME and a COMMAND" >&2
            exit 2
        }
        i=$((i + 1))
        names+=("$2")
        shift 2
        continue
    fi
    [ $i -ge 0 ] || {
        echo "vm-batch: expected --test NAME COMMAND..., got '$1'" >&2
        exit 2
    }
    cmds[$i]+="$(printf '%q ' "$1")"
    shift
done
[ ${#names[@]} -gt 0 ] || {
    echo "usage: $0 --test NAME COMMAND [ARGS...] [--test ...]" >&2
    exit 2
}

# The selection: include and exclude patterns, each checked against every name.
includes=()
excludes=()
read -r -a patterns <<<"${ETVM_TESTS:-}"
for p in "${patterns[@]}"; do
    case "$p" in
    !*) excludes+=("${p#!}") ;;
    *) includes+=("$p") ;;
    esac
done
for p in "${includes[@]}" "${excludes[@]}"; do
    matched=0
    for name in "${names[@]}"; do
        # shellcheck disable=SC2053 # $p is a pattern on purpose
        [[ $name == $p ]] && matched=1 && break
    done
    [ $matched = 1 ] || {
        echo "vm-batch: ETVM_TESTS pattern '$p' matches none of the lane's tests: ${names[*]}" >&2
        exit 2
    }
done
selected() {
    local p in=0
    [ ${#includes[@]} -eq 0 ] && in=1
    for p in "${includes[@]}"; do
        # shellcheck disable=SC2053
        [[ $1 == $p ]] && in=1
    done
    for p in "${excludes[@]}"; do
        # shellcheck disable=SC2053
        [[ $1 == $p ]] && in=0
    done
    [ $in = 1 ]
}

failed=()
ran=0
left_out=0
for ((n = 0; n < ${#names[@]}; n++)); do
    name=${names[$n]}
    if ! selected "$name"; then
        left_out=$((left_out + 1))
        continue
    fi
    ran=$((ran + 1))
    echo "==> vm test '$name': ${cmds[$n]}"
    start=$EPOCHREALTIME
    # stderr joins stdout so a test's messages stay next to its output in the log.
    eval "${cmds[$n]}" 2>&1
    rc=$?
    secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    case $rc in
    0) echo "<== vm test '$name': PASS (${secs} s)" ;;
    77)
        echo "<== vm test '$name': FAIL: skipped (exit 77), which the VM lane does not allow (${secs} s)"
        failed+=("$name")
        ;;
    *)
        echo "<== vm test '$name': FAIL: exit status $rc (${secs} s)"
        failed+=("$name")
        ;;
    esac
done
[ $ran -gt 0 ] || {
    echo "vm-batch: ETVM_TESTS='${ETVM_TESTS:-}' selects none of the lane's tests" >&2
    exit 2
}
note=""
[ $left_out -eq 0 ] || note=" ($left_out more not selected by ETVM_TESTS='$ETVM_TESTS')"
echo "vm lane: $((ran - ${#failed[@]})) of $ran passed${failed:+; failed: ${failed[*]}}$note"
[ ${#failed[@]} -eq 0 ]
