// SPDX-License-Identifier: MIT
//
// Fault injection in the library: the hook's grammar and its off-by-default cost, then each
// system call made to fail (tests/fault/meson.build runs one scenario per process). For every
// one: the allocation chain falls back or the error names the call and the errno, no fd or
// storage is left behind, and the next call works.

#include "fault_util.hpp"
#include "require.hpp"
#include "text_match.hpp"

#include "dma/dma_internal.hpp"
#include "tensor_access.hpp"

#include <edgetensor/convert.hpp>
#include <edgetensor/dma.hpp>
#include <edgetensor/gl.hpp>
#include <edgetensor/tensor.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace edgetensor::test
{
namespace
{

using detail::FaultPoint;

UniqueFd memfd(size_t size)
{
    UniqueFd fd(memfd_create("fault-test", MFD_CLOEXEC));
    EXPECT_TRUE(fd);
    EXPECT_EQ(ftruncate(fd.get(), off_t(size)), 0);
    return fd;
}

// ---- the hook itself ------------------------------------------------------------------------

TEST(FaultHook, SpecGrammar)
{
    std::string why;
    for (const char* good :
         {"mmap=ENOMEM", "dma-buf-sync=EINTR*1", "mmap=ENOMEM@2*1", "dup=24", "mmap=ENOTSUPP",
          "fstat=EIO,fstatfs=EIO", "dma-heap-alloc=ENOMEM@1,udmabuf-create=EIO"})
        EXPECT_TRUE(detail::fault_spec_valid(good, &why)) << good << ": " << why;
    struct Bad {
        const char* spec;
        const char* says;
    };
    for (const Bad& b : {Bad{"", "empty"}, Bad{"mmap", "<point>=<errno>"},
                         Bad{"mmpa=ENOMEM", "unknown fault point"},
                         Bad{"mmap=ENOPE", "not an errno name"}, Bad{"mmap=ENOMEM*0", "positive"},
                         Bad{"mmap=ENOMEM@x", "@skip"}, Bad{"mmap=EIO,mmap=ENOMEM", "twice"}}) {
        EXPECT_FALSE(detail::fault_spec_valid(b.spec, &why)) << b.spec;
        EXPECT_TRUE(contains(why, b.says)) << b.spec << ": " << why;
    }
}

TEST(FaultHook, OffByDefaultNothingIsInjected)
{
    if (std::getenv("EDGETENSOR_FAULT"))
        GTEST_SKIP() << "EDGETENSOR_FAULT is set";
    EXPECT_EQ(detail::fault_spec(), "");
    auto t = TensorDyn::create(DType::U8, {8192}, TensorMemory::Shm);
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_TRUE(t->map_write());
    auto fd = t->clone_fd();
    ASSERT_TRUE(fd);
    ASSERT_TRUE(TensorDyn::from_fd(std::move(*fd), DType::U8, {8192}));
    for (unsigned p = 0; p < detail::kFaultPointCount; ++p) {
        EXPECT_EQ(detail::fault_injected(FaultPoint(p)), 0u);
        EXPECT_EQ(detail::fault_calls(FaultPoint(p)), 0u) << "unset, the hook counts nothing";
    }
}

TEST(FaultHook, NegativeASpecThatDoesNotParseArmsNothing)
{
    const char* env = std::getenv("EDGETENSOR_FAULT");
    if (!env || std::strcmp(env, "mmap=ENOPE") != 0)
        GTEST_SKIP() << "needs EDGETENSOR_FAULT=mmap=ENOPE";
    EXPECT_EQ(detail::fault_spec(), "") << "a typo must not half-configure a test";
    auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Shm);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(detail::fault_injected(FaultPoint::Mmap), 0u);
}

// ---- shared memory --------------------------------------------------------------------------

TEST(FaultShm, MemfdCreateFailureFallsBackToShmOpen)
{
    ET_REQUIRE_FAULT("memfd-create=EMFILE");
    const Footprint before;
    {
        auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Shm);
        ASSERT_TRUE(t) << t.error().message();
        EXPECT_EQ(t->provider(), "shm_open") << "the documented fallback";
        auto m = t->map_write();
        ASSERT_TRUE(m);
        m->data()[0] = 42;
    }
    EXPECT_GE(injected(FaultPoint::MemfdCreate), 1u);
    expect_same_footprint(before, "after the shm_open tensor died");

    // udmabuf needs a memfd too: where DMA-BUF exists (the VM lane) it is then unavailable,
    // and says why.
    if (is_dma_heap_available() || dma_required()) {
        EXPECT_FALSE(is_udmabuf_available()) << "udmabuf cannot work without memfd_create";
        const DmaProvider only[] = {DmaProvider::Udmabuf};
        ASSERT_TRUE(set_dma_providers(only));
        auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Dma);
        reset_dma_providers();
        ASSERT_FALSE(t);
        EXPECT_TRUE(contains(t.error().message(), "memfd_create")) << t.error().message();
        EXPECT_TRUE(contains(t.error().message(), "(EMFILE)")) << t.error().message();
    }
    expect_same_footprint(before, "after the refused udmabuf allocation");
}

