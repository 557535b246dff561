// SPDX-License-Identifier: MIT
//
// Importing real DMA-BUFs: classification by fs magic, the kernel identity of a buffer across
// dup / clone_fd / re-import, data through maps of two imports of one buffer, and multi-plane
// composition from two separate DMA-BUFs.

#include "dma_test_util.hpp"

#include "dma/uapi/dma-heap.h"

#include <edgetensor/tensor.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace edgetensor;
using edgetensor::test::fs_magic;
using edgetensor::test::kDmaBufMagic;
using edgetensor::test::ScopedDmaProviders;
using edgetensor::test::stat_identity_of;

namespace
{

std::string param_name(const ::testing::TestParamInfo<DmaProvider>& info)
{
    switch (info.param) {
    case DmaProvider::DmaHeap:
        return "DmaHeap";
    case DmaProvider::Udmabuf:
        return "Udmabuf";
    case DmaProvider::DrmPrime:
        return "DrmPrime";
    }
    return "Unknown";
}

uint8_t pattern(size_t i, uint8_t seed)
{
    return uint8_t((i * 31u + seed) ^ (i >> 8));
}

class DmaImport : public ::testing::TestWithParam<DmaProvider>
{
protected:
    void SetUp() override
    {
        const DmaProvider only[] = {GetParam()};
        ASSERT_TRUE(set_dma_providers(only));
    }
    void TearDown() override { reset_dma_providers(); }
};

} // namespace

