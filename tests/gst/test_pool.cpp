// SPDX-License-Identifier: MIT
//
// GstEdgeTensorBufferPool: strides, video meta, set_config corrections, min/max, blocking and
// flushing, recycling (identities), lifetimes and fd accounting.

#include "fd_count.hpp"
#include "gst_test_util.hpp"
#include "require.hpp"

#include <gst/allocators/allocators.h>

#include <chrono>
#include <deque>
#include <future>
#include <set>
#include <thread>
#include <tuple>

namespace edgetensor::test
{
namespace
{

using namespace std::chrono_literals;

std::string video_caps(const char* format, int width, int height = 120)
{
    return "video/x-raw,format=" + std::string(format) + ",width=" + std::to_string(width) +
           ",height=" + std::to_string(height) + ",framerate=30/1";
}

// Acquires n buffers, then releases them in the order acquired; returns their identities.
std::vector<guint64> take_all_then_release_in_order(GstBufferPool* pool, size_t n)
{
    std::vector<BufferPtr> held(n);
    std::vector<guint64> ids;
    for (auto& b : held) {
        b = acquire(pool);
        ids.push_back(identity_of(b.get()));
    }
    for (auto& b : held)
        b.reset();
    return ids;
}

void expect_video_meta_matches(GstBuffer* buf, const char* what)
{
    GstVideoMeta* vmeta = gst_buffer_get_video_meta(buf);
    GstEdgeTensorMeta* emeta = gst_buffer_get_edge_tensor_meta(buf);
    ASSERT_TRUE(vmeta) << what;
    ASSERT_TRUE(emeta) << what;
    ASSERT_EQ(vmeta->n_planes, emeta->n_planes) << what;
    for (guint p = 0; p < vmeta->n_planes; ++p) {
        EXPECT_EQ(vmeta->stride[p], emeta->plane_strides[p]) << what << " plane " << p;
        EXPECT_EQ(vmeta->offset[p], emeta->plane_offsets[p]) << what << " plane " << p;
    }
    // The tensor itself has the same geometry (images) or holds every plane (flat tensors).
    auto t = gst::tensor_from_buffer(buf);
    ASSERT_TRUE(t) << what;
    if (t->is_image()) {
        for (size_t p = 0; p < t->plane_count(); ++p) {
            auto pl = t->plane_layout(p);
            ASSERT_TRUE(pl) << what;
            EXPECT_EQ(pl->stride, size_t(vmeta->stride[p])) << what << " plane " << p;
            EXPECT_EQ(pl->offset, vmeta->offset[p]) << what << " plane " << p;
        }
    }
    EXPECT_GE(t->capacity_bytes(), gst_buffer_get_size(buf)) << what;
}

// ---- strides -------------------------------------------------------------------------------

class PoolStrides : public testing::TestWithParam<std::tuple<const char*, int>>
{
};

TEST_P(PoolStrides, AlignedPoolsGiveEveryPlaneA64ByteStride)
{
    const auto [format, width] = GetParam();
    const std::string caps = video_caps(format, width);
    PoolOptions o;
    o.video_meta = true;
    o.alignment = true;
    PoolPtr pool = make_active_pool(caps, o);
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    ASSERT_TRUE(buf);
    GstVideoMeta* vmeta = gst_buffer_get_video_meta(buf.get());
    ASSERT_TRUE(vmeta);
    GstVideoInfo info;
    CapsPtr c = caps_from(caps);
    ASSERT_TRUE(gst_video_info_from_caps(&info, c.get()));
    for (guint p = 0; p < vmeta->n_planes; ++p) {
        EXPECT_EQ(vmeta->stride[p] % 64, 0)
            << caps << " plane " << p << " stride " << vmeta->stride[p];
        EXPECT_GE(vmeta->stride[p], info.stride[p]) << caps << " plane " << p;
        EXPECT_LT(vmeta->stride[p], info.stride[p] + 64) << "minimal alignment, plane " << p;
    }
    GstEdgeTensorMeta* emeta = gst_buffer_get_edge_tensor_meta(buf.get());
    ASSERT_TRUE(emeta);
    EXPECT_TRUE(emeta->flags & GST_EDGE_TENSOR_META_FLAG_STRIDES_ALIGNED);
    expect_video_meta_matches(buf.get(), caps.c_str());

    // The frame really is addressable through the meta: map it and touch the last byte.
    GstVideoFrame frame;
    ASSERT_TRUE(gst_video_frame_map(&frame, &info, buf.get(), GST_MAP_WRITE));
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&frame); ++p)
        EXPECT_EQ(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p), vmeta->stride[p]);
    gst_video_frame_unmap(&frame);
}

