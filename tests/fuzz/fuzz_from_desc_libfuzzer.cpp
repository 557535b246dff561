// SPDX-License-Identifier: MIT
//
// libFuzzer target for TensorDyn::from_desc (built only with clang). The descriptor code is
// compiled into this binary with coverage instrumentation (see meson.build), so the fuzzer
// sees which checks an input reaches.
//
// Input: byte 0 picks the fd (low 2 bits: none, a 4 KiB memfd, a pipe, an empty memfd) and
// the starting descriptor (bit 2: a valid [16, 256] u8 descriptor, else all zeros); the
// remaining bytes are XORed over the descriptor from offset 0, so short inputs explore
// near-valid descriptors and a 193-byte input can reach any descriptor at all.

#include "fuzz_desc_common.hpp"

#include <edgetensor/tensor.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace
{

struct Fds {
    edgetensor::TensorDyn buffer;
    int pipe_r = -1;
    int pipe_w = -1;
    int empty = -1;

    Fds()
    {
        auto t = edgetensor::TensorDyn::create(edgetensor::DType::U8, {16, 256},
                                               edgetensor::TensorMemory::Shm);
        if (t)
            buffer = *t;
        int p[2];
        if (::pipe2(p, O_CLOEXEC) == 0) {
            pipe_r = p[0];
            pipe_w = p[1];
        }
        empty = ::memfd_create("fuzz-empty", MFD_CLOEXEC);
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static Fds fds;
    static const EdgeTensorDesc valid = [] {
        EdgeTensorDesc d = edgetensor_desc_init();
        if (auto r = fds.buffer.describe())
            d = *r;
        return d;
    }();
    if (size < 1)
        return 0;
    EdgeTensorDesc d{};
    if (data[0] & 4)
        d = valid;
    auto* bytes = reinterpret_cast<uint8_t*>(&d);
    for (size_t i = 1; i < size && i <= sizeof(d); ++i)
        bytes[i - 1] ^= data[i];
    int source = -1;
    switch (data[0] & 3) {
    case 1:
        source = fds.buffer.fd();
        break;
    case 2:
        source = fds.pipe_r;
        break;
    case 3:
        source = fds.empty;
        break;
    default:
        break;
    }
    edgetensor::UniqueFd fd =
        source >= 0 ? edgetensor::UniqueFd::dup(source) : edgetensor::UniqueFd();
    auto r = edgetensor::TensorDyn::from_desc(d, std::move(fd));
    if (r) {
        const std::string problem = edgetensor::fuzz::check_accepted(d, *r);
        if (!problem.empty()) {
            std::fprintf(stderr, "from_desc accepted a bad descriptor: %s\n", problem.c_str());
            std::abort();
        }
    }
    return 0;
}
