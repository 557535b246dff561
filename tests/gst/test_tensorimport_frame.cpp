// SPDX-License-Identifier: MIT
//
// tensorimport's per-buffer steps (gst/elements/tensorimport_frame.hpp) without a pipeline:
// the check against the caps, locating a tensor in several memories, and attaching the meta of
// the cached tensor, with what each says when it cannot. (Compiled in: the plugin's symbols
// are hidden.)

#include "gst_test_util.hpp"
#include "import_cache.hpp"
#include "tensorimport_frame.hpp"

#include <gst/allocators/allocators.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <string>

namespace edgetensor::test
{
namespace
{

namespace ti = gst::tensorimport;
using gst::StreamLayoutPtr;
using gst::TensorMemories;

constexpr const char* kTensor =
    "other/tensors,num_tensors=1,format=static,types=uint8,dimensions=4:3:1,framerate=30/1";
constexpr const char* kRgba = "video/x-raw,format=RGBA,width=16,height=4,framerate=30/1";

struct CacheFree {
    void operator()(GstEdgeTensorImportCache* c) const noexcept
    {
        gst_edge_tensor_import_cache_free(c);
    }
};
using CachePtr = std::unique_ptr<GstEdgeTensorImportCache, CacheFree>;

StreamLayoutPtr layout_of(const char* caps)
{
    CapsPtr c = caps_from(caps);
    auto l = gst::stream_layout_from_caps(c.get());
    EXPECT_TRUE(l);
    return l ? *l : nullptr;
}

BufferPtr system_buffer(std::initializer_list<gsize> sizes)
{
    GstBuffer* b = gst_buffer_new();
    for (gsize s : sizes)
        gst_buffer_append_memory(b, gst_allocator_alloc(nullptr, s, nullptr));
    return BufferPtr(b);
}

BufferPtr memfd_buffer(gsize size)
{
    const int fd = memfd_create("tensorimport-frame-test", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, off_t(size)), 0);
    AllocatorPtr alloc(gst_fd_allocator_new());
    GstBuffer* b = gst_buffer_new();
    gst_buffer_append_memory(
        b, gst_fd_allocator_alloc(alloc.get(), fd, size, GST_FD_MEMORY_FLAG_NONE));
    return BufferPtr(b);
}

TEST(TensorImportFrame, TheCheckWantsExactlyTheCapsTensorAndWholeVideoPlanes_Negative)
{
    std::string why;
    StreamLayoutPtr tensor = layout_of(kTensor);
    BufferPtr exact = system_buffer({12});
    EXPECT_TRUE(ti::matches_caps(tensor.get(), exact.get(), &why));
    BufferPtr padded = system_buffer({16});
    EXPECT_FALSE(ti::matches_caps(tensor.get(), padded.get(), &why));
    EXPECT_NE(why.find("it holds 16 bytes, but the other/tensors caps describe 12"),
              std::string::npos)
        << why;
    BufferPtr split = system_buffer({5, 7});
    EXPECT_TRUE(ti::matches_caps(tensor.get(), split.get(), &why)) << "located later";
    StreamLayoutPtr video = layout_of(kRgba);
    BufferPtr short_frame = system_buffer({16 * 4 * 4 - 1});
    EXPECT_FALSE(ti::matches_caps(video.get(), short_frame.get(), &why));
    EXPECT_TRUE(ti::matches_caps(nullptr, short_frame.get(), &why)) << "before caps";
}

TEST(TensorImportFrame, LocateSaysWhatArrived)
{
    StreamLayoutPtr tensor = layout_of(kTensor);
    BufferPtr one = system_buffer({12});
    ti::Located l = ti::locate(tensor.get(), one.get());
    EXPECT_TRUE(l.usable());
    EXPECT_EQ(l.where.layout, TensorMemories::Layout::Single);
    EXPECT_EQ(l.sent, "memory of type \"SystemMemory\"");

    BufferPtr split = system_buffer({5, 7});
    l = ti::locate(tensor.get(), split.get());
    EXPECT_EQ(l.where.layout, TensorMemories::Layout::Split);
    EXPECT_NE(l.sent.find("2 memories (5 + 7 bytes)"), std::string::npos) << l.sent;

    BufferPtr less = system_buffer({5, 6});
    l = ti::locate(tensor.get(), less.get());
    EXPECT_FALSE(l.usable());
    EXPECT_EQ(l.tensor_bytes, 12u);
    EXPECT_NE(l.where.why.find("less than the tensor's 12 bytes"), std::string::npos)
        << l.where.why;

    StreamLayoutPtr video = layout_of(kRgba);
    BufferPtr frame = system_buffer({128, 128}); // video planes may span memories
    l = ti::locate(video.get(), frame.get());
    EXPECT_EQ(l.where.layout, TensorMemories::Layout::Single);
}

TEST(TensorImportFrame, AttachDescribesAnFdBufferInPlaceOrInACopyOfAReadOnlyOne)
{
    CachePtr cache(gst_edge_tensor_import_cache_new(4));
    StreamLayoutPtr tensor = layout_of(kTensor);
    gst::import_cache_set_layout(cache.get(), tensor);
    BufferPtr in = memfd_buffer(12);
    const ti::Located l = ti::locate(tensor.get(), in.get());

    ti::Attached a = ti::attach(cache.get(), in.get(), l);
    ASSERT_EQ(a.buffer, in.get()) << "writable: described in place";
    EXPECT_EQ(a.result, GST_EDGE_TENSOR_IMPORT_MISS);
    GstEdgeTensorMeta* meta = gst_buffer_get_edge_tensor_meta(in.get());
    ASSERT_TRUE(meta);
    EXPECT_EQ(meta->identity, a.identity);

    BufferPtr extra(gst_buffer_ref(in.get())); // read-only now
    ti::Attached b = ti::attach(cache.get(), in.get(), l);
    ASSERT_TRUE(b.buffer);
    EXPECT_NE(b.buffer, in.get()) << "a copy sharing the memory";
    EXPECT_EQ(gst_buffer_peek_memory(b.buffer, 0), gst_buffer_peek_memory(in.get(), 0));
    EXPECT_EQ(b.result, GST_EDGE_TENSOR_IMPORT_HIT);
    EXPECT_EQ(b.identity, a.identity);
    gst_buffer_unref(b.buffer);
}

TEST(TensorImportFrame, AttachSaysWhySystemMemoryIsNotImported_Negative)
{
    CachePtr cache(gst_edge_tensor_import_cache_new(4));
    StreamLayoutPtr video = layout_of(kRgba);
    gst::import_cache_set_layout(cache.get(), video);
    BufferPtr in = system_buffer({16 * 4 * 4});
    BufferPtr extra(gst_buffer_ref(in.get())); // a copy is made, then dropped
    ti::Attached a = ti::attach(cache.get(), in.get(), ti::locate(video.get(), in.get()));
    EXPECT_EQ(a.buffer, nullptr);
    EXPECT_EQ(a.result, GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    EXPECT_FALSE(a.unusable.failed);
    EXPECT_EQ(a.unusable.sent, "memory of type \"SystemMemory\"");
    EXPECT_NE(a.unusable.why.find("which has no fd to import"), std::string::npos)
        << a.unusable.why;
    EXPECT_FALSE(gst_buffer_get_edge_tensor_meta(in.get()));
}

TEST(TensorImportFrame, SplitPartsOfTwoObjectsCannotBecomeOneMemory_Negative)
{
    CachePtr cache(gst_edge_tensor_import_cache_new(4));
    StreamLayoutPtr tensor = layout_of(kTensor);
    gst::import_cache_set_layout(cache.get(), tensor);
    BufferPtr a = memfd_buffer(5), b = memfd_buffer(7);
    GstBuffer* split = gst_buffer_new();
    gst_buffer_append_memory(split, gst_buffer_get_memory(a.get(), 0));
    gst_buffer_append_memory(split, gst_buffer_get_memory(b.get(), 0));
    BufferPtr in(split);
    ti::Attached r = ti::attach(cache.get(), in.get(), ti::locate(tensor.get(), in.get()));
    EXPECT_EQ(r.buffer, nullptr);
    EXPECT_NE(r.unusable.why.find("not one contiguous range of one buffer"), std::string::npos)
        << r.unusable.why;
    EXPECT_NE(r.unusable.sent.find("split across them"), std::string::npos) << r.unusable.sent;
}

} // namespace
} // namespace edgetensor::test
