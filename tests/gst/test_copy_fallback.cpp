// SPDX-License-Identifier: MIT
//
// The elements' copy fallback (gst/libs/copy_fallback.hpp) without a pipeline: copy-mode=never
// refuses naming the upstream element and the reason; auto copies into pooled fd memory, warns
// once per start and counts; a caps change gets a new pool; the bytes arrive, rows and split
// tensors alike.

#include "copy_fallback.hpp"
#include "gst_test_util.hpp"

#include <gst/allocators/allocators.h>

#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

using gst::CopyFallback;
using gst::CopyMode;
using gst::CopyPolicy;
using gst::StreamLayoutPtr;
using gst::Unusable;
using ElementPtr = GstObjectPtr<GstElement>;

constexpr const char* kYuy2 = "video/x-raw,format=YUY2,width=7,height=3,framerate=30/1";
constexpr const char* kTensor =
    "other/tensors,num_tensors=1,format=static,types=uint8,dimensions=4:3:1,framerate=30/1";

StreamLayoutPtr layout_of(const char* caps)
{
    CapsPtr c = caps_from(caps);
    auto l = gst::stream_layout_from_caps(c.get());
    EXPECT_TRUE(l) << (l ? "" : l.error().message());
    return l ? *l : nullptr;
}

// An element upstream ("camera") linked to one with a sink pad, and a bus to read.
struct Pair {
    ElementPtr upstream;
    ElementPtr element;
    GstObjectPtr<GstBus> bus{gst_bus_new()};

    Pair()
    {
        GstElement* up = gst_element_factory_make("tensortestsrc", "camera");
        GstElement* down = gst_element_factory_make("tensoripcsink", "sink");
        upstream.reset(GST_ELEMENT(gst_object_ref_sink(up)));
        element.reset(GST_ELEMENT(gst_object_ref_sink(down)));
        EXPECT_TRUE(gst_element_link(up, down));
        gst_element_set_bus(down, bus.get());
    }

    std::string take(GstMessageType type) { return bus_messages_text(bus.get(), type); }
};

CopyPolicy policy()
{
    CopyPolicy p;
    p.action = "pass";
    p.acting = "passing";
    p.done = "passed";
    p.offer = "the pool the test proposes";
    return p;
}

// A system-memory buffer of `size` bytes, byte i = i + seed.
BufferPtr system_buffer(gsize size, guint8 seed)
{
    GstBuffer* b = gst_buffer_new_allocate(nullptr, size, nullptr);
    GstMapInfo m;
    gst_buffer_map(b, &m, GST_MAP_WRITE);
    for (gsize i = 0; i < size; ++i)
        m.data[i] = guint8(i + seed);
    gst_buffer_unmap(b, &m);
    return BufferPtr(b);
}

const Unusable kSystem{"memory of type \"SystemMemory\"", "it has no fd", false};

TEST(CopyFallback, NeverRefusesNamingTheUpstreamElementAndTheReason_Negative)
{
    Pair p;
    CopyFallback f(policy());
    StreamLayoutPtr l = layout_of(kYuy2);
    BufferPtr in = system_buffer(GST_VIDEO_INFO_SIZE(&l->vinfo), 1);
    GstBuffer* out = nullptr;
    EXPECT_EQ(f.copy(p.element.get(), CopyMode::Never, l, kSystem, in.get(), &out), GST_FLOW_ERROR);
    EXPECT_EQ(out, nullptr);
    const std::string e = p.take(GST_MESSAGE_ERROR);
    EXPECT_NE(e.find("Upstream element \"camera\" sends memory of type \"SystemMemory\", which "
                     "cannot be passed without a copy, and copy-mode is \"never\"."),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("it has no fd. Set copy-mode=auto"), std::string::npos) << e;
    EXPECT_EQ(f.copies(), 0u);
}

TEST(CopyFallback, AFailedCallIsNamedAsSuch_Negative)
{
    Pair p;
    CopyFallback f(policy());
    StreamLayoutPtr l = layout_of(kYuy2);
    BufferPtr in = system_buffer(GST_VIDEO_INFO_SIZE(&l->vinfo), 1);
    const Unusable failed{"memory of type \"memfd\"", "fstat of plane 0's fd 9 failed", true};
    GstBuffer* out = nullptr;
    EXPECT_EQ(f.copy(p.element.get(), CopyMode::Never, l, failed, in.get(), &out), GST_FLOW_ERROR);
    const std::string e = p.take(GST_MESSAGE_ERROR);
    EXPECT_NE(e.find("Cannot pass a buffer from upstream element \"camera\": fstat of plane 0's"),
              std::string::npos)
        << e;
    EXPECT_EQ(f.copy(p.element.get(), CopyMode::Auto, l, failed, in.get(), &out), GST_FLOW_OK);
    gst_buffer_unref(out);
    const std::string w = p.take(GST_MESSAGE_WARNING);
    EXPECT_NE(w.find("Copying frames: passing a buffer from upstream element \"camera\" failed"),
              std::string::npos)
        << w;
}

