// SPDX-License-Identifier: MIT
//
// What the fake delegate (fake_delegate.cpp) saw, for the tests that load it through the
// library: they dlopen the same file and read its counters.

#pragma once

#include <cstdint>

extern "C" {

struct FakeDelegateStats {
    int creates;
    int destroys;
    int claimed_nodes;
    int invokes;
    /// Invokes whose input came through an imported DMA-BUF (mmap of the fd), not tensor data.
    int invokes_through_fd;
    int imports;
    int declines;
    int frees;
    /// Imports whose borrowed fd was still open, and the same file, when the kernel ran.
    int borrowed_fd_valid_at_invoke;
    /// (st_dev, st_ino) of the last imported fd; its offset, size, rank and shape.
    uint64_t last_dev;
    uint64_t last_ino;
    uint64_t last_offset;
    uint64_t last_size;
    uint32_t last_ndim;
    uint32_t last_dtype;
    uint64_t last_shape[8];
    /// "key=value;" for every option of the last create.
    char options[256];
};

using FakeDelegateStatsFn = const FakeDelegateStats* (*)();
using FakeDelegateResetFn = void (*)();
}
