// SPDX-License-Identifier: MIT
//
// tensorconvert through GstHarness, its buffers: GstEdgeTensorMeta and the video meta on every
// output, system/pool/strided/memfd/DMA-BUF input against system memory, the allocation it
// proposes, properties refused while playing, state cycling, output outliving the element,
// and the done-when pipeline down to a decoded PNG (test_tensorconvert.cpp: caps and
// pixels).

#include "element_harness.hpp"
#include "fd_count.hpp"
#include "gst_test_util.hpp"
#include "require.hpp"
#include "tensorconvert_test_util.hpp"

#include <gst/check/gstharness.h>

#include <gst/allocators/allocators.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::test
{
namespace
{

std::string get_string(GstElement* e, const char* prop)
{
    gchar* v = nullptr;
    g_object_get(e, prop, &v, nullptr);
    std::string s = v ? v : "";
    g_free(v);
    return s;
}

// ---- meta and memory -----------------------------------------------------------------------

TEST(TensorConvert, EveryOutputBufferCarriesATensorMetaDescribingIt)
{
    Convert t("width=40 height=30 layout=chw dtype=float32");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    for (guint n = 0; n < 6; ++n) {
        ASSERT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps, n).release()), GST_FLOW_OK);
        BufferPtr out(gst_harness_try_pull(t.get()));
        ASSERT_TRUE(out);
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
        ASSERT_TRUE(m) << "frame " << n;
        EXPECT_EQ(m->desc.dtype, uint32_t(DType::F32));
        ASSERT_EQ(m->desc.ndim, 4u);
        EXPECT_EQ(m->desc.shape[0], 1u);
        EXPECT_EQ(m->desc.shape[1], 3u);
        EXPECT_EQ(m->desc.shape[2], 30u);
        EXPECT_EQ(m->desc.shape[3], 40u);
        EXPECT_EQ(m->desc.strides[3], 4);
        EXPECT_EQ(m->desc.strides[2], 40 * 4);
        EXPECT_GE(m->desc.capacity, 40u * 30u * 3u * 4u);
        EXPECT_NE(m->identity, 0u);
        // The descriptor's memory kind matches the memory the buffer holds.
        const bool dmabuf = gst_is_dmabuf_memory(gst_buffer_peek_memory(out.get(), 0));
        EXPECT_EQ(dmabuf, m->memory_kind == GST_EDGE_TENSOR_MEMORY_DMA);
        EXPECT_TRUE(gst::tensor_from_buffer(out.get())) << "the buffer must hold a tensor";
    }
}

TEST(TensorConvert, VideoOutputMetaMatchesTheFrame)
{
    Convert t("width=100 height=50");
    gst_harness_set_sink_caps_str(t.get(), "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    ASSERT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK);
    BufferPtr out(gst_harness_try_pull(t.get()));
    ASSERT_TRUE(out);
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->video_format, GST_VIDEO_FORMAT_RGB);
    EXPECT_EQ(m->width, 100u);
    EXPECT_EQ(m->height, 50u);
    EXPECT_GE(m->plane_strides[0], 300);
    if (GstVideoMeta* vm = gst_buffer_get_video_meta(out.get())) {
        EXPECT_EQ(vm->stride[0], m->plane_strides[0]);
    }
}

TEST(TensorConvert, StridedInputThroughVideoMetaGivesTheSameTensorAsATightOne)
{
    const char* caps = "video/x-raw,format=I420,width=100,height=60,colorimetry=bt709";
    Convert t("width=50 height=50 dtype=float32 std=255");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), caps);
    BufferPtr tight = make_frame(caps, 5);
    BufferPtr strided = make_frame(caps, 5, 92);
    ASSERT_TRUE(gst_buffer_get_video_meta(strided.get()));
    ASSERT_GT(gst_buffer_get_size(strided.get()), gst_buffer_get_size(tight.get()));
    ASSERT_EQ(gst_harness_push(t.get(), tight.release()), GST_FLOW_OK);
    BufferPtr a(gst_harness_try_pull(t.get()));
    ASSERT_EQ(gst_harness_push(t.get(), strided.release()), GST_FLOW_OK);
    BufferPtr b(gst_harness_try_pull(t.get()));
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(buffer_bytes(a.get()) == buffer_bytes(b.get()));
}