TEST(CopyFallback, AutoCopiesEveryRowIntoPooledFdMemoryCountsAndWarnsOncePerStart)
{
    Pair p;
    CopyFallback f(policy());
    StreamLayoutPtr l = layout_of(kYuy2); // odd width: the last V byte of a row counts
    for (int round = 0; round < 2; ++round) {
        f.start();
        for (guint8 n = 0; n < 3; ++n) {
            BufferPtr in = system_buffer(GST_VIDEO_INFO_SIZE(&l->vinfo), n);
            GstBuffer* out = nullptr;
            ASSERT_EQ(f.copy(p.element.get(), CopyMode::Auto, l, kSystem, in.get(), &out),
                      GST_FLOW_OK)
                << p.take(GST_MESSAGE_ERROR);
            BufferPtr copy(out);
            EXPECT_TRUE(gst_is_fd_memory(gst_buffer_peek_memory(copy.get(), 0)));
            EXPECT_TRUE(copy->pool && GST_IS_EDGE_TENSOR_BUFFER_POOL(copy->pool));
            GstVideoFrame a, b;
            ASSERT_TRUE(gst_video_frame_map(&a, &l->vinfo, in.get(), GST_MAP_READ));
            ASSERT_TRUE(gst_video_frame_map(&b, &l->vinfo, copy.get(), GST_MAP_READ));
            const gsize row = gsize(GST_ROUND_UP_2(7)) * 2; // 4 whole YUYV pairs
            for (gint y = 0; y < 3; ++y)
                EXPECT_EQ(std::memcmp(static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&a, 0)) +
                                          y * GST_VIDEO_FRAME_PLANE_STRIDE(&a, 0),
                                      static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&b, 0)) +
                                          y * GST_VIDEO_FRAME_PLANE_STRIDE(&b, 0),
                                      row),
                          0)
                    << "row " << y;
            gst_video_frame_unmap(&b);
            gst_video_frame_unmap(&a);
        }
        EXPECT_EQ(f.copies(), 3u);
        const std::string w = p.take(GST_MESSAGE_WARNING);
        EXPECT_NE(w.find("Copying frames: upstream element \"camera\" sends memory of type "
                         "\"SystemMemory\", which cannot be passed"),
                  std::string::npos)
            << w;
        EXPECT_EQ(w.find("Copying frames", w.find("Copying frames") + 1), std::string::npos)
            << "warned once per start: " << w;
    }
    f.retire_pool_unless(nullptr);
}

TEST(CopyFallback, ASplitTensorIsCopiedWholeAndACapsChangeGetsANewPool)
{
    Pair p;
    CopyFallback f(policy());
    StreamLayoutPtr l = layout_of(kTensor);
    ASSERT_EQ(l->frame_bytes, 12u);
    GstBuffer* split = gst_buffer_new();
    BufferPtr a = system_buffer(5, 0), b = system_buffer(7, 5);
    gst_buffer_append_memory(split, gst_buffer_get_memory(a.get(), 0));
    gst_buffer_append_memory(split, gst_buffer_get_memory(b.get(), 0));
    BufferPtr in(split);
    GstBuffer* out = nullptr;
    ASSERT_EQ(f.copy(p.element.get(), CopyMode::Auto, l, kSystem, in.get(), &out), GST_FLOW_OK);
    BufferPtr copy(out);
    std::vector<guint8> bytes(12);
    ASSERT_EQ(gst_buffer_extract(copy.get(), 0, bytes.data(), 12), 12u);
    for (guint8 i = 0; i < 12; ++i)
        EXPECT_EQ(bytes[i], i);
    GstBufferPool* first = copy->pool;

    f.retire_pool_unless(l->caps.get()); // the same caps keep it
    StreamLayoutPtr other = layout_of(
        "other/tensors,num_tensors=1,format=static,types=uint8,dimensions=2:3:1,framerate=30/1");
    BufferPtr small = system_buffer(6, 0);
    ASSERT_EQ(f.copy(p.element.get(), CopyMode::Auto, other, kSystem, small.get(), &out),
              GST_FLOW_OK);
    BufferPtr copy2(out);
    EXPECT_NE(copy2->pool, first) << "a pool for the new caps";
    f.retire_pool_unless(nullptr);
}

TEST(CopyFallback, DataBeforeCapsIsNotNegotiated_Negative)
{
    Pair p;
    CopyFallback f(policy());
    BufferPtr in = system_buffer(16, 0);
    GstBuffer* out = nullptr;
    EXPECT_EQ(f.copy(p.element.get(), CopyMode::Auto, nullptr, kSystem, in.get(), &out),
              GST_FLOW_NOT_NEGOTIATED);
    const std::string e = p.take(GST_MESSAGE_ERROR);
    EXPECT_NE(e.find("tensoripcsink received data before caps."), std::string::npos) << e;
}

TEST(CopyFallback, AnElementWithoutUpstreamSaysSo)
{
    ElementPtr lone(GST_ELEMENT(gst_object_ref_sink(gst_bin_new("lone"))));
    EXPECT_EQ(gst::upstream_name(lone.get()), "(not linked)");
    Pair p;
    EXPECT_EQ(gst::upstream_name(p.element.get()), "camera");
}

} // namespace
} // namespace edgetensor::test
