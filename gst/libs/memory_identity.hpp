// SPDX-License-Identifier: MIT
//
// Which kernel object a GstMemory's fd is, and what kind of memory it is, for keys and
// messages. Not installed.

#pragma once

#include "internal_api.hpp"

#include <edgetensor/error.hpp>

#include <gst/gst.h>

namespace edgetensor::gst
{

/// The kernel's stable name of the buffer behind an fd: (st_dev, st_ino).
struct MemoryIdentity {
    guint64 dev = 0;
    guint64 ino = 0;
    bool operator==(const MemoryIdentity&) const = default;
};

/// (st_dev, st_ino) of the fd behind `mem`. A GstFdMemory keeps one fd for its whole life, so
/// the answer is remembered on the memory (qdata, dying with it): a camera pool that hands the
/// same memories out again costs no system call per frame, and a new memory (even under a
/// recycled fd number) is asked afresh. A share has its parent's fd, and the answer is kept on
/// the parent: shares made per frame of one kept memory (tensoripcsrc's) ask once in all.
/// Asked through the core (the "fstat" fault point). NotSupported when `mem` has no fd; Io,
/// with the errno, when the kernel refuses.
EDGETENSOR_GST_INTERNAL Result<MemoryIdentity> memory_identity(GstMemory* mem);

/// (st_dev, st_ino) of a bare fd, for a caller that keys on the file before it has a memory
/// (tensoripcsrc's kept files): the same question, through the same fault point.
EDGETENSOR_GST_INTERNAL Result<MemoryIdentity> fd_file_identity(int fd);

/// Tells memory_identity() what `mem`'s fd is, for a caller that has just fstat()ed it (the
/// receiver's checks of a received memfd). Nothing changes when `mem` has no fd or its
/// identity is already known.
EDGETENSOR_GST_INTERNAL void remember_memory_identity(GstMemory* mem, MemoryIdentity id);

/// `mem`'s allocator's memory type ("SystemMemory", "dmabuf", "edgetensor-shm", ...), or
/// "(no allocator)", for messages.
EDGETENSOR_GST_INTERNAL const char* memory_type_name(GstMemory* mem) noexcept;

} // namespace edgetensor::gst
