// SPDX-License-Identifier: MIT
//
// tensorconvert compute=auto|cpu|gl in whole pipelines: GL output equals the CPU engine's,
// every copy shows in gl-stats, a host without an EGL display gets a clear error for
// compute=gl (and the CPU for auto), state cycles with a GL converter, and in the VM lane a
// 300-frame pipeline over vgem buffers imports each distinct buffer once and hits after that.

#include "gst_test_util.hpp"
#include "require.hpp"

#include <gst/app/gstappsink.h>

#include <edgetensor/convert.hpp>
#include <edgetensor/gl.hpp>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

bool env_is(const char* name, const char* value)
{
    const char* v = std::getenv(name);
    return v && std::strcmp(v, value) == 0;
}

/// Skips (or fails, with EDGETENSOR_TEST_REQUIRE_GL=1) when no GL context can be had.
#define ET_GL_OR_SKIP()                                                                            \
    do {                                                                                           \
        auto probe_ = GlContext::probe();                                                          \
        if (!probe_) {                                                                             \
            if (env_is("EDGETENSOR_TEST_REQUIRE_GL", "1"))                                         \
                FAIL() << "EDGETENSOR_TEST_REQUIRE_GL=1: " << probe_.error().message();            \
            GTEST_SKIP() << probe_.error().message();                                              \
        }                                                                                          \
    } while (0)

struct PipelineRun {
    std::vector<std::vector<uint8_t>> frames; // tight rows of every output frame
    GstStructure* gl_stats = nullptr;         // owned
    std::string error;
    std::set<uint64_t> in_ids, out_ids; // BufferIdentity ids seen on tensorconvert's pads
    std::string active;
    ~PipelineRun()
    {
        if (gl_stats)
            gst_structure_free(gl_stats);
    }
    guint64 stat(const char* f) const
    {
        guint64 v = 0;
        if (gl_stats)
            gst_structure_get_uint64(gl_stats, f, &v);
        return v;
    }
};

GstPadProbeReturn collect_identity(GstPad*, GstPadProbeInfo* info, gpointer ids)
{
    if (auto t = gst::tensor_from_buffer(GST_PAD_PROBE_INFO_BUFFER(info)))
        static_cast<std::set<uint64_t>*>(ids)->insert(t->buffer_identity().id());
    return GST_PAD_PROBE_OK;
}

/// GStreamer's own elements these pipelines use, loaded by file: the test environment empties
/// the system plugin path, so no unrelated plugin is loaded (or scanned) into the process.
bool load_stock_plugins()
{
    static const bool ok = [] {
        Dl_info info{};
        if (!dladdr(reinterpret_cast<void*>(&gst_init), &info) || !info.dli_fname)
            return false;
        const auto dir = std::filesystem::path(info.dli_fname).parent_path() / "gstreamer-1.0";
        for (const char* name : {"coreelements", "app", "videotestsrc"}) {
            const std::string file = (dir / (std::string("libgst") + name + ".so")).string();
            GError* err = nullptr;
            GstPlugin* p = gst_plugin_load_file(file.c_str(), &err);
            if (!p) {
                ADD_FAILURE() << "cannot load " << file << ": " << (err ? err->message : "?")
                              << " (install gstreamer1.0-plugins-base)";
                g_clear_error(&err);
                return false;
            }
            gst_object_unref(p);
        }
        return true;
    }();
    return ok;
}