TEST(FaultShm, MmapFailureIsAnIoErrorNamingMmapAndTheNextAllocationWorks)
{
    ET_REQUIRE_FAULT("mmap=ENOMEM*1");
    const Footprint before;
    {
        auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Shm);
        ASSERT_FALSE(t);
        EXPECT_EQ(t.error().code(), ErrorCode::Io);
        EXPECT_EQ(t.error().sys_errno(), ENOMEM);
        EXPECT_TRUE(contains(t.error().message(), "mmap")) << t.error().message();
        EXPECT_TRUE(contains(t.error().message(), "(ENOMEM)")) << t.error().message();
    }
    expect_same_footprint(before, "after the failed allocation");
    {
        auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Shm);
        ASSERT_TRUE(t) << t.error().message();
        ASSERT_TRUE(t->map_write());
    }
    EXPECT_EQ(injected(FaultPoint::Mmap), 1u);
    expect_same_footprint(before, "after the second tensor died");
}

// ---- fds -------------------------------------------------------------------------------------

TEST(FaultFd, DupFailureNamesDupAndErrnoAndTheNextCloneWorks)
{
    ET_REQUIRE_FAULT("dup=EMFILE*1");
    auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Shm);
    ASSERT_TRUE(t) << t.error().message();
    const Footprint before;
    {
        auto fd = t->clone_fd();
        ASSERT_FALSE(fd);
        EXPECT_EQ(fd.error().sys_errno(), EMFILE);
        EXPECT_TRUE(contains(fd.error().message(), "duplicating")) << fd.error().message();
        EXPECT_TRUE(contains(fd.error().message(), "(EMFILE)")) << fd.error().message();
    }
    expect_same_footprint(before, "after the failed dup");
    {
        auto fd = t->clone_fd();
        ASSERT_TRUE(fd) << fd.error().message();
    }
    expect_same_footprint(before, "after the clone was closed");
}

TEST(FaultFd, FstatFailureRefusesTheImportAndClosesTheAdoptedFd)
{
    ET_REQUIRE_FAULT("fstat=EIO*1");
    UniqueFd source = memfd(4096);
    const Footprint before;
    {
        auto t = TensorDyn::from_fd(UniqueFd::dup(source.get()), DType::U8, {4096});
        ASSERT_FALSE(t);
        EXPECT_EQ(t.error().sys_errno(), EIO);
        EXPECT_TRUE(contains(t.error().message(), "fstat on the imported fd"))
            << t.error().message();
        EXPECT_TRUE(contains(t.error().message(), "(EIO)")) << t.error().message();
    }
    expect_same_footprint(before, "after the refused import");
    {
        auto t = TensorDyn::from_fd(UniqueFd::dup(source.get()), DType::U8, {4096});
        ASSERT_TRUE(t) << t.error().message();
    }
    expect_same_footprint(before, "after the second import died");
}

TEST(FaultFd, FstatfsFailureRefusesTheImportAndClosesTheAdoptedFd)
{
    ET_REQUIRE_FAULT("fstatfs=EIO*1");
    UniqueFd source = memfd(4096);
    const Footprint before;
    {
        auto t = TensorDyn::from_fd(UniqueFd::dup(source.get()), DType::U8, {4096});
        ASSERT_FALSE(t);
        EXPECT_EQ(t.error().sys_errno(), EIO);
        EXPECT_TRUE(contains(t.error().message(), "fstatfs")) << t.error().message();
        EXPECT_TRUE(contains(t.error().message(), "(EIO)")) << t.error().message();
    }
    expect_same_footprint(before, "after the refused import");
    ASSERT_TRUE(TensorDyn::from_fd(UniqueFd::dup(source.get()), DType::U8, {4096}));
    expect_same_footprint(before, "after the second import died");
}

// ---- DMA-BUF (the VM lane; skipped on a host without a provider) ----------------------------

