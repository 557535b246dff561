// SPDX-License-Identifier: MIT
//
// The allocation chain on a host: generic tensors Dma -> Shm -> Mem, images Dma -> Mem.

#include "require.hpp"

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

using namespace edgetensor;

namespace
{

class ScopedEnv
{
public:
    ScopedEnv(const char* name, const char* value) : name_(name)
    {
        if (const char* old = std::getenv(name))
            old_ = old;
        setenv(name, value, 1);
    }
    ~ScopedEnv()
    {
        if (old_.empty())
            unsetenv(name_);
        else
            setenv(name_, old_.c_str(), 1);
    }

private:
    const char* name_;
    std::string old_;
};

} // namespace

TEST(AllocChain, CreatePicksDmaElseShm)
{
    auto t = Tensor<uint8_t>::create({480, 640, 3});
    ASSERT_TRUE(t) << t.error().message();
    if (is_dma_available())
        EXPECT_EQ(t->memory(), TensorMemory::Dma);
    else
        EXPECT_EQ(t->memory(), TensorMemory::Shm);
    EXPECT_EQ(t->shape(), (Shape{480, 640, 3}));
    EXPECT_EQ(t->size(), 480u * 640 * 3);
    EXPECT_EQ(t->len(), 480u * 640 * 3);
    EXPECT_GE(t->capacity_bytes(), t->size());
    EXPECT_FALSE(t->row_stride());
}

TEST(AllocChain, ImagePicksDmaElseMem)
{
    auto t = Tensor<uint8_t>::image(640, 480, PixelFormat::Rgb, CpuAccess::ReadWrite);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->memory(), is_dma_available() ? TensorMemory::Dma : TensorMemory::Mem);
    EXPECT_EQ(t->shape(), (Shape{480, 640, 3}));
}

TEST(AllocChain, ExplicitDmaFailsClearlyWithoutProvider_Negative)
{
    if (is_dma_available())
        GTEST_SKIP() << "this host has a DMA-BUF provider";
    auto t = Tensor<uint8_t>::create({16}, TensorMemory::Dma);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::Unavailable);
    EXPECT_NE(t.error().message().find("TensorMemory::Dma"), std::string::npos)
        << t.error().message();
    auto img =
        Tensor<uint8_t>::image(64, 64, PixelFormat::Nv12, CpuAccess::None, TensorMemory::Dma);
    ASSERT_FALSE(img);
}

TEST(AllocChain, ForceMemEnvGivesMem)
{
    ScopedEnv env("EDGETENSOR_FORCE_MEM", "1");
    auto t = Tensor<float>::create({10, 10});
    ASSERT_TRUE(t);
    EXPECT_EQ(t->memory(), TensorMemory::Mem);
    EXPECT_EQ(t->provider(), "heap");
    auto img = Tensor<uint8_t>::image(32, 32, PixelFormat::Rgba, CpuAccess::Read);
    ASSERT_TRUE(img);
    EXPECT_EQ(img->memory(), TensorMemory::Mem);
    // An explicit request still wins over the environment.
    auto shm = Tensor<uint8_t>::create({8}, TensorMemory::Shm);
    ASSERT_TRUE(shm);
    EXPECT_EQ(shm->memory(), TensorMemory::Shm);
}

TEST(AllocChain, ExplicitBackends)
{
    auto mem = Tensor<int16_t>::create({3, 5}, TensorMemory::Mem, "m");
    ASSERT_TRUE(mem);
    EXPECT_EQ(mem->memory(), TensorMemory::Mem);
    EXPECT_EQ(mem->name(), "m");
    EXPECT_EQ(mem->size(), 30u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mem->map()->data().data()) % 64, 0u);
    auto shm = Tensor<uint8_t>::create({4096}, TensorMemory::Shm, "s");
    ASSERT_TRUE(shm);
    EXPECT_EQ(shm->memory(), TensorMemory::Shm);
    EXPECT_GE(shm->fd(), 0);
    EXPECT_TRUE(fcntl(shm->fd(), F_GETFD) & FD_CLOEXEC);
    auto shm_img =
        Tensor<uint8_t>::image(64, 8, PixelFormat::Grey, CpuAccess::Write, TensorMemory::Shm);
    ASSERT_TRUE(shm_img);
    EXPECT_EQ(shm_img->memory(), TensorMemory::Shm);
    auto pbo = Tensor<uint8_t>::create({4}, TensorMemory::Pbo);
    ASSERT_FALSE(pbo);
    EXPECT_EQ(pbo.error().code(), ErrorCode::NotSupported);
}

