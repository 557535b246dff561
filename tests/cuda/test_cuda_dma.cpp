// SPDX-License-Identifier: MIT
//
// cuda_map() of DMA-BUF tensors: a dup of the fd imported once as CUDA external memory, kept
// for the storage's life, no GL thread involved; every failure path closes what it opened.
//
// Two sources of fd-backed TensorMemory::Dma storage, every test run on each:
// - "dma_buf": a real DMA-BUF from the allocation chain (dma-heap, udmabuf, vgem): the VM lane
//   (EDGETENSOR_TEST_REQUIRE_DMA=1), and any host with a provider;
// - "memfd_as_dma": a sealed-size memfd wrapped as DMA storage through the library's internal
//   seam (detail::make_dma_storage), the forced path that runs the same import code on hosts
//   without DMA-BUF. Only the simulated runtime accepts it (it mmaps whatever fd it is given);
//   against a real runtime it skips, because no driver imports a memfd as an opaque fd.

#include "cuda_test_util.hpp"
#include "dma/dma_internal.hpp"
#include "fd_count.hpp"
#include "require.hpp"
#include "tensor_access.hpp"

#include <edgetensor/convert.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace edgetensor::test
{
namespace
{

enum class Source { DmaBuf, MemfdAsDma };

class CudaDma : public CudaTest, public testing::WithParamInterface<Source>
{
protected:
    void SetUp() override
    {
        CudaTest::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        if (GetParam() == Source::DmaBuf) {
            ET_REQUIRE_DMA_OR_SKIP();
        } else if (!sim_) {
            GTEST_SKIP() << "memfd_as_dma runs against the simulated runtime only";
        }
    }

    /// A Dma tensor of `shape` (u8) from this test's source.
    Result<TensorDyn> make(const Shape& shape, std::string_view name = "cuda-dma")
    {
        if (GetParam() == Source::DmaBuf)
            return TensorDyn::create(DType::U8, shape, TensorMemory::Dma, name);
        size_t bytes = 1;
        for (size_t d : shape)
            bytes *= d;
        const size_t cap = detail::dma_round_to_pages(bytes);
        UniqueFd fd(::memfd_create("cuda-test", MFD_CLOEXEC));
        if (!fd || ::ftruncate(fd.get(), off_t(cap)) != 0)
            return unexpected(Error::io(errno, "memfd"));
        auto s =
            detail::make_dma_storage(std::move(fd), cap, CpuAccess::ReadWrite, "test:memfd-as-dma");
        if (!s)
            return unexpected(std::move(s).error());
        return detail::TensorAccess::wrap(std::move(*s), DType::U8, shape, {}, 0, name);
    }

    /// Runs `fn` over the tensor's bytes, writable: a library map of a real DMA-BUF; for the
    /// memfd, which has no DMA_BUF_IOCTL_SYNC to bracket a library map, a plain mmap of its fd.
    template <typename F> void with_bytes(const TensorDyn& t, F&& fn)
    {
        if (GetParam() == Source::DmaBuf) {
            auto m = t.map();
            ASSERT_TRUE(m) << m.error().message();
            fn(m->data().data(), m->data().size());
            return;
        }
        const size_t cap = t.capacity_bytes() + t.offset();
        void* p = ::mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_SHARED, t.fd(), 0);
        ASSERT_NE(p, MAP_FAILED) << std::strerror(errno);
        fn(static_cast<uint8_t*>(p) + t.offset(), t.size());
        ::munmap(p, cap);
    }
    void fill(const TensorDyn& t, uint8_t seed)
    {
        with_bytes(t, [&](uint8_t* d, size_t n) {
            for (size_t i = 0; i < n; ++i)
                d[i] = uint8_t(seed + i * 7);
        });
    }
    std::vector<uint8_t> contents(const TensorDyn& t)
    {
        std::vector<uint8_t> out;
        with_bytes(t, [&](uint8_t* d, size_t n) { out.assign(d, d + n); });
        return out;
    }
};

std::string source_name(const testing::TestParamInfo<Source>& p)
{
    return p.param == Source::DmaBuf ? "dma_buf" : "memfd_as_dma";
}

TEST_P(CudaDma, MapsTheWholeTensorAndCudaReadsItsBytes)
{
    auto t = make({4096 * 3});
    ASSERT_TRUE(t) << t.error().message();
    fill(*t, 3);
    auto m = t->cuda_map();
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_TRUE(m->is_mapped());
    EXPECT_EQ(m->memory(), TensorMemory::Dma);
    EXPECT_EQ(m->size_bytes(), t->size());
    EXPECT_EQ(copy_to_host(*m, m->size_bytes()), contents(*t));
}

TEST_P(CudaDma, OneImportPerStorageForEveryMapViewAndCopy)
{
    ET_SIM_OR_SKIP();
    auto t = make({64, 256});
    ASSERT_TRUE(t) << t.error().message();
    auto first = t->cuda_map();
    ASSERT_TRUE(first) << first.error().message();
    const auto* base = static_cast<const uint8_t*>(first->device_ptr());
    for (int i = 0; i < 5; ++i) {
        TensorDyn copy = *t;
        auto again = copy.cuda_map();
        ASSERT_TRUE(again);
        EXPECT_EQ(again->device_ptr(), base);
    }
    auto view = t->view(Region{16, 8, 32, 4});
    ASSERT_TRUE(view) << view.error().message();
    auto vm = view->cuda_map();
    ASSERT_TRUE(vm) << vm.error().message();
    EXPECT_EQ(static_cast<const uint8_t*>(vm->device_ptr()), base + view->offset());
    EXPECT_EQ(view->offset(), 8u * 256 + 16);
    EXPECT_EQ(vm->size_bytes(), 3u * 256 + 32);
    EXPECT_EQ(sim_->calls("cudaImportExternalMemory"), 1);
    EXPECT_EQ(sim_->calls("cudaExternalMemoryGetMappedBuffer"), 1);
    EXPECT_EQ(sim_->live("imports"), 1);
}

TEST_P(CudaDma, ViewPointerReadsTheViewsPixels)
{
    auto t = make({32, 128});
    ASSERT_TRUE(t) << t.error().message();
    fill(*t, 11);
    auto view = t->view(Region{5, 3, 20, 6});
    ASSERT_TRUE(view) << view.error().message();
    auto vm = view->cuda_map();
    ASSERT_TRUE(vm) << vm.error().message();
    auto host = copy_to_host(*vm, vm->size_bytes());
    const auto all = contents(*t);
    for (size_t y = 0; y < 6; ++y)
        for (size_t x = 0; x < 20; ++x)
            ASSERT_EQ(host[y * 128 + x], all[(y + 3) * 128 + x + 5]) << x << "," << y;
}

TEST_P(CudaDma, ImportsADupAndNeverTheTensorsOwnFd)
{
    ET_SIM_OR_SKIP();
    auto t = make({8192});
    ASSERT_TRUE(t) << t.error().message();
    const auto before = open_fds();
    auto m = t->cuda_map();
    ASSERT_TRUE(m) << m.error().message();
    const int taken = sim_->last_import_fd();
    EXPECT_NE(taken, t->fd());
    EXPECT_GE(::fcntl(t->fd(), F_GETFD), 0) << "the tensor's own fd must stay open";
    EXPECT_TRUE(::fcntl(taken, F_GETFD) & FD_CLOEXEC);
    const auto during = open_fds();
    EXPECT_EQ(during.size(), before.size() + 1) << describe_fds(during);
    EXPECT_TRUE(during.count(taken));
}

TEST_P(CudaDma, TheImportDiesWithTheStorageAndItsFdWithIt)
{
    ET_SIM_OR_SKIP();
    const auto before = open_fds();
    {
        auto t = make({4096});
        ASSERT_TRUE(t) << t.error().message();
        auto view = t->view(Region{0, 0, 1, 1});
        (void)view;
        auto m = t->cuda_map();
        ASSERT_TRUE(m) << m.error().message();
        m->reset();
        // Dropping the map keeps the import: it belongs to the storage.
        EXPECT_EQ(sim_->live("imports"), 1);
        EXPECT_EQ(sim_->calls("cudaDestroyExternalMemory"), 0);
    }
    EXPECT_EQ(sim_->live("imports"), 0);
    EXPECT_EQ(sim_->live("buffers"), 0);
    EXPECT_EQ(sim_->calls("cudaFree"), 1);
    EXPECT_EQ(sim_->calls("cudaDestroyExternalMemory"), 1);
    const auto after = open_fds();
    EXPECT_EQ(after, before) << "left open: " << describe_fds(after);
}

TEST_P(CudaDma, AMapKeepsTheStorageAliveAfterTheLastTensor)
{
    ET_SIM_OR_SKIP();
    CudaMap m;
    {
        auto t = make({4096});
        ASSERT_TRUE(t) << t.error().message();
        fill(*t, 42);
        auto r = t->cuda_map();
        ASSERT_TRUE(r) << r.error().message();
        m = std::move(*r);
    }
    EXPECT_EQ(sim_->live("imports"), 1);
    auto host = copy_to_host(m, 16);
    EXPECT_EQ(host[1], uint8_t(42 + 7));
    m.reset();
    EXPECT_EQ(sim_->live("imports"), 0);
}

TEST_P(CudaDma, MapsFromAnyThreadWithoutAGlContext)
{
    ET_SIM_OR_SKIP();
    auto t = make({4096});
    ASSERT_TRUE(t) << t.error().message();
    long tid = 0;
    std::thread th([&] {
        tid = this_tid();
        auto m = t->cuda_map();
        EXPECT_TRUE(m) << m.error().message();
    });
    th.join();
    EXPECT_EQ(sim_->thread("cudaImportExternalMemory"), tid);
    EXPECT_EQ(sim_->calls("cudaGraphicsGLRegisterBuffer"), 0);
}

TEST_P(CudaDma, NegativeFailedImportClosesTheDupAndCanBeRetried)
{
    ET_SIM_OR_SKIP();
    auto t = make({4096});
    ASSERT_TRUE(t) << t.error().message();
    const auto before = open_fds();
    sim_->fail("cudaImportExternalMemory", 999, 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::Device);
    EXPECT_NE(m.error().message().find("cudaImportExternalMemory failed with cudaErrorUnknown"),
              std::string::npos)
        << m.error().message();
    // What a real driver for a discrete GPU answers for every DMA-BUF (docs/cuda.md): the
    // message says why and what to use instead.
    EXPECT_NE(m.error().message().find("does not take this DMA-BUF as CUDA external memory"),
              std::string::npos)
        << m.error().message();
    EXPECT_NE(m.error().message().find("Map a shared-memory tensor (TensorMemory::Shm, registered"),
              std::string::npos)
        << m.error().message();
    EXPECT_NE(m.error().message().find("(provider '"), std::string::npos) << m.error().message();
    EXPECT_EQ(open_fds(), before) << "the dup must be closed when CUDA did not take it";
    EXPECT_EQ(sim_->live("imports"), 0);
    auto again = t->cuda_map();
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(sim_->calls("cudaImportExternalMemory"), 2);
}

TEST_P(CudaDma, NegativeImportOutOfMemoryIsAnAllocationFailureWithoutTheDmaBufAdvice)
{
    ET_SIM_OR_SKIP();
    auto t = make({4096});
    ASSERT_TRUE(t) << t.error().message();
    sim_->fail("cudaImportExternalMemory", 2, 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::AllocationFailed);
    EXPECT_NE(m.error().message().find("cudaErrorMemoryAllocation"), std::string::npos)
        << m.error().message();
    EXPECT_EQ(m.error().message().find("PBO"), std::string::npos) << m.error().message();
}

TEST_P(CudaDma, NegativeFailedBufferMappingDestroysTheImportWhichOwnsTheFd)
{
    ET_SIM_OR_SKIP();
    auto t = make({4096});
    ASSERT_TRUE(t) << t.error().message();
    const auto before = open_fds();
    sim_->fail("cudaExternalMemoryGetMappedBuffer", 2, 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::AllocationFailed);
    EXPECT_NE(m.error().message().find("cudaErrorMemoryAllocation"), std::string::npos)
        << m.error().message();
    EXPECT_EQ(sim_->calls("cudaDestroyExternalMemory"), 1);
    EXPECT_EQ(sim_->live("imports"), 0);
    // The runtime closed the fd it took; closing it here too would be a double close (the
    // simulator reports that as a violation at destroy).
    EXPECT_EQ(open_fds(), before);
}

TEST_P(CudaDma, NegativeExhaustedFdTableIsAnIoErrorWithErrno)
{
    auto t = make({4096});
    ASSERT_TRUE(t) << t.error().message();
    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
    const auto open_now = open_fds();
    rlimit low = old;
    low.rlim_cur = rlim_t(*open_now.rbegin() + 8);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
    std::vector<int> filler;
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;)
        filler.push_back(fd);
    auto m = t->cuda_map();
    for (int fd : filler)
        ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &old);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::Io);
    EXPECT_EQ(m.error().sys_errno(), EMFILE);
    EXPECT_NE(m.error().message().find("duplicate the DMA-BUF fd"), std::string::npos)
        << m.error().message();
    if (sim_) {
        EXPECT_EQ(sim_->calls("cudaImportExternalMemory"), 0);
    }
    auto again = t->cuda_map();
    EXPECT_TRUE(again) << again.error().message();
}