TEST(FaultDma, HeapAllocFailureFallsBackToUdmabufOrSaysWhy)
{
    ET_REQUIRE_FAULT("dma-heap-alloc=ENOMEM@1");
    ET_REQUIRE_DMA_OR_SKIP();
    if (!is_dma_heap_available())
        GTEST_SKIP() << "no dma-heap (the probe, which the fault lets through, failed)";
    const Footprint before;
    {
        auto t = TensorDyn::create(DType::U8, {65536}, TensorMemory::Dma);
        ASSERT_TRUE(t) << t.error().message();
        EXPECT_EQ(t->provider(), "udmabuf") << "the next provider in the chain";
        auto m = t->map_write();
        ASSERT_TRUE(m) << m.error().message();
    }
    {
        const DmaProvider only[] = {DmaProvider::DmaHeap};
        ASSERT_TRUE(set_dma_providers(only));
        auto t = TensorDyn::create(DType::U8, {65536}, TensorMemory::Dma);
        reset_dma_providers();
        ASSERT_FALSE(t);
        EXPECT_TRUE(contains(t.error().message(), "DMA_HEAP_IOCTL_ALLOC")) << t.error().message();
        EXPECT_TRUE(contains(t.error().message(), "(ENOMEM)")) << t.error().message();
    }
    EXPECT_GE(injected(FaultPoint::DmaHeapAlloc), 2u);
    expect_same_footprint(before, "after the DMA tensors died");
}

TEST(FaultDma, UdmabufCreateFailureFallsBackToDrmPrimeOrSaysWhy)
{
    ET_REQUIRE_FAULT("dma-heap-alloc=ENOMEM@1,udmabuf-create=ENOMEM@1");
    ET_REQUIRE_DMA_OR_SKIP();
    if (!is_udmabuf_available() || !is_drm_prime_available())
        GTEST_SKIP() << "needs udmabuf and drm-prime (the VM lane has both)";
    const Footprint before;
    {
        auto t = TensorDyn::create(DType::U8, {65536}, TensorMemory::Dma);
        ASSERT_TRUE(t) << t.error().message();
        EXPECT_EQ(t->provider().substr(0, 9), "drm-prime") << t->provider();
    }
    {
        const DmaProvider only[] = {DmaProvider::Udmabuf};
        ASSERT_TRUE(set_dma_providers(only));
        auto t = TensorDyn::create(DType::U8, {65536}, TensorMemory::Dma);
        reset_dma_providers();
        ASSERT_FALSE(t);
        EXPECT_TRUE(contains(t.error().message(), "UDMABUF_CREATE")) << t.error().message();
        EXPECT_TRUE(contains(t.error().message(), "(ENOMEM)")) << t.error().message();
    }
    EXPECT_GE(injected(FaultPoint::UdmabufCreate), 2u);
    expect_same_footprint(before, "after the DMA tensors died (the udmabuf memfds closed)");
}

TEST(FaultDma, AnInterruptedSyncIsRetriedAndTheMapWorks)
{
    ET_REQUIRE_FAULT("dma-buf-sync=EINTR*1");
    ET_REQUIRE_DMA_OR_SKIP();
    auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    {
        auto m = t->map_write();
        ASSERT_TRUE(m) << m.error().message();
        m->data()[7] = 7;
    }
    EXPECT_EQ(injected(FaultPoint::DmaBufSync), 1u);
    EXPECT_EQ(detail::fault_calls(FaultPoint::DmaBufSync), 3u)
        << "START interrupted, START retried, END";
    auto r = t->map_read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->cdata()[7], 7);
}

TEST(FaultDma, ASyncIoErrorFailsTheMapNamingTheIoctlAndTheNextMapWorks)
{
    ET_REQUIRE_FAULT("dma-buf-sync=EIO*1");
    ET_REQUIRE_DMA_OR_SKIP();
    const Footprint before;
    {
        auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Dma);
        ASSERT_TRUE(t) << t.error().message();
        auto m = t->map_write();
        ASSERT_FALSE(m);
        EXPECT_EQ(m.error().sys_errno(), EIO);
        EXPECT_TRUE(contains(m.error().message(), "DMA_BUF_IOCTL_SYNC START"))
            << m.error().message();
        EXPECT_TRUE(contains(m.error().message(), "(EIO)")) << m.error().message();
        auto again = t->map_write();
        ASSERT_TRUE(again) << again.error().message();
    }
    expect_same_footprint(before, "after the tensor died");
}

TEST(FaultDma, AnMmapFailureFailsTheMapAndTheNextMapWorks)
{
    ET_REQUIRE_FAULT("mmap=ENOMEM*1");
    ET_REQUIRE_DMA_OR_SKIP();
    const Footprint before;
    {
        auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Dma);
        ASSERT_TRUE(t) << t.error().message();
        auto m = t->map_write();
        ASSERT_FALSE(m);
        EXPECT_TRUE(contains(m.error().message(), "mmap of DMA-BUF")) << m.error().message();
        EXPECT_TRUE(contains(m.error().message(), "(ENOMEM)")) << m.error().message();
        auto again = t->map_write();
        ASSERT_TRUE(again) << again.error().message();
    }
    expect_same_footprint(before, "after the tensor died");
}