TEST(AllocChain, ShmIsNamedAndSealed)
{
    auto t = Tensor<uint8_t>::create({100}, TensorMemory::Shm, "camera0");
    ASSERT_TRUE(t);
    if (t->provider() != "memfd")
        GTEST_SKIP() << "memfd_create unavailable; shm_open fallback in use";
    char target[256] = {};
    const std::string link = "/proc/self/fd/" + std::to_string(t->fd());
    ASSERT_GT(readlink(link.c_str(), target, sizeof(target) - 1), 0);
    EXPECT_NE(std::string(target).find("edgetensor:camera0"), std::string::npos) << target;
    const int seals = fcntl(t->fd(), F_GET_SEALS);
    EXPECT_TRUE(seals & F_SEAL_SHRINK);
    EXPECT_TRUE(seals & F_SEAL_GROW);
}

TEST(AllocChain, BadShapesAreRefused_Negative)
{
    auto empty = Tensor<uint8_t>::create({});
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code(), ErrorCode::InvalidShape);
    auto zero = Tensor<uint8_t>::create({4, 0, 3});
    ASSERT_FALSE(zero);
    EXPECT_EQ(zero.error().code(), ErrorCode::InvalidShape);
    auto huge = Tensor<double>::create({size_t(1) << 40, size_t(1) << 30});
    ASSERT_FALSE(huge);
    EXPECT_EQ(huge.error().code(), ErrorCode::InvalidShape);
    auto noimg = Tensor<uint8_t>::image(0, 10, PixelFormat::Rgb, CpuAccess::Read);
    ASSERT_FALSE(noimg);
    EXPECT_EQ(noimg.error().code(), ErrorCode::InvalidShape);
    auto nofmt = Tensor<uint8_t>::image(10, 10, PixelFormat::None, CpuAccess::Read);
    ASSERT_FALSE(nofmt);
    EXPECT_EQ(nofmt.error().code(), ErrorCode::InvalidArgument);
    auto f32nv12 = Tensor<float>::image(10, 10, PixelFormat::Nv12, CpuAccess::Read);
    ASSERT_FALSE(f32nv12);
    EXPECT_EQ(f32nv12.error().code(), ErrorCode::NotSupported);
}

TEST(TensorDynTest, ConvertsToAndFromTyped)
{
    auto d = TensorDyn::create(DType::F32, {2, 3}, TensorMemory::Mem);
    ASSERT_TRUE(d);
    auto typed = Tensor<float>::from_dyn(*d);
    ASSERT_TRUE(typed);
    EXPECT_EQ(typed->buffer_identity(), d->buffer_identity());
    auto wrong = Tensor<uint8_t>::from_dyn(*d);
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code(), ErrorCode::DTypeMismatch);
    auto via_as = d->as<float>();
    ASSERT_TRUE(via_as);
    EXPECT_EQ(via_as->buffer_identity(), d->buffer_identity());
    auto wrong_as = d->as<double>();
    ASSERT_FALSE(wrong_as);
    EXPECT_EQ(wrong_as.error().code(), ErrorCode::DTypeMismatch);
    TensorDyn erased = *typed; // typed -> dtype-erased: shares everything
    EXPECT_EQ(erased.buffer_identity(), d->buffer_identity());
    const TensorDyn& back = *typed;
    EXPECT_EQ(back.dtype(), DType::F32);
    auto m = d->map_as<float>(CpuAccess::ReadWrite);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->len(), 6u);
    auto bad_map = d->map_as<int32_t>(CpuAccess::Read);
    ASSERT_FALSE(bad_map);
    EXPECT_EQ(bad_map.error().code(), ErrorCode::DTypeMismatch);
}

TEST(TensorDynTest, EmptyTensorCallsFailCleanly_Negative)
{
    TensorDyn t;
    EXPECT_FALSE(t.is_valid());
    EXPECT_FALSE(t.map_read());
    EXPECT_FALSE(t.view({0, 0, 1, 1}));
    EXPECT_FALSE(t.batch(0));
    EXPECT_FALSE(t.clone_fd());
    EXPECT_FALSE(t.reshape({1}));
    EXPECT_EQ(t.fd(), -1);
    EXPECT_EQ(t.capacity_bytes(), 0u);
    EXPECT_FALSE(t.buffer_identity().is_alive());
}