TEST(TensorConvert, PoolMemoryInputGivesTheSameTensorAsSystemMemory)
{
    const char* caps = "video/x-raw,format=NV12,width=322,height=64,colorimetry=bt709";
    PoolOptions o;
    o.video_meta = true;
    o.alignment = true; // 64-byte rows: 322 is not a multiple of 64, so the frame is strided
    PoolPtr pool = make_active_pool(caps, o);
    ASSERT_TRUE(pool);
    BufferPtr pooled = acquire(pool.get());
    ASSERT_TRUE(pooled);
    ASSERT_TRUE(gst_buffer_get_edge_tensor_meta(pooled.get()));

    // Same picture in both: copy the pattern frame into the pooled one plane by plane.
    BufferPtr sys = make_frame(caps, 9);
    CapsPtr c = caps_from(caps);
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, c.get()));
    GstVideoFrame from, to;
    ASSERT_TRUE(gst_video_frame_map(&from, &info, sys.get(), GST_MAP_READ));
    ASSERT_TRUE(gst_video_frame_map(&to, &info, pooled.get(), GST_MAP_WRITE));
    EXPECT_EQ(GST_VIDEO_FRAME_PLANE_STRIDE(&to, 0) % 64, 0);
    ASSERT_TRUE(gst_video_frame_copy(&to, &from));
    gst_video_frame_unmap(&to);
    gst_video_frame_unmap(&from);

    const guint64 input_identity = gst_buffer_get_edge_tensor_meta(pooled.get())->identity;

    Convert t("width=80 height=40");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), caps);
    ASSERT_EQ(gst_harness_push(t.get(), sys.release()), GST_FLOW_OK);
    BufferPtr a(gst_harness_try_pull(t.get()));
    ASSERT_EQ(gst_harness_push(t.get(), pooled.release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr b(gst_harness_try_pull(t.get()));
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(buffer_bytes(a.get()) == buffer_bytes(b.get()));

    // The output describes its own tensor only: the input's memory metas are not carried over.
    guint n_meta = 0;
    gpointer iter = nullptr;
    while (GstMeta* m =
               gst_buffer_iterate_meta_filtered(b.get(), &iter, GST_EDGE_TENSOR_META_API_TYPE)) {
        ++n_meta;
        EXPECT_NE(reinterpret_cast<GstEdgeTensorMeta*>(m)->identity, input_identity);
    }
    EXPECT_EQ(n_meta, 1u);
    EXPECT_EQ(gst_buffer_get_video_meta(b.get()), nullptr) << "tensor output with a video meta";
}

guint64 uint64_property(GstElement* e, const char* name)
{
    guint64 v = G_MAXUINT64;
    g_object_get(e, name, &v, nullptr);
    return v;
}

class TensorConvertImported : public ::testing::TestWithParam<std::pair<const char*, size_t>>
{
};

TEST_P(TensorConvertImported, RewrappedMemfdInputHitsTheImportCacheAndGivesTheSameTensor)
{
    const char* caps = GetParam().first;
    const size_t kSize = GetParam().second;
    constexpr int kBuffers = 2;

    // The reference: the same pictures in system memory (mapped path).
    std::vector<BufferPtr> sys;
    std::vector<std::vector<uint8_t>> expected;
    {
        Convert ref("width=32 height=16");
        gst_harness_set_sink_caps_str(ref.get(), "other/tensors");
        gst_harness_set_src_caps_str(ref.get(), caps);
        for (int i = 0; i < kBuffers; ++i) {
            sys.push_back(make_frame(caps, guint(5 + i)));
            ASSERT_EQ(gst_harness_push(ref.get(), gst_buffer_ref(sys.back().get())), GST_FLOW_OK);
            BufferPtr out(gst_harness_try_pull(ref.get()));
            ASSERT_TRUE(out);
            expected.push_back(buffer_bytes(out.get()));
        }
        EXPECT_EQ(uint64_property(ref.element, "cache-misses"), 0u)
            << "system memory is not imported";
    }

    std::vector<UniqueFd> memfds;
    for (int i = 0; i < kBuffers; ++i) {
        UniqueFd fd(memfd_create("tensorconvert-test", MFD_CLOEXEC));
        ASSERT_TRUE(fd);
        const std::vector<uint8_t> pixels = buffer_bytes(sys[size_t(i)].get());
        ASSERT_EQ(pixels.size(), kSize);
        ASSERT_EQ(pwrite(fd.get(), pixels.data(), pixels.size(), 0), ssize_t(kSize));
        memfds.push_back(std::move(fd));
    }

    const auto fds_before = open_fds();
    {
        AllocatorPtr alloc(gst_fd_allocator_new());
        Convert t("width=32 height=16");
        gst_harness_set_sink_caps_str(t.get(), "other/tensors");
        gst_harness_set_src_caps_str(t.get(), caps);
        int min_fd = 300;
        for (int round = 0; round < 2; ++round) {
            for (int i = 0; i < kBuffers; ++i) {
                // A new GstMemory with a new fd number every frame, as a camera pool may hand
                // out the same buffer.
                UniqueFd d(fcntl(memfds[size_t(i)].get(), F_DUPFD_CLOEXEC, min_fd++));
                ASSERT_TRUE(d);
                GstMemory* m =
                    gst_fd_allocator_alloc(alloc.get(), d.get(), kSize, GST_FD_MEMORY_FLAG_NONE);
                ASSERT_TRUE(m);
                d.release();
                GstBuffer* b = gst_buffer_new();
                gst_buffer_append_memory(b, m);
                ASSERT_EQ(gst_harness_push(t.get(), b), GST_FLOW_OK)
                    << t.messages(GST_MESSAGE_ERROR);
                BufferPtr out(gst_harness_try_pull(t.get()));
                ASSERT_TRUE(out);
                EXPECT_TRUE(buffer_bytes(out.get()) == expected[size_t(i)])
                    << "round " << round << " buffer " << i;
            }
        }
        EXPECT_EQ(uint64_property(t.element, "cache-misses"), guint64(kBuffers));
        EXPECT_EQ(uint64_property(t.element, "cache-hits"), guint64(kBuffers))
            << "the second round must find every buffer in the cache";
    }
    EXPECT_EQ(open_fds(), fds_before) << describe_fds(open_fds());
}

INSTANTIATE_TEST_SUITE_P(
    Formats, TensorConvertImported,
    ::testing::Values(std::make_pair("video/x-raw,format=RGBA,width=64,height=32",
                                     size_t(64 * 4 * 32)),
                      std::make_pair("video/x-raw,format=NV12,width=64,height=32,colorimetry=bt601",
                                     size_t(64 * 32 * 3 / 2))));

TEST(TensorConvert, DmaBufInputAndOutputGiveTheSameTensorAsSystemMemory)
{
    ET_REQUIRE_DMA_OR_SKIP();
    const char* caps = "video/x-raw,format=NV12,width=320,height=240,colorimetry=bt709";
    PoolOptions o;
    o.video_meta = true;
    o.kind = GST_EDGE_TENSOR_MEMORY_DMA;
    PoolPtr pool = make_active_pool(caps, o);
    ASSERT_TRUE(pool);
    BufferPtr dma = acquire(pool.get());
    ASSERT_TRUE(dma);
    ASSERT_TRUE(gst_is_dmabuf_memory(gst_buffer_peek_memory(dma.get(), 0)));
    BufferPtr sys = make_frame(caps, 4);
    CapsPtr c = caps_from(caps);
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, c.get()));
    GstVideoFrame from, to;
    ASSERT_TRUE(gst_video_frame_map(&from, &info, sys.get(), GST_MAP_READ));
    ASSERT_TRUE(gst_video_frame_map(&to, &info, dma.get(), GST_MAP_WRITE));
    ASSERT_TRUE(gst_video_frame_copy(&to, &from));
    gst_video_frame_unmap(&to);
    gst_video_frame_unmap(&from);

    Convert t("width=64 height=64 layout=chw dtype=float32 std=255");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), caps);
    ASSERT_EQ(gst_harness_push(t.get(), sys.release()), GST_FLOW_OK);
    BufferPtr a(gst_harness_try_pull(t.get()));
    ASSERT_EQ(gst_harness_push(t.get(), dma.release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr b(gst_harness_try_pull(t.get()));
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(buffer_bytes(a.get()) == buffer_bytes(b.get()));
    // With a provider the output pool is DMA-BUF too, and the meta says so.
    EXPECT_TRUE(gst_is_dmabuf_memory(gst_buffer_peek_memory(b.get(), 0)));
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(b.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->memory_kind, GST_EDGE_TENSOR_MEMORY_DMA);
    EXPECT_GE(m->desc.handle, 0);
}

TEST(TensorConvert, ProposesVideoMetaAndAnEdgetensorPoolUpstream)
{
    Convert t("width=64 height=64");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    CapsPtr caps = caps_from(kNv12Caps);
    GstQuery* q = gst_query_new_allocation(caps.get(), TRUE);
    ASSERT_TRUE(gst_pad_peer_query(t.h->srcpad, q));
    EXPECT_TRUE(gst_query_find_allocation_meta(q, GST_VIDEO_META_API_TYPE, nullptr));
    ASSERT_GE(gst_query_get_n_allocation_pools(q), 1u);
    GstBufferPool* pool = nullptr;
    gst_query_parse_nth_allocation_pool(q, 0, &pool, nullptr, nullptr, nullptr);
    ASSERT_TRUE(pool);
    EXPECT_TRUE(GST_IS_EDGE_TENSOR_BUFFER_POOL(pool));
    gst_object_unref(pool);
    gst_query_unref(q);
}

// ---- properties and states -----------------------------------------------------------------

TEST(TensorConvert, NegativeBadPropertyValuesAreRefusedWithAWarning)
{
    Convert t("mean=1,2,3 std=4 crop=1,2,3,4");
    ASSERT_EQ(gst_element_set_state(t.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    struct Bad {
        const char* prop;
        const char* value;
        const char* says;
    };
    for (const Bad& b :
         {Bad{"mean", "abc", "not a finite number"}, Bad{"mean", "1,2,3,4,5", "at most 4 values"},
          Bad{"std", "1,0,1", "must not be zero"}, Bad{"std", "nan", "not a finite number"},
          Bad{"crop", "1,2,3", "four integers"}, Bad{"crop", "a,b,c,d", "not an integer"},
          Bad{"crop", "0,0,0,10", "at least 1"}, Bad{"crop", "-1,0,10,10", "not an integer"}}) {
        SCOPED_TRACE(std::string(b.prop) + "=" + b.value);
        const std::string before = get_string(t.element, b.prop);
        g_object_set(t.element, b.prop, b.value, nullptr);
        EXPECT_EQ(get_string(t.element, b.prop), before) << "the old value must be kept";
        const std::string warn = t.messages(GST_MESSAGE_WARNING);
        EXPECT_NE(warn.find(b.says), std::string::npos) << warn;
        EXPECT_NE(warn.find(b.prop), std::string::npos) << warn;
    }
    // Good values are taken.
    g_object_set(t.element, "crop", "", "mean", "0.5", nullptr);
    EXPECT_EQ(get_string(t.element, "crop"), "");
    EXPECT_EQ(get_string(t.element, "mean"), "0.5");
}

TEST(TensorConvert, NegativeReadyOnlyPropertiesAreRefusedWhilePlaying)
{
    Convert t("width=64 height=48");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    ASSERT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK);
    GstState cur = GST_STATE_VOID_PENDING;
    gst_element_get_state(t.element, &cur, nullptr, GST_CLOCK_TIME_NONE);
    ASSERT_EQ(cur, GST_STATE_PLAYING);
    g_object_set(t.element, "width", 100u, "dtype", 3 /* float32 */, "crop", "0,0,8,8", "letterbox",
                 TRUE, nullptr);
    EXPECT_EQ(get_uint(t.element, "width"), 64u);
    EXPECT_EQ(get_string(t.element, "crop"), "");
    gboolean lb = TRUE;
    g_object_get(t.element, "letterbox", &lb, nullptr);
    EXPECT_FALSE(lb);
    const std::string warn = t.messages(GST_MESSAGE_WARNING);
    EXPECT_NE(warn.find("can only change in the NULL or READY state"), std::string::npos) << warn;
    // Streaming goes on with the old settings.
    ASSERT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK);
    BufferPtr out(gst_harness_try_pull(t.get()));
    BufferPtr out2(gst_harness_try_pull(t.get()));
    ASSERT_TRUE(out && out2);
    EXPECT_EQ(gst_buffer_get_size(out2.get()), 64u * 48u * 3u);
}

TEST(TensorConvert, CyclesStatesAndRenegotiatesWithNewSettings)
{
    const guint rounds = 4;
    std::set<int> fds_before;
    for (guint pass = 0; pass < 2; ++pass) {
        // Pass 0 warms up process-wide singletons (clocks, thread pools) that keep an fd for
        // the life of the process; pass 1 must then give back every fd it opens.
        if (pass == 1)
            fds_before = open_fds();
        Convert t("width=32 height=24");
        gst_harness_set_sink_caps_str(t.get(), "other/tensors");
        for (guint round = 0; round < rounds; ++round) {
            SCOPED_TRACE(round);
            const guint w = 32 + 8 * round;
            ASSERT_EQ(gst_element_set_state(t.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
            g_object_set(t.element, "width", w, nullptr);
            ASSERT_EQ(get_uint(t.element, "width"), w);
            for (GstState s : {GST_STATE_READY, GST_STATE_PAUSED, GST_STATE_PLAYING})
                ASSERT_NE(gst_element_set_state(t.element, s), GST_STATE_CHANGE_FAILURE);
            gst_harness_set_src_caps_str(t.get(), kNv12Caps);
            for (guint n = 0; n < 3; ++n) {
                ASSERT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps, n).release()),
                          GST_FLOW_OK)
                    << t.messages(GST_MESSAGE_ERROR);
                BufferPtr out(gst_harness_try_pull(t.get()));
                ASSERT_TRUE(out);
                EXPECT_EQ(gst_buffer_get_size(out.get()), gsize(w) * 24u * 3u);
            }
            const std::string caps = t.out_caps_string();
            EXPECT_NE(caps.find("3:" + std::to_string(w) + ":24:1"), std::string::npos) << caps;
        }
        ASSERT_EQ(gst_element_set_state(t.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    }
    const auto fds_after = open_fds();
    std::set<int> leaked;
    for (int fd : fds_after)
        if (!fds_before.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << "leaked: " << describe_fds(leaked);
}

TEST(TensorConvert, OutputBuffersOutliveTheElement)
{
    BufferPtr kept;
    {
        Convert t("width=16 height=16");
        gst_harness_set_sink_caps_str(t.get(), "other/tensors");
        gst_harness_set_src_caps_str(t.get(), kNv12Caps);
        ASSERT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps, 3).release()), GST_FLOW_OK);
        kept.reset(gst_harness_try_pull(t.get()));
        ASSERT_TRUE(kept);
    }
    const auto v = buffer_bytes(kept.get());
    EXPECT_EQ(v.size(), 16u * 16u * 3u);
    EXPECT_TRUE(gst_buffer_get_edge_tensor_meta(kept.get()));
}