TEST_P(PoolStrides, DmaPoolsGiveEveryPlaneA64ByteStride)
{
    ET_REQUIRE_DMA_OR_SKIP();
    const auto [format, width] = GetParam();
    const std::string caps = video_caps(format, width);
    PoolOptions o;
    o.video_meta = true;
    o.kind = GST_EDGE_TENSOR_MEMORY_DMA;
    PoolPtr pool = make_active_pool(caps, o);
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    ASSERT_TRUE(buf);
    EXPECT_TRUE(gst_is_dmabuf_memory(gst_buffer_peek_memory(buf.get(), 0)));
    GstVideoMeta* vmeta = gst_buffer_get_video_meta(buf.get());
    ASSERT_TRUE(vmeta);
    for (guint p = 0; p < vmeta->n_planes; ++p)
        EXPECT_EQ(vmeta->stride[p] % 64, 0) << caps << " plane " << p;
    expect_video_meta_matches(buf.get(), caps.c_str());
    auto t = gst::tensor_from_buffer(buf.get());
    ASSERT_TRUE(t);
    EXPECT_EQ(t->memory(), TensorMemory::Dma);
}

TEST_P(PoolStrides, HostPoolsWithoutOptionsUseGStreamersDefaultLayout)
{
    if (gst::resolve_memory_kind(GST_EDGE_TENSOR_MEMORY_AUTO) == GST_EDGE_TENSOR_MEMORY_DMA)
        GTEST_SKIP() << "this host has DMA-BUF; DMA pools align every plane";
    const auto [format, width] = GetParam();
    const std::string caps = video_caps(format, width);
    PoolPtr pool = make_active_pool(caps);
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    ASSERT_TRUE(buf);
    EXPECT_FALSE(gst_buffer_get_video_meta(buf.get()));
    GstVideoInfo info;
    CapsPtr c = caps_from(caps);
    ASSERT_TRUE(gst_video_info_from_caps(&info, c.get()));
    GstEdgeTensorMeta* emeta = gst_buffer_get_edge_tensor_meta(buf.get());
    ASSERT_TRUE(emeta);
    ASSERT_EQ(emeta->n_planes, GST_VIDEO_INFO_N_PLANES(&info));
    for (guint p = 0; p < emeta->n_planes; ++p) {
        EXPECT_EQ(emeta->plane_strides[p], info.stride[p]) << caps << " plane " << p;
        EXPECT_EQ(emeta->plane_offsets[p], info.offset[p]) << caps << " plane " << p;
    }
    EXPECT_EQ(gst_buffer_get_size(buf.get()), info.size);
}

INSTANTIATE_TEST_SUITE_P(Widths, PoolStrides,
                         testing::Combine(testing::Values("NV12", "RGB", "RGBA", "I420"),
                                          testing::Values(321, 322, 1366)),
                         [](const auto& p) {
                             return std::string(std::get<0>(p.param)) + "_" +
                                    std::to_string(std::get<1>(p.param));
                         });

TEST(GstPool, ImageFormatsAreEdgeTensorImagesWithThePoolsGeometry)
{
    PoolOptions o;
    o.video_meta = true;
    o.alignment = true;
    PoolPtr pool = make_active_pool(video_caps("NV12", 1920, 1080), o);
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    auto t = gst::tensor_from_buffer(buf.get());
    ASSERT_TRUE(t);
    if (t->memory() == TensorMemory::Mem)
        GTEST_SKIP() << "heap pools hold flat tensors";
    ASSERT_TRUE(t->is_image());
    EXPECT_EQ(t->format(), PixelFormat::Nv12);
    EXPECT_EQ(t->width(), 1920u);
    EXPECT_EQ(t->height(), 1080u);
    EXPECT_EQ(t->plane_count(), 2u);
    auto chroma = t->plane_layout(1);
    ASSERT_TRUE(chroma);
    EXPECT_EQ(chroma->offset, 1920u * 1080u);
    EXPECT_EQ(t->cpu_access(), CpuAccess::ReadWrite);
}

