// SPDX-License-Identifier: MIT
//
// tensorimport and input that does not match its caps: an other/tensors buffer of the wrong
// size is an error naming both sizes (it used to be padded with stale bytes), a GstVideoMeta
// whose planes leave the memory is an error before any copy (it crashed inside
// gst_video_frame_copy), copies keep every byte of odd-width packed 4:2:2 rows (the last V was
// lost), and bottom-up frames are copied top-down (issue 11, defects 2, 3 and 6).

#include "element_harness.hpp"

#include <gst/allocators/allocators.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

constexpr const char* kTensorCaps =
    "other/tensors,num_tensors=1,format=static,types=uint8,dimensions=3:4:4:1,framerate=0/1";
constexpr gsize kTensorBytes = 48;

BufferPtr system_buffer(const std::vector<guint8>& bytes)
{
    return BufferPtr(gst_buffer_new_memdup(bytes.data(), bytes.size()));
}

// `bytes` in a memfd of `fd_size` bytes, as a foreign fd memory of bytes.size().
BufferPtr memfd_buffer(const std::vector<guint8>& bytes, size_t fd_size = 0)
{
    const int fd = memfd_create("tensorimport-input-test", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, off_t(std::max(fd_size, bytes.size()))), 0);
    EXPECT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), ssize_t(bytes.size()));
    AllocatorPtr alloc(gst_fd_allocator_new());
    GstMemory* mem = gst_fd_allocator_alloc(alloc.get(), fd, bytes.size(), GST_FD_MEMORY_FLAG_NONE);
    GstBuffer* b = gst_buffer_new();
    gst_buffer_append_memory(b, mem);
    return BufferPtr(b);
}

std::vector<guint8> ramp(gsize n)
{
    std::vector<guint8> v(n);
    for (gsize i = 0; i < n; ++i)
        v[i] = guint8(i * 3 + 1);
    return v;
}

struct Import : ElementHarness {
    explicit Import(const char* caps, const std::string& props = "")
        : ElementHarness("tensorimport " + props)
    {
        gst_harness_set_src_caps_str(h, caps);
    }
};

// Defect 2: fakesrc sizetype=random into static 3:4:4:1 tensors gave 48-byte tensors whose tail
// was zeros or an earlier frame's bytes.
TEST(TensorImportInput, NegativeTensorBuffersOfAnotherSizeAreAnErrorNamingBothSizes)
{
    for (gsize size : {gsize(4), gsize(20), gsize(47), gsize(49), gsize(96)}) {
        for (bool memfd : {false, true}) {
            SCOPED_TRACE(std::to_string(size) + (memfd ? " bytes in a memfd" : " bytes"));
            Import t(kTensorCaps);
            // A memfd larger than the tensor: its fd alone would have passed.
            BufferPtr in = memfd ? memfd_buffer(ramp(size), 4096) : system_buffer(ramp(size));
            EXPECT_EQ(gst_harness_push(t.get(), in.release()), GST_FLOW_ERROR);
            EXPECT_EQ(gst_harness_try_pull(t.get()), nullptr);
            const std::string err = t.messages(GST_MESSAGE_ERROR);
            EXPECT_NE(err.find("holds " + std::to_string(size) + " bytes"), std::string::npos)
                << err;
            EXPECT_NE(err.find("describe 48"), std::string::npos) << err;
        }
    }
}

TEST(TensorImportInput, TensorBuffersOfTheCapsSizePassWithTheirBytes)
{
    for (bool memfd : {false, true}) {
        Import t(kTensorCaps);
        const std::vector<guint8> bytes = ramp(kTensorBytes);
        ASSERT_EQ(gst_harness_push(t.get(),
                                   (memfd ? memfd_buffer(bytes) : system_buffer(bytes)).release()),
                  GST_FLOW_OK)
            << t.messages(GST_MESSAGE_ERROR);
        BufferPtr out(gst_harness_pull(t.get()));
        ASSERT_TRUE(out);
        ASSERT_EQ(gst_buffer_get_size(out.get()), kTensorBytes);
        std::vector<guint8> got(kTensorBytes);
        gst_buffer_extract(out.get(), 0, got.data(), got.size());
        EXPECT_EQ(got, bytes);
        EXPECT_TRUE(gst_buffer_get_edge_tensor_meta(out.get()));
    }
}

struct Packed422 {
    const char* format;
};

class TensorImportOddWidth : public ::testing::TestWithParam<Packed422>
{
};

// Defect 3: 321-wide rows are 644 bytes (161 macropixels); gst_video_frame_copy copied 642.
TEST_P(TensorImportOddWidth, CopiesKeepEveryByteOfEveryRow)
{
    const std::string caps = std::string("video/x-raw,format=") + GetParam().format +
                             ",width=321,height=241,framerate=30/1";
    Import t(caps.c_str());
    GstVideoInfo info;
    CapsPtr c = caps_from(caps);
    ASSERT_TRUE(gst_video_info_from_caps(&info, c.get()));
    ASSERT_EQ(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0), 644);
    std::vector<guint8> bytes(GST_VIDEO_INFO_SIZE(&info));
    for (gsize i = 0; i < bytes.size(); ++i)
        bytes[i] = guint8((i % 644) * 7 + i / 644);
    ASSERT_EQ(gst_harness_push(t.get(), system_buffer(bytes).release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_pull(t.get()));
    ASSERT_TRUE(out);
    GstVideoFrame frame;
    ASSERT_TRUE(gst_video_frame_map(&frame, &info, out.get(), GST_MAP_READ));
    for (gint y = 0; y < 241; ++y) {
        const auto* row = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)) +
                          y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
        ASSERT_EQ(std::memcmp(row, bytes.data() + gsize(y) * 644, 644), 0)
            << "row " << y << ": byte 642 " << int(row[642]) << "/"
            << int(bytes[gsize(y) * 644 + 642]) << ", byte 643 " << int(row[643]) << "/"
            << int(bytes[gsize(y) * 644 + 643]);
    }
    gst_video_frame_unmap(&frame);
}

