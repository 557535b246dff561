// SPDX-License-Identifier: MIT
//
// The kernel object behind an fd: fstat's (st_dev, st_ino). An fd number is recycled for other
// buffers; the inode is stable for as long as the object lives, so caches key on it (the
// GStreamer import cache, the meta's "same bytes" test). Asked in one place, through the fault
// hook (FaultPoint::Fstat), so tests can make it fail. Not an fd's *type*: from_fd classifies
// by fstatfs magic, never by st_dev.

#pragma once

#include "edgetensor/error.hpp"

#include <cstdint>

namespace edgetensor::detail
{

struct FdIdentity {
    uint64_t dev = 0;
    uint64_t ino = 0;
    bool operator==(const FdIdentity&) const = default;
};

/// (st_dev, st_ino) of the object behind the borrowed `fd`. Io (with the errno, named in the
/// message) when fstat fails or a fault is injected at "fstat".
Result<FdIdentity> fd_identity(int fd);

} // namespace edgetensor::detail