// ---- set_config ----------------------------------------------------------------------------

struct ConfigFixture : testing::Test {
    PoolPtr pool{gst_edge_tensor_buffer_pool_new()};
    CapsPtr caps = caps_from(video_caps("NV12", 640, 480));
    GstStructure* config() { return gst_buffer_pool_get_config(pool.get()); }
};

TEST_F(ConfigFixture, AValidConfigIsAcceptedAsIs)
{
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, caps.get(), 0, 2, 4);
    EXPECT_TRUE(gst_buffer_pool_set_config(pool.get(), c));
    GstStructure* back = config();
    guint size = 0, min = 0, max = 0;
    ASSERT_TRUE(gst_buffer_pool_config_get_params(back, nullptr, &size, &min, &max));
    EXPECT_GE(size, 640u * 480u * 3 / 2);
    EXPECT_EQ(min, 2u);
    EXPECT_EQ(max, 4u);
    GstAllocator* alloc = nullptr;
    gst_buffer_pool_config_get_allocator(back, &alloc, nullptr);
    EXPECT_TRUE(alloc && GST_IS_EDGE_TENSOR_ALLOCATOR(alloc));
    gst_structure_free(back);
    EXPECT_NE(gst_edge_tensor_buffer_pool_get_memory_kind(pool.get()), GST_EDGE_TENSOR_MEMORY_AUTO);
}

TEST_F(ConfigFixture, TooSmallASizeIsCorrected)
{
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, caps.get(), 1000, 2, 0);
    EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    c = config();
    guint size = 0;
    ASSERT_TRUE(gst_buffer_pool_config_get_params(c, nullptr, &size, nullptr, nullptr));
    EXPECT_EQ(size, 640u * 480u * 3 / 2);
    EXPECT_TRUE(gst_buffer_pool_config_validate_params(c, caps.get(), 1000, 2, 0));
    EXPECT_TRUE(gst_buffer_pool_set_config(pool.get(), c)) << "a corrected config is accepted";
}

TEST_F(ConfigFixture, MaxBelowMinIsCorrected)
{
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, caps.get(), 0, 5, 0);
    // gst_buffer_pool_config_set_params() refuses max < min itself; a config edited as a
    // structure can still carry it.
    gst_structure_set(c, "max-buffers", G_TYPE_UINT, 3u, nullptr);
    EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    c = config();
    guint min = 0, max = 0;
    ASSERT_TRUE(gst_buffer_pool_config_get_params(c, nullptr, nullptr, &min, &max));
    EXPECT_EQ(min, 5u);
    EXPECT_EQ(max, 5u);
    EXPECT_TRUE(gst_buffer_pool_set_config(pool.get(), c));
}

TEST_F(ConfigFixture, AForeignAllocatorIsReplaced)
{
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, caps.get(), 0, 2, 0);
    GstAllocator* sys = gst_allocator_find(GST_ALLOCATOR_SYSMEM);
    gst_buffer_pool_config_set_allocator(c, sys, nullptr);
    gst_object_unref(sys);
    EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    c = config();
    GstAllocator* alloc = nullptr;
    gst_buffer_pool_config_get_allocator(c, &alloc, nullptr);
    EXPECT_TRUE(alloc && GST_IS_EDGE_TENSOR_ALLOCATOR(alloc));
    EXPECT_TRUE(gst_buffer_pool_set_config(pool.get(), c));
}