INSTANTIATE_TEST_SUITE_P(Issue11, TensorImportOddWidth,
                         ::testing::Values(Packed422{"YUY2"}, Packed422{"UYVY"}, Packed422{"VYUY"}),
                         [](const ::testing::TestParamInfo<Packed422>& i) {
                             return std::string(i.param.format);
                         });

constexpr const char* kNv12 = "video/x-raw,format=NV12,width=64,height=48,framerate=30/1";
constexpr gsize kY = 64 * 48;
constexpr gsize kFrame = kY + 64 * 24;

void add_nv12_meta(GstBuffer* b, gsize off0, gint s0, gsize off1, gint s1)
{
    gsize offsets[GST_VIDEO_MAX_PLANES] = {off0, off1};
    gint strides[GST_VIDEO_MAX_PLANES] = {s0, s1};
    gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 64, 48, 2,
                                   offsets, strides);
}

// Defect 6 on the import side: the UV offset near the end crashed inside gst_video_frame_copy.
TEST(TensorImportInput, NegativePlanesOutsideTheMemoryAreAnErrorBeforeAnyCopy)
{
    struct Case {
        const char* name;
        bool memfd;
        gsize off1;
        gint s0;
        const char* says;
    };
    for (const Case& c :
         {Case{"uv offset near the end", false, kFrame - 10, 64, "plane 1"},
          Case{"uv offset near the end of a memfd", true, kFrame - 10, 64, "plane 1"},
          Case{"negative stride, offset 0", false, kY, -64, "before its memory"},
          Case{"negative stride, offset 0, memfd", true, kY, -64, "before its memory"}}) {
        SCOPED_TRACE(c.name);
        Import t(kNv12);
        BufferPtr b = c.memfd ? memfd_buffer(ramp(kFrame)) : system_buffer(ramp(kFrame));
        add_nv12_meta(b.get(), 0, c.s0, c.off1, c.s0 < 0 ? -64 : 64);
        EXPECT_EQ(gst_harness_push(t.get(), b.release()), GST_FLOW_ERROR);
        const std::string err = t.messages(GST_MESSAGE_ERROR);
        EXPECT_NE(err.find("does not match the caps"), std::string::npos) << err;
        EXPECT_NE(err.find(c.says), std::string::npos) << err;
    }
}

// Interlaced system-memory frames cannot be copied into an edgetensor pool (it holds
// progressive frames): the error says so, not only that no pool could be made.
TEST(TensorImportInput, NegativeInterlacedFramesToCopyAreAnErrorNamingInterlacing)
{
    Import t("video/x-raw,format=NV12,width=64,height=48,framerate=30/1,"
             "interlace-mode=interleaved");
    EXPECT_EQ(gst_harness_push(t.get(), system_buffer(ramp(64 * 48 * 3 / 2)).release()),
              GST_FLOW_ERROR);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("Cannot create a buffer pool to copy into: interlaced video is not "
                       "supported."),
              std::string::npos)
        << err;
    // Nothing is copied, so no warning says frames are being copied.
    const std::string warnings = t.messages(GST_MESSAGE_WARNING);
    EXPECT_EQ(warnings.find("Copying frames"), std::string::npos) << warnings;
}

TEST(TensorImportInput, BottomUpFramesAreCopiedTopDown)
{
    // Row y of plane p holds value p * 100 + y, stored last row first.
    std::vector<guint8> bytes(kFrame);
    for (gint y = 0; y < 48; ++y)
        std::memset(bytes.data() + gsize(47 - y) * 64, y, 64);
    for (gint y = 0; y < 24; ++y)
        std::memset(bytes.data() + kY + gsize(23 - y) * 64, 100 + y, 64);
    Import t(kNv12);
    BufferPtr b = system_buffer(bytes);
    add_nv12_meta(b.get(), 47 * 64, -64, kY + 23 * 64, -64);
    ASSERT_EQ(gst_harness_push(t.get(), b.release()), GST_FLOW_OK) << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_pull(t.get()));
    ASSERT_TRUE(out);
    GstVideoInfo info;
    CapsPtr caps = caps_from(kNv12);
    ASSERT_TRUE(gst_video_info_from_caps(&info, caps.get()));
    GstVideoFrame f;
    ASSERT_TRUE(gst_video_frame_map(&f, &info, out.get(), GST_MAP_READ));
    for (guint p = 0; p < 2; ++p) {
        EXPECT_GT(GST_VIDEO_FRAME_PLANE_STRIDE(&f, p), 0) << "the copy is top-down";
        for (gint y = 0; y < (p ? 24 : 48); ++y) {
            const auto* row = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&f, p)) +
                              y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, p);
            for (gint x = 0; x < 64; ++x)
                ASSERT_EQ(row[x], guint8(p * 100 + y)) << "plane " << p << " row " << y;
        }
    }
    gst_video_frame_unmap(&f);
}

} // namespace
} // namespace edgetensor::test
