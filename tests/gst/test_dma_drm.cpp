// SPDX-License-Identifier: MIT
//
// DMA_DRM caps (GStreamer 1.24+, issue 22): the stream layout reads linear drm-formats and
// refuses tiled ones naming them; tensorimport and tensorconvert list exactly the linear
// drm-formats they read, negotiate them over memfd memory (the compat roots have no DMA-BUF
// provider; the caps, not the memory, are what is tested) with the pixels of the system-memory
// path, and refuse a tiled modifier naming it. Built against 1.22 the same tests prove nothing
// changed: no DMA_DRM structure anywhere, the templates as they always were.

#include "dma_drm.hpp"
#include "dma_drm_test_util.hpp"
#include "element_harness.hpp"
#include "ipc_test_util.hpp"
#include "stream_layout.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#include <edgetensor/unique_fd.hpp>

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

namespace eg = edgetensor::gst;

constexpr int kW = 64;
constexpr int kH = 32;
constexpr const char* kPlainNv12 = "video/x-raw,format=NV12,width=64,height=32,framerate=30/1";
constexpr const char* kDrmNv12 = "video/x-raw(memory:DMABuf),format=DMA_DRM,drm-format=NV12,"
                                 "width=64,height=32,framerate=30/1";
constexpr const char* kTiledNv12 = "video/x-raw(memory:DMABuf),format=DMA_DRM,"
                                   "drm-format=NV12:0x0100000000000001,width=64,height=32,"
                                   "framerate=30/1";
// The engine's formats (tensorconvert's sink template) that DRM has a FourCC for.
constexpr const char* kConvertFormats[] = {"NV12", "NV21", "NV16",  "NV24", "I420", "YUY2",
                                           "UYVY", "VYUY", "RGB",   "BGR",  "RGBA", "BGRA",
                                           "RGBx", "BGRx", "GRAY8", "RGBP"};

bool has_dma_drm(const GstCaps* caps)
{
    for (guint i = 0; i < gst_caps_get_size(caps); ++i)
        if (eg::is_dma_drm_structure(caps, i))
            return true;
    return false;
}

// An NV12 frame in a memfd with rows of `stride` bytes (wider than the default), described by
// GstVideoMeta as a DMA_DRM producer must: distinct values everywhere, so a misread shows.
BufferPtr nv12_frame(GstAllocator* alloc, int stride = 128)
{
    const size_t luma = size_t(stride) * kH;
    const size_t size = luma + size_t(stride) * kH / 2;
    UniqueFd fd(memfd_create("dma-drm-test", MFD_CLOEXEC));
    EXPECT_EQ(ftruncate(fd.get(), off_t(size)), 0);
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < size; ++i)
        bytes[i] = uint8_t((i * 7 + i / size_t(stride) * 13) & 0xff);
    EXPECT_EQ(pwrite(fd.get(), bytes.data(), size, 0), ssize_t(size));
    GstBuffer* b = gst_buffer_new();
    gst_buffer_append_memory(
        b, gst_fd_allocator_alloc(alloc, fd.release(), size, GST_FD_MEMORY_FLAG_NONE));
    gsize offsets[GST_VIDEO_MAX_PLANES] = {0, luma};
    gint strides[GST_VIDEO_MAX_PLANES] = {stride, stride};
    gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, kW, kH, 2,
                                   offsets, strides);
    return BufferPtr(b);
}

// tensorconvert's output for one frame under `caps`.
std::vector<uint8_t> convert_once(const char* caps, GstBuffer* frame)
{
    ElementHarness h("tensorconvert width=32 height=16");
    gst_harness_set_src_caps_str(h.get(), caps);
    EXPECT_EQ(gst_harness_push(h.get(), gst_buffer_ref(frame)), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(h.get()));
    EXPECT_TRUE(out);
    return out ? buffer_bytes(out.get()) : std::vector<uint8_t>();
}

TEST(DmaDrm, DrmFormatNamesAsGStreamerSpellsThem)
{
    const uint32_t nv12 = GST_MAKE_FOURCC('N', 'V', '1', '2');
    EXPECT_EQ(eg::drm_format_name(nv12, eg::kDrmLinear), "NV12");
    EXPECT_EQ(eg::drm_format_name(nv12, 0x0100000000000001ull), "NV12:0x0100000000000001");
}

