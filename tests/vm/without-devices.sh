#!/bin/bash
# SPDX-License-Identifier: MIT
#
# without-devices.sh - run a command with some device nodes made unusable, for real: in a
# private mount namespace an empty tmpfs covers each directory given (e.g. /dev/dma_heap) and
# /dev/null is bind-mounted over each device node given (e.g. /dev/udmabuf: it still opens,
# but its ioctls fail). Nothing outside the command sees a change. Needs root (the VM lane
# runs as root); anywhere else it says so and exits 77.
#
#   usage: without-devices.sh PATH... -- COMMAND [ARGS...]
set -eu

if [ "${1:-}" = --inner ]; then
    shift
    while [ "$1" != -- ]; do
        if [ -d "$1" ]; then
            mount -t tmpfs -o mode=755,size=4k none "$1"
        elif [ -e "$1" ]; then
            mount --bind /dev/null "$1"
        fi
        shift
    done
    shift
    exec "$@"
fi

paths=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    paths+=("$1")
    shift
done
[ "${1:-}" = -- ] && [ $# -ge 2 ] || {
    echo "usage: $0 PATH... -- COMMAND [ARGS...]" >&2
    exit 2
}
shift
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
    echo "without-devices: SKIP: needs root and unshare(1) to hide ${paths[*]}" >&2
    exit 77
fi
exec unshare --mount --propagation private "$0" --inner "${paths[@]}" -- "$@"