// The round trip of issue 16: the converter's output (what tensorconvert produces) in a
// DMA-BUF tensor, read back through CUDA, equals the CPU output.
TEST_P(CudaDma, ConverterOutputReadBackThroughCudaEqualsTheCpuOutput)
{
    const size_t w = 96, h = 64;
    auto src = TensorDyn::image(w, h, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem, "src");
    ASSERT_TRUE(src) << src.error().message();
    {
        auto m = src->map_write();
        ASSERT_TRUE(m);
        auto d = m->data();
        for (size_t i = 0; i < d.size(); ++i)
            d[i] = uint8_t((i * 13) ^ (i >> 5));
    }
    ConvertConfig cfg;
    cfg.src_format = ConvertFormat::Rgb;
    cfg.src_width = w;
    cfg.src_height = h;
    cfg.dst_width = 40;
    cfg.dst_height = 30;
    cfg.dst_format = OutputFormat::Bgr;
    cfg.layout = TensorLayout::Chw;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    auto ref = conv->allocate_output(TensorMemory::Mem);
    ASSERT_TRUE(ref) << ref.error().message();
    ASSERT_TRUE(conv->run(*src, *ref));

    auto flat = make({ref->size()}, "converted");
    ASSERT_TRUE(flat) << flat.error().message();
    auto out = *flat;
    ASSERT_TRUE(out.reshape(ref->shape()));
    if (GetParam() == Source::DmaBuf) {
        auto r = conv->run(*src, out); // through the library's DMA-BUF maps
        ASSERT_TRUE(r) << r.error().message();
    } else {
        auto in = src->map_read();
        ASSERT_TRUE(in);
        with_bytes(out, [&](uint8_t* d, size_t) {
            SourceFrame sf;
            sf.planes[0] = {in->cdata().data(), w * 3};
            DestFrame df{d, conv->min_row_stride(), conv->min_plane_stride()};
            auto r = conv->run(sf, df);
            ASSERT_TRUE(r) << r.error().message();
        });
    }

    auto m = out.cuda_map();
    ASSERT_TRUE(m) << m.error().message();
    ASSERT_EQ(m->size_bytes(), ref->size());
    auto host = copy_to_host(*m, m->size_bytes());
    auto want = ref->map_read();
    ASSERT_TRUE(want);
    EXPECT_TRUE(std::equal(host.begin(), host.end(), want->cdata().begin()));
}

INSTANTIATE_TEST_SUITE_P(Sources, CudaDma, testing::Values(Source::DmaBuf, Source::MemfdAsDma),
                         source_name);

} // namespace
} // namespace edgetensor::test