TEST_F(ConfigFixture, PrefixAndPaddingAreCorrectedAway)
{
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, caps.get(), 0, 2, 0);
    GstAllocationParams params;
    gst_allocation_params_init(&params);
    params.prefix = 128;
    gst_buffer_pool_config_set_allocator(c, nullptr, &params);
    EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    c = config();
    gst_buffer_pool_config_get_allocator(c, nullptr, &params);
    EXPECT_EQ(params.prefix, 0u);
    EXPECT_TRUE(gst_buffer_pool_set_config(pool.get(), c));
}

TEST_F(ConfigFixture, AnInvalidStrideMaskIsRoundedUp)
{
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, caps.get(), 0, 2, 0);
    gst_buffer_pool_config_add_option(c, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_config_add_option(c, GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
    GstVideoAlignment a;
    gst_video_alignment_reset(&a);
    a.stride_align[0] = 60; // not 2^n - 1
    gst_buffer_pool_config_set_video_alignment(c, &a);
    EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    c = config();
    ASSERT_TRUE(gst_buffer_pool_config_get_video_alignment(c, &a));
    EXPECT_EQ(a.stride_align[0], 63u);
    EXPECT_TRUE(gst_buffer_pool_set_config(pool.get(), c));
}

TEST_F(ConfigFixture, DmaOnAHostWithoutDmaIsCorrectedToShm)
{
    if (is_dma_available())
        GTEST_SKIP() << "this host has DMA-BUF";
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, caps.get(), 0, 2, 0);
    gst_edge_tensor_buffer_pool_config_set_memory_kind(c, GST_EDGE_TENSOR_MEMORY_DMA);
    EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    c = config();
    EXPECT_EQ(gst_edge_tensor_buffer_pool_config_get_memory_kind(c), GST_EDGE_TENSOR_MEMORY_SHM);
    EXPECT_TRUE(gst_buffer_pool_set_config(pool.get(), c));
    EXPECT_EQ(gst_edge_tensor_buffer_pool_get_memory_kind(pool.get()), GST_EDGE_TENSOR_MEMORY_SHM);
}

TEST_F(ConfigFixture, DmaLayoutWithoutVideoMetaGetsTheOptionAdded)
{
    ET_REQUIRE_DMA_OR_SKIP();
    CapsPtr odd = caps_from(video_caps("RGB", 321));
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, odd.get(), 0, 2, 0);
    gst_edge_tensor_buffer_pool_config_set_memory_kind(c, GST_EDGE_TENSOR_MEMORY_DMA);
    EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    c = config();
    EXPECT_TRUE(gst_buffer_pool_config_has_option(c, GST_BUFFER_POOL_OPTION_VIDEO_META));
    EXPECT_TRUE(gst_buffer_pool_set_config(pool.get(), c));
}

TEST_F(ConfigFixture, ConfigHelpersRoundTrip)
{
    GstStructure* c = config();
    EXPECT_EQ(gst_edge_tensor_buffer_pool_config_get_memory_kind(c), GST_EDGE_TENSOR_MEMORY_AUTO);
    EXPECT_EQ(gst_edge_tensor_buffer_pool_config_get_cpu_access(c),
              GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE);
    gst_edge_tensor_buffer_pool_config_set_memory_kind(c, GST_EDGE_TENSOR_MEMORY_SYSTEM);
    gst_edge_tensor_buffer_pool_config_set_cpu_access(c, GST_EDGE_TENSOR_CPU_ACCESS_READ);
    EXPECT_EQ(gst_edge_tensor_buffer_pool_config_get_memory_kind(c), GST_EDGE_TENSOR_MEMORY_SYSTEM);
    EXPECT_EQ(gst_edge_tensor_buffer_pool_config_get_cpu_access(c),
              GST_EDGE_TENSOR_CPU_ACCESS_READ);
    gst_structure_free(c);
}

TEST_F(ConfigFixture, CpuAccessReachesTheTensor)
{
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, caps.get(), 0, 1, 0);
    gst_edge_tensor_buffer_pool_config_set_cpu_access(c, GST_EDGE_TENSOR_CPU_ACCESS_WRITE);
    ASSERT_TRUE(gst_buffer_pool_set_config(pool.get(), c));
    ASSERT_TRUE(gst_buffer_pool_set_active(pool.get(), TRUE));
    BufferPtr buf = acquire(pool.get());
    auto t = gst::tensor_from_buffer(buf.get());
    ASSERT_TRUE(t);
    if (!t->is_image())
        GTEST_SKIP() << "heap pools hold flat tensors";
    EXPECT_EQ(t->cpu_access(), CpuAccess::Write);
    buf.reset();
    gst_buffer_pool_set_active(pool.get(), FALSE);
}

