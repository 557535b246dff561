// SPDX-License-Identifier: MIT
//
// tensorconvert compute=gl and tiled DMA_DRM (GStreamer 1.24+, issue 22 item 3): its sink
// answers caps queries with the drm-formats the GL converter imports directly, modifiers
// included, as GlContext::dma_buf_formats() lists them (here replaced through
// EDGETENSOR_GL_DMABUF_MODIFIERS, so the caps are tested on any host); a tiled drm-format it does
// not list is refused naming it; compute=cpu and auto, tensorimport and the stream layout keep
// reading linear only; and a listed tiled stream is never read as linear rows: where the GL
// cannot import it (the host's llvmpipe has no direct import) the stream fails naming it. Without
// a GL context the answer is linear only. Built against 1.22 nothing of this exists.

#include "dma_drm.hpp"
#include "dma_drm_test_util.hpp"
#include "element_harness.hpp"
#include "stream_layout.hpp"

#include <gst/allocators/allocators.h>
#include <gst/video/video.h>

#include <edgetensor/gl.hpp>
#include <edgetensor/unique_fd.hpp>

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

namespace eg = edgetensor::gst;

constexpr const char* kModifiers = "NV12:0x0,0x0100000000000001";
constexpr const char* kListed = "NV12:0x0100000000000001";
constexpr const char* kTiledNv12 = "video/x-raw(memory:DMABuf),format=DMA_DRM,"
                                   "drm-format=NV12:0x0100000000000001,width=64,height=32,"
                                   "framerate=30/1";
constexpr const char* kUnlistedNv12 = "video/x-raw(memory:DMABuf),format=DMA_DRM,"
                                      "drm-format=NV12:0x0100000000000002,width=64,height=32,"
                                      "framerate=30/1";

// The replacement of the GL display's answer, for one test.
struct ModifierList {
    explicit ModifierList(const char* text) { setenv("EDGETENSOR_GL_DMABUF_MODIFIERS", text, 1); }
    ~ModifierList() { unsetenv("EDGETENSOR_GL_DMABUF_MODIFIERS"); }
};

bool gl_context()
{
    return bool(GlContext::shared());
}

std::set<std::string> tiled_of(const std::set<std::string>& names)
{
    std::set<std::string> out;
    for (const std::string& n : names)
        if (n.find(':') != std::string::npos)
            out.insert(n);
    return out;
}

CapsPtr sink_answer(ElementHarness& h)
{
    GstPad* sink = gst_element_get_static_pad(h.element, "sink");
    CapsPtr answer(gst_pad_query_caps(sink, nullptr));
    gst_object_unref(sink);
    return answer;
}

bool accepts(ElementHarness& h, const char* caps)
{
    GstPad* sink = gst_element_get_static_pad(h.element, "sink");
    const bool ok = gst_pad_query_accept_caps(sink, caps_from(caps).get());
    gst_object_unref(sink);
    return ok;
}

TEST(DmaDrmGl, ComputeGlAnswersTheModifiersTheGlDisplayImports)
{
    ModifierList list(kModifiers);
    ElementHarness h("tensorconvert compute=gl width=32 height=16");
    CapsPtr answer = sink_answer(h);
    if (!eg::dma_drm_negotiated()) {
        EXPECT_TRUE(drm_formats_of(answer.get()).empty()); // 1.22: as before
        return;
    }
    const std::set<std::string> listed = drm_formats_of(answer.get());
    EXPECT_TRUE(listed.count("NV12"));
    if (!gl_context()) {
        // No GL worker: compute=gl fails at caps; the answer stays linear.
        EXPECT_TRUE(tiled_of(listed).empty());
        return;
    }
    EXPECT_EQ(tiled_of(listed), (std::set<std::string>{kListed}));
    // Linear DMA_DRM still leads.
    ASSERT_GT(gst_caps_get_size(answer.get()), 0u);
    EXPECT_TRUE(eg::is_dma_drm_structure(answer.get(), 0));
    EXPECT_TRUE(accepts(h, kTiledNv12));
}

TEST(DmaDrmGl, ComputeCpuAndAutoAnswerLinearOnly_Negative)
{
    ModifierList list(kModifiers);
    for (const char* launch : {"tensorconvert compute=cpu", "tensorconvert compute=auto",
                               "tensorconvert compute=gl output-mode=meta"}) {
        ElementHarness h(launch);
        EXPECT_TRUE(tiled_of(drm_formats_of(sink_answer(h).get())).empty()) << launch;
        EXPECT_FALSE(accepts(h, kTiledNv12)) << launch;
    }
}

