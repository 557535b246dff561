// SPDX-License-Identifier: MIT
//
// dma_map_cost: the measurement behind the DMA map design (docs/testing.md, "Why DMA maps keep
// their mapping"). For each provider it times allocation, and a CPU write through
//  - the library's map (one mmap kept for the buffer's life, a SYNC bracket per map), against
//  - a fresh mmap + SYNC START/END + munmap per access (the alternative design).
// Not a test and no pass/fail: run it in the VM lane,
//   tests/vm/run-in-vm.sh build/tests/dma/dma_map_cost

#include "dma/uapi/dma-buf.h"

#include <edgetensor/dma.hpp>
#include <edgetensor/tensor.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>

using namespace edgetensor;
using Clock = std::chrono::steady_clock;

namespace
{

double micros_since(Clock::time_point start, int rounds)
{
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / rounds;
}

bool sync(int fd, uint64_t flags)
{
    dma_buf_sync s{};
    s.flags = flags;
    return ::ioctl(fd, DMA_BUF_IOCTL_SYNC, &s) == 0;
}

// One CPU write of `touch` bytes through a mapping made for this access only.
bool write_through_fresh_mmap(int fd, size_t bytes, size_t touch, int value)
{
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return false;
    const bool ok = sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
    std::memset(p, value, touch);
    const bool ended = sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
    ::munmap(p, bytes);
    return ok && ended;
}

} // namespace

int main()
{
    int measured = 0;
    for (DmaProvider provider : kDefaultDmaProviders) {
        if (!is_dma_provider_available(provider))
            continue;
        const DmaProvider only[] = {provider};
        if (!set_dma_providers(only))
            return 1;

        constexpr int kAllocRounds = 200;
        auto start = Clock::now();
        for (int i = 0; i < kAllocRounds; ++i)
            if (!TensorDyn::create(DType::U8, {16, 256}, TensorMemory::Dma))
                return 1;
        const double alloc_us = micros_since(start, kAllocRounds);

        for (size_t bytes : {size_t(4096), size_t(640 * 480 * 4)}) {
            auto t = TensorDyn::create(DType::U8, {bytes}, TensorMemory::Dma);
            if (!t) {
                std::fprintf(stderr, "%s\n", t.error().message().c_str());
                return 1;
            }
            const int fd = t->fd();
            if (!t->map_write()) // creates the kept mapping
                return 1;
            const std::string name(t->provider());
            for (size_t touch : {size_t(1), bytes}) {
                const int rounds = touch == 1 ? 200 : 20;
                start = Clock::now();
                for (int i = 0; i < rounds; ++i) {
                    auto m = t->map_write();
                    if (!m)
                        return 1;
                    std::memset(m->data().data(), i, touch);
                }
                const double kept_us = micros_since(start, rounds);
                start = Clock::now();
                for (int i = 0; i < rounds; ++i)
                    if (!write_through_fresh_mmap(fd, bytes, touch, i))
                        return 1;
                const double fresh_us = micros_since(start, rounds);
                std::printf("%-16s alloc %6.0f us | buffer %7zu B, write %7zu B: kept mapping "
                            "%8.1f us, mmap per access %8.1f us\n",
                            name.c_str(), alloc_us, bytes, touch, kept_us, fresh_us);
            }
        }
        ++measured;
    }
    reset_dma_providers();
    if (measured == 0) {
        std::fprintf(stderr, "dma_map_cost: no DMA-BUF provider here; run it in the VM lane\n");
        return 77;
    }
    return 0;
}
