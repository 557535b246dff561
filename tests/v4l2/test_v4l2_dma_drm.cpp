// SPDX-License-Identifier: MIT
//
// The real camera on GStreamer >= 1.26 (issue 22): v4l2src offers its DMA-BUFs as
// `video/x-raw(memory:DMABuf), format=DMA_DRM, drm-format=YUYV` (vivid exports linear buffers),
// and tensorimport ! tensorconvert must take them as such: the caps at both elements really are
// DMA_DRM, every V4L2 buffer is imported once (misses = the buffers, by inode; the rest hits),
// nothing is copied, and the pixels and tensors are those of the system-memory path
// (`io-mode=mmap`, plain video/x-raw). Before our elements read DMA_DRM these tests fail: the
// first because the chain falls back to system-memory caps, the second at negotiation.
//
// Built on every GStreamer and run in every VM lane; below 1.26 (no DMA_DRM from v4l2src) it
// skips with that reason, unless EDGETENSOR_TEST_REQUIRE_DMA_DRM=1 (set where the build's
// GStreamer is >= 1.26: the 1.26 compat lane's guest), which makes it fail instead. See
// tests/v4l2/meson.build and docs/testing.md.

#include "v4l2_pipeline.hpp"
#include "vivid.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#ifndef ET_V4L2_DRM_FRAMES
#define ET_V4L2_DRM_FRAMES 90
#endif

