// SPDX-License-Identifier: MIT
//
// No usable CUDA: meson runs this binary with EDGETENSOR_CUDART naming a library that does
// not exist, one that is not a CUDA runtime, and the simulator reporting no device
// (EDGETENSOR_TEST_CUDA_WHY: a phrase the reason must contain). cuda_available() is false, every
// cuda_map() fails at once with that reason, the runtime is never looked for again, and the
// rest of the library works as before.

#include "../gl/gl_test_util.hpp"
#include "cuda/cuda_api.hpp"
#include "dma/dma_internal.hpp"
#include "fd_count.hpp"
#include "tensor_access.hpp"

#include <edgetensor/convert.hpp>
#include <edgetensor/gl.hpp>
#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sys/mman.h>
#include <unistd.h>

namespace edgetensor::test
{
namespace
{

std::string expected_reason()
{
    const char* w = std::getenv("EDGETENSOR_TEST_CUDA_WHY");
    return w ? w : "";
}

/// A TensorMemory::Dma tensor over a memfd (the library's internal seam; see test_cuda_dma).
TensorDyn forced_dma(size_t bytes)
{
    UniqueFd fd(::memfd_create("cuda-absent", MFD_CLOEXEC));
    EXPECT_TRUE(fd);
    EXPECT_EQ(::ftruncate(fd.get(), off_t(bytes)), 0);
    auto s = detail::make_dma_storage(std::move(fd), bytes, CpuAccess::ReadWrite, "test:memfd");
    EXPECT_TRUE(s);
    return detail::TensorAccess::wrap(std::move(*s), DType::U8, {bytes}, {}, 0, "forced");
}

TEST(CudaAbsent, NotAvailableAndTheReasonSaysWhy)
{
    EXPECT_FALSE(cuda_available());
    auto info = cuda_info();
    ASSERT_FALSE(info);
    EXPECT_EQ(info.error().code(), ErrorCode::Unavailable);
    EXPECT_NE(info.error().message().find(expected_reason()), std::string::npos)
        << info.error().message();
    std::printf("reason: %s\n", info.error().message().c_str());
}

TEST(CudaAbsent, NegativeDmaBufMapFailsAtOnceWithTheReason)
{
    const auto before = open_fds();
    {
        auto t = forced_dma(8192);
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 100; ++i) {
            auto m = t.cuda_map();
            ASSERT_FALSE(m);
            EXPECT_EQ(m.error().code(), ErrorCode::Unavailable);
            EXPECT_NE(m.error().message().find(expected_reason()), std::string::npos)
                << m.error().message();
        }
        // Fast means no dlopen, no dup, no driver: far below a single library search.
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
        auto fd = t.clone_fd();
        EXPECT_TRUE(fd) << "the tensor still works: " << fd.error().message();
    }
    EXPECT_EQ(open_fds(), before);
}

TEST(CudaAbsent, NegativePboMapFailsWithTheReasonAndThePboStillWorks)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {256}, "no-cuda");
    ASSERT_TRUE(t) << t.error().message();
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::Unavailable);
    auto cpu = t->map_write();
    ASSERT_TRUE(cpu) << cpu.error().message();
}

TEST(CudaAbsent, NegativeMemTensorStillSaysItsMemoryKind)
{
    auto t = TensorDyn::create(DType::U8, {16}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::NotSupported);
}

TEST(CudaAbsent, TheRuntimeIsNeverLookedForAgain)
{
    EXPECT_FALSE(cuda_available());
    const uint64_t opened = detail::cuda::dlopen_calls();
    EXPECT_GE(opened, 1u);
    // Make the library the process looked for appear now: it must not be picked up.
    const char* path = std::getenv("EDGETENSOR_CUDART");
    const char* sim = std::getenv("SIMCUDA_LIBRARY");
    bool planted = false;
    if (path && sim && !std::filesystem::exists(path)) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
        planted = std::filesystem::copy_file(sim, path, ec);
        EXPECT_TRUE(planted) << ec.message();
    }
    auto t = forced_dma(4096);
    for (int i = 0; i < 10; ++i) {
        EXPECT_FALSE(cuda_available());
        EXPECT_FALSE(cuda_info());
        EXPECT_FALSE(t.cuda_map());
    }
    EXPECT_EQ(detail::cuda::dlopen_calls(), opened);
    if (planted)
        std::filesystem::remove(path);
}

TEST(CudaAbsent, EverythingElseWorks)
{
    auto a = TensorDyn::image(64, 48, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(a) << a.error().message();
    {
        auto m = a->map_write();
        ASSERT_TRUE(m);
        std::fill(m->data().begin(), m->data().end(), uint8_t(128));
    }
    ConvertConfig cfg;
    cfg.src_format = ConvertFormat::Nv12;
    cfg.src_width = 64;
    cfg.src_height = 48;
    cfg.dst_width = 32;
    cfg.dst_height = 24;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    auto out = conv->allocate_output();
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_TRUE(conv->run(*a, *out));
    auto desc = out->describe();
    EXPECT_TRUE(desc);
}

} // namespace
} // namespace edgetensor::test
