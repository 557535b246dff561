// SPDX-License-Identifier: MIT
//
// Tensors are shared across threads (pools, streaming threads): copies, views, maps and
// identity checks must be race-free. Run under ThreadSanitizer in CI (suite "tsan").

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace edgetensor;

TEST(Concurrency, SharedTensorAcrossThreads)
{
    auto t = Tensor<uint32_t>::create({64, 64}, TensorMemory::Shm);
    ASSERT_TRUE(t);
    const uint64_t id = t->buffer_identity().id();
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k) {
        threads.emplace_back([&, k] {
            for (int i = 0; i < 500; ++i) {
                Tensor<uint32_t> copy = *t;
                auto v = copy.view({size_t(k) * 16, 0, 16, 64});
                if (!v || v->buffer_identity().id() != id) {
                    ++failures;
                    continue;
                }
                // Each thread writes its own column band.
                auto m = v->map_write();
                if (!m) {
                    ++failures;
                    continue;
                }
                m->data()[0] = uint32_t(k);
                auto img = Tensor<uint8_t>::image(33, 17, PixelFormat::Nv12, CpuAccess::Write);
                if (!img || img->buffer_identity().id() == id)
                    ++failures;
            }
        });
    }
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(failures.load(), 0);
    auto m = t->map_read();
    for (int k = 0; k < 4; ++k)
        EXPECT_EQ(m->data()[size_t(k) * 16], uint32_t(k));
}

TEST(Concurrency, IdentityLivenessAcrossThreads)
{
    std::vector<BufferIdentity> ids(4);
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k)
        threads.emplace_back([&ids, k] {
            auto t = Tensor<uint8_t>::create({128}, TensorMemory::Mem);
            ids[size_t(k)] = t->buffer_identity();
        });
    for (auto& th : threads)
        th.join();
    for (const auto& id : ids)
        EXPECT_FALSE(id.is_alive());
    EXPECT_NE(ids[0].id(), ids[1].id());
}
