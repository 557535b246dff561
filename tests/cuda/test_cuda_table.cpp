// SPDX-License-Identifier: MIT
//
// The runtime table: loaded once by dlopen through EDGETENSOR_CUDART, never again; what each
// memory kind answers; CudaMap's move-only RAII shape.

#include "cuda_test_util.hpp"

#include <type_traits>

namespace edgetensor::test
{
namespace
{

static_assert(!std::is_copy_constructible_v<CudaMap> && !std::is_copy_assignable_v<CudaMap>);
static_assert(std::is_nothrow_move_constructible_v<CudaMap> &&
              std::is_nothrow_move_assignable_v<CudaMap>);

using CudaTable = CudaTest;

TEST_F(CudaTable, LoadsTheRuntimeNamedByEdgetensorCudart)
{
    auto info = cuda_info();
    ASSERT_TRUE(info) << info.error().message();
    EXPECT_TRUE(cuda_available());
    const char* named = std::getenv("EDGETENSOR_CUDART");
    if (named && *named) {
        EXPECT_EQ(info->library, named);
    }
    EXPECT_GE(info->device_count, 1);
    if (sim_) {
        EXPECT_EQ(info->device_count, 1);
        EXPECT_EQ(info->runtime_version, 12040);
    }
    std::printf("CUDA runtime %s, version %d, %d device(s)\n", info->library.c_str(),
                info->runtime_version, info->device_count);
}

TEST_F(CudaTable, TheRuntimeIsOpenedAndAskedForDevicesOncePerProcess)
{
    ET_SIM_OR_SKIP();
    auto t = TensorDyn::create(DType::U8, {64}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    for (int i = 0; i < 10; ++i) {
        EXPECT_TRUE(cuda_available());
        EXPECT_TRUE(cuda_info());
        EXPECT_FALSE(t->cuda_map());
    }
    EXPECT_EQ(detail::cuda::dlopen_calls(), 1u);
    EXPECT_EQ(sim_->calls("cudaGetDeviceCount"), 0) << "the device count was asked again";
}

// A small heap tensor shares its pages with other allocations: CUDA cannot register it alone.
// (Shared-memory and large heap tensors map: cuda-host.)
TEST_F(CudaTable, NegativeSmallMemTensorRefusesNamingItsMemoryKind)
{
    auto t = TensorDyn::create(DType::F32, {4, 4}, TensorMemory::Mem, "heap-tensor");
    ASSERT_TRUE(t);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::NotSupported);
    EXPECT_NE(m.error().message().find("TensorMemory::Mem"), std::string::npos)
        << m.error().message();
    EXPECT_NE(m.error().message().find("share their memory pages"), std::string::npos)
        << m.error().message();
    auto typed = Tensor<float>::create({4, 4}, TensorMemory::Mem);
    ASSERT_TRUE(typed);
    auto tm = typed->cuda_map();
    ASSERT_FALSE(tm);
    EXPECT_EQ(tm.error().code(), ErrorCode::NotSupported);
}

TEST_F(CudaTable, NegativeEmptyTensorIsInvalidArgument)
{
    TensorDyn empty;
    auto m = empty.cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::InvalidArgument);
}

TEST(CudaMapType, DefaultAndMovedFromMapsAreInert)
{
    CudaMap a;
    EXPECT_FALSE(a.is_mapped());
    EXPECT_EQ(a.device_ptr(), nullptr);
    EXPECT_EQ(a.size_bytes(), 0u);
    CudaMap b(std::move(a));
    EXPECT_FALSE(b.is_mapped());
    b.reset();
    EXPECT_FALSE(b.is_mapped());
}

} // namespace
} // namespace edgetensor::test