/// Runs `pipeline` (it must contain "tensorconvert name=conv" and end in "appsink name=sink")
/// to EOS, `cycles` times through PLAYING and back to NULL. Frames of the last cycle are kept.
void run(const std::string& pipeline, PipelineRun& out, int cycles = 1)
{
    if (!load_stock_plugins()) {
        out.error = "stock plugins missing";
        return;
    }
    GError* err = nullptr;
    GstElement* p = gst_parse_launch(pipeline.c_str(), &err);
    if (!p) {
        out.error = err ? err->message : "parse failed";
        g_clear_error(&err);
        return;
    }
    gst::GstObjectPtr<GstElement> pipe(p);
    gst::GstObjectPtr<GstElement> conv(gst_bin_get_by_name(GST_BIN(p), "conv"));
    gst::GstObjectPtr<GstElement> sink(gst_bin_get_by_name(GST_BIN(p), "sink"));
    EXPECT_TRUE(conv && sink);
    if (!conv || !sink)
        return;
    gst::GstObjectPtr<GstPad> sinkpad(gst_element_get_static_pad(conv.get(), "sink"));
    gst::GstObjectPtr<GstPad> srcpad(gst_element_get_static_pad(conv.get(), "src"));
    gst_pad_add_probe(sinkpad.get(), GST_PAD_PROBE_TYPE_BUFFER, collect_identity, &out.in_ids,
                      nullptr);
    gst_pad_add_probe(srcpad.get(), GST_PAD_PROBE_TYPE_BUFFER, collect_identity, &out.out_ids,
                      nullptr);
    for (int c = 0; c < cycles; ++c) {
        out.frames.clear();
        if (gst_element_set_state(p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
            out.error = "cannot go to PLAYING";
        }
        while (out.error.empty()) {
            GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink.get()), 20 * GST_SECOND);
            if (!s)
                break; // EOS, an error, or a timeout: the bus says which
            GstBuffer* b = gst_sample_get_buffer(s);
            GstVideoInfo info;
            GstMapInfo map;
            std::vector<uint8_t> tight;
            if (gst_video_info_from_caps(&info, gst_sample_get_caps(s))) {
                GstVideoFrame f;
                if (gst_video_frame_map(&f, &info, b, GST_MAP_READ)) {
                    const size_t row = size_t(GST_VIDEO_INFO_WIDTH(&info)) *
                                       size_t(GST_VIDEO_FORMAT_INFO_PSTRIDE(info.finfo, 0));
                    for (gint y = 0; y < GST_VIDEO_INFO_HEIGHT(&info); ++y) {
                        const auto* r =
                            static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0)) +
                            size_t(y) * size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0));
                        tight.insert(tight.end(), r, r + row);
                    }
                    gst_video_frame_unmap(&f);
                }
            } else if (gst_buffer_map(b, &map, GST_MAP_READ)) {
                tight.assign(map.data, map.data + map.size);
                gst_buffer_unmap(b, &map);
            }
            out.frames.push_back(std::move(tight));
            gst_sample_unref(s);
        }
        gst::GstObjectPtr<GstBus> bus(gst_element_get_bus(p));
        while (GstMessage* m = gst_bus_pop_filtered(bus.get(), GST_MESSAGE_ERROR)) {
            GError* e = nullptr;
            gchar* dbg = nullptr;
            gst_message_parse_error(m, &e, &dbg);
            out.error += std::string(e ? e->message : "?") + " | " + (dbg ? dbg : "") + "\n";
            g_clear_error(&e);
            g_free(dbg);
            gst_message_unref(m);
        }
        if (out.gl_stats)
            gst_structure_free(out.gl_stats);
        out.gl_stats = nullptr;
        g_object_get(conv.get(), "gl-stats", &out.gl_stats, nullptr);
        EXPECT_EQ(gst_element_set_state(p, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
        if (!out.error.empty())
            return;
    }
}

/// Largest byte difference between the frames of two runs (both must have the same frames).
int worst(const PipelineRun& a, const PipelineRun& b)
{
    EXPECT_EQ(a.frames.size(), b.frames.size());
    int w = 0;
    for (size_t i = 0; i < a.frames.size() && i < b.frames.size(); ++i) {
        EXPECT_EQ(a.frames[i].size(), b.frames[i].size()) << "frame " << i;
        for (size_t k = 0; k < a.frames[i].size() && k < b.frames[i].size(); ++k)
            w = std::max(w, std::abs(int(a.frames[i][k]) - int(b.frames[i][k])));
    }
    return w;
}

std::string testsrc_pipeline(const std::string& compute, int frames, const std::string& convert,
                             int w = 320, int h = 240)
{
    return "tensortestsrc num-buffers=" + std::to_string(frames) +
           " ! video/x-raw,format=NV12,width=" + std::to_string(w) +
           ",height=" + std::to_string(h) +
           ",colorimetry=bt709 ! tensorconvert name=conv compute=" + compute + " " + convert +
           " ! appsink name=sink sync=false";
}

