// SPDX-License-Identifier: MIT
//
// Shared by the gtest IPC fuzz driver and the libFuzzer target: building one fuzz case (a
// record plus the fds that come with it) from raw bytes, and what must hold after parse()
// accepts a record. Accepting garbage quietly is as much a bug as crashing on it.

#pragma once

#include "ipc_wire.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

namespace edgetensor::fuzz
{

/// The fds a case can carry: a sealed 4 KiB memfd (valid), a pipe, an unsealed memfd, a
/// sealed but empty memfd.
struct IpcFds {
    int sealed = -1, pipe_r = -1, pipe_w = -1, unsealed = -1, empty = -1;
    IpcFds()
    {
        sealed = ::memfd_create("fuzz-ipc", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (sealed >= 0 && ::ftruncate(sealed, 4096) == 0)
            (void)::fcntl(sealed, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
        int p[2];
        if (::pipe2(p, O_CLOEXEC) == 0) {
            pipe_r = p[0];
            pipe_w = p[1];
        }
        unsealed = ::memfd_create("fuzz-ipc-unsealed", MFD_CLOEXEC);
        if (unsealed >= 0)
            (void)::ftruncate(unsealed, 4096);
        empty = ::memfd_create("fuzz-ipc-empty", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (empty >= 0)
            (void)::fcntl(empty, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
    }
    ~IpcFds()
    {
        for (int fd : {sealed, pipe_r, pipe_w, unsealed, empty})
            if (fd >= 0)
                ::close(fd);
    }
    IpcFds(const IpcFds&) = delete;
    IpcFds& operator=(const IpcFds&) = delete;
    int pick(unsigned kind) const
    {
        switch (kind & 3) {
        case 0:
            return sealed;
        case 1:
            return pipe_r;
        case 2:
            return unsealed;
        default:
            return empty;
        }
    }
};

/// A valid one-memory FRAME over a 4 KiB memfd, and valid CAPS/RELEASE records: the seeds
/// the fuzz bytes are XORed over, so mutations start near-valid.
inline std::vector<uint8_t> seed_record(unsigned which)
{
    using namespace ipc;
    switch (which & 3) {
    case 1: {
        MemoryRecord r;
        r.desc = edgetensor_desc_init();
        r.desc.kind = EDGETENSOR_KIND_HOST;
        r.desc.handle = 0;
        r.desc.ndim = 2;
        r.desc.dtype = EDGETENSOR_DTYPE_U8;
        r.desc.shape[0] = 32;
        r.desc.shape[1] = 128;
        r.desc.strides[0] = 128;
        r.desc.strides[1] = 1;
        r.desc.capacity = 4096;
        r.size = 4096;
        r.maxsize = 4096;
        FrameHead h;
        h.seq = 1;
        h.n_planes = 2;
        h.plane_stride[0] = 64;
        h.plane_stride[1] = 64;
        h.plane_offset[1] = 2048;
        auto m = encode_frame(h, std::span(&r, 1));
        return m ? *m : std::vector<uint8_t>{};
    }
    case 2: {
        auto m = encode_caps(1, "video/x-raw, format=(string)NV12, width=(int)64, height=(int)32");
        return m ? *m : std::vector<uint8_t>{};
    }
    case 3: {
        const uint64_t seqs[] = {1, 2};
        auto m = encode_release(seqs);
        return m ? *m : std::vector<uint8_t>{};
    }
    default:
        return {};
    }
}

/// What must hold for an accepted record. Empty when all holds.
inline std::string check_accepted(const ipc::Message& m, size_t fds_given)
{
    using namespace ipc;
    if (m.type != MsgType::Frame)
        return fds_given == 0 ? "" : "a record without fds was accepted with fds";
    const Frame& f = m.frame;
    if (f.head.n_memories < 1 || f.head.n_memories > kMaxMemories)
        return "accepted a frame with a bad memory count";
    if (f.head.n_memories != fds_given)
        return "accepted a frame whose fd count differs from its memories";
    for (uint32_t i = 0; i < f.head.n_memories; ++i) {
        const MemoryRecord& r = f.memories[i];
        if (!f.fds[i])
            return "accepted a memory without an fd";
        auto b = addressed_bytes(r.desc);
        if (!b || *b > r.desc.capacity)
            return "accepted a descriptor addressing beyond its capacity";
        if (r.offset + r.size > r.maxsize || r.maxsize > r.desc.capacity || r.size == 0)
            return "accepted a memory window beyond the buffer";
        if (r.desc.handle != int64_t(i) || r.desc.ptr != nullptr)
            return "accepted a descriptor with a foreign handle or address";
    }
    for (uint32_t p = 0; p < f.head.n_planes; ++p)
        if (f.head.plane_offset[p] >= f.total_size() || f.head.plane_stride[p] <= 0)
            return "accepted a plane outside the frame";
    return {};
}

} // namespace edgetensor::fuzz