TEST(DmaDrmGl, UnlistedTiledModifierIsRefusedNamingIt_Negative)
{
    ModifierList list(kModifiers);
    ElementHarness h("tensorconvert compute=gl width=32 height=16");
    EXPECT_FALSE(accepts(h, kUnlistedNv12));
    if (!eg::dma_drm_negotiated())
        return;
    const std::vector<std::string> w = bus_messages(h.bus.get(), GST_MESSAGE_WARNING);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("NV12:0x0100000000000002"), std::string::npos) << w[0];
    if (gl_context()) {
        // What it does read is named, the listed tiled one among them.
        EXPECT_NE(w[0].find(kListed), std::string::npos) << w[0];
    }
}

TEST(DmaDrmGl, TensorImportStillRefusesTiled_Negative)
{
    ModifierList list(kModifiers);
    ElementHarness h("tensorimport");
    const bool accepted = accepts(h, kTiledNv12);
    if (eg::dma_drm_negotiated()) {
        EXPECT_FALSE(accepted);
    }
}

TEST(DmaDrmGl, StreamLayoutTakesTiledOnlyWhenTheCallerImportsIt)
{
    CapsPtr tiled = caps_from(kTiledNv12);
    const eg::DrmFormat x_tiled{GST_MAKE_FOURCC('N', 'V', '1', '2'), 0x0100000000000001ull};
    const eg::DrmFormat other{GST_MAKE_FOURCC('N', 'V', '1', '2'), 0x0100000000000002ull};
    auto refused = eg::stream_layout_from_caps(tiled.get(), std::vector<eg::DrmFormat>{other});
    ASSERT_FALSE(refused);
    if (!eg::dma_drm_negotiated())
        return;
    EXPECT_NE(refused.error().message().find(kListed), std::string::npos);
    auto layout = eg::stream_layout_from_caps(tiled.get(), std::vector<eg::DrmFormat>{x_tiled});
    ASSERT_TRUE(layout) << layout.error().message();
    const eg::StreamLayout& l = **layout;
    EXPECT_EQ(l.memory, eg::StreamMemory::DmaDrm);
    EXPECT_EQ(l.drm.fourcc, x_tiled.fourcc);
    EXPECT_EQ(l.drm.modifier, x_tiled.modifier);
    EXPECT_EQ(GST_VIDEO_INFO_FORMAT(&l.vinfo), GST_VIDEO_FORMAT_NV12);
    EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&l.vinfo), 64);
    EXPECT_EQ(GST_VIDEO_INFO_HEIGHT(&l.vinfo), 32);
    EXPECT_EQ(GST_VIDEO_INFO_FPS_N(&l.vinfo), 30);
}

// A listed tiled stream on this host: where the GL cannot import it directly (llvmpipe: no
// EGL_EXT_image_dma_buf_import, a software renderer) the caps fail naming the drm-format; where
// it could, a memfd frame is no DMA-BUF to import and the frame fails naming it. Never an output
// read from the tiles as rows.
TEST(DmaDrmGl, ListedTiledStreamIsNeverReadAsLinear_Negative)
{
    if (!eg::dma_drm_negotiated())
        GTEST_SKIP() << "GStreamer < 1.24: no DMA_DRM caps";
    ModifierList list(kModifiers);
    if (!gl_context())
        GTEST_SKIP() << "no GL context: compute=gl cannot start";
    ElementHarness h("tensorconvert compute=gl width=32 height=16");
    gst_harness_set_src_caps_str(h.get(), kTiledNv12);
    const size_t size = 128 * 32 * 3 / 2;
    UniqueFd fd(memfd_create("dma-drm-gl-test", MFD_CLOEXEC));
    ASSERT_EQ(ftruncate(fd.get(), off_t(size)), 0);
    AllocatorPtr alloc(gst_fd_allocator_new());
    GstBuffer* b = gst_buffer_new();
    gst_buffer_append_memory(
        b, gst_fd_allocator_alloc(alloc.get(), fd.release(), size, GST_FD_MEMORY_FLAG_NONE));
    gsize offsets[GST_VIDEO_MAX_PLANES] = {0, 128 * 32};
    gint strides[GST_VIDEO_MAX_PLANES] = {128, 128};
    gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 64, 32, 2,
                                   offsets, strides);
    EXPECT_NE(gst_harness_push(h.get(), b), GST_FLOW_OK);
    EXPECT_EQ(gst_harness_buffers_in_queue(h.get()), 0u);
    const std::vector<std::string> e = bus_messages(h.bus.get(), GST_MESSAGE_ERROR);
    ASSERT_FALSE(e.empty());
    EXPECT_NE(e[0].find(kListed), std::string::npos) << e[0];
}

} // namespace
} // namespace edgetensor::test