namespace
{

using namespace edgetensor::test::v4l2;

constexpr int kFrames = ET_V4L2_DRM_FRAMES;
constexpr int kWidth = 320;
constexpr int kHeight = 180;
constexpr int kRowBytes = kWidth * 2; // YUY2
constexpr const char* kSize = "width=(int)320, height=(int)180, framerate=(fraction)60/1";
constexpr const char* kDmaDrm = "video/x-raw(memory:DMABuf), format=(string)DMA_DRM, "
                                "drm-format=(string)YUYV";
constexpr const char* kSystem = "video/x-raw, format=(string)YUY2";
// vivid's on-screen text (frame counter, clock) off: every frame of its static colour bars is
// then the same picture, so two runs (two memory paths) can be compared frame for frame.
constexpr const char* kControls = "c,osd_text_mode=2";
// Float output: any difference in the bytes read changes the tensor.
constexpr const char* kConvert = "tensorconvert name=conv compute=cpu width=160 height=90 "
                                 "dtype=float32 layout=chw mean=127.5 std=127.5";

// What the probes saw, and what the elements reported, in one run.
struct ChainRun {
    std::mutex mu;
    int frames_in = 0;
    int frames_out = 0;
    bool all_dmabuf = true;
    bool all_edgetensor = true;
    std::set<guint64> v4l2_inodes; // the buffers v4l2src pushed, at tensorimport's sink
    // The first frame's visible picture (rows without padding) and output tensor; the frames
    // after it that differ from them.
    std::vector<uint8_t> picture;
    std::vector<uint8_t> tensor;
    int pictures_differing = 0;
    int tensors_differing = 0;
    std::string unmappable;
    // Read once the stream ended, before the pipeline stops.
    std::string import_caps;  // at tensorimport's sink
    std::string convert_caps; // at tensorconvert's sink
    StructurePtr stats;       // tensorimport's edgetensor-stats
    guint64 convert_hits = 0;
    guint64 convert_misses = 0;
};

// The picture's visible bytes, at the offset and stride its GstVideoMeta gives (v4l2src adds
// one for DMA_DRM caps, whose layout the caps alone do not give) or packed rows without one.
std::optional<std::vector<uint8_t>> visible_picture(GstBuffer* buf)
{
    gsize offset = 0;
    gint stride = kRowBytes;
    if (const GstVideoMeta* vm = gst_buffer_get_video_meta(buf)) {
        offset = vm->offset[0];
        stride = vm->stride[0];
    }
    GstMapInfo map;
    if (stride < kRowBytes || !gst_buffer_map(buf, &map, GST_MAP_READ))
        return std::nullopt;
    std::optional<std::vector<uint8_t>> rows;
    if (offset + gsize(stride) * (kHeight - 1) + kRowBytes <= map.size) {
        rows.emplace(size_t(kRowBytes) * kHeight);
        for (int y = 0; y < kHeight; ++y)
            std::memcpy(rows->data() + size_t(y) * kRowBytes, map.data + offset + gsize(y) * stride,
                        kRowBytes);
    }
    gst_buffer_unmap(buf, &map);
    return rows;
}

// Keeps `bytes` as the first frame's, or counts it when it differs from the first.
void keep_or_compare(std::vector<uint8_t>* first, int* differing, std::vector<uint8_t> bytes)
{
    if (first->empty())
        *first = std::move(bytes);
    else if (*first != bytes)
        ++*differing;
}

GstPadProbeReturn on_import_sink(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* run = static_cast<ChainRun*>(data);
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMemory* mem = gst_buffer_peek_memory(buf, 0);
    auto picture = visible_picture(buf);
    std::lock_guard<std::mutex> lock(run->mu);
    run->frames_in++;
    run->all_dmabuf = run->all_dmabuf && gst_is_dmabuf_memory(mem);
    run->all_edgetensor = run->all_edgetensor && gst_is_edge_tensor_memory(mem);
    if (gst_is_dmabuf_memory(mem))
        run->v4l2_inodes.insert(inode_of(gst_dmabuf_memory_get_fd(mem)));
    if (!picture)
        run->unmappable = "frame " + std::to_string(run->frames_in) + " at tensorimport's sink";
    else
        keep_or_compare(&run->picture, &run->pictures_differing, std::move(*picture));
    return GST_PAD_PROBE_OK;
}

GstPadProbeReturn on_convert_src(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* run = static_cast<ChainRun*>(data);
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMapInfo map;
    const bool mapped = gst_buffer_map(buf, &map, GST_MAP_READ);
    std::lock_guard<std::mutex> lock(run->mu);
    run->frames_out++;
    if (!mapped) {
        run->unmappable = "tensor " + std::to_string(run->frames_out) + " of tensorconvert";
        return GST_PAD_PROBE_OK;
    }
    keep_or_compare(&run->tensor, &run->tensors_differing,
                    std::vector<uint8_t>(map.data, map.data + map.size));
    gst_buffer_unmap(buf, &map);
    return GST_PAD_PROBE_OK;
}

std::string current_caps(GstElement* element, const char* pad_name)
{
    GstPad* pad = gst_element_get_static_pad(element, pad_name);
    GstCaps* caps = gst_pad_get_current_caps(pad);
    gst_object_unref(pad);
    if (!caps)
        return "(no caps)";
    gchar* s = gst_caps_to_string(caps);
    std::string out = s;
    g_free(s);
    gst_caps_unref(caps);
    return out;
}

constexpr const char* kFellBack =
    "no memory:DMABuf feature: the chain fell back to system-memory caps";

// Why `caps` (as a string) are not the DMA_DRM caps vivid's YUYV buffers travel in; empty when
// they are.
std::string not_dma_drm(const std::string& caps_string)
{
    GstCaps* caps = gst_caps_from_string(caps_string.c_str());
    if (!caps || gst_caps_get_size(caps) != 1) {
        if (caps)
            gst_caps_unref(caps);
        return "not one fixed structure";
    }
    std::string why;
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    GstCapsFeatures* f = gst_caps_get_features(caps, 0);
    const char* format = gst_structure_get_string(s, "format");
    const char* drm = gst_structure_get_string(s, "drm-format");
    if (!f || !gst_caps_features_contains(f, GST_CAPS_FEATURE_MEMORY_DMABUF))
        why = kFellBack;
    else if (!format || std::strcmp(format, "DMA_DRM") != 0)
        why = "format is not DMA_DRM";
    else if (!drm || std::strcmp(drm, "YUYV") != 0)
        why = "drm-format is not YUYV (linear)";
    gst_caps_unref(caps);
    return why;
}

/// Runs v4l2src `io_mode` through a capsfilter of `caps` into tensorimport and tensorconvert
/// to EOS; fills `run`. A failure to start or to reach EOS is a test failure.
void capture(const std::string& device, const char* io_mode, const std::string& caps,
             const char* copy_mode, ChainRun* run)
{
    const std::string desc =
        "v4l2src device=" + device + " io-mode=" + io_mode +
        " num-buffers=" + std::to_string(kFrames) + " extra-controls=\"" + kControls +
        "\" ! capsfilter name=filter ! tensorimport name=imp copy-mode=" + copy_mode + " ! " +
        kConvert + " ! fakesink sync=false";
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
    ASSERT_TRUE(pipeline) << desc << ": " << (err ? err->message : "?");
    GstElement* filter = gst_bin_get_by_name(GST_BIN(pipeline), "filter");
    GstElement* imp = gst_bin_get_by_name(GST_BIN(pipeline), "imp");
    GstElement* conv = gst_bin_get_by_name(GST_BIN(pipeline), "conv");
    GstCaps* filter_caps = gst_caps_from_string(caps.c_str());
    g_object_set(filter, "caps", filter_caps, nullptr);
    gst_caps_unref(filter_caps);
    GstPad* imp_sink = gst_element_get_static_pad(imp, "sink");
    GstPad* conv_src = gst_element_get_static_pad(conv, "src");
    gst_pad_add_probe(imp_sink, GST_PAD_PROBE_TYPE_BUFFER, on_import_sink, run, nullptr);
    gst_pad_add_probe(conv_src, GST_PAD_PROBE_TYPE_BUFFER, on_convert_src, run, nullptr);

    RunEnd end = run_to_eos(pipeline);
    run->import_caps = current_caps(imp, "sink");
    run->convert_caps = current_caps(conv, "sink");
    g_object_get(conv, "cache-hits", &run->convert_hits, "cache-misses", &run->convert_misses,
                 nullptr);
    run->stats = std::move(end.stats);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(imp_sink);
    gst_object_unref(conv_src);
    gst_object_unref(conv);
    gst_object_unref(imp);
    gst_object_unref(filter);
    gst_object_unref(pipeline);

    gchar* stats = run->stats ? gst_structure_to_string(run->stats.get()) : nullptr;
    std::printf("io-mode=%s, %d frames in %.1f s\n  caps at tensorimport: %s\n  "
                "caps at tensorconvert: %s\n  tensorimport: %s\n  tensorconvert: "
                "cache-hits=%" G_GUINT64_FORMAT " cache-misses=%" G_GUINT64_FORMAT "\n",
                io_mode, kFrames, end.seconds, run->import_caps.c_str(), run->convert_caps.c_str(),
                stats ? stats : "(none)", run->convert_hits, run->convert_misses);
    g_free(stats);
    ASSERT_TRUE(end.error.empty())
        << "io-mode=" << io_mode << ", caps " << caps << ": " << end.error;
    ASSERT_TRUE(run->stats) << "no edgetensor-stats message at EOS";
    EXPECT_EQ(run->frames_in, kFrames);
    EXPECT_EQ(run->frames_out, kFrames);
    EXPECT_EQ(stat_u64(run->stats.get(), "frames"), guint64(kFrames));
    EXPECT_TRUE(run->unmappable.empty()) << "could not map " << run->unmappable;
}

class V4l2DmaDrm : public ::testing::Test
{
protected:
    void SetUp() override
    {
        guint major = 0, minor = 0, micro = 0, nano = 0;
        gst_version(&major, &minor, &micro, &nano);
        if (major == 1 && minor < 26) {
            const std::string why = "GStreamer " + std::to_string(major) + "." +
                                    std::to_string(minor) + "." + std::to_string(micro) +
                                    ": v4l2src offers DMA_DRM caps from 1.26 on (the 1.26 "
                                    "compat lane's guest runs this test)";
            const char* required = std::getenv("EDGETENSOR_TEST_REQUIRE_DMA_DRM");
            if (required && std::strcmp(required, "1") == 0)
                FAIL() << "EDGETENSOR_TEST_REQUIRE_DMA_DRM=1 but " << why;
            GTEST_SKIP() << why;
        }
        // v4l2src, capsfilter and fakesink are system plugins the test environment leaves out.
        ASSERT_EQ(load_system_plugins({"libgstvideo4linux2.so", "libgstcoreelements.so"}), "");
        ET_REQUIRE_VIVID_OR_SKIP(device_);
    }