TEST(TensorConvertGl, ComputePropertyDefaultsToAuto)
{
    GstElement* e = gst_element_factory_make("tensorconvert", nullptr);
    ASSERT_TRUE(e);
    gint v = -1;
    g_object_get(e, "compute", &v, nullptr);
    EXPECT_EQ(v, 0) << "auto";
    gst_util_set_object_arg(G_OBJECT(e), "compute", "gl");
    g_object_get(e, "compute", &v, nullptr);
    EXPECT_EQ(v, 2);
    GstStructure* s = nullptr;
    g_object_get(e, "gl-stats", &s, nullptr);
    ASSERT_TRUE(s);
    guint64 hits = 1;
    EXPECT_TRUE(gst_structure_get_uint64(s, "hits", &hits));
    EXPECT_EQ(hits, 0u);
    for (const char* f : {"misses", "evictions", "swept", "entries", "uploads",
                          "zero-copy-declines", "readbacks", "direct-imports", "direct-declines"})
        EXPECT_TRUE(gst_structure_has_field(s, f)) << f;
    gst_structure_free(s);
    gst_object_unref(e);
}

TEST(TensorConvertGl, GlOutputEqualsTheCpuEnginesInAPipeline)
{
    ET_GL_OR_SKIP();
    for (const std::string& convert :
         {std::string("width=224 height=160 letterbox=true fill-color=0x727272 ! "
                      "video/x-raw,format=RGB"),
          std::string("width=96 height=64 dtype=float32 layout=chw std=255 ! other/tensors")}) {
        PipelineRun cpu, gl;
        run(testsrc_pipeline("cpu", 12, convert), cpu);
        run(testsrc_pipeline("gl", 12, convert), gl);
        ASSERT_EQ(cpu.error, "");
        ASSERT_EQ(gl.error, "");
        ASSERT_EQ(gl.frames.size(), 12u);
        if (convert.find("float32") == std::string::npos) {
            EXPECT_LE(worst(gl, cpu), 2) << convert;
        } else {
            double w = 0;
            for (size_t i = 0; i < gl.frames.size(); ++i)
                for (size_t k = 0; k + 4 <= gl.frames[i].size(); k += 4) {
                    float a, b;
                    std::memcpy(&a, gl.frames[i].data() + k, 4);
                    std::memcpy(&b, cpu.frames[i].data() + k, 4);
                    w = std::max(w, double(std::fabs(a - b)));
                }
            EXPECT_LE(w, 2e-2) << convert;
        }
        // Every frame went through GL: imported (hits/misses) or uploaded, never silently.
        if (is_dma_available()) {
            EXPECT_GE(gl.stat("hits") + gl.stat("misses") + gl.stat("uploads") / 2, 12u);
        } else {
            EXPECT_EQ(gl.stat("uploads"), 24u) << "two NV12 planes per frame: " << convert;
            EXPECT_EQ(gl.stat("readbacks"), 12u) << convert;
        }
        EXPECT_EQ(cpu.stat("uploads") + cpu.stat("misses"), 0u);
    }
}

TEST(TensorConvertGl, SystemMemoryInputIsUploadedAndCounted)
{
    ET_GL_OR_SKIP();
    PipelineRun r;
    run("videotestsrc num-buffers=10 pattern=ball ! "
        "video/x-raw,format=I420,width=320,height=240 ! tensorconvert name=conv compute=gl "
        "width=160 height=120 ! video/x-raw,format=RGB ! appsink name=sink sync=false",
        r);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.frames.size(), 10u);
    EXPECT_EQ(r.stat("uploads"), 30u) << "three I420 planes per frame";
    EXPECT_EQ(r.stat("zero-copy-declines"), 0u) << "system memory never was zero-copy";
    EXPECT_EQ(r.stat("hits") + r.stat("misses"), 0u);
}

TEST(TensorConvertGl, CyclesStatesWithAGlConverter)
{
    ET_GL_OR_SKIP();
    PipelineRun r;
    run(testsrc_pipeline("gl", 5, "width=64 height=48 ! video/x-raw,format=RGB"), r, 4);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.frames.size(), 5u) << "the last of four PLAYING/NULL cycles";
    // A new converter, and GL context use, per cycle: nothing is left behind between them.
    PipelineRun again;
    run(testsrc_pipeline("gl", 3, "width=80 height=40 ! video/x-raw,format=RGB"), again, 2);
    ASSERT_EQ(again.error, "");
    EXPECT_EQ(again.frames.size(), 3u);
}

