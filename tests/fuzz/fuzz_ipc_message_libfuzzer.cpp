// SPDX-License-Identifier: MIT
//
// libFuzzer target for the IPC record parser (built only with clang; the parser is compiled
// into this binary with coverage instrumentation, see meson.build).
//
// Input: byte 0: low 3 bits the number of fds that come with the record (0..7), bits 3-4 the
// kind (sealed memfd, pipe, unsealed memfd, empty memfd); byte 1: the seed the remaining
// bytes are XORed over (none, a valid FRAME, CAPS or RELEASE, a FRAME with a tensor and an
// analytics meta and a meta fd), bytes past the seed appended.
// Every accepted record is checked against what must hold, then its fds against the kernel;
// every fd handed to the parser must be closed afterwards, accepted or not.

#include "fuzz_ipc_common.hpp"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace edgetensor;
    static const fuzz::IpcFds pool;
    if (size < 2)
        return 0;
    std::vector<uint8_t> bytes = fuzz::seed_record(data[1]);
    for (size_t i = 2; i < size; ++i) {
        if (i - 2 < bytes.size())
            bytes[i - 2] ^= data[i];
        else
            bytes.push_back(data[i]);
    }
    const size_t n = data[0] & 7;
    std::vector<UniqueFd> fds;
    std::vector<int> raw;
    for (size_t i = 0; i < n; ++i) {
        fds.push_back(UniqueFd::dup(pool.pick(data[0] >> 3)));
        raw.push_back(fds.back().get());
    }
    {
        auto m = ipc::parse(bytes, std::move(fds), false);
        if (m) {
            const std::string problem = fuzz::check_accepted(*m, n);
            if (!problem.empty()) {
                std::fprintf(stderr, "parse accepted a bad record: %s\n", problem.c_str());
                std::abort();
            }
            if (m->type == ipc::MsgType::Frame)
                (void)ipc::check_frame_fds(m->frame);
        }
    }
    for (int fd : raw) {
        if (fd >= 0 && ::fcntl(fd, F_GETFD) != -1) {
            std::fprintf(stderr, "fd %d handed to the parser was left open\n", fd);
            std::abort();
        }
    }
    return 0;
}
