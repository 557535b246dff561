// SPDX-License-Identifier: MIT
//
// tensorconvert and input buffers that do not match the caps: every plane's first and last
// byte is checked before the engine reads it (a GstVideoMeta pointing outside the memory used
// to crash in the engine), a mismatching buffer is dropped with a warning and counted, and
// only a run of them is an error (issue 11, defects 6 and 7). Correct bottom-up frames still
// convert, from system memory and from an imported memfd.

#include "element_harness.hpp"

#include <gst/allocators/allocators.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

constexpr gint kW = 64;
constexpr gint kH = 48;
// With its colorimetry, so the only warnings are the ones these tests provoke (unspecified
// colorimetry is an element warning of its own).
constexpr const char* kNv12 =
    "video/x-raw,format=NV12,width=64,height=48,framerate=30/1,colorimetry=bt601";
constexpr gsize kYBytes = gsize(kW) * kH;
constexpr gsize kUvBytes = gsize(kW) * (kH / 2);
constexpr gsize kFrameBytes = kYBytes + kUvBytes;

// Byte x of row y of plane p of a test picture.
guint8 pixel(guint p, gint x, gint y)
{
    return guint8((x * 5 + y * 11 + p * 77) & 0xff);
}

// The NV12 picture, top-down in GStreamer's default layout.
std::vector<guint8> top_down()
{
    std::vector<guint8> v(kFrameBytes);
    for (gint y = 0; y < kH; ++y)
        for (gint x = 0; x < kW; ++x)
            v[gsize(y) * kW + gsize(x)] = pixel(0, x, y);
    for (gint y = 0; y < kH / 2; ++y)
        for (gint x = 0; x < kW; ++x)
            v[kYBytes + gsize(y) * kW + gsize(x)] = pixel(1, x, y);
    return v;
}

// The same picture stored bottom-up: each plane's last row first in memory.
std::vector<guint8> bottom_up()
{
    std::vector<guint8> v(kFrameBytes);
    for (gint y = 0; y < kH; ++y)
        for (gint x = 0; x < kW; ++x)
            v[gsize(kH - 1 - y) * kW + gsize(x)] = pixel(0, x, y);
    for (gint y = 0; y < kH / 2; ++y)
        for (gint x = 0; x < kW; ++x)
            v[kYBytes + gsize(kH / 2 - 1 - y) * kW + gsize(x)] = pixel(1, x, y);
    return v;
}

BufferPtr system_buffer(const std::vector<guint8>& bytes)
{
    return BufferPtr(gst_buffer_new_memdup(bytes.data(), bytes.size()));
}

// The bytes in a memfd, wrapped as a foreign fd memory (what the import cache takes).
BufferPtr memfd_buffer(const std::vector<guint8>& bytes)
{
    const int fd = memfd_create("tensorconvert-input-test", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    AllocatorPtr alloc(gst_fd_allocator_new());
    GstMemory* mem = gst_fd_allocator_alloc(alloc.get(), fd, bytes.size(), GST_FD_MEMORY_FLAG_NONE);
    GstBuffer* b = gst_buffer_new();
    gst_buffer_append_memory(b, mem);
    return BufferPtr(b);
}

void add_meta(GstBuffer* b, GstVideoFormat format, gint w, gint h, gsize off0, gint s0, gsize off1,
              gint s1)
{
    gsize offsets[GST_VIDEO_MAX_PLANES] = {off0, off1};
    gint strides[GST_VIDEO_MAX_PLANES] = {s0, s1};
    gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE, format, guint(w), guint(h), 2,
                                   offsets, strides);
}

// A bottom-up NV12 buffer with the offsets GstVideoMeta needs: each plane's top row.
void add_bottom_up_meta(GstBuffer* b)
{
    add_meta(b, GST_VIDEO_FORMAT_NV12, kW, kH, gsize(kH - 1) * kW, -kW,
             kYBytes + gsize(kH / 2 - 1) * kW, -kW);
}

guint64 dropped(GstElement* e)
{
    guint64 v = 0;
    g_object_get(e, "dropped", &v, nullptr);
    return v;
}

struct Convert : ElementHarness {
    explicit Convert(const std::string& props = "") : ElementHarness("tensorconvert " + props)
    {
        gst_harness_set_sink_caps_str(h, "other/tensors");
        gst_harness_set_src_caps_str(h, kNv12);
    }
    std::vector<guint8> convert(BufferPtr in)
    {
        EXPECT_EQ(gst_harness_push(h, in.release()), GST_FLOW_OK) << messages(GST_MESSAGE_ERROR);
        BufferPtr out(gst_harness_try_pull(h));
        EXPECT_TRUE(out) << "no output";
        return out ? buffer_bytes(out.get()) : std::vector<guint8>();
    }
};