// ---- the done-when pipeline --------------------------------------------------------

// GStreamer's own plugins (filesink, capsfilter, pngenc/pngdec) live beside libgstreamer; the
// test environment empties the system plugin path: load_system_plugin() loads them by file.
TEST(TensorConvert, DoneWhenPipelineWritesACorrectLetterboxedPng)
{
    ASSERT_TRUE(load_system_plugin("coreelements"));
    ASSERT_TRUE(load_system_plugin("png"));
    const std::filesystem::path png = std::filesystem::temp_directory_path() /
                                      ("tensorconvert-" + std::to_string(getpid()) + "-out.png");
    const std::string launch =
        "tensortestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1920,height=1080 ! "
        "tensorconvert name=tc width=640 height=640 letterbox=true ! video/x-raw,format=RGB ! "
        "pngenc ! filesink location=" +
        png.string();
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launch(launch.c_str(), &err);
    ASSERT_TRUE(pipeline) << (err ? err->message : "?");
    ASSERT_EQ(err, nullptr) << err->message;
    ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    GstBus* bus = gst_element_get_bus(pipeline);
    GstMessage* msg = gst_bus_timed_pop_filtered(
        bus, 30 * GST_SECOND, GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    ASSERT_TRUE(msg) << "the pipeline did not finish within 30 s";
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError* e = nullptr;
        gst_message_parse_error(msg, &e, nullptr);
        ADD_FAILURE() << "pipeline error: " << (e ? e->message : "?");
        g_clear_error(&e);
    }
    gst_message_unref(msg);
    gst_object_unref(bus);
    GstElement* tc = gst_bin_get_by_name(GST_BIN(pipeline), "tc");
    ASSERT_TRUE(tc);
    EXPECT_EQ(get_uint(tc, "letterbox-top"), 140u);
    EXPECT_EQ(get_uint(tc, "letterbox-bottom"), 140u);
    gst_object_unref(tc);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);

    // Decode the file with pngdec and check the picture.
    std::ifstream f(png, std::ios::binary);
    std::vector<char> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::filesystem::remove(png);
    ASSERT_GT(data.size(), 8u);
    ASSERT_EQ(std::memcmp(data.data(), "\x89PNG", 4), 0) << "not a PNG";
    HarnessPtr dec(gst_harness_new("pngdec"));
    gst_harness_set_src_caps_str(dec.get(), "image/png,width=640,height=640,framerate=0/1");
    GstBuffer* in = gst_buffer_new_memdup(data.data(), data.size());
    ASSERT_EQ(gst_harness_push(dec.get(), in), GST_FLOW_OK);
    gst_harness_push_event(dec.get(), gst_event_new_eos());
    BufferPtr out(gst_harness_try_pull(dec.get()));
    ASSERT_TRUE(out) << "pngdec produced nothing";
    CapsPtr caps(gst_pad_get_current_caps(dec->sinkpad));
    ASSERT_TRUE(caps);
    GstVideoInfo vi;
    ASSERT_TRUE(gst_video_info_from_caps(&vi, caps.get()));
    ASSERT_EQ(GST_VIDEO_INFO_WIDTH(&vi), 640);
    ASSERT_EQ(GST_VIDEO_INFO_HEIGHT(&vi), 640);
    ASSERT_EQ(GST_VIDEO_INFO_FORMAT(&vi), GST_VIDEO_FORMAT_RGB);
    GstVideoFrame frame;
    ASSERT_TRUE(gst_video_frame_map(&frame, &vi, out.get(), GST_MAP_READ));
    auto row_stats = [&](int y, int* nonblack, double* mean_r) {
        const auto* p = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)) +
                        y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
        *nonblack = 0;
        double r = 0;
        for (int x = 0; x < 640; ++x) {
            *nonblack += (p[3 * x] | p[3 * x + 1] | p[3 * x + 2]) != 0;
            r += p[3 * x];
        }
        *mean_r = r / 640;
    };
    // 1920x1080 into 640x640: a 640x360 picture at rows 140..499, black bars above and below.
    for (int y = 0; y < 640; ++y) {
        int nonblack = 0;
        double mean_r = 0;
        row_stats(y, &nonblack, &mean_r);
        if (y < 140 || y >= 500)
            ASSERT_EQ(nonblack, 0) << "bar row " << y << " is not black";
        else
            ASSERT_GT(nonblack, 600) << "picture row " << y << " is (nearly) black";
    }
    // tensortestsrc's gradient: red ramps with x (period 256 source pixels = 85.3 output
    // pixels), so the mean red across a row is mid-range, not a flat colour.
    int nonblack = 0;
    double mean_r = 0;
    row_stats(320, &nonblack, &mean_r);
    EXPECT_GT(mean_r, 80.0);
    EXPECT_LT(mean_r, 180.0);
    gst_video_frame_unmap(&frame);
}

} // namespace
} // namespace edgetensor::test
