// SPDX-License-Identifier: MIT
//
// What the IPC tests send: a sealed memfd (the kind of fd a receiver accepts as host memory)
// and the flat u8 record that describes one. Needs edgetensor_ipc_dep.

#pragma once

#include "ipc_wire.hpp"

#include <edgetensor/unique_fd.hpp>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace edgetensor::test
{

/// `bytes` long, every byte `fill`.
inline UniqueFd sealed_memfd(size_t bytes, uint8_t fill = 0)
{
    UniqueFd fd(::memfd_create("ipc-test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    EXPECT_TRUE(fd);
    EXPECT_EQ(::ftruncate(fd.get(), off_t(bytes)), 0);
    if (fill != 0 && bytes > 0) {
        void* p = ::mmap(nullptr, bytes, PROT_WRITE, MAP_SHARED, fd.get(), 0);
        EXPECT_NE(p, MAP_FAILED);
        if (p != MAP_FAILED) {
            std::memset(p, fill, bytes);
            ::munmap(p, bytes);
        }
    }
    EXPECT_EQ(::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    return fd;
}

inline ipc::MemoryRecord flat_record(uint64_t bytes, uint32_t index = 0)
{
    ipc::MemoryRecord r;
    r.desc = edgetensor_desc_init();
    r.desc.kind = EDGETENSOR_KIND_HOST;
    r.desc.handle = index;
    r.desc.ndim = 1;
    r.desc.dtype = EDGETENSOR_DTYPE_U8;
    r.desc.shape[0] = bytes;
    r.desc.strides[0] = 1;
    r.desc.capacity = bytes;
    r.size = bytes;
    r.maxsize = bytes;
    return r;
}

} // namespace edgetensor::test
