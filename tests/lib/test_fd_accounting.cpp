// SPDX-License-Identifier: MIT
//
// 1000 create/import/clone/view/destroy cycles on each host backend leave /proc/self/fd as
// it was.

#include "fd_count.hpp"

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

using namespace edgetensor;
using edgetensor::test::describe_fds;
using edgetensor::test::open_fds;

namespace
{

void cycle(TensorMemory memory, int rounds)
{
    for (int i = 0; i < rounds; ++i) {
        auto t = Tensor<uint8_t>::create({16, 16, 3}, memory);
        ASSERT_TRUE(t) << t.error().message();
        auto v = t->view({1, 1, 4, 4});
        ASSERT_TRUE(v);
        auto m = v->map();
        ASSERT_TRUE(m);
        if (memory == TensorMemory::Mem) {
            EXPECT_FALSE(t->clone_fd());
            continue;
        }
        auto fd = t->clone_fd();
        ASSERT_TRUE(fd);
        auto imported = Tensor<uint8_t>::from_fd(std::move(*fd), {768});
        ASSERT_TRUE(imported);
        auto again = imported->clone_fd();
        ASSERT_TRUE(again); // dropped unused: must close
        auto img = Tensor<uint8_t>::image(33, 9, PixelFormat::Nv12, CpuAccess::Write, memory);
        ASSERT_TRUE(img);
    }
}

} // namespace

TEST(FdAccounting, ShmCyclesLeaveFdsUnchanged)
{
    const auto before = open_fds();
    cycle(TensorMemory::Shm, 1000);
    const auto after = open_fds();
    EXPECT_EQ(after, before) << "now open: " << describe_fds(after);
}

TEST(FdAccounting, MemCyclesLeaveFdsUnchanged)
{
    const auto before = open_fds();
    cycle(TensorMemory::Mem, 1000);
    EXPECT_EQ(open_fds(), before);
}

TEST(FdAccounting, AutoChainCyclesLeaveFdsUnchanged)
{
    // Warm up one-time probes (e.g. provider availability) before the snapshot.
    (void)is_dma_available();
    (void)is_shm_available();
    const auto before = open_fds();
    for (int i = 0; i < 1000; ++i) {
        auto t = Tensor<uint8_t>::create({64});
        ASSERT_TRUE(t);
        auto img = Tensor<uint8_t>::image(17, 3, PixelFormat::Rgb, CpuAccess::ReadWrite);
        ASSERT_TRUE(img);
    }
    EXPECT_EQ(open_fds(), before);
}