    /// The system-memory path, once per test program: io-mode=mmap in plain video/x-raw.
    static const ChainRun& reference(const std::string& device)
    {
        static ChainRun* ref = nullptr;
        if (!ref) {
            ref = new ChainRun;
            capture(device, "mmap", std::string(kSystem) + ", " + kSize, "auto", ref);
        }
        return *ref;
    }

    /// The zero-copy figures of a DMA_DRM run and its pixels against the system-memory path.
    void expect_dma_drm_chain(const ChainRun& run, bool expect_our_pool)
    {
        EXPECT_EQ(not_dma_drm(run.import_caps), "") << "tensorimport's sink: " << run.import_caps;
        EXPECT_EQ(not_dma_drm(run.convert_caps), "")
            << "tensorconvert's sink: " << run.convert_caps;
        EXPECT_TRUE(run.all_dmabuf) << "v4l2src must push DMA-BUF memory";
        if (expect_our_pool) {
            EXPECT_TRUE(run.all_edgetensor)
                << "with dmabuf-import v4l2src must capture into tensorimport's pool";
        }
        ASSERT_GE(run.v4l2_inodes.size(), 2u);
        const guint64 buffers = run.v4l2_inodes.size();
        EXPECT_EQ(stat_u64(run.stats.get(), "copies", 1), 0u);
        EXPECT_EQ(stat_u64(run.stats.get(), "misses"), buffers)
            << "one import per distinct V4L2 buffer";
        EXPECT_EQ(stat_u64(run.stats.get(), "hits"), guint64(kFrames) - buffers);
        EXPECT_EQ(cached_inodes(run.stats.get()), run.v4l2_inodes)
            << "the cached tensors must be the V4L2 buffers themselves";

        const ChainRun& ref = reference(device_);
        ASSERT_FALSE(ref.picture.empty()) << "the system-memory path gave no picture";
        EXPECT_EQ(not_dma_drm(ref.import_caps), kFellBack)
            << "the reference must be the system-memory path: " << ref.import_caps;
        // Static colour bars: every frame of a run is the same, so frames compare across runs.
        EXPECT_EQ(ref.pictures_differing, 0) << "vivid's frames differ (on-screen text?)";
        EXPECT_EQ(ref.tensors_differing, 0);
        EXPECT_EQ(run.pictures_differing, 0);
        EXPECT_EQ(run.tensors_differing, 0);
        EXPECT_TRUE(run.picture == ref.picture)
            << "the DMA_DRM frame's pixels differ from the system-memory frame's";
        EXPECT_FALSE(run.tensor.empty());
        EXPECT_TRUE(run.tensor == ref.tensor)
            << "tensorconvert's tensor from DMA_DRM differs from the system-memory path's";
        bool nonzero = false;
        for (size_t i = 0; i < run.picture.size() && !nonzero; i += 97)
            nonzero = run.picture[i] != 0;
        EXPECT_TRUE(nonzero) << "the camera wrote nothing into the buffers";
    }