TEST(DmaDrm, StreamLayoutReadsLinearDmaDrmAsItsFormat)
{
    CapsPtr drm = caps_from(kDrmNv12);
    auto layout = eg::stream_layout_from_caps(drm.get());
    if (!eg::dma_drm_negotiated()) {
        // 1.22: DMA_DRM is no format GStreamer knows, as before.
        EXPECT_FALSE(layout);
        return;
    }
    ASSERT_TRUE(layout) << layout.error().message();
    auto plain = eg::stream_layout_from_caps(caps_from(kPlainNv12).get());
    ASSERT_TRUE(plain);
    const eg::StreamLayout& l = **layout;
    EXPECT_TRUE(l.video);
    EXPECT_EQ(l.memory, eg::StreamMemory::DmaDrm);
    EXPECT_EQ(GST_VIDEO_INFO_FORMAT(&l.vinfo), GST_VIDEO_FORMAT_NV12);
    EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&l.vinfo), kW);
    EXPECT_EQ(GST_VIDEO_INFO_HEIGHT(&l.vinfo), kH);
    EXPECT_EQ(GST_VIDEO_INFO_SIZE(&l.vinfo), GST_VIDEO_INFO_SIZE(&(*plain)->vinfo));
    EXPECT_EQ(l.pixel_format, (*plain)->pixel_format);
    EXPECT_EQ(l.drm.fourcc, GST_MAKE_FOURCC('N', 'V', '1', '2'));
    EXPECT_EQ(l.drm.modifier, eg::kDrmLinear);
}

TEST(DmaDrm, StreamLayoutRefusesATiledModifierNamingIt_Negative)
{
    auto layout = eg::stream_layout_from_caps(caps_from(kTiledNv12).get());
    ASSERT_FALSE(layout);
    if (eg::dma_drm_negotiated()) {
        EXPECT_NE(layout.error().message().find("NV12:0x0100000000000001"), std::string::npos)
            << layout.error().message();
    }
}

TEST(DmaDrm, StructuresMapBetweenDmaDrmAndPlainVideo)
{
    CapsPtr plain = caps_from("video/x-raw,format={NV12,RGBP,YUY2},width=8,height=8");
    CapsPtr drm(eg::dma_drm_caps_like(plain.get()));
    if (!eg::dma_drm_negotiated()) {
        EXPECT_TRUE(gst_caps_is_empty(drm.get()));
        EXPECT_EQ(eg::video_as_dma_drm(gst_caps_get_structure(plain.get(), 0)), nullptr);
        return;
    }
    ASSERT_EQ(gst_caps_get_size(drm.get()), 1u);
    // RGBP has no DRM FourCC: left out; YUY2 is DRM's YUYV.
    EXPECT_EQ(drm_formats_of(drm.get()), (std::set<std::string>{"NV12", "YUYV"}));
    EXPECT_EQ(gst_structure_get_string(gst_caps_get_structure(drm.get(), 0), "format"),
              std::string("DMA_DRM"));

    CapsPtr mixed = caps_from("video/x-raw(memory:DMABuf),format=DMA_DRM,"
                              "drm-format={NV12:0x0100000000000001,YUYV,NV12},width=8,height=8");
    GstStructure* video = eg::dma_drm_as_video(gst_caps_get_structure(mixed.get(), 0));
    ASSERT_NE(video, nullptr);
    CapsPtr back(gst_caps_new_full(video, nullptr));
    CapsPtr want = caps_from("video/x-raw,format={YUY2,NV12},width=8,height=8");
    EXPECT_TRUE(gst_caps_is_equal(back.get(), want.get()));

    CapsPtr tiled = caps_from(kTiledNv12);
    EXPECT_EQ(eg::dma_drm_as_video(gst_caps_get_structure(tiled.get(), 0)), nullptr);
}

