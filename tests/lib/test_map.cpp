// SPDX-License-Identifier: MIT
//
// Maps are RAII and access-typed.

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <type_traits>

using namespace edgetensor;

TEST(Map, ReadMapExposesOnlyConstData)
{
    auto t = Tensor<float>::create({4}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto r = t->map_read();
    ASSERT_TRUE(r);
    static_assert(std::is_const_v<typename decltype(r->data())::element_type>,
                  "a read map must expose const elements");
    static_assert(!std::is_const_v<typename decltype(t->map_write()->data())::element_type>);
    EXPECT_FALSE(r->writable());
    EXPECT_EQ(r->data().size(), 4u);
}

TEST(Map, ReadAccessThroughMapWithRefusesMutation_Negative)
{
    auto t = Tensor<uint8_t>::create({8}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto m = t->map_with(CpuAccess::Read);
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->writable());
    EXPECT_TRUE(m->data().empty()) << "mutable access through a read map must be refused";
    EXPECT_EQ(m->cdata().size(), 8u);
}

TEST(Map, NoneIsRefused_Negative)
{
    auto t = Tensor<uint8_t>::create({8}, TensorMemory::Mem);
    auto m = t->map_with(CpuAccess::None);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::InvalidArgument);
    auto bogus = t->map_with(static_cast<CpuAccess>(9));
    ASSERT_FALSE(bogus);
}

TEST(Map, WritesAreVisibleToLaterMaps)
{
    auto t = Tensor<int32_t>::create({3, 3}, TensorMemory::Shm);
    ASSERT_TRUE(t);
    {
        auto w = t->map_mut();
        ASSERT_TRUE(w);
        for (size_t i = 0; i < 9; ++i)
            w->data()[i] = int32_t(i) - 4;
    }
    auto r = t->map();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->data()[0], -4);
    EXPECT_EQ(r->data()[8], 4);
}

TEST(Map, UnplannedAccessCountsAndStillWorks)
{
    auto t = Tensor<uint8_t>::image(16, 16, PixelFormat::Grey, CpuAccess::Read, TensorMemory::Mem);
    ASSERT_TRUE(t);
    const uint64_t before = unplanned_cpu_access_count();
    {
        auto r = t->map_read();
        ASSERT_TRUE(r);
    }
    EXPECT_EQ(unplanned_cpu_access_count(), before) << "declared access is not unplanned";
    {
        auto w = t->map_write();
        ASSERT_TRUE(w) << "beyond-declaration maps are best-effort, not refused";
        w->data()[0] = 1;
    }
    EXPECT_EQ(unplanned_cpu_access_count(), before + 1);
    {
        auto w = t->map();
        ASSERT_TRUE(w);
    }
    EXPECT_EQ(unplanned_cpu_access_count(), before + 2);
    auto hw = Tensor<uint8_t>::image(16, 16, PixelFormat::Rgba, CpuAccess::None, TensorMemory::Mem);
    ASSERT_TRUE(hw);
    ASSERT_TRUE(hw->map_read());
    EXPECT_EQ(unplanned_cpu_access_count(), before + 3);
}

TEST(Map, MapKeepsStorageAliveAndResetIsInert)
{
    TensorMap<uint8_t> m;
    EXPECT_FALSE(m.is_mapped());
    EXPECT_TRUE(m.cdata().empty());
    BufferIdentity id;
    {
        auto t = Tensor<uint8_t>::create({32}, TensorMemory::Shm);
        ASSERT_TRUE(t);
        id = t->buffer_identity();
        auto mm = t->map();
        ASSERT_TRUE(mm);
        m = std::move(*mm);
        EXPECT_FALSE(mm->is_mapped()); // moved-from map is inert
    }
    EXPECT_FALSE(id.is_alive()); // the tensor is gone...
    ASSERT_TRUE(m.is_mapped());
    m.data()[31] = 9; // ...but the map still pins the bytes
    EXPECT_EQ(m.cdata()[31], 9);
    m.reset();
    EXPECT_FALSE(m.is_mapped());
    m.reset(); // twice is harmless
}

TEST(Map, SemiPlanarMapSpansBothPlanes)
{
    auto t =
        Tensor<uint8_t>::image(32, 16, PixelFormat::Nv12, CpuAccess::ReadWrite, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto m = t->map();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->plane_count(), 2u);
    EXPECT_EQ(m->data().size(), 64u * 23 + 32); // to the last chroma byte
    EXPECT_EQ(m->plane(1).data - m->plane(0).data, 64 * 16);
}
