// SPDX-License-Identifier: MIT
//
// tensorimport behind a real V4L2 camera (vivid, in the VM lane): each V4L2 buffer is imported
// once, the rest are cache hits, nothing is copied, and the cached tensors are the V4L2
// buffers themselves (same DMA-BUF inode). Needs the vivid module; skips without it unless
// EDGETENSOR_TEST_REQUIRE_VIVID=1 (the lane sets it), which turns the skip into a failure.
//
// Frame count and format: see tests/v4l2/meson.build (ET_V4L2_FRAMES, chosen for TCG).

#include "v4l2_pipeline.hpp"
#include "vivid.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>

#ifndef ET_V4L2_FRAMES
#define ET_V4L2_FRAMES 300
#endif

namespace
{

using namespace edgetensor::test::v4l2;

constexpr int kFrames = ET_V4L2_FRAMES;
constexpr const char* kCaps = "video/x-raw,format=YUY2,width=320,height=180,framerate=60/1";

// What the two probes saw.
struct Seen {
    std::mutex mu;
    std::set<guint64> v4l2_inodes; // at tensorimport's sink: the buffers v4l2src pushed
    int frames_in = 0;
    bool all_dmabuf = true;
    bool all_edgetensor = true;
    bool nonzero_pixels = false;
    int frames_out = 0;
    int without_meta = 0;
    int not_dma = 0;
    int handle_mismatch = 0;          // meta handle's inode != the buffer's inode
    std::map<guint64, guint64> id_of; // inode -> meta identity
    int identity_changed = 0;
};

GstPadProbeReturn on_sink(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* seen = static_cast<Seen*>(data);
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMemory* mem = gst_buffer_peek_memory(buf, 0);
    std::lock_guard<std::mutex> lock(seen->mu);
    seen->frames_in++;
    seen->all_dmabuf = seen->all_dmabuf && gst_is_dmabuf_memory(mem);
    seen->all_edgetensor = seen->all_edgetensor && gst_is_edge_tensor_memory(mem);
    if (gst_is_dmabuf_memory(mem))
        seen->v4l2_inodes.insert(inode_of(gst_dmabuf_memory_get_fd(mem)));
    if (!seen->nonzero_pixels && seen->frames_in == 10) {
        GstMapInfo map;
        if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
            for (gsize i = 0; i < map.size && !seen->nonzero_pixels; i += 97)
                seen->nonzero_pixels = map.data[i] != 0;
            gst_buffer_unmap(buf, &map);
        }
    }
    return GST_PAD_PROBE_OK;
}

GstPadProbeReturn on_src(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* seen = static_cast<Seen*>(data);
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMemory* mem = gst_buffer_peek_memory(buf, 0);
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(buf);
    std::lock_guard<std::mutex> lock(seen->mu);
    seen->frames_out++;
    if (!m) {
        seen->without_meta++;
        return GST_PAD_PROBE_OK;
    }
    if (m->memory_kind != GST_EDGE_TENSOR_MEMORY_DMA)
        seen->not_dma++;
    const guint64 ino = gst_is_dmabuf_memory(mem) ? inode_of(gst_dmabuf_memory_get_fd(mem)) : 0;
    if (m->desc.handle < 0 || inode_of(int(m->desc.handle)) != ino)
        seen->handle_mismatch++;
    auto [it, fresh] = seen->id_of.emplace(ino, m->identity);
    if (!fresh && it->second != m->identity)
        seen->identity_changed++;
    return GST_PAD_PROBE_OK;
}

class V4l2Import : public ::testing::Test
{
protected:
    void SetUp() override
    {
        // v4l2src and fakesink come from the system plugins the test environment leaves out.
        ASSERT_EQ(load_system_plugins({"libgstvideo4linux2.so", "libgstcoreelements.so"}), "");
        ET_REQUIRE_VIVID_OR_SKIP(device_);
    }

    /// Runs `io_mode` to EOS and checks the zero-copy figures.
    void run(const char* io_mode, bool expect_our_pool)
    {
        const std::string desc = "v4l2src device=" + device_ + " io-mode=" + io_mode +
                                 " num-buffers=" + std::to_string(kFrames) + " ! " + kCaps +
                                 " ! tensorimport name=imp ! fakesink name=sink sync=false";
        GError* err = nullptr;
        GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
        ASSERT_TRUE(pipeline) << desc << ": " << (err ? err->message : "?");
        GstElement* imp = gst_bin_get_by_name(GST_BIN(pipeline), "imp");
        GstPad* sink = gst_element_get_static_pad(imp, "sink");
        GstPad* src = gst_element_get_static_pad(imp, "src");
        Seen seen;
        gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, on_sink, &seen, nullptr);
        gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, on_src, &seen, nullptr);

        const RunEnd end = run_to_eos(pipeline);
        gst_element_set_state(pipeline, GST_STATE_NULL);
        gst_object_unref(sink);
        gst_object_unref(src);
        gst_object_unref(imp);
        gst_object_unref(pipeline);

        ASSERT_TRUE(end.error.empty()) << end.error;
        ASSERT_TRUE(end.stats) << "no edgetensor-stats message at EOS";
        gchar* str = gst_structure_to_string(end.stats.get());
        std::printf("%s, %d frames in %.1f s: %s\n", io_mode, kFrames, end.seconds, str);
        g_free(str);

        const guint64 hits = stat_u64(end.stats.get(), "hits");
        const guint64 misses = stat_u64(end.stats.get(), "misses");
        const guint64 copies = stat_u64(end.stats.get(), "copies", 1);
        const guint64 frames = stat_u64(end.stats.get(), "frames");
        const std::set<guint64> cached = cached_inodes(end.stats.get());

        std::lock_guard<std::mutex> lock(seen.mu);
        EXPECT_EQ(seen.frames_in, kFrames);
        EXPECT_EQ(frames, guint64(kFrames));
        EXPECT_TRUE(seen.all_dmabuf) << "v4l2src " << io_mode << " must push DMA-BUF memory";
        if (expect_our_pool) {
            EXPECT_TRUE(seen.all_edgetensor)
                << "with dmabuf-import v4l2src must capture into tensorimport's pool";
        }
        EXPECT_TRUE(seen.nonzero_pixels) << "the camera wrote nothing into the buffers";
        ASSERT_GE(seen.v4l2_inodes.size(), 2u);
        EXPECT_EQ(misses, guint64(seen.v4l2_inodes.size()))
            << "one import per distinct V4L2 buffer";
        EXPECT_EQ(hits, guint64(kFrames) - misses);
        EXPECT_EQ(copies, 0u);
        // The tensors in the cache are the V4L2 buffers themselves: their own fds (not the
        // buffers') report the same inodes.
        EXPECT_EQ(cached, seen.v4l2_inodes);
        EXPECT_EQ(seen.frames_out, kFrames);
        EXPECT_EQ(seen.without_meta, 0);
        EXPECT_EQ(seen.not_dma, 0);
        EXPECT_EQ(seen.handle_mismatch, 0);
        EXPECT_EQ(seen.identity_changed, 0) << "a V4L2 buffer must keep its tensor identity";
        std::set<guint64> ids;
        for (auto& [ino, id] : seen.id_of)
            ids.insert(id);
        EXPECT_EQ(ids.size(), seen.v4l2_inodes.size());
    }

    std::string device_;
};

TEST_F(V4l2Import, DmabufIoModeImportsEachV4l2BufferOnceWithoutCopies)
{
    run("dmabuf", false);
}

TEST_F(V4l2Import, DmabufImportIoModeCapturesIntoThePoolTensorimportProposes)
{
    run("dmabuf-import", true);
}

} // namespace