TEST_F(ConfigFixture, MissingCapsAreRefused_Negative)
{
    GstStructure* c = config();
    gst_buffer_pool_config_set_params(c, nullptr, 1000, 2, 0);
    EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    EXPECT_FALSE(gst_buffer_pool_set_active(pool.get(), TRUE));
}

TEST_F(ConfigFixture, UnsupportedCapsAreRefused_Negative)
{
    for (const char* bad : {
             "audio/x-raw,format=S16LE,rate=48000,channels=2",
             "other/tensors,num_tensors=2,format=static,types=uint8,dimensions=(string)3:4:4:1",
             "other/tensors,num_tensors=1,format=flexible,types=uint8,dimensions=(string)3:4:4:1",
             "other/tensors,num_tensors=1,format=static,types=complex64,dimensions=(string)3:4",
             "other/tensors,num_tensors=1,format=static,types=uint8,dimensions=(string)3:0:4",
             "other/tensors,num_tensors=1,format=static,types=uint8,dimensions=(string)3:x:4",
             "other/"
             "tensors,num_tensors=1,format=static,types=uint8,dimensions=(string)1:2:3:4:5:6:7:8:9",
             "other/tensors,num_tensors=1,format=static,types=uint8",
         }) {
        CapsPtr bc = caps_from(bad);
        ASSERT_TRUE(bc) << bad;
        GstStructure* c = config();
        gst_buffer_pool_config_set_params(c, bc.get(), 0, 2, 0);
        EXPECT_FALSE(gst_buffer_pool_set_config(pool.get(), c)) << bad;
        EXPECT_FALSE(gst_buffer_pool_set_active(pool.get(), TRUE)) << bad;
    }
}

// ---- other/tensors -------------------------------------------------------------------------

TEST(GstPool, OtherTensorsCapsGiveTensorsOfThatShapeAndType)
{
    PoolPtr pool = make_active_pool(
        "other/tensors,num_tensors=1,format=static,types=float32,dimensions=(string)3:640:480:1,"
        "framerate=30/1");
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    ASSERT_TRUE(buf);
    EXPECT_EQ(gst_buffer_get_size(buf.get()), 640u * 480u * 3u * 4u);
    auto t = gst::tensor_from_buffer(buf.get());
    ASSERT_TRUE(t);
    EXPECT_EQ(t->dtype(), DType::F32);
    EXPECT_EQ(t->shape(), (Shape{1, 480, 640, 3}));
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(buf.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->desc.dtype, EDGETENSOR_DTYPE_F32);
    ASSERT_EQ(m->desc.ndim, 4u);
    EXPECT_EQ(m->desc.shape[0], 1u);
    EXPECT_EQ(m->desc.shape[1], 480u);
    EXPECT_EQ(m->desc.shape[2], 640u);
    EXPECT_EQ(m->desc.shape[3], 3u);
    EXPECT_EQ(m->desc.strides[3], 4);
    EXPECT_EQ(m->desc.strides[2], 12);
    EXPECT_EQ(m->desc.strides[1], 640 * 12);
    EXPECT_EQ(m->desc.format, EDGETENSOR_FORMAT_NONE);
    EXPECT_EQ(m->video_format, GST_VIDEO_FORMAT_UNKNOWN);
    EXPECT_FALSE(gst_buffer_get_video_meta(buf.get()));
}

// ---- min/max, blocking, flushing -----------------------------------------------------------