    std::string device_;
};

// The pipeline a user writes, letting v4l2src choose: DMA_DRM must win over system memory.
TEST_F(V4l2DmaDrm, DmabufIoModeNegotiatesDmaDrmIntoTensorimportAndTensorconvert)
{
    ChainRun run;
    capture(device_, "dmabuf",
            std::string(kDmaDrm) + ", " + kSize + "; " + std::string(kSystem) + ", " + kSize,
            "never", &run);
    if (HasFatalFailure())
        return;
    expect_dma_drm_chain(run, false);
    // Foreign DMA-BUFs reach tensorconvert too: its own cache imports each buffer once.
    const guint64 buffers = run.v4l2_inodes.size();
    EXPECT_EQ(run.convert_misses, buffers);
    EXPECT_EQ(run.convert_hits, guint64(kFrames) - buffers);
}

// DMA_DRM asked for explicitly, with v4l2src capturing into the pool tensorimport proposes.
TEST_F(V4l2DmaDrm, DmabufImportIoModeCapturesIntoThePoolUnderDmaDrmCaps)
{
    ChainRun run;
    capture(device_, "dmabuf-import", std::string(kDmaDrm) + ", " + kSize, "never", &run);
    if (HasFatalFailure())
        return;
    expect_dma_drm_chain(run, true);
}

} // namespace