TEST(TensorConvertGl, NoEglDisplay_ComputeGlIsAClearErrorAndAutoUsesTheCpu)
{
    if (!std::getenv("__EGL_VENDOR_LIBRARY_FILENAMES") && !std::getenv("EDGETENSOR_EGL_LIBRARY"))
        GTEST_SKIP() << "run by the gst-tensorconvert-gl-no-display test (no EGL vendor)";
    PipelineRun gl;
    run(testsrc_pipeline("gl", 3, "width=64 height=48 ! video/x-raw,format=RGB"), gl);
    EXPECT_NE(gl.error.find("compute=gl"), std::string::npos) << gl.error;
    EXPECT_NE(gl.error.find("EGL"), std::string::npos) << gl.error;
    PipelineRun automatic;
    run(testsrc_pipeline("auto", 3, "width=64 height=48 ! video/x-raw,format=RGB"), automatic);
    EXPECT_EQ(automatic.error, "");
    EXPECT_EQ(automatic.frames.size(), 3u);
}

TEST(TensorConvertGl, VgemPipelineImportsEachBufferOnceAndMatchesTheCpu)
{
    ET_REQUIRE_DMA_OR_SKIP();
    ET_GL_OR_SKIP();
    if (!GlContext::probe()->dma_buf_import) {
        if (env_is("EDGETENSOR_TEST_REQUIRE_GL_IMPORT", "1"))
            FAIL() << "EDGETENSOR_TEST_REQUIRE_GL_IMPORT=1 but the EGL display cannot import";
        GTEST_SKIP() << "no EGL_EXT_image_dma_buf_import here";
    }
    const char* providers = std::getenv("EDGETENSOR_DMA_PROVIDERS");
    if (!providers || std::strcmp(providers, "drm-prime") != 0)
        GTEST_SKIP() << "needs EDGETENSOR_DMA_PROVIDERS=drm-prime (vgem buffers; heap buffers "
                        "read zeros through GL)";
    // RGBA rows of 256 bytes: GStreamer's default layout is already 64-byte aligned, so the
    // output pool is DMA-BUF too (vgem) and GL renders straight into it.
    const std::string convert = "format=rgba width=64 height=48 ! video/x-raw,format=RGBA";
    PipelineRun gl, cpu;
    run(testsrc_pipeline("gl", 300, convert, 160, 120), gl);
    run(testsrc_pipeline("cpu", 300, convert, 160, 120), cpu);
    ASSERT_EQ(gl.error, "");
    ASSERT_EQ(cpu.error, "");
    ASSERT_EQ(gl.frames.size(), 300u);
    EXPECT_LE(worst(gl, cpu), 2) << "GL output must equal the CPU engine's";
    const uint64_t distinct = gl.in_ids.size() + gl.out_ids.size();
    gst::GCharPtr stats(gst_structure_to_string(gl.gl_stats));
    std::printf("gl-stats after 300 frames: %s; %zu source and %zu destination buffers\n",
                stats.get(), gl.in_ids.size(), gl.out_ids.size());
    // NV12 sources are imported directly (one EGLImage of all planes) where the driver offers
    // it and its pixels pass; a decline ends that for the converter (one extra import).
    EXPECT_LE(gl.stat("direct-declines"), 1u);
    if (gl.stat("direct-declines") == 0 && gl.stat("direct-imports") > 0) {
        EXPECT_EQ(gl.stat("direct-imports"), gl.in_ids.size()) << "one per source buffer";
    }
    EXPECT_EQ(gl.stat("misses"), distinct + gl.stat("direct-declines"))
        << "one import per distinct buffer (both pools)";
    EXPECT_EQ(gl.stat("hits"), 2u * 300u - distinct) << "the rest hit";
    EXPECT_EQ(gl.stat("uploads"), 0u);
    EXPECT_EQ(gl.stat("zero-copy-declines"), 0u);
    EXPECT_EQ(gl.stat("readbacks"), 0u) << "rendered straight into the vgem output buffers";
    EXPECT_LE(gl.in_ids.size(), 8u) << "a pool, not a buffer per frame";
}

} // namespace
} // namespace edgetensor::test