TEST(GstPool, MinBuffersArePreallocatedAndMaxIsNeverExceeded)
{
    PoolOptions o;
    o.min = 2;
    o.max = 3;
    PoolPtr pool = make_active_pool(video_caps("RGBA", 64, 64), o);
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> held;
    for (int i = 0; i < 3; ++i)
        held.push_back(acquire(pool.get()));
    GstBufferPoolAcquireParams params{};
    params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
    GstBuffer* extra = nullptr;
    EXPECT_EQ(gst_buffer_pool_acquire_buffer(pool.get(), &extra, &params), GST_FLOW_EOS);
    EXPECT_EQ(extra, nullptr);
    std::set<guint64> ids;
    for (auto& b : held)
        ids.insert(identity_of(b.get()));
    EXPECT_EQ(ids.size(), 3u);
}

struct BlockingFixture : testing::Test {
    PoolPtr pool;
    std::vector<BufferPtr> held;
    void SetUp() override
    {
        PoolOptions o;
        o.min = 2;
        o.max = 2;
        pool = make_active_pool(video_caps("NV12", 64, 64), o);
        ASSERT_TRUE(pool);
        held.push_back(acquire(pool.get()));
        held.push_back(acquire(pool.get()));
    }
    std::future<GstFlowReturn> acquire_async()
    {
        return std::async(std::launch::async, [p = pool.get()] {
            GstBuffer* b = nullptr;
            const GstFlowReturn r = gst_buffer_pool_acquire_buffer(p, &b, nullptr);
            if (b)
                gst_buffer_unref(b);
            return r;
        });
    }
};

TEST_F(BlockingFixture, ExhaustedPoolBlocksUntilABufferComesBack)
{
    auto f = acquire_async();
    EXPECT_EQ(f.wait_for(50ms), std::future_status::timeout) << "acquire must block";
    held.pop_back();
    ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
    EXPECT_EQ(f.get(), GST_FLOW_OK);
}

TEST_F(BlockingFixture, FlushingUnblocksAWaiterWithin100ms)
{
    auto f = acquire_async();
    ASSERT_EQ(f.wait_for(50ms), std::future_status::timeout);
    const auto t0 = std::chrono::steady_clock::now();
    gst_buffer_pool_set_flushing(pool.get(), TRUE);
    ASSERT_EQ(f.wait_for(100ms), std::future_status::ready) << "still blocked after flushing";
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms);
    EXPECT_EQ(f.get(), GST_FLOW_FLUSHING);
    gst_buffer_pool_set_flushing(pool.get(), FALSE);
}

TEST_F(BlockingFixture, DeactivationUnblocksAWaiterWithin100ms)
{
    auto f = acquire_async();
    ASSERT_EQ(f.wait_for(50ms), std::future_status::timeout);
    gst_buffer_pool_set_active(pool.get(), FALSE);
    ASSERT_EQ(f.wait_for(100ms), std::future_status::ready) << "still blocked after deactivation";
    EXPECT_EQ(f.get(), GST_FLOW_FLUSHING);
}

// ---- recycling -----------------------------------------------------------------------------

TEST(GstPool, TenThousandCyclesKeepTheIdentitySetEqualToThePoolSize)
{
    PoolOptions o;
    o.min = 4;
    o.max = 4;
    PoolPtr pool = make_active_pool(video_caps("NV12", 320, 240), o);
    ASSERT_TRUE(pool);
    std::set<guint64> ids;
    std::set<guint64> inodes;
    // Three frames in flight, as a camera keeps buffers queued: every acquire needs the fourth.
    std::deque<BufferPtr> in_flight;
    for (int i = 0; i < 10000; ++i) {
        GstBuffer* b = nullptr;
        ASSERT_EQ(gst_buffer_pool_acquire_buffer(pool.get(), &b, nullptr), GST_FLOW_OK);
        GstMemory* mem = gst_buffer_peek_memory(b, 0);
        ids.insert(gst_edge_tensor_memory_get_identity(mem));
        guint64 ino = 0;
        if (gst_edge_tensor_memory_get_inode(mem, nullptr, &ino))
            inodes.insert(ino);
        in_flight.emplace_back(b);
        if (in_flight.size() > 3)
            in_flight.pop_front();
    }
    EXPECT_EQ(ids.size(), 4u);
    if (!inodes.empty()) {
        EXPECT_EQ(inodes.size(), 4u);
    }
}

