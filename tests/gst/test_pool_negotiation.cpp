// SPDX-License-Identifier: MIT
//
// The elements' pool negotiation (gst/libs/pool_negotiation.hpp) and acquire errors
// (pool_acquire.hpp), on ALLOCATION queries and a bare bin, without a pipeline: which pool
// ends up first, with which bounds, memory kind and options, and what an element says when a
// pool fails.

#include "gst_test_util.hpp"
#include "pool_acquire.hpp"
#include "pool_negotiation.hpp"

#include <gst/video/gstvideopool.h>

#include <cerrno>
#include <string>

namespace edgetensor::test
{
namespace
{

using gst::NegotiatedPool;
using gst::PoolPolicy;
using gst::PoolProposal;
using QueryPtr = MiniObjectPtr<GstQuery>;
using ElementPtr = GstObjectPtr<GstElement>;

constexpr const char* kNv12 = "video/x-raw,format=NV12,width=64,height=48,framerate=30/1";
// 321 RGB pixels: 963-byte rows, which 64-byte DMA-BUF rows would not keep.
constexpr const char* kOddRgb = "video/x-raw,format=RGB,width=321,height=8,framerate=30/1";

QueryPtr allocation_query(const char* caps, bool need_pool = true)
{
    CapsPtr c = caps_from(caps);
    return QueryPtr(gst_query_new_allocation(c.get(), need_pool));
}

ElementPtr element()
{
    GstElement* bin = gst_bin_new("negotiator");
    return ElementPtr(GST_ELEMENT(gst_object_ref_sink(bin)));
}

struct FirstPool {
    PoolPtr pool;
    guint size = 0, min = 0, max = 0;
};

FirstPool first_pool(GstQuery* q)
{
    FirstPool f;
    if (gst_query_get_n_allocation_pools(q) == 0)
        return f;
    GstBufferPool* p = nullptr;
    gst_query_parse_nth_allocation_pool(q, 0, &p, &f.size, &f.min, &f.max);
    f.pool.reset(p);
    return f;
}

bool has_video_meta_option(GstBufferPool* pool)
{
    GstStructure* config = gst_buffer_pool_get_config(pool);
    const bool has = gst_buffer_pool_config_has_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_structure_free(config);
    return has;
}

std::string bus_errors(GstElement* e)
{
    GstObjectPtr<GstBus> bus(gst_element_get_bus(e));
    std::string out;
    while (GstMessage* m = gst_bus_pop_filtered(bus.get(), GST_MESSAGE_ERROR)) {
        GError* err = nullptr;
        gchar* dbg = nullptr;
        gst_message_parse_error(m, &err, &dbg);
        out += std::string(err ? err->message : "") + " | " + (dbg ? dbg : "") + "\n";
        g_clear_error(&err);
        g_free(dbg);
        gst_message_unref(m);
    }
    return out;
}

// A bin posts to a bus only when it has one.
ElementPtr element_with_bus()
{
    ElementPtr e = element();
    GstObjectPtr<GstBus> bus(gst_bus_new());
    gst_element_set_bus(e.get(), bus.get());
    return e;
}

TEST(PoolNegotiation, DecideConfiguresDownstreamsEdgeTensorPoolWithBothSidesBounds)
{
    ElementPtr e = element();
    QueryPtr q = allocation_query(kNv12);
    PoolPtr theirs(gst_edge_tensor_buffer_pool_new());
    gst_query_add_allocation_pool(q.get(), theirs.get(), 0, 3, 0);
    NegotiatedPool made = gst::decide_pool(e.get(), q.get(), PoolPolicy{}, "the output pool");
    ASSERT_TRUE(made);
    EXPECT_EQ(made.pool.get(), theirs.get()) << "downstream's edgetensor pool is used";
    const FirstPool f = first_pool(q.get());
    EXPECT_EQ(f.pool.get(), theirs.get());
    EXPECT_EQ(f.min, 3u) << "the larger minimum";
    EXPECT_EQ(f.max, gst::kDefaultMaxBuffers) << "bounded although downstream set no bound";
    EXPECT_GE(f.size, guint(64 * 48 * 3 / 2));
    EXPECT_EQ(gst_query_get_n_allocation_pools(q.get()), 1u);
}

TEST(PoolNegotiation, DecideReplacesAForeignPoolWithAnEdgeTensorPool)
{
    ElementPtr e = element();
    QueryPtr q = allocation_query(kNv12);
    PoolPtr foreign(gst_video_buffer_pool_new());
    gst_query_add_allocation_pool(q.get(), foreign.get(), 0, 0, 8);
    ASSERT_TRUE(gst::decide_pool(e.get(), q.get(), PoolPolicy{}, "the output pool"));
    const FirstPool f = first_pool(q.get());
    ASSERT_TRUE(f.pool);
    EXPECT_TRUE(GST_IS_EDGE_TENSOR_BUFFER_POOL(f.pool.get()));
    EXPECT_EQ(f.max, 8u) << "downstream's bound beats our default";
    EXPECT_EQ(gst_query_get_n_allocation_pools(q.get()), 1u) << "set in place, not added";
}

TEST(PoolNegotiation, AUserMaximumBeatsThePeersAndZeroMeansNoBound)
{
    ElementPtr e = element();
    PoolPolicy user;
    user.min_buffers = 4;
    user.max_buffers = 6;
    user.max_overrides_peer = true;
    {
        QueryPtr q = allocation_query(kNv12);
        gst_query_add_allocation_pool(q.get(), nullptr, 0, 2, 20);
        ASSERT_TRUE(gst::decide_pool(e.get(), q.get(), user, "the pool"));
        const FirstPool f = first_pool(q.get());
        EXPECT_EQ(f.min, 4u);
        EXPECT_EQ(f.max, 6u);
    }
    user.max_buffers = 0;
    user.unbounded_because = "the test asks for no limit";
    {
        QueryPtr q = allocation_query(kNv12);
        ASSERT_TRUE(gst::decide_pool(e.get(), q.get(), user, "the pool"));
        EXPECT_EQ(first_pool(q.get()).max, 0u);
    }
    {
        QueryPtr q = allocation_query(kNv12);
        gst_query_add_allocation_pool(q.get(), nullptr, 0, 0, 3);
        ASSERT_TRUE(gst::decide_pool(e.get(), q.get(), user, "the pool"));
        EXPECT_EQ(first_pool(q.get()).max, 4u) << "the peer's bound, raised to the minimum";
    }
}

TEST(PoolNegotiation, AMetaBlindPeerGetsTheDefaultLayoutAndAReadingOneGetsVideoMeta)
{
    ElementPtr e = element();
    PoolPolicy dma;
    dma.memory = GST_EDGE_TENSOR_MEMORY_DMA;
    {
        QueryPtr q = allocation_query(kOddRgb);
        NegotiatedPool made = gst::decide_pool(e.get(), q.get(), dma, "the pool");
        ASSERT_TRUE(made);
        EXPECT_EQ(gst_edge_tensor_buffer_pool_get_memory_kind(made.pool.get()),
                  GST_EDGE_TENSOR_MEMORY_SHM)
            << "64-byte rows would differ from the layout the peer assumes";
        EXPECT_FALSE(has_video_meta_option(made.pool.get()));
        GstVideoInfo def;
        CapsPtr caps = caps_from(kOddRgb);
        ASSERT_TRUE(gst_video_info_from_caps(&def, caps.get()));
        EXPECT_EQ(made.size, guint(GST_VIDEO_INFO_SIZE(&def))) << "GStreamer's default layout";
    }
    {
        QueryPtr q = allocation_query(kOddRgb);
        gst_query_add_allocation_meta(q.get(), GST_VIDEO_META_API_TYPE, nullptr);
        NegotiatedPool made = gst::decide_pool(e.get(), q.get(), dma, "the pool");
        ASSERT_TRUE(made);
        EXPECT_TRUE(has_video_meta_option(made.pool.get()));
    }
}

TEST(PoolNegotiation, DecideWithoutCapsOrWithCapsThePoolRefusesPostsAnError_Negative)
{
    ElementPtr e = element_with_bus();
    QueryPtr no_caps(gst_query_new_allocation(nullptr, TRUE));
    EXPECT_FALSE(gst::decide_pool(e.get(), no_caps.get(), PoolPolicy{}, "the pool"));
    EXPECT_NE(bus_errors(e.get()).find("allocation query without caps"), std::string::npos);
    QueryPtr tiled = allocation_query("video/x-raw,format=NV12_64Z32,width=64,height=64");
    EXPECT_FALSE(gst::decide_pool(e.get(), tiled.get(), PoolPolicy{}, "the output pool"));
    // The pool's own reason, not only that it refused.
    const std::string tiled_errors = bus_errors(e.get());
    EXPECT_NE(tiled_errors.find("Cannot configure the output pool: video format NV12_64Z32 is "
                                "tiled or opaque"),
              std::string::npos)
        << tiled_errors;
    QueryPtr interlaced = allocation_query("video/x-raw,format=NV12,width=64,height=64,"
                                           "interlace-mode=interleaved");
    EXPECT_FALSE(gst::decide_pool(e.get(), interlaced.get(), PoolPolicy{}, "the output pool"));
    const std::string interlaced_errors = bus_errors(e.get());
    EXPECT_NE(interlaced_errors.find(
                  "Cannot configure the output pool: interlaced video is not supported."),
              std::string::npos)
        << interlaced_errors;
}

TEST(PoolNegotiation, ProposeOffersVideoMetaAPoolAndTheAllocator)
{
    ElementPtr e = element();
    QueryPtr q = allocation_query(kNv12);
    gst::propose_pool(e.get(), q.get(), PoolPolicy{}, PoolProposal{});
    EXPECT_TRUE(gst_query_find_allocation_meta(q.get(), GST_VIDEO_META_API_TYPE, nullptr));
    const FirstPool f = first_pool(q.get());
    ASSERT_TRUE(f.pool);
    EXPECT_TRUE(GST_IS_EDGE_TENSOR_BUFFER_POOL(f.pool.get()));
    EXPECT_EQ(f.min, 2u);
    EXPECT_EQ(f.max, gst::kDefaultMaxBuffers);
    ASSERT_EQ(gst_query_get_n_allocation_params(q.get()), 1u);
    GstAllocator* alloc = nullptr;
    gst_query_parse_nth_allocation_param(q.get(), 0, &alloc, nullptr);
    EXPECT_TRUE(alloc && GST_IS_EDGE_TENSOR_ALLOCATOR(alloc));
    if (alloc)
        gst_object_unref(alloc);
}

TEST(PoolNegotiation, ProposeKeepsDownstreamsEdgeTensorPoolAndReplacesAForeignOne)
{
    ElementPtr e = element();
    {
        QueryPtr q = allocation_query(kNv12);
        PoolPtr theirs(gst_edge_tensor_buffer_pool_new());
        gst_query_add_allocation_pool(q.get(), theirs.get(), 0, 0, 0);
        gst::propose_pool(e.get(), q.get(), PoolPolicy{}, PoolProposal{});
        EXPECT_EQ(first_pool(q.get()).pool.get(), theirs.get());
        EXPECT_EQ(gst_query_get_n_allocation_params(q.get()), 0u);
    }
    {
        QueryPtr q = allocation_query(kNv12);
        PoolPtr foreign(gst_video_buffer_pool_new());
        gst_query_add_allocation_pool(q.get(), foreign.get(), 0, 0, 0);
        gst::propose_pool(e.get(), q.get(), PoolPolicy{}, PoolProposal{});
        const FirstPool f = first_pool(q.get());
        ASSERT_TRUE(f.pool);
        EXPECT_TRUE(GST_IS_EDGE_TENSOR_BUFFER_POOL(f.pool.get()));
        EXPECT_EQ(gst_query_get_n_allocation_pools(q.get()), 1u);
    }
}

TEST(PoolNegotiation, ProposeHonoursNeedPoolUnfixedCapsAndTheMetaChoices)
{
    ElementPtr e = element();
    PoolProposal asked;
    asked.only_when_asked = true;
    asked.video_meta_for_any_caps = true;
    asked.with_allocator = false;
    {
        QueryPtr q = allocation_query("other/tensors,num_tensors=1,format=static,types=uint8,"
                                      "dimensions=3:4:5:1",
                                      false);
        gst::propose_pool(e.get(), q.get(), PoolPolicy{}, asked);
        EXPECT_TRUE(gst_query_find_allocation_meta(q.get(), GST_VIDEO_META_API_TYPE, nullptr))
            << "for any caps";
        EXPECT_EQ(gst_query_get_n_allocation_pools(q.get()), 0u) << "no pool was asked for";
    }
    {
        QueryPtr q = allocation_query("video/x-raw,format=NV12,width=[1,100],height=48");
        gst::propose_pool(e.get(), q.get(), PoolPolicy{}, PoolProposal{});
        EXPECT_EQ(gst_query_get_n_allocation_pools(q.get()), 0u) << "caps are not fixed";
    }
    {
        PoolPolicy no_dmabuf_meta;
        no_dmabuf_meta.video_meta_on_dmabuf_caps = false;
        QueryPtr q = allocation_query(
            "video/x-raw(memory:DMABuf),format=NV12,width=64,height=48,framerate=30/1");
        gst::propose_pool(e.get(), q.get(), no_dmabuf_meta, PoolProposal{});
        EXPECT_FALSE(gst_query_find_allocation_meta(q.get(), GST_VIDEO_META_API_TYPE, nullptr));
        const FirstPool f = first_pool(q.get());
        ASSERT_TRUE(f.pool);
        EXPECT_FALSE(has_video_meta_option(f.pool.get()));
    }
}

TEST(PoolNegotiation, MakePoolHasThePolicysBoundsAndAnUnboundedPoolSaysWhy)
{
    ElementPtr e = element();
    PoolPolicy p;
    p.min_buffers = 3;
    p.max_buffers = 0;
    p.unbounded_because = "receivers bound it";
    CapsPtr caps = caps_from(kNv12);
    auto stream = gst::stream_layout_from_caps(caps.get());
    ASSERT_TRUE(stream);
    NegotiatedPool made = gst::make_pool(e.get(), *stream, p);
    ASSERT_TRUE(made);
    EXPECT_EQ(made.min, 3u);
    EXPECT_EQ(made.max, 0u);
    EXPECT_FALSE(gst_buffer_pool_is_active(made.pool.get())) << "left inactive";
}

TEST(PoolAcquire, AnExhaustedFdTableIsNamedWithTheLimit_Negative)
{
    ElementPtr e = element_with_bus();
    PoolPtr pool(gst_edge_tensor_buffer_pool_new());
    EXPECT_EQ(gst::take_pool_error(pool.get(), nullptr), "") << "no failure yet";
    g_object_set_qdata_full(G_OBJECT(pool.get()),
                            g_quark_from_static_string(gst::kPoolFailureQuark),
                            gst_structure_new("edgetensor-pool-failure", "message", G_TYPE_STRING,
                                              "memfd_create failed: Too many open files (EMFILE)",
                                              "errno", G_TYPE_INT, EMFILE, nullptr),
                            GDestroyNotify(gst_structure_free));
    gst::post_acquire_error(e.get(), pool.get(), GST_FLOW_ERROR, "an output buffer");
    const std::string errors = bus_errors(e.get());
    EXPECT_NE(errors.find("Cannot allocate an output buffer: too many open files (EMFILE)"),
              std::string::npos)
        << errors;
    EXPECT_NE(errors.find("ulimit -n"), std::string::npos) << errors;
    EXPECT_EQ(gst::take_pool_error(pool.get(), nullptr), "") << "taken once";
}

TEST(PoolAcquire, APoolWithoutAReasonSaysWhatItReturned_Negative)
{
    ElementPtr e = element_with_bus();
    PoolPtr pool(gst_edge_tensor_buffer_pool_new());
    gst::post_acquire_error(e.get(), pool.get(), GST_FLOW_ERROR, "a frame");
    const std::string errors = bus_errors(e.get());
    EXPECT_NE(errors.find("Cannot allocate a frame."), std::string::npos) << errors;
    EXPECT_NE(errors.find("returned error"), std::string::npos) << errors;
}

} // namespace
} // namespace edgetensor::test
