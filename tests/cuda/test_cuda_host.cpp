// SPDX-License-Identifier: MIT
//
// cuda_map() of host memory: shared-memory tensors and heap tensors of 64 KiB and more are
// registered with CUDA in place (cudaHostRegister, mapped), once per storage, and unregistered
// when the storage dies, before its pages are unmapped or freed. The device pointer is the
// tensor's own bytes: what the CPU wrote, CUDA reads, and the reverse.
//
// Against the simulator (CI) the contract is checked call by call; against a real runtime
// (tools/cuda-device-check.sh) the copies go through the GPU's copy engine: a device-to-device
// copy between two registered tensors reads and writes host pages from the device.

#include "cuda_test_util.hpp"

#include <edgetensor/convert.hpp>

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace edgetensor::test
{
namespace
{

constexpr size_t kBytes = 3 * 256 * 256 * 4; // an f32 CHW 256x256 tensor: whole pages or not

class CudaHost : public CudaTest, public testing::WithParamInterface<TensorMemory>
{
protected:
    Result<TensorDyn> make(size_t bytes, std::string_view name = "cuda-host")
    {
        return TensorDyn::create(DType::U8, {bytes}, GetParam(), name);
    }
    static void fill(const TensorDyn& t, uint8_t seed)
    {
        auto m = t.map_write();
        ASSERT_TRUE(m) << m.error().message();
        auto d = m->data();
        for (size_t i = 0; i < d.size(); ++i)
            d[i] = uint8_t(i * 7 + seed + (i >> 11));
    }
    static std::vector<uint8_t> bytes_of(const TensorDyn& t)
    {
        auto m = t.map_read();
        EXPECT_TRUE(m) << m.error().message();
        return m ? std::vector<uint8_t>(m->cdata().begin(), m->cdata().end())
                 : std::vector<uint8_t>();
    }
};

TEST_P(CudaHost, CudaReadsWhatTheCpuWroteAndTheCpuSeesWhatCudaWrote)
{
    auto a = make(kBytes, "a");
    auto b = make(kBytes, "b");
    ASSERT_TRUE(a && b) << (a ? b.error().message() : a.error().message());
    fill(*a, 3);
    auto ma = a->cuda_map();
    auto mb = b->cuda_map();
    ASSERT_TRUE(ma) << ma.error().message();
    ASSERT_TRUE(mb) << mb.error().message();
    EXPECT_EQ(ma->memory(), GetParam());
    EXPECT_EQ(ma->size_bytes(), kBytes);
    const auto want = bytes_of(*a);
    EXPECT_EQ(copy_to_host(*ma, kBytes), want);
    // The device copies a's pages into b's: both ends are host pages seen from the device.
    const auto e = cuda_api().cudaMemcpy(mb->device_ptr(), ma->device_ptr(), kBytes,
                                         detail::cuda::cudaMemcpyDeviceToDevice);
    ASSERT_EQ(e, detail::cuda::cudaSuccess) << detail::cuda::error_text(cuda_api(), e);
    ASSERT_EQ(cuda_api().cudaDeviceSynchronize(), detail::cuda::cudaSuccess);
    EXPECT_EQ(bytes_of(*b), want) << "the CPU reads what the device wrote, without a copy back";
}

TEST_P(CudaHost, OneRegistrationPerStorageViewsOffsetAndUnregisteredWithTheStorage)
{
    {
        auto t = TensorDyn::create(DType::U8, {12, kBytes / 12}, GetParam(), "batched");
        ASSERT_TRUE(t) << t.error().message();
        fill(*t, 9);
        auto whole = t->cuda_map();
        ASSERT_TRUE(whole) << whole.error().message();
        auto slot = t->batch(1);
        ASSERT_TRUE(slot) << slot.error().message();
        auto mv = slot->cuda_map();
        ASSERT_TRUE(mv) << mv.error().message();
        const size_t row = kBytes / 12;
        EXPECT_EQ(static_cast<const uint8_t*>(mv->device_ptr()),
                  static_cast<const uint8_t*>(whole->device_ptr()) + row);
        EXPECT_EQ(mv->size_bytes(), row);
        const auto all = bytes_of(*t);
        EXPECT_EQ(copy_to_host(*mv, row),
                  std::vector<uint8_t>(all.begin() + row, all.begin() + 2 * row));
        whole->reset();
        mv->reset();
        auto again = t->cuda_map(); // still registered: no second registration
        ASSERT_TRUE(again);
        if (sim_) {
            EXPECT_EQ(sim_->calls("cudaHostRegister"), 1);
            EXPECT_EQ(sim_->live("host"), 1);
            EXPECT_EQ(sim_->last_register_flags() & 0x02u, 0x02u) << "registered mapped";
        }
    }
    if (sim_) {
        EXPECT_EQ(sim_->calls("cudaHostUnregister"), 1);
        EXPECT_EQ(sim_->live("host"), 0) << "the registration dies with the storage";
    }
}

TEST_P(CudaHost, AMapKeepsTheStorageAndItsRegistrationAlive)
{
    CudaMap m;
    std::vector<uint8_t> want;
    {
        auto t = make(kBytes);
        ASSERT_TRUE(t) << t.error().message();
        fill(*t, 1);
        want = bytes_of(*t);
        auto r = t->cuda_map();
        ASSERT_TRUE(r) << r.error().message();
        m = std::move(*r);
    }
    EXPECT_EQ(copy_to_host(m, kBytes), want);
    if (sim_) {
        EXPECT_EQ(sim_->live("host"), 1);
    }
    m.reset();
    if (sim_) {
        EXPECT_EQ(sim_->live("host"), 0);
    }
}

TEST_P(CudaHost, NegativeFailedRegistrationIsReportedAndRetried)
{
    ET_SIM_OR_SKIP();
    auto t = make(kBytes);
    ASSERT_TRUE(t) << t.error().message();
    sim_->fail("cudaHostRegister", 2, 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::AllocationFailed);
    EXPECT_NE(m.error().message().find("CUDA registration of a "), std::string::npos)
        << m.error().message();
    EXPECT_NE(m.error().message().find("cudaHostRegister failed with cudaErrorMemoryAllocation"),
              std::string::npos)
        << m.error().message();
    EXPECT_EQ(sim_->live("host"), 0);
    auto again = t->cuda_map();
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(sim_->calls("cudaHostRegister"), 2);
}

TEST_P(CudaHost, NegativeFailedPointerQueryUnregistersAgain)
{
    ET_SIM_OR_SKIP();
    auto t = make(kBytes);
    ASSERT_TRUE(t) << t.error().message();
    sim_->fail("cudaHostGetDevicePointer", 1, 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::Device);
    EXPECT_NE(m.error().message().find("cudaHostGetDevicePointer failed"), std::string::npos)
        << m.error().message();
    EXPECT_EQ(sim_->calls("cudaHostUnregister"), 1);
    EXPECT_EQ(sim_->live("host"), 0);
    ASSERT_TRUE(t->cuda_map());
}

// The process registered the pages itself: CUDA registers a page once, and the error says so.
TEST_P(CudaHost, NegativePagesTheProcessRegisteredItselfAreNamed)
{
    auto t = make(kBytes);
    ASSERT_TRUE(t) << t.error().message();
    void* base = nullptr;
    {
        auto m = t->map_write();
        ASSERT_TRUE(m);
        base = m->data().data();
    }
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(base) % page, 0u);
    ASSERT_EQ(cuda_api().cudaHostRegister(base, page, detail::cuda::kHostRegisterMapped),
              detail::cuda::cudaSuccess);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().message().find("cudaErrorHostMemoryAlreadyRegistered"), std::string::npos)
        << m.error().message();
    EXPECT_NE(m.error().message().find("registered with CUDA already"), std::string::npos)
        << m.error().message();
    ASSERT_EQ(cuda_api().cudaHostUnregister(base), detail::cuda::cudaSuccess);
    auto again = t->cuda_map();
    ASSERT_TRUE(again) << again.error().message();
}