TEST(GstPool, TheBufferReleasedLastIsHandedOutFirst)
{
    // GstBufferPool's FIFO would cycle all four here; the newest is the one still in cache.
    PoolOptions o;
    o.min = o.max = 4;
    PoolPtr pool = make_active_pool(video_caps("NV12", 320, 240), o);
    ASSERT_TRUE(pool);
    const std::vector<guint64> ids = take_all_then_release_in_order(pool.get(), 4);
    for (int round = 0; round < 100; ++round)
        EXPECT_EQ(identity_of(acquire(pool.get()).get()), ids[3]) << round;
    // Holding that one, the next newest comes out.
    BufferPtr newest = acquire(pool.get());
    EXPECT_EQ(identity_of(acquire(pool.get()).get()), ids[2]);
}

// An active pool of three NV12 buffers configured with EDGETENSOR_POOL_ORDER=`order` (the
// variable is read when the pool is configured, and unset again here).
PoolPtr pool_with_order(const char* order)
{
    ::setenv("EDGETENSOR_POOL_ORDER", order, 1);
    PoolOptions o;
    o.min = o.max = 3;
    PoolPtr pool = make_active_pool(video_caps("NV12", 320, 240), o);
    ::unsetenv("EDGETENSOR_POOL_ORDER");
    return pool;
}

TEST(GstPool, PoolOrderFifoRestoresGstBufferPoolsOrder)
{
    // EDGETENSOR_POOL_ORDER=fifo: the oldest free comes first.
    PoolPtr pool = pool_with_order("fifo");
    ASSERT_TRUE(pool);
    const std::vector<guint64> ids = take_all_then_release_in_order(pool.get(), 3);
    for (int round = 0; round < 9; ++round)
        EXPECT_EQ(identity_of(acquire(pool.get()).get()), ids[size_t(round) % 3]) << round;
}

TEST(GstPool, AnUnknownPoolOrderIsWarnedAboutAndIgnored)
{
    WarningCapture warnings;
    PoolPtr pool = pool_with_order("lifo");
    ASSERT_TRUE(pool);
    EXPECT_NE(warnings.text().find("EDGETENSOR_POOL_ORDER=lifo is not an order"), std::string::npos)
        << warnings.text();
    const std::vector<guint64> ids = take_all_then_release_in_order(pool.get(), 3);
    EXPECT_EQ(identity_of(acquire(pool.get()).get()), ids[2]) << "newest first, as by default";
}

TEST(GstPool, ADiscardedBufferStillRecyclesItsTensor)
{
    PoolOptions o;
    o.min = 2;
    o.max = 2;
    PoolPtr pool = make_active_pool(video_caps("RGB", 32, 32), o);
    ASSERT_TRUE(pool);
    std::set<guint64> first;
    {
        BufferPtr a = acquire(pool.get()), b = acquire(pool.get());
        first.insert(identity_of(a.get()));
        first.insert(identity_of(b.get()));
        // Replacing the memory tags the buffer: GstBufferPool discards it on release.
        gst_buffer_replace_all_memory(a.get(), gst_allocator_alloc(nullptr, 32 * 32 * 3, nullptr));
    }
    for (int i = 0; i < 10; ++i) {
        BufferPtr a = acquire(pool.get()), b = acquire(pool.get());
        for (GstBuffer* x : {a.get(), b.get()})
            EXPECT_TRUE(first.count(identity_of(x))) << "a new tensor appeared in round " << i;
    }
}

// ---- lifetimes -----------------------------------------------------------------------------

