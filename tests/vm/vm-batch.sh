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

failed=()
for ((n = 0; n < ${#names[@]}; n++)); do
    name=${names[$n]}
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
echo "vm lane: $((${#names[@]} - ${#failed[@]})) of ${#names[@]} passed${failed:+; failed: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