struct BadFrame {
    const char* name;
    bool memfd;
    void (*make)(GstBuffer*); // adds the lying GstVideoMeta
    gsize size;               // bytes of the buffer
    const char* says;
};

class TensorConvertBadFrame : public ::testing::TestWithParam<BadFrame>
{
};

// Defect 6 (each of these crashed in the engine or inside gst_video_frame_map) and defect 7 (a
// buffer that does not match the caps is dropped with a warning and counted, not fatal).
TEST_P(TensorConvertBadFrame, NegativeIsDroppedWithAWarningNamingThePlaneAndTheStreamGoesOn)
{
    const BadFrame& f = GetParam();
    Convert t;
    const std::vector<guint8> good = top_down();
    const std::vector<guint8> expected = t.convert(system_buffer(good));
    ASSERT_FALSE(expected.empty());

    std::vector<guint8> bytes(f.size, 0x5a);
    std::memcpy(bytes.data(), good.data(), std::min(bytes.size(), good.size()));
    BufferPtr bad = f.memfd ? memfd_buffer(bytes) : system_buffer(bytes);
    if (f.make)
        f.make(bad.get());
    EXPECT_EQ(gst_harness_push(t.get(), bad.release()), GST_FLOW_OK);
    EXPECT_EQ(gst_harness_try_pull(t.get()), nullptr) << "a bad frame must not be converted";
    EXPECT_EQ(dropped(t.element), 1u);
    const std::string warn = t.messages(GST_MESSAGE_WARNING);
    EXPECT_NE(warn.find("does not match the caps"), std::string::npos) << warn;
    EXPECT_NE(warn.find(f.says), std::string::npos) << warn;
    EXPECT_EQ(t.messages(GST_MESSAGE_ERROR), "");

    // The next good frame converts as before.
    EXPECT_EQ(t.convert(f.memfd ? memfd_buffer(good) : system_buffer(good)), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Issue11, TensorConvertBadFrame,
    ::testing::Values(
        BadFrame{"UvOffsetNearTheEnd", false,
                 [](GstBuffer* b) {
                     add_meta(b, GST_VIDEO_FORMAT_NV12, kW, kH, 0, kW, kFrameBytes - 10, kW);
                 },
                 kFrameBytes, "plane 1"},
        BadFrame{"UvOffsetNearTheEndOfAMemfd", true,
                 [](GstBuffer* b) {
                     add_meta(b, GST_VIDEO_FORMAT_NV12, kW, kH, 0, kW, kFrameBytes - 10, kW);
                 },
                 kFrameBytes, "plane 1"},
        BadFrame{"PlaneStartsBeyondTheBuffer", false,
                 [](GstBuffer* b) {
                     add_meta(b, GST_VIDEO_FORMAT_NV12, kW, kH, 0, kW, kFrameBytes + 4096, kW);
                 },
                 kFrameBytes, "beyond the buffer"},
        BadFrame{"StrideRunsPastTheEnd", false,
                 [](GstBuffer* b) {
                     add_meta(b, GST_VIDEO_FORMAT_NV12, kW, kH, 0, 4 * kW, kYBytes, kW);
                 },
                 kFrameBytes, "plane 0"},
        BadFrame{
            "NegativeStrideWithoutAMatchingOffset", false,
            [](GstBuffer* b) { add_meta(b, GST_VIDEO_FORMAT_NV12, kW, kH, 0, -kW, kYBytes, -kW); },
            kFrameBytes, "before its memory"},
        BadFrame{
            "NegativeStrideWithoutAMatchingOffsetOnAMemfd", true,
            [](GstBuffer* b) { add_meta(b, GST_VIDEO_FORMAT_NV12, kW, kH, 0, -kW, kYBytes, -kW); },
            kFrameBytes, "before its memory"},
        BadFrame{"StrideShorterThanARow", false,
                 [](GstBuffer* b) {
                     add_meta(b, GST_VIDEO_FORMAT_NV12, kW, kH, 0, kW / 2, kYBytes, kW);
                 },
                 kFrameBytes, "shorter than one"},
        BadFrame{
            "MetaOfAnotherFormat", false,
            [](GstBuffer* b) { add_meta(b, GST_VIDEO_FORMAT_NV21, kW, kH, 0, kW, kYBytes, kW); },
            kFrameBytes, "NV21"},
        BadFrame{"MetaSmallerThanTheCaps", false,
                 [](GstBuffer* b) {
                     add_meta(b, GST_VIDEO_FORMAT_NV12, kW / 2, kH, 0, kW, kYBytes, kW);
                 },
                 kFrameBytes, "less than the caps"},
        BadFrame{"BufferTooSmallWithoutMeta", false, nullptr, kFrameBytes - 64, "needs 4608"},
        BadFrame{"MemfdTooSmallWithoutMeta", true, nullptr, kFrameBytes / 2, "needs 4608"}),
    [](const ::testing::TestParamInfo<BadFrame>& i) { return std::string(i.param.name); });

TEST(TensorConvertInput, BottomUpFramesGiveTheSameTensorAsTopDownOnes)
{
    Convert t;
    const std::vector<guint8> expected = t.convert(system_buffer(top_down()));
    ASSERT_FALSE(expected.empty());
    for (bool memfd : {false, true}) {
        SCOPED_TRACE(memfd ? "memfd" : "system memory");
        BufferPtr b = memfd ? memfd_buffer(bottom_up()) : system_buffer(bottom_up());
        add_bottom_up_meta(b.get());
        EXPECT_EQ(t.convert(std::move(b)), expected);
    }
    EXPECT_EQ(dropped(t.element), 0u);
    EXPECT_EQ(t.messages(GST_MESSAGE_WARNING), "");
}

TEST(TensorConvertInput, NegativeMismatchedBuffersThatPersistBecomeAnErrorAfterTen)
{
    Convert t;
    const std::vector<guint8> small(kFrameBytes / 2, 0);
    for (int i = 1; i < 10; ++i)
        ASSERT_EQ(gst_harness_push(t.get(), system_buffer(small).release()), GST_FLOW_OK) << i;
    EXPECT_EQ(t.messages(GST_MESSAGE_ERROR), "");
    EXPECT_EQ(gst_harness_push(t.get(), system_buffer(small).release()), GST_FLOW_ERROR);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("10 input buffers in a row do not match the caps"), std::string::npos)
        << err;
    EXPECT_NE(err.find("needs 4608"), std::string::npos) << err;
    EXPECT_EQ(dropped(t.element), 10u);
    // One warning for the run, not one per buffer.
    const std::string warn = t.messages(GST_MESSAGE_WARNING);
    EXPECT_EQ(std::count(warn.begin(), warn.end(), '\n'), 1) << warn;
}