TEST(DmaDrm, TensorImportListsEveryLinearDrmFormatAndNoModifier)
{
    GstElementFactory* f = gst_element_factory_find("tensorimport");
    ASSERT_NE(f, nullptr);
    GstElement* e = gst_element_factory_create(f, nullptr);
    gst_object_unref(f);
    ASSERT_NE(e, nullptr);
    GstPad* sink = gst_element_get_static_pad(e, "sink");
    CapsPtr templ(gst_pad_get_pad_template_caps(sink));
    CapsPtr answer(gst_pad_query_caps(sink, nullptr));
    gst_object_unref(sink);
    gst_object_unref(e);
    if (!eg::dma_drm_negotiated()) {
        CapsPtr before = caps_from("video/x-raw; video/x-raw(memory:DMABuf); other/tensors, "
                                   "num_tensors = (int) 1, format = (string) static");
        EXPECT_TRUE(gst_caps_is_strictly_equal(templ.get(), before.get()));
        EXPECT_FALSE(has_dma_drm(answer.get()));
        return;
    }
    const std::set<std::string> listed = drm_formats_of(answer.get());
    EXPECT_TRUE(listed.count("NV12"));
    EXPECT_TRUE(listed.count("YUYV"));
    for (const std::string& name : listed)
        EXPECT_EQ(name.find(':'), std::string::npos) << name << " has a modifier";
}

TEST(DmaDrm, TensorConvertAnswersExactlyTheLinearFormatsTheEngineReads)
{
    ElementHarness h("tensorconvert");
    GstPad* sink = gst_element_get_static_pad(h.element, "sink");
    CapsPtr answer(gst_pad_query_caps(sink, nullptr));
    gst_object_unref(sink);
    if (!eg::dma_drm_negotiated()) {
        EXPECT_FALSE(has_dma_drm(answer.get()));
        return;
    }
#if GST_CHECK_VERSION(1, 24, 0)
    std::set<std::string> want;
    for (const char* name : kConvertFormats) {
        const guint32 fourcc =
            gst_video_dma_drm_fourcc_from_format(gst_video_format_from_string(name));
        if (fourcc)
            want.insert(eg::drm_format_name(fourcc, eg::kDrmLinear));
    }
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(drm_formats_of(answer.get()), want);
    // DMA_DRM first: a DMA-BUF producer hands its buffers over rather than a copy.
    ASSERT_GT(gst_caps_get_size(answer.get()), 0u);
    EXPECT_TRUE(eg::is_dma_drm_structure(answer.get(), 0));
#endif
}

TEST(DmaDrm, TensorConvertReadsLinearDmaDrmAsTheSystemMemoryPath)
{
    AllocatorPtr alloc(gst_fd_allocator_new());
    BufferPtr frame = nv12_frame(alloc.get());
    const std::vector<uint8_t> plain = convert_once(kPlainNv12, frame.get());
    ASSERT_FALSE(plain.empty());
    if (!eg::dma_drm_negotiated()) {
        // 1.22: the sink takes no DMA_DRM caps, as before.
        ElementHarness h("tensorconvert width=32 height=16");
        GstPad* sink = gst_element_get_static_pad(h.element, "sink");
        EXPECT_FALSE(gst_pad_query_accept_caps(sink, caps_from(kDrmNv12).get()));
        gst_object_unref(sink);
        return;
    }
    EXPECT_EQ(convert_once(kDrmNv12, frame.get()), plain);
}

TEST(DmaDrm, TensorImportImportsLinearDmaDrmOverMemfdWithoutACopy)
{
    if (!eg::dma_drm_negotiated())
        GTEST_SKIP() << "GStreamer < 1.24: no DMA_DRM caps (the templates test says so)";
    AllocatorPtr alloc(gst_fd_allocator_new());
    BufferPtr frame = nv12_frame(alloc.get());
    ElementHarness h("tensorimport copy-mode=never");
    gst_harness_set_src_caps_str(h.get(), kDrmNv12);
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(gst_harness_push(h.get(), gst_buffer_ref(frame.get())), GST_FLOW_OK);
        BufferPtr out(gst_harness_pull(h.get()));
        ASSERT_TRUE(out);
        EXPECT_NE(gst_buffer_get_edge_tensor_meta(out.get()), nullptr);
    }
    guint64 copies = 1, hits = 0;
    g_object_get(h.element, "copies", &copies, "cache-hits", &hits, nullptr);
    EXPECT_EQ(copies, 0u);
    EXPECT_EQ(hits, 2u);
    CapsPtr out_caps(gst_pad_get_current_caps(GST_PAD_PEER(h->sinkpad)));
    ASSERT_TRUE(out_caps);
    EXPECT_TRUE(eg::is_dma_drm_structure(out_caps.get(), 0));
}

