// SPDX-License-Identifier: MIT
//
// BufferIdentity: shared by copies, views and batches; minted by allocations and imports;
// alive while any sharer lives.

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <optional>

using namespace edgetensor;

TEST(Identity, CopiesViewsAndBatchesShareIt)
{
    auto t = Tensor<uint8_t>::create({4, 8, 8, 3}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    const BufferIdentity id = t->buffer_identity();
    EXPECT_NE(id.id(), 0u);
    Tensor<uint8_t> copy = *t;
    EXPECT_EQ(copy.buffer_identity().id(), id.id());
    auto b = t->batch(2);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->buffer_identity().id(), id.id());
    auto v = b->view({1, 1, 4, 4});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->buffer_identity().id(), id.id());
    auto vv = v->view({1, 1, 2, 2});
    ASSERT_TRUE(vv);
    EXPECT_EQ(vv->buffer_identity(), id);
}

TEST(Identity, NewAllocationsAndImportsMintNewOnes)
{
    auto a = Tensor<uint8_t>::create({16}, TensorMemory::Shm);
    auto b = Tensor<uint8_t>::create({16}, TensorMemory::Shm);
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->buffer_identity().id(), b->buffer_identity().id());
    EXPECT_GT(b->buffer_identity().id(), a->buffer_identity().id()); // monotonic
    auto fd = a->clone_fd();
    ASSERT_TRUE(fd);
    auto imported = Tensor<uint8_t>::from_fd(std::move(*fd), {16});
    ASSERT_TRUE(imported);
    EXPECT_NE(imported->buffer_identity().id(), a->buffer_identity().id());
    auto again = Tensor<uint8_t>::from_fd(std::move(*a->clone_fd()), {16});
    ASSERT_TRUE(again);
    EXPECT_NE(again->buffer_identity().id(), imported->buffer_identity().id());
}

TEST(Identity, LivenessEndsWithTheLastSharer)
{
    BufferIdentity id;
    {
        std::optional<Tensor<uint8_t>> parent = *Tensor<uint8_t>::create({8, 8}, TensorMemory::Mem);
        id = parent->buffer_identity();
        EXPECT_TRUE(id.is_alive());
        auto view = parent->view({2, 2, 4, 4});
        ASSERT_TRUE(view);
        parent.reset();
        EXPECT_TRUE(id.is_alive()) << "a view still shares the buffer";
        auto weak = id.weak();
        EXPECT_FALSE(weak.expired());
    }
    EXPECT_FALSE(id.is_alive());
    EXPECT_TRUE(id.weak().expired());
}

TEST(Identity, ConfigureImageKeepsIdentity)
{
    auto t = Tensor<uint8_t>::image(64, 64, PixelFormat::Rgba, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    const auto id = t->buffer_identity().id();
    ASSERT_TRUE(t->configure_image(32, 32, PixelFormat::Rgb));
    EXPECT_EQ(t->buffer_identity().id(), id);
}
