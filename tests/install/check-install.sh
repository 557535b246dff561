#!/bin/sh
# SPDX-License-Identifier: MIT
#
# `meson install` into a staging prefix, then build and run a consumer against the staged
# headers, library and pkg-config file only, as a user of the installed package would.
set -eu
build=$1
consumer=$2
gir=${3:-}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT INT TERM

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
pc=$(find "$dest" -name edgetensor.pc | head -n 1)
[ -n "$pc" ] || { echo "edgetensor.pc was not installed"; exit 1; }
header=$(find "$dest" -path '*/edgetensor/tensor.hpp' | head -n 1)
[ -n "$header" ] || { echo "edgetensor/tensor.hpp was not installed"; exit 1; }
if find "$dest" -path '*/edgetensor/storage.hpp' | grep -q .; then
    echo "an internal header was installed"
    exit 1
fi
if find "$dest" -name gstreamer-edgetensor-1.0.pc | grep -q .; then
    find "$dest" -path '*/gst/edgetensor/gstedgetensorstats.h' | grep -q . ||
        { echo "gst/edgetensor/gstedgetensorstats.h was not installed"; exit 1; }
fi
if [ -n "$gir" ]; then
    find "$dest" -path "*/gir-1.0/$gir.gir" | grep -q . ||
        { echo "$gir.gir was not installed"; exit 1; }
    find "$dest" -path "*/girepository-1.0/$gir.typelib" | grep -q . ||
        { echo "$gir.typelib was not installed"; exit 1; }
fi

export PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_SYSROOT_DIR=$dest
# shellcheck disable=SC2046
c++ -std=c++20 -Wall -Werror -o "$dest/consumer" "$consumer" $(pkg-config --cflags --libs edgetensor)
libdir=$(dirname "$(find "$dest" -name 'libedgetensor.so' | head -n 1)")
LD_LIBRARY_PATH=$libdir "$dest/consumer"
