// SPDX-License-Identifier: MIT
//
// GstMemory of AHardwareBuffer-backed tensors (memory type "ahardwarebuffer"), with the shell
// built against the simulated NDK as the Dma backend: allocation through the edgetensor
// allocator, lock/unlock per map, shares, identity of re-imported buffers, compression as
// recorded, and reference balance when the memories go.

#include "sim_fixture.hpp"

#include "internal.hpp"

#include <edgetensor/android.hpp>
#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>

#include <cstring>

using namespace edgetensor;

namespace
{

class AhbGst : public SimNdkTest
{
protected:
    void SetUp() override
    {
        SimNdkTest::SetUp();
        allocator_ = gst_edge_tensor_allocator_new(GST_EDGE_TENSOR_MEMORY_AUTO);
        ASSERT_NE(allocator_, nullptr);
    }
    void TearDown() override
    {
        gst_object_unref(allocator_);
        SimNdkTest::TearDown();
    }
    GstAllocator* allocator_ = nullptr;
};

TEST_F(AhbGst, AllocatorHandsOutAhardwarebufferMemory)
{
    GstMemory* mem = gst_allocator_alloc(allocator_, 10000, nullptr);
    ASSERT_NE(mem, nullptr);
    EXPECT_STREQ(mem->allocator->mem_type, GST_EDGE_TENSOR_MEMORY_TYPE_AHB);
    EXPECT_STREQ(mem->allocator->mem_type, "ahardwarebuffer");
    EXPECT_FALSE(gst_is_dmabuf_memory(mem)) << "no fd: never claims to be a dmabuf";
    EXPECT_FALSE(gst_is_fd_memory(mem));
    EXPECT_TRUE(gst_is_edge_tensor_memory(mem));
    EXPECT_EQ(gst_edge_tensor_memory_get_kind(mem), GST_EDGE_TENSOR_MEMORY_DMA);
    EXPECT_EQ(gst_edge_tensor_memory_get_fd(mem), -1);
    EXPECT_NE(gst_edge_tensor_memory_get_identity(mem), 0u);
    auto* b = static_cast<AHardwareBuffer*>(gst_edge_tensor_memory_get_hardware_buffer(mem));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(describe(b).format, uint32_t(AHARDWAREBUFFER_FORMAT_BLOB));
    EXPECT_EQ(gst_memory_get_sizes(mem, nullptr, nullptr), 10000u);

    GstMapInfo info;
    ASSERT_TRUE(gst_memory_map(mem, &info, GST_MAP_WRITE));
    EXPECT_EQ(sim_ndk_locked(b), 1);
    std::memset(info.data, 0x3c, info.size);
    gst_memory_unmap(mem, &info);
    EXPECT_EQ(sim_ndk_locked(b), 0);
    ASSERT_TRUE(gst_memory_map(mem, &info, GST_MAP_READ));
    EXPECT_EQ(info.data[9999], 0x3c);
    gst_memory_unmap(mem, &info);
    EXPECT_EQ(stats().locks, 2u);
    gst_memory_unref(mem);
    EXPECT_EQ(stats().live, 0u);
}

TEST_F(AhbGst, SharesMapTheirWindowAndKeepTheBuffer)
{
    GstMemory* mem = gst_allocator_alloc(allocator_, 4096, nullptr);
    ASSERT_NE(mem, nullptr);
    GstMapInfo info;
    ASSERT_TRUE(gst_memory_map(mem, &info, GST_MAP_WRITE));
    for (gsize i = 0; i < info.size; ++i)
        info.data[i] = guint8(i);
    gst_memory_unmap(mem, &info);
    GstMemory* sub = gst_memory_share(mem, 100, 50);
    ASSERT_NE(sub, nullptr);
    gst_memory_unref(mem); // the share keeps it alive
    EXPECT_EQ(stats().live, 1u);
    EXPECT_EQ(gst_edge_tensor_memory_get_hardware_buffer(sub) != nullptr, true);
    ASSERT_TRUE(gst_memory_map(sub, &info, GST_MAP_READ));
    EXPECT_EQ(info.size, 50u);
    EXPECT_EQ(info.data[0], 100);
    gst_memory_unmap(sub, &info);
    gst_memory_unref(sub);
    EXPECT_EQ(stats().live, 0u);
}

TEST_F(AhbGst, BufferWithMemoryOutlivesTheAllocator)
{
    GstBuffer* buf = gst_buffer_new();
    gst_buffer_append_memory(buf, gst_allocator_alloc(allocator_, 256, nullptr));
    gst_object_unref(allocator_);
    allocator_ = gst_edge_tensor_allocator_new(GST_EDGE_TENSOR_MEMORY_AUTO);
    GstMapInfo info;
    ASSERT_TRUE(gst_buffer_map(buf, &info, GST_MAP_READWRITE));
    info.data[0] = 1;
    gst_buffer_unmap(buf, &info);
    gst_buffer_unref(buf);
}

TEST_F(AhbGst, ImportedBuffersKeepOneIdentity)
{
    AHardwareBuffer* foreign = sim_ndk_foreign_buffer(8192, 1, AHARDWAREBUFFER_FORMAT_BLOB,
                                                      AHARDWAREBUFFER_USAGE_GPU_DATA_BUFFER |
                                                          AHARDWAREBUFFER_USAGE_CPU_READ_OFTEN |
                                                          AHARDWAREBUFFER_USAGE_CPU_WRITE_RARELY);
    ASSERT_NE(foreign, nullptr);
    GstMemory* a = gst_edge_tensor_memory_import_hardware_buffer(allocator_, foreign);
    GstMemory* b = gst_edge_tensor_memory_import_hardware_buffer(nullptr, foreign);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(gst_edge_tensor_memory_get_identity(a), gst_edge_tensor_memory_get_identity(b));
    EXPECT_EQ(gst_edge_tensor_memory_get_hardware_buffer(a), foreign);
    EXPECT_EQ(gst_memory_get_sizes(a, nullptr, nullptr), 8192u);
    EXPECT_EQ(sim_ndk_refcount(foreign), 3);
    GstMapInfo info;
    ASSERT_TRUE(gst_memory_map(a, &info, GST_MAP_WRITE));
    EXPECT_EQ(sim_ndk_last_lock_usage(foreign), uint64_t(AHARDWAREBUFFER_USAGE_CPU_WRITE_RARELY));
    gst_memory_unmap(a, &info);
    const guint64 id = gst_edge_tensor_memory_get_identity(a);
    gst_memory_unref(a);
    gst_memory_unref(b);
    EXPECT_EQ(sim_ndk_refcount(foreign), 1);
    // Every memory of it gone: a new import is a new identity.
    GstMemory* c = gst_edge_tensor_memory_import_hardware_buffer(nullptr, foreign);
    ASSERT_NE(c, nullptr);
    EXPECT_NE(gst_edge_tensor_memory_get_identity(c), id);
    gst_memory_unref(c);
    AHardwareBuffer_release(foreign);
}

TEST_F(AhbGst, ImportRefusesWhatItCannotSpanNegative)
{
    AHardwareBuffer* layered = nullptr;
    AHardwareBuffer_Desc d{};
    d.width = 64;
    d.height = 64;
    d.layers = 1;
    d.format = AHARDWAREBUFFER_FORMAT_R5G6B5_UNORM;
    d.usage = AHARDWAREBUFFER_USAGE_GPU_SAMPLED_IMAGE | AHARDWAREBUFFER_USAGE_CPU_READ_OFTEN;
    ASSERT_EQ(AHardwareBuffer_allocate(&d, &layered), 0);
    EXPECT_EQ(gst_edge_tensor_memory_import_hardware_buffer(nullptr, layered), nullptr);
    EXPECT_EQ(sim_ndk_refcount(layered), 1);
    AHardwareBuffer_release(layered);
}

TEST_F(AhbGst, CompressionIsRecordedAsAllocated)
{
    sim_ndk_set_property("ro.hardware.egl", "mali");
    auto t = TensorDyn::image(128, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None,
                              Compression::any());
    ASSERT_TRUE(t) << t.error().message();
    auto mem = gst::wrap_tensor(allocator_, *t, t->capacity_bytes());
    ASSERT_TRUE(mem) << mem.error().message();
    EXPECT_STREQ((*mem)->allocator->mem_type, "ahardwarebuffer");
    EXPECT_STREQ(gst_edge_tensor_memory_get_compression(*mem), "afbc");
    EXPECT_EQ(gst_edge_tensor_memory_get_identity(*mem), t->buffer_identity().id());
    // Hardware-only: the map is refused, loudly, and nothing is left locked.
    GstMapInfo info;
    EXPECT_FALSE(gst_memory_map(*mem, &info, GST_MAP_READ));
    EXPECT_NE(gst::take_map_failure().find("CpuAccess::None"), std::string::npos);
    gst_memory_unref(*mem);

    auto linear = TensorDyn::image(128, 64, PixelFormat::Rgba, DType::U8, CpuAccess::Read);
    ASSERT_TRUE(linear);
    auto lmem = gst::wrap_tensor(allocator_, *linear, linear->capacity_bytes());
    ASSERT_TRUE(lmem);
    EXPECT_EQ(gst_edge_tensor_memory_get_compression(*lmem), nullptr);
    gst_memory_unref(*lmem);
}

} // namespace