TEST(DmaDrm, TiledModifierIsRefusedNamingIt_Negative)
{
    for (const char* launch : {"tensorimport", "tensorconvert"}) {
        ElementHarness h(launch);
        GstPad* sink = gst_element_get_static_pad(h.element, "sink");
        const bool accepted = gst_pad_query_accept_caps(sink, caps_from(kTiledNv12).get());
        gst_object_unref(sink);
        if (!eg::dma_drm_negotiated()) {
            // 1.22, as before: tensorimport's bare memory:DMABuf structure takes the caps
            // (set_caps then fails: no format GStreamer knows), tensorconvert's template not.
            EXPECT_EQ(accepted, std::string(launch) == "tensorimport");
            continue;
        }
        EXPECT_FALSE(accepted) << launch;
        const std::vector<std::string> w = bus_messages(h.bus.get(), GST_MESSAGE_WARNING);
        ASSERT_EQ(w.size(), 1u) << launch;
        EXPECT_NE(w[0].find("NV12:0x0100000000000001"), std::string::npos) << w[0];
        EXPECT_NE(w[0].find("linear"), std::string::npos) << w[0];
    }
}

// One NV12 64x32 frame from tensortestsrc (frame 0 of its default pattern) under `caps`, rows
// only (strides may differ), and whether it came with GstVideoMeta; `negotiated` gets the caps.
std::vector<uint8_t> testsrc_frame(const char* caps, bool* has_meta, CapsPtr* negotiated)
{
    GstHarness* h = gst_harness_new("tensortestsrc");
    gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, nullptr);
    gst_harness_set_sink_caps_str(h, caps);
    gst_harness_play(h);
    BufferPtr b(gst_harness_pull(h));
    std::vector<uint8_t> rows;
    if (b) {
        *has_meta = gst_buffer_get_video_meta(b.get()) != nullptr;
        negotiated->reset(gst_pad_get_current_caps(h->sinkpad));
        GstVideoInfo info;
        gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, kW, kH);
        GstVideoFrame frame;
        if (gst_video_frame_map(&frame, &info, b.get(), GST_MAP_READ)) {
            for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&frame); ++p) {
                const auto* base =
                    static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, p));
                const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p);
                const int rows_n = GST_VIDEO_FRAME_COMP_HEIGHT(&frame, p == 0 ? 0 : 1);
                for (int y = 0; y < rows_n; ++y)
                    rows.insert(rows.end(), base + y * stride, base + y * stride + kW);
            }
            gst_video_frame_unmap(&frame);
        }
    }
    gst_harness_teardown(h);
    return rows;
}

TEST(DmaDrm, TensorTestSrcProducesLinearDmaDrmWhenAskedWithTheSamePixels)
{
    bool plain_meta = false;
    CapsPtr plain_caps;
    const std::vector<uint8_t> plain = testsrc_frame(kPlainNv12, &plain_meta, &plain_caps);
    ASSERT_EQ(plain.size(), size_t(kW) * kH * 3 / 2);
    if (!eg::dma_drm_negotiated()) {
        GstElement* e = gst_element_factory_make("tensortestsrc", nullptr);
        ASSERT_NE(e, nullptr);
        GstPad* src = gst_element_get_static_pad(e, "src");
        CapsPtr templ(gst_pad_get_pad_template_caps(src));
        EXPECT_FALSE(has_dma_drm(templ.get())); // 1.22: as before
        gst_object_unref(src);
        gst_object_unref(e);
        return;
    }
    bool drm_meta = false;
    CapsPtr drm_caps;
    const std::vector<uint8_t> drm = testsrc_frame(kDrmNv12, &drm_meta, &drm_caps);
    ASSERT_TRUE(drm_caps);
    EXPECT_TRUE(eg::is_dma_drm_structure(drm_caps.get(), 0));
    EXPECT_STREQ(gst_structure_get_string(gst_caps_get_structure(drm_caps.get(), 0), "drm-format"),
                 "NV12");
    EXPECT_TRUE(drm_meta) << "DMA_DRM frames must carry GstVideoMeta";
    EXPECT_EQ(drm, plain);
    // Downstream that takes anything still gets system-memory caps first, as before.
    CapsPtr any_caps;
    bool any_meta = false;
    (void)testsrc_frame("video/x-raw,format=NV12,width=64,height=32", &any_meta, &any_caps);
    ASSERT_TRUE(any_caps);
    EXPECT_FALSE(eg::is_dma_drm_structure(any_caps.get(), 0));
}