TEST(GstPool, BufferOutlivesThePool)
{
    const auto before = open_fds();
    {
        BufferPtr buf;
        {
            PoolPtr pool = make_active_pool(video_caps("NV12", 640, 480));
            ASSERT_TRUE(pool);
            buf = acquire(pool.get());
            gst_buffer_pool_set_active(pool.get(), FALSE);
        }
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(buf.get(), &map, GST_MAP_READWRITE));
        map.data[map.size - 1] = 0x42;
        gst_buffer_unmap(buf.get(), &map);
        ASSERT_TRUE(gst_buffer_get_edge_tensor_meta(buf.get()));
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

TEST(GstPool, MemoryOutlivesItsBufferAndThePool)
{
    const auto before = open_fds();
    {
        MemoryPtr mem;
        guint64 id = 0;
        {
            PoolPtr pool = make_active_pool(video_caps("RGBA", 64, 64));
            ASSERT_TRUE(pool);
            BufferPtr buf = acquire(pool.get());
            mem.reset(gst_buffer_get_memory(buf.get(), 0));
            id = gst_edge_tensor_memory_get_identity(mem.get());
        }
        EXPECT_EQ(gst_edge_tensor_memory_get_identity(mem.get()), id);
        GstMapInfo map;
        ASSERT_TRUE(gst_memory_map(mem.get(), &map, GST_MAP_WRITE));
        map.data[0] = 1;
        gst_memory_unmap(mem.get(), &map);
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

TEST(GstPool, PoolLifecyclesLeakNoFd)
{
    const auto before = open_fds();
    for (int round = 0; round < 5; ++round) {
        PoolOptions o;
        o.min = 3;
        o.video_meta = true;
        o.alignment = true;
        PoolPtr pool = make_active_pool(video_caps("I420", 321, 241), o);
        ASSERT_TRUE(pool);
        std::vector<BufferPtr> held;
        for (int i = 0; i < 5; ++i)
            held.push_back(acquire(pool.get()));
        held.clear();
        ASSERT_TRUE(gst_buffer_pool_set_active(pool.get(), FALSE));
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

TEST(GstPool, ReactivationAfterNewCapsWorks)
{
    PoolPtr pool = make_active_pool(video_caps("NV12", 64, 64));
    ASSERT_TRUE(pool);
    {
        BufferPtr b = acquire(pool.get());
    }
    ASSERT_TRUE(gst_buffer_pool_set_active(pool.get(), FALSE));
    CapsPtr caps = caps_from(video_caps("RGB", 100, 50));
    GstStructure* c = gst_buffer_pool_get_config(pool.get());
    gst_buffer_pool_config_set_params(c, caps.get(), 0, 1, 0);
    if (!gst_buffer_pool_set_config(pool.get(), c)) { // DMA pools add VIDEO_META (300-byte rows)
        ASSERT_TRUE(gst_buffer_pool_set_config(pool.get(), gst_buffer_pool_get_config(pool.get())));
    }
    ASSERT_TRUE(gst_buffer_pool_set_active(pool.get(), TRUE));
    BufferPtr b = acquire(pool.get());
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(b.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->video_format, GST_VIDEO_FORMAT_RGB);
    EXPECT_EQ(m->width, 100u);
}

TEST(GstPool, ReconfiguringWithCorrectionsAppliesTheCorrectedConfig)
{
    // GstBufferPool treats re-setting a config equal to the one it keeps as a no-op once a pool
    // was configured, so the corrected config must already be in force when set_config says
    // FALSE.
    PoolPtr pool = make_active_pool(video_caps("NV12", 64, 64));
    ASSERT_TRUE(pool);
    ASSERT_TRUE(gst_buffer_pool_set_active(pool.get(), FALSE));
    CapsPtr caps = caps_from(video_caps("RGB", 100, 50));
    GstStructure* c = gst_buffer_pool_get_config(pool.get());
    gst_buffer_pool_config_set_params(c, caps.get(), 1000, 1, 0);
    ASSERT_FALSE(gst_buffer_pool_set_config(pool.get(), c));
    ASSERT_TRUE(gst_buffer_pool_set_config(pool.get(), gst_buffer_pool_get_config(pool.get())));
    ASSERT_TRUE(gst_buffer_pool_set_active(pool.get(), TRUE));
    BufferPtr b = acquire(pool.get());
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(b.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->video_format, GST_VIDEO_FORMAT_RGB);
    EXPECT_EQ(m->width, 100u);
    EXPECT_GE(gst_buffer_get_size(b.get()), 300u * 50u);
}

} // namespace
} // namespace edgetensor::test