TEST_P(DmaImport, FromFdOfARealDmaBufIsDma)
{
    ET_REQUIRE_DMA_OR_SKIP();
    ET_REQUIRE_DMA_PROVIDER_OR_SKIP(GetParam());
    auto t = TensorDyn::create(DType::U16, {32, 64}, TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    auto fd = t->clone_fd();
    ASSERT_TRUE(fd) << fd.error().message();
    ASSERT_EQ(fs_magic(fd->get()), kDmaBufMagic);

    auto imported = TensorDyn::from_fd(std::move(*fd), DType::U16, {32, 64}, "imported");
    ASSERT_TRUE(imported) << imported.error().message();
    EXPECT_EQ(imported->memory(), TensorMemory::Dma);
    EXPECT_EQ(imported->provider(), "import");
    EXPECT_GE(imported->capacity_bytes(), 32u * 64u * 2u);
    EXPECT_NE(imported->buffer_identity().id(), t->buffer_identity().id())
        << "an import mints its own identity";

    // The import is itself a DMA tensor: clone_fd round trips keep the backend.
    auto again = imported->clone_fd();
    ASSERT_TRUE(again) << again.error().message();
    auto second = TensorDyn::from_fd(std::move(*again), DType::U8, {4096});
    ASSERT_TRUE(second) << second.error().message();
    EXPECT_EQ(second->memory(), TensorMemory::Dma);
}

TEST_P(DmaImport, KernelIdentityIsStableAcrossDupCloneAndImport)
{
    ET_REQUIRE_DMA_OR_SKIP();
    ET_REQUIRE_DMA_PROVIDER_OR_SKIP(GetParam());
    auto t = TensorDyn::create(DType::U8, {8192}, TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    const auto id = stat_identity_of(t->fd());
    ASSERT_NE(id.second, 0u);
    // DMA-BUFs live on the anonymous dmabuf filesystem (major 0), never on a block device.
    EXPECT_EQ(major(dev_t(id.first)), 0u);

    auto mine = t->stat_identity();
    ASSERT_TRUE(mine) << mine.error().message();
    EXPECT_EQ(*mine, id);

    UniqueFd dup = UniqueFd::dup(t->fd());
    ASSERT_TRUE(dup);
    EXPECT_NE(dup.get(), t->fd());
    EXPECT_EQ(stat_identity_of(dup.get()), id);

    auto clone = t->clone_fd();
    ASSERT_TRUE(clone) << clone.error().message();
    EXPECT_EQ(stat_identity_of(clone->get()), id);

    auto imported = TensorDyn::from_fd(std::move(*clone), DType::U8, {8192});
    ASSERT_TRUE(imported) << imported.error().message();
    auto imported_id = imported->stat_identity();
    ASSERT_TRUE(imported_id);
    EXPECT_EQ(*imported_id, id);

    // The identity outlives the tensor that made the buffer.
    *t = TensorDyn();
    EXPECT_EQ(stat_identity_of(imported->fd()), id);

    auto other = TensorDyn::create(DType::U8, {8192}, TensorMemory::Dma);
    ASSERT_TRUE(other) << other.error().message();
    EXPECT_NE(stat_identity_of(other->fd()), id) << "distinct buffers have distinct inodes";
}

TEST_P(DmaImport, WriteMapThenReadMapOfAReimportSeesTheBytes)
{
    ET_REQUIRE_DMA_OR_SKIP();
    ET_REQUIRE_DMA_PROVIDER_OR_SKIP(GetParam());
    constexpr size_t kBytes = 3 * 4096 + 123;
    auto t = TensorDyn::create(DType::U8, {kBytes}, TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    {
        auto w = t->map_write();
        ASSERT_TRUE(w) << w.error().message();
        ASSERT_TRUE(w->writable());
        auto d = w->data();
        ASSERT_EQ(d.size(), kBytes);
        for (size_t i = 0; i < d.size(); ++i)
            d[i] = pattern(i, 7);
    } // SYNC END|WRITE here
    auto fd = t->clone_fd();
    ASSERT_TRUE(fd);
    auto imported = TensorDyn::from_fd(std::move(*fd), DType::U8, {kBytes});
    ASSERT_TRUE(imported) << imported.error().message();
    {
        auto r = imported->map_read();
        ASSERT_TRUE(r) << r.error().message();
        size_t bad = 0;
        for (size_t i = 0; i < r->len(); ++i)
            bad += r->cdata()[i] != pattern(i, 7);
        EXPECT_EQ(bad, 0u);
    }
    // And the other way: the import writes, the original reads.
    {
        auto w = imported->map_with(CpuAccess::ReadWrite);
        ASSERT_TRUE(w) << w.error().message();
        for (size_t i = 0; i < w->len(); ++i)
            w->data()[i] = pattern(i, 99);
    }
    auto r = t->map_read();
    ASSERT_TRUE(r) << r.error().message();
    size_t bad = 0;
    for (size_t i = 0; i < r->len(); ++i)
        bad += r->cdata()[i] != pattern(i, 99);
    EXPECT_EQ(bad, 0u);
}

TEST_P(DmaImport, ShapeLargerThanTheBufferIsRefused_Negative)
{
    ET_REQUIRE_DMA_OR_SKIP();
    ET_REQUIRE_DMA_PROVIDER_OR_SKIP(GetParam());
    auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    auto fd = t->clone_fd();
    ASSERT_TRUE(fd);
    const size_t too_many = t->capacity_bytes() / 4 + 1;
    auto imported = TensorDyn::from_fd(std::move(*fd), DType::F32, {too_many});
    ASSERT_FALSE(imported);
    EXPECT_EQ(imported.error().code(), ErrorCode::InsufficientCapacity)
        << imported.error().message();
}

INSTANTIATE_TEST_SUITE_P(Providers, DmaImport, ::testing::ValuesIn(kDefaultDmaProviders),
                         param_name);

TEST(DmaImportReadOnly, ReadOnlyDmaBufMapsForReadingOnly_Negative)
{
    ET_REQUIRE_DMA_OR_SKIP();
    ET_REQUIRE_DMA_PROVIDER_OR_SKIP(DmaProvider::DmaHeap);
    // A buffer exported read-only (as a consumer may hand one over): allocate it directly
    // from the heap with O_RDONLY fd flags.
    UniqueFd heap(::open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC));
    if (!heap)
        GTEST_SKIP() << "this host's dma-heap is not the system heap";
    dma_heap_allocation_data data{};
    data.len = 4096;
    data.fd_flags = O_RDONLY | O_CLOEXEC;
    ASSERT_EQ(::ioctl(heap.get(), DMA_HEAP_IOCTL_ALLOC, &data), 0) << std::strerror(errno);
    UniqueFd buf(static_cast<int>(data.fd));

    auto t = TensorDyn::from_fd(std::move(buf), DType::U8, {4096});
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->memory(), TensorMemory::Dma);
    auto r = t->map_read();
    ASSERT_TRUE(r) << r.error().message();
    r->reset();
    auto w = t->map_write();
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code(), ErrorCode::NotSupported);
    EXPECT_NE(w.error().message().find("read-only"), std::string::npos) << w.error().message();
}

