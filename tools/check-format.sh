#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Fails when a C/C++ source is not formatted per .clang-format (clang-format 14, the version
# the style was written for). Vendored kernel UAPI headers keep the kernel's formatting.
#   tools/check-format.sh SOURCE_ROOT CLANG_FORMAT
set -eu
root=$1
clang_format=$2
cd "$root"
files=$(find lib gst tests examples bench -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \
    -o -name '*.hpp' \) ! -path '*/uapi/*' | sort)
# shellcheck disable=SC2086
"$clang_format" --dry-run --Werror $files
echo "$(echo "$files" | wc -l) files formatted"
