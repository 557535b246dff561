// SPDX-License-Identifier: MIT
//
// GstEdgeTensorAllocator: memory types, dmabuf-ness, fd/inode identity with the tensor, maps,
// lifetimes and fd accounting.

#include "fd_count.hpp"
#include "gst_test_util.hpp"
#include "require.hpp"

#include <gst/allocators/allocators.h>

#include <sys/vfs.h>

#include <cstring>

namespace edgetensor::test
{
namespace
{

constexpr uint32_t kDmaBufMagic = 0x444d4142;

GstEdgeTensorMemoryKind host_kind()
{
    return gst::resolve_memory_kind(GST_EDGE_TENSOR_MEMORY_AUTO);
}

TEST(GstAllocator, SharedInstanceIsRegisteredDmaBufAllocator)
{
    AllocatorPtr a(gst_edge_tensor_allocator_get());
    ASSERT_TRUE(a);
    EXPECT_TRUE(GST_IS_EDGE_TENSOR_ALLOCATOR(a.get()));
    EXPECT_TRUE(GST_IS_DMABUF_ALLOCATOR(a.get()));
    AllocatorPtr found(gst_allocator_find(GST_EDGE_TENSOR_ALLOCATOR_NAME));
    EXPECT_EQ(found.get(), a.get());
    AllocatorPtr again(gst_edge_tensor_allocator_get());
    EXPECT_EQ(again.get(), a.get());
}

TEST(GstAllocator, AllocReturnsMemoryOfTheHostsKindAndSaysSo)
{
    AllocatorPtr a(gst_edge_tensor_allocator_get());
    MemoryPtr mem(gst_allocator_alloc(a.get(), 4096, nullptr));
    ASSERT_TRUE(mem);
    EXPECT_TRUE(gst_is_edge_tensor_memory(mem.get()));
    EXPECT_TRUE(gst_is_fd_memory(mem.get()));
    const GstEdgeTensorMemoryKind kind = gst_edge_tensor_memory_get_kind(mem.get());
    EXPECT_EQ(kind, host_kind());
    if (kind == GST_EDGE_TENSOR_MEMORY_DMA) {
        EXPECT_TRUE(gst_is_dmabuf_memory(mem.get()));
        EXPECT_TRUE(gst_memory_is_type(mem.get(), GST_ALLOCATOR_DMABUF));
    } else {
        // Shared memory must never pass for a DMA-BUF.
        EXPECT_FALSE(gst_is_dmabuf_memory(mem.get()));
        EXPECT_TRUE(gst_memory_is_type(mem.get(), GST_EDGE_TENSOR_MEMORY_TYPE_SHM));
        EXPECT_TRUE(GST_IS_EDGE_TENSOR_SHM_ALLOCATOR(mem->allocator));
    }
    gsize offset = 1, maxsize = 0;
    EXPECT_EQ(gst_memory_get_sizes(mem.get(), &offset, &maxsize), 4096u);
    EXPECT_EQ(offset, 0u);
}

TEST(GstAllocator, MemoryBorrowsTheTensorsFdSoABufferCostsOneFd)
{
    AllocatorPtr a(gst_edge_tensor_allocator_new(GST_EDGE_TENSOR_MEMORY_SHM));
    MemoryPtr mem(gst_allocator_alloc(a.get(), 8192, nullptr));
    ASSERT_TRUE(mem);
    auto t = gst::tensor_from_memory(mem.get());
    ASSERT_TRUE(t);
    const int mfd = gst_edge_tensor_memory_get_fd(mem.get());
    ASSERT_GE(mfd, 0);
    EXPECT_EQ(mfd, gst_fd_memory_get_fd(mem.get()));
    EXPECT_EQ(mfd, t->fd()) << "one fd per memory: it borrows the fd of the tensor it keeps alive";
    EXPECT_EQ(inode_of(mfd), inode_of(t->fd()));
    guint64 dev = 0, ino = 0;
    ASSERT_TRUE(gst_edge_tensor_memory_get_inode(mem.get(), &dev, &ino));
    auto sid = t->stat_identity();
    ASSERT_TRUE(sid);
    EXPECT_EQ(ino, sid->second);
    EXPECT_EQ(dev, sid->first);
    EXPECT_EQ(gst_edge_tensor_memory_get_identity(mem.get()), t->buffer_identity().id());
    EXPECT_NE(gst_edge_tensor_memory_get_identity(mem.get()), 0u);
}

TEST(GstAllocator, DmaMemoryIsDmaBufWithTheTensorsInode)
{
    ET_REQUIRE_DMA_OR_SKIP();
    AllocatorPtr a(gst_edge_tensor_allocator_new(GST_EDGE_TENSOR_MEMORY_DMA));
    MemoryPtr mem(gst_allocator_alloc(a.get(), 65536, nullptr));
    ASSERT_TRUE(mem);
    EXPECT_TRUE(gst_is_dmabuf_memory(mem.get()));
    const int fd = gst_dmabuf_memory_get_fd(mem.get());
    ASSERT_GE(fd, 0);
    struct statfs sfs {
    };
    ASSERT_EQ(fstatfs(fd, &sfs), 0);
    EXPECT_EQ(uint32_t(sfs.f_type), kDmaBufMagic);
    auto t = gst::tensor_from_memory(mem.get());
    ASSERT_TRUE(t);
    EXPECT_EQ(t->memory(), TensorMemory::Dma);
    EXPECT_EQ(fd, t->fd()) << "one fd per memory";
    EXPECT_EQ(inode_of(fd), inode_of(t->fd()));
}

TEST(GstAllocator, ShmAllocatorNeverClaimsDmaBuf)
{
    AllocatorPtr a(gst_edge_tensor_allocator_new(GST_EDGE_TENSOR_MEMORY_SHM));
    AllocatorPtr shm(gst_edge_tensor_allocator_get_shm_allocator(a.get()));
    ASSERT_TRUE(GST_IS_EDGE_TENSOR_SHM_ALLOCATOR(shm.get()));
    EXPECT_FALSE(GST_IS_DMABUF_ALLOCATOR(shm.get()));
    for (GstAllocator* alloc : {a.get(), shm.get()}) {
        MemoryPtr mem(gst_allocator_alloc(alloc, 1000, nullptr));
        ASSERT_TRUE(mem);
        EXPECT_FALSE(gst_is_dmabuf_memory(mem.get()));
        EXPECT_TRUE(gst_is_fd_memory(mem.get()));
        EXPECT_EQ(gst_edge_tensor_memory_get_kind(mem.get()), GST_EDGE_TENSOR_MEMORY_SHM);
        EXPECT_STREQ(mem->allocator->mem_type, GST_EDGE_TENSOR_MEMORY_TYPE_SHM);
    }
}

TEST(GstAllocator, MapWritesThroughGstMemoryAndReadsBackThroughTheTensor)
{
    AllocatorPtr a(gst_edge_tensor_allocator_get());
    MemoryPtr mem(gst_allocator_alloc(a.get(), 3000, nullptr));
    ASSERT_TRUE(mem);
    GstMapInfo map;
    ASSERT_TRUE(gst_memory_map(mem.get(), &map, GST_MAP_WRITE));
    for (gsize i = 0; i < map.size; ++i)
        map.data[i] = guint8(i * 7 + 1);
    gst_memory_unmap(mem.get(), &map);

    auto t = gst::tensor_from_memory(mem.get());
    ASSERT_TRUE(t);
    {
        auto tm = t->map_read();
        ASSERT_TRUE(tm);
        auto bytes = tm->cdata();
        ASSERT_GE(bytes.size(), 3000u);
        for (size_t i = 0; i < 3000; ++i)
            ASSERT_EQ(bytes[i], guint8(i * 7 + 1)) << "byte " << i;
    }
    {
        auto tm = t->map_write();
        ASSERT_TRUE(tm);
        tm->data()[10] = 0xAB;
    }
    ASSERT_TRUE(gst_memory_map(mem.get(), &map, GST_MAP_READ));
    EXPECT_EQ(map.data[10], 0xAB);
    EXPECT_EQ(map.data[11], guint8(11 * 7 + 1));
    gst_memory_unmap(mem.get(), &map);
}

TEST(GstAllocator, MemoryOutlivesTheAllocatorObject)
{
    const auto before = open_fds();
    {
        MemoryPtr mem;
        {
            AllocatorPtr a(gst_edge_tensor_allocator_new(GST_EDGE_TENSOR_MEMORY_AUTO));
            mem.reset(gst_allocator_alloc(a.get(), 4096, nullptr));
            ASSERT_TRUE(mem);
        }
        GstMapInfo map;
        ASSERT_TRUE(gst_memory_map(mem.get(), &map, GST_MAP_READWRITE));
        std::memset(map.data, 0x5A, map.size);
        gst_memory_unmap(mem.get(), &map);
        ASSERT_TRUE(gst_memory_map(mem.get(), &map, GST_MAP_READ));
        EXPECT_EQ(map.data[4095], 0x5A);
        gst_memory_unmap(mem.get(), &map);
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

TEST(GstAllocator, MemoryKeepsItsTensorAliveAndNoLonger)
{
    AllocatorPtr a(gst_edge_tensor_allocator_get());
    MemoryPtr mem(gst_allocator_alloc(a.get(), 100, nullptr));
    ASSERT_TRUE(mem);
    BufferIdentity id;
    {
        auto t = gst::tensor_from_memory(mem.get());
        ASSERT_TRUE(t);
        id = t->buffer_identity();
    }
    EXPECT_TRUE(id.is_alive());
    mem.reset();
    EXPECT_FALSE(id.is_alive());
}

TEST(GstAllocator, SharedSubMemoryFindsTheParentsTensor)
{
    AllocatorPtr a(gst_edge_tensor_allocator_get());
    MemoryPtr mem(gst_allocator_alloc(a.get(), 4096, nullptr));
    ASSERT_TRUE(mem);
    MemoryPtr sub(gst_memory_share(mem.get(), 100, 200));
    ASSERT_TRUE(sub);
    EXPECT_TRUE(gst_is_edge_tensor_memory(sub.get()));
    EXPECT_EQ(gst_edge_tensor_memory_get_identity(sub.get()),
              gst_edge_tensor_memory_get_identity(mem.get()));
    mem.reset(); // the sub-memory keeps its parent (and the tensor) alive
    GstMapInfo map;
    ASSERT_TRUE(gst_memory_map(sub.get(), &map, GST_MAP_READ));
    EXPECT_EQ(map.size, 200u);
    gst_memory_unmap(sub.get(), &map);
}

TEST(GstAllocator, SystemKindGivesHeapMemoryWithoutAnFd)
{
    AllocatorPtr a(gst_edge_tensor_allocator_new(GST_EDGE_TENSOR_MEMORY_SYSTEM));
    MemoryPtr mem(gst_allocator_alloc(a.get(), 512, nullptr));
    ASSERT_TRUE(mem);
    EXPECT_FALSE(gst_is_fd_memory(mem.get()));
    EXPECT_FALSE(gst_is_dmabuf_memory(mem.get()));
    EXPECT_EQ(gst_edge_tensor_memory_get_fd(mem.get()), -1);
    EXPECT_FALSE(gst_edge_tensor_memory_get_inode(mem.get(), nullptr, nullptr));
    EXPECT_EQ(gst_edge_tensor_memory_get_kind(mem.get()), GST_EDGE_TENSOR_MEMORY_SYSTEM);
    GstMapInfo map;
    ASSERT_TRUE(gst_memory_map(mem.get(), &map, GST_MAP_WRITE));
    map.data[511] = 9;
    gst_memory_unmap(mem.get(), &map);
    auto t = gst::tensor_from_memory(mem.get());
    ASSERT_TRUE(t);
    auto tm = t->map_read();
    ASSERT_TRUE(tm);
    EXPECT_EQ(tm->cdata()[511], 9);
}

TEST(GstAllocator, PrefixAndPaddingAreHonoured)
{
    AllocatorPtr a(gst_edge_tensor_allocator_get());
    GstAllocationParams params;
    gst_allocation_params_init(&params);
    params.prefix = 64;
    params.padding = 32;
    params.align = 63;
    MemoryPtr mem(gst_allocator_alloc(a.get(), 1000, &params));
    ASSERT_TRUE(mem);
    gsize offset = 0, maxsize = 0;
    EXPECT_EQ(gst_memory_get_sizes(mem.get(), &offset, &maxsize), 1000u);
    EXPECT_EQ(offset, 64u);
    EXPECT_GE(maxsize, 1096u);
    GstMapInfo map;
    ASSERT_TRUE(gst_memory_map(mem.get(), &map, GST_MAP_READ));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(map.data) % 64, 0u);
    gst_memory_unmap(mem.get(), &map);
}

TEST(GstAllocator, AlignmentBeyondAPageIsRefused_Negative)
{
    AllocatorPtr a(gst_edge_tensor_allocator_get());
    GstAllocationParams params;
    gst_allocation_params_init(&params);
    params.align = 8191;
    MemoryPtr mem(gst_allocator_alloc(a.get(), 100, &params));
    EXPECT_FALSE(mem);
}

TEST(GstAllocator, WrapTensorRefusesAForeignAllocator_Negative)
{
    auto t = TensorDyn::create(DType::U8, {256}, TensorMemory::Shm);
    ASSERT_TRUE(t);
    GstAllocator* sys = gst_allocator_find(GST_ALLOCATOR_SYSMEM);
    auto r = gst::wrap_tensor(sys, *t, 256);
    gst_object_unref(sys);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
}

TEST(GstAllocator, WrapTensorRefusesASizeBeyondTheAllocation_Negative)
{
    auto t = TensorDyn::create(DType::U8, {256}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto r = gst::wrap_tensor(nullptr, *t, t->capacity_bytes() + 1);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InsufficientCapacity);
}

TEST(GstAllocator, NonEdgeTensorMemoryIsNotOneOfOurs_Negative)
{
    MemoryPtr mem(gst_allocator_alloc(nullptr, 100, nullptr));
    ASSERT_TRUE(mem);
    EXPECT_FALSE(gst_is_edge_tensor_memory(mem.get()));
    EXPECT_EQ(gst_edge_tensor_memory_get_identity(mem.get()), 0u);
    EXPECT_EQ(gst_edge_tensor_memory_get_kind(mem.get()), GST_EDGE_TENSOR_MEMORY_AUTO);
    EXPECT_FALSE(gst::tensor_from_memory(mem.get()));
}

TEST(GstAllocator, ManyAllocationsLeakNoFd)
{
    AllocatorPtr a(gst_edge_tensor_allocator_get());
    const auto before = open_fds();
    for (int i = 0; i < 64; ++i) {
        MemoryPtr mem(gst_allocator_alloc(a.get(), 4096 + size_t(i), nullptr));
        ASSERT_TRUE(mem);
        GstMapInfo map;
        ASSERT_TRUE(gst_memory_map(mem.get(), &map, GST_MAP_WRITE));
        map.data[0] = 1;
        gst_memory_unmap(mem.get(), &map);
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

} // namespace
} // namespace edgetensor::test