TEST(DmaDrm, LinearDmaDrmTravelsThroughTensorIpcWithItsVideoMeta)
{
    if (!eg::dma_drm_negotiated()) {
        for (const char* name : {"tensoripcsink", "tensoripcsrc"}) {
            GstElement* e = gst_element_factory_make(name, nullptr);
            ASSERT_NE(e, nullptr) << name;
            GstPad* pad = gst_element_get_static_pad(e, GST_IS_BASE_SINK(e) ? "sink" : "src");
            CapsPtr templ(gst_pad_get_pad_template_caps(pad));
            EXPECT_FALSE(has_dma_drm(templ.get())) << name << ": 1.22, as before";
            gst_object_unref(pad);
            gst_object_unref(e);
        }
        return;
    }
    load_system_plugins();
    SocketDir dir;
    Pipeline tx(std::string("tensortestsrc num-buffers=3 pattern=frame-counter ! ") + kDrmNv12 +
                " ! tensoripcsink name=sink socket-path=" + dir.path() +
                " wait-for-connection=true block=true sync=false");
    Pipeline rx("tensoripcsrc name=src socket-path=" + dir.path() +
                " ! appsink name=out sync=false max-buffers=8 enable-last-sample=false");
    ASSERT_TRUE(tx && rx);
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    for (guint64 n = 0; n < 3; ++n) {
        MiniObjectPtr<GstSample> sample(
            gst_app_sink_try_pull_sample(GST_APP_SINK(rx.by_name("out")), 5 * GST_SECOND));
        ASSERT_TRUE(sample) << "frame " << n;
        GstCaps* caps = gst_sample_get_caps(sample.get());
        ASSERT_TRUE(caps);
        EXPECT_TRUE(eg::is_dma_drm_structure(caps, 0)) << "the sender's DMA_DRM caps";
        GstBuffer* b = gst_sample_get_buffer(sample.get());
        EXPECT_NE(gst_buffer_get_video_meta(b), nullptr) << "frame " << n;
        EXPECT_NE(gst_buffer_get_edge_tensor_meta(b), nullptr) << "frame " << n;
    }
    GstElement* sink = tx.by_name("sink");
    guint64 copies = 1;
    g_object_get(sink, "copies", &copies, nullptr);
    EXPECT_EQ(copies, 0u);
}

TEST(DmaDrm, TensorIpcSinkRefusesATiledModifierNamingIt_Negative)
{
    GstElement* e = gst_element_factory_make("tensoripcsink", nullptr);
    ASSERT_NE(e, nullptr);
    GstBus* bus = gst_bus_new();
    gst_element_set_bus(e, bus);
    GstPad* sink = gst_element_get_static_pad(e, "sink");
    const bool accepted = gst_pad_query_accept_caps(sink, caps_from(kTiledNv12).get());
    gst_object_unref(sink);
    const std::vector<std::string> w = bus_messages(bus, GST_MESSAGE_WARNING);
    gst_element_set_bus(e, nullptr);
    gst_object_unref(e);
    gst_object_unref(bus);
    if (!eg::dma_drm_negotiated()) {
        EXPECT_TRUE(accepted) << "1.22, as before: its bare memory:DMABuf structure takes them";
        return;
    }
    EXPECT_FALSE(accepted);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("NV12:0x0100000000000001"), std::string::npos) << w[0];
}

} // namespace
} // namespace edgetensor::test