TEST_P(CudaHost, ConverterOutputReadBackThroughCudaEqualsTheCpuOutput)
{
    const size_t w = 320, h = 240;
    auto src = TensorDyn::image(w, h, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem, "src");
    ASSERT_TRUE(src) << src.error().message();
    fill(*src, 5);
    ConvertConfig cfg;
    cfg.src_format = ConvertFormat::Rgb;
    cfg.src_width = w;
    cfg.src_height = h;
    cfg.dst_width = 128;
    cfg.dst_height = 128;
    cfg.layout = TensorLayout::Chw;
    cfg.dtype = DType::F32;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    auto ref = conv->allocate_output(TensorMemory::Mem);
    auto out = conv->allocate_output(GetParam());
    ASSERT_TRUE(ref && out);
    ASSERT_TRUE(conv->run(*src, *ref));
    ASSERT_TRUE(conv->run(*src, *out));
    auto m = out->cuda_map();
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(copy_to_host(*m, m->size_bytes()), bytes_of(*ref));
}

INSTANTIATE_TEST_SUITE_P(Memory, CudaHost, testing::Values(TensorMemory::Shm, TensorMemory::Mem),
                         [](const auto& p) {
                             return p.param == TensorMemory::Shm ? "shm" : "heap";
                         });

class CudaHostShm : public CudaTest
{
};

// A buffer imported read-only (another process's frame) is registered read-only: pinning it
// for writing would fail on a real driver.
TEST_F(CudaHostShm, ReadOnlyImportIsRegisteredReadOnly)
{
    if (!is_shm_available())
        GTEST_SKIP() << "no memfd here";
    UniqueFd fd(::memfd_create("cuda-host-ro", MFD_CLOEXEC));
    ASSERT_TRUE(fd);
    ASSERT_EQ(::ftruncate(fd.get(), off_t(kBytes)), 0);
    const std::string path = "/proc/self/fd/" + std::to_string(fd.get());
    UniqueFd ro(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(ro);
    auto t = TensorDyn::from_fd(std::move(ro), DType::U8, {kBytes}, "read-only");
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_EQ(t->memory(), TensorMemory::Shm);
    auto m = t->cuda_map();
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(copy_to_host(*m, kBytes), std::vector<uint8_t>(kBytes, 0));
    if (sim_) {
        EXPECT_EQ(sim_->last_register_flags(), 0x02u | 0x08u) << "Mapped | ReadOnly";
    }
}

} // namespace
} // namespace edgetensor::test