TEST(DmaPlanes, FromPlanesComposesTwoRealDmaBufs)
{
    ET_REQUIRE_DMA_OR_SKIP();
    constexpr size_t kW = 322;
    constexpr size_t kH = 6;
    auto luma = TensorDyn::image(kW, kH, PixelFormat::Grey, DType::U8, CpuAccess::ReadWrite,
                                 TensorMemory::Dma, "luma");
    ASSERT_TRUE(luma) << luma.error().message();
    auto chroma = TensorDyn::create(DType::U8, {kH / 2, kW}, TensorMemory::Dma, "chroma");
    ASSERT_TRUE(chroma) << chroma.error().message();
    ASSERT_EQ(luma->memory(), TensorMemory::Dma);
    ASSERT_EQ(chroma->memory(), TensorMemory::Dma);
    ASSERT_EQ(*luma->row_stride() % 64, 0u);

    auto nv12 = TensorDyn::from_planes(*luma, *chroma, PixelFormat::Nv12);
    ASSERT_TRUE(nv12) << nv12.error().message();
    EXPECT_EQ(nv12->memory(), TensorMemory::Dma);
    EXPECT_EQ(nv12->format(), PixelFormat::Nv12);
    EXPECT_EQ(nv12->width(), kW);
    EXPECT_EQ(nv12->height(), kH);
    ASSERT_EQ(nv12->plane_count(), 2u);

    // Each plane keeps its own buffer, fd and pitch.
    EXPECT_EQ(stat_identity_of(nv12->plane_fd(0)), stat_identity_of(luma->fd()));
    EXPECT_EQ(stat_identity_of(nv12->plane_fd(1)), stat_identity_of(chroma->fd()));
    EXPECT_NE(stat_identity_of(nv12->plane_fd(0)), stat_identity_of(nv12->plane_fd(1)));
    EXPECT_EQ(fs_magic(nv12->plane_fd(1)), kDmaBufMagic);
    auto l0 = nv12->plane_layout(0);
    auto l1 = nv12->plane_layout(1);
    ASSERT_TRUE(l0 && l1);
    EXPECT_EQ(l0->stride, *luma->row_stride());
    EXPECT_EQ(l1->stride, kW);

    // Writes through the composed map land in the two separate buffers.
    {
        auto m = nv12->map_write();
        ASSERT_TRUE(m) << m.error().message();
        ASSERT_EQ(m->plane_count(), 2u);
        for (size_t y = 0; y < kH; ++y)
            for (size_t x = 0; x < kW; ++x)
                m->plane(0).data[y * m->plane(0).row_stride + x] = uint8_t(y * 40 + x);
        for (size_t y = 0; y < kH / 2; ++y)
            for (size_t x = 0; x < kW; ++x)
                m->plane(1).data[y * m->plane(1).row_stride + x] = uint8_t(200 - y - x);
    }
    auto ly = luma->map_read();
    ASSERT_TRUE(ly) << ly.error().message();
    auto uv = chroma->map_read();
    ASSERT_TRUE(uv) << uv.error().message();
    size_t bad = 0;
    for (size_t y = 0; y < kH; ++y)
        for (size_t x = 0; x < kW; ++x)
            bad += ly->plane(0).data[y * *luma->row_stride() + x] != uint8_t(y * 40 + x);
    for (size_t y = 0; y < kH / 2; ++y)
        for (size_t x = 0; x < kW; ++x)
            bad += uv->cdata()[y * kW + x] != uint8_t(200 - y - x);
    EXPECT_EQ(bad, 0u);
}