TEST(TensorConvertInput, AGoodFrameEndsARunOfDropsAndTheNextRunWarnsAgain)
{
    Convert t;
    const std::vector<guint8> small(100, 0);
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < 9; ++i)
            ASSERT_EQ(gst_harness_push(t.get(), system_buffer(small).release()), GST_FLOW_OK);
        EXPECT_FALSE(t.convert(system_buffer(top_down())).empty());
    }
    EXPECT_EQ(dropped(t.element), 27u);
    EXPECT_EQ(t.messages(GST_MESSAGE_ERROR), "");
    const std::string warn = t.messages(GST_MESSAGE_WARNING);
    EXPECT_EQ(std::count(warn.begin(), warn.end(), '\n'), 3) << warn;
}

// `dropped` counts since the element started: a caps change (which replaces the converter)
// keeps the count, and the run of drops starts again under the new caps.
TEST(TensorConvertInput, TheDroppedCounterCarriesAcrossCapsChanges)
{
    Convert t;
    const std::vector<guint8> small(10, 0);
    for (int i = 0; i < 9; ++i)
        ASSERT_EQ(gst_harness_push(t.get(), system_buffer(small).release()), GST_FLOW_OK);
    EXPECT_EQ(dropped(t.element), 9u);
    gst_harness_set_src_caps_str(t.get(), "video/x-raw,format=NV12,width=32,height=24,"
                                          "framerate=30/1,colorimetry=bt601");
    // Nine more would be 18 in a row had the run not restarted: no error.
    for (int i = 0; i < 9; ++i)
        ASSERT_EQ(gst_harness_push(t.get(), system_buffer(small).release()), GST_FLOW_OK);
    EXPECT_EQ(dropped(t.element), 18u);
    EXPECT_EQ(t.messages(GST_MESSAGE_ERROR), "");
}

TEST(TensorConvertInput, TheDroppedCounterStartsAtZeroOnEachStart)
{
    Convert t;
    ASSERT_EQ(gst_harness_push(t.get(), system_buffer(std::vector<guint8>(10)).release()),
              GST_FLOW_OK);
    EXPECT_EQ(dropped(t.element), 1u);
    gst_element_set_state(t.element, GST_STATE_NULL);
    gst_element_set_state(t.element, GST_STATE_PLAYING);
    EXPECT_EQ(dropped(t.element), 0u);
}

} // namespace
} // namespace edgetensor::test