#if ET_TEST_DMA_BUILT
/// A DMA storage over a memfd (the library's internal seam): runs the DMA-BUF storage's CPU map
/// on any host. Its mmap is what the fault replaces; a memfd has no DMA_BUF_IOCTL_SYNC.
Result<TensorDyn> memfd_as_dma(size_t bytes, std::string_view name)
{
    UniqueFd fd(::memfd_create("fault-test", MFD_CLOEXEC));
    if (!fd || ::ftruncate(fd.get(), off_t(bytes)) != 0)
        return unexpected(Error::io(errno, "memfd"));
    auto s = detail::make_dma_storage(std::move(fd), bytes, CpuAccess::ReadWrite, "import");
    if (!s)
        return unexpected(std::move(s).error());
    return detail::TensorAccess::wrap(std::move(*s), DType::U8, {bytes}, {}, 0, name);
}

// A GPU driver's DMA-BUF of its own memory (CUDA's cuMemGetHandleForAddressRange on an H200,
// docs/cuda.md) refuses mmap with the kernel's ENOTSUPP (524), which libc has no text for.
TEST(FaultDma, AnExporterRefusingCpuMapsIsNamedWithWhatToDo)
{
    ET_REQUIRE_FAULT("mmap=ENOTSUPP");
    const Footprint before;
    {
        auto t = memfd_as_dma(4096, "device-memory");
        ASSERT_TRUE(t) << t.error().message();
        auto m = t->map_read();
        ASSERT_FALSE(m);
        const std::string& msg = m.error().message();
        EXPECT_EQ(m.error().code(), ErrorCode::Io);
        EXPECT_EQ(m.error().sys_errno(), 524);
        EXPECT_TRUE(contains(msg, "mmap of DMA-BUF (import, 4096 bytes) failed")) << msg;
        EXPECT_TRUE(contains(msg, "does not let the CPU map it")) << msg;
        EXPECT_TRUE(contains(msg, "Operation not supported by the driver (ENOTSUPP)")) << msg;
        EXPECT_FALSE(contains(msg, "Unknown error")) << msg;
    }
    expect_same_footprint(before, "after the tensor died");
}

// The same buffer as a GL converter's source: the import and the upload both fail, and the
// error says why for each (an EGL that imports DMA-BUFs refuses a memfd; llvmpipe imports none).
TEST(FaultDma, AGlSourceNeitherImportedNorMappableNamesBothReasons)
{
    ET_REQUIRE_FAULT("mmap=ENOTSUPP");
    if (!gl_built() || !GlContext::probe())
        GTEST_SKIP() << "no GL context here";
    const Footprint before;
    {
        const size_t w = 64, h = 32;
        auto flat = memfd_as_dma(w * h * 3 / 2, "device-memory");
        ASSERT_TRUE(flat) << flat.error().message();
        const PlaneLayout planes[] = {{0, w}, {w * h, w}};
        auto src = flat->as_image(w, h, PixelFormat::Nv12, planes);
        ASSERT_TRUE(src) << src.error().message();
        ConvertConfig c;
        c.src_format = ConvertFormat::Nv12;
        c.src_width = w;
        c.src_height = h;
        c.dst_width = 32;
        c.dst_height = 16;
        c.compute = ConvertCompute::Gl;
        auto conv = Converter::create(c);
        ASSERT_TRUE(conv) << conv.error().message();
        auto dst = TensorDyn::create(DType::U8, {16, 32, 3});
        ASSERT_TRUE(dst);
        auto r = conv->run(*src, *dst);
        ASSERT_FALSE(r);
        const std::string& msg = r.error().message();
        EXPECT_EQ(r.error().sys_errno(), 524) << msg;
        EXPECT_TRUE(contains(msg, "source plane 0 of 'device-memory' can be neither imported ("))
            << msg;
        EXPECT_TRUE(contains(msg, ") nor uploaded: mmap of DMA-BUF")) << msg;
        EXPECT_TRUE(contains(msg, "(ENOTSUPP)")) << msg;
        EXPECT_EQ(conv->gl_stats().zero_copy_declines, 1u);
        EXPECT_EQ(conv->gl_stats().uploads, 0u);
    }
    expect_same_footprint(before, "after the converter and tensors died");
}

#endif // ET_TEST_DMA_BUILT

} // namespace
} // namespace edgetensor::test
