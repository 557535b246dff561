// SPDX-License-Identifier: MIT
//
// tensorimport behind a real V4L2 camera (vivid, in the VM lane): each V4L2 buffer is imported
// once, the rest are cache hits, nothing is copied, and the cached tensors are the V4L2
// buffers themselves (same DMA-BUF inode). Needs the vivid module; skips without it unless
// EDGETENSOR_TEST_REQUIRE_VIVID=1 (the lane sets it), which turns the skip into a failure.
//
// Frame count and format: see tests/v4l2/meson.build (ET_V4L2_FRAMES, chosen for TCG).

#include "vivid.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#ifndef ET_GST_PLUGINS_DIR
#error "ET_GST_PLUGINS_DIR must name GStreamer's system plugin directory"
#endif
#ifndef ET_V4L2_FRAMES
#define ET_V4L2_FRAMES 300
#endif

namespace
{

constexpr int kFrames = ET_V4L2_FRAMES;
constexpr const char* kCaps = "video/x-raw,format=YUY2,width=320,height=180,framerate=60/1";

guint64 inode_of(int fd)
{
    struct stat st {
    };
    return fstat(fd, &st) == 0 ? guint64(st.st_ino) : 0;
}

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
        for (const char* name : {"libgstvideo4linux2.so", "libgstcoreelements.so"}) {
            const std::string path = std::string(ET_GST_PLUGINS_DIR) + "/" + name;
            GError* err = nullptr;
            GstPlugin* p = gst_plugin_load_file(path.c_str(), &err);
            ASSERT_TRUE(p) << path << ": " << (err ? err->message : "?");
            gst_object_unref(p);
        }
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

        const gint64 t0 = g_get_monotonic_time();
        gst_element_set_state(pipeline, GST_STATE_PLAYING);
        GstBus* bus = gst_element_get_bus(pipeline);
        GstStructure* stats = nullptr;
        std::string error;
        for (;;) {
            GstMessage* msg = gst_bus_timed_pop_filtered(
                bus, 120 * GST_SECOND,
                GstMessageType(GST_MESSAGE_ERROR | GST_MESSAGE_EOS | GST_MESSAGE_ELEMENT));
            if (!msg) {
                error = "timed out after 120 s";
                break;
            }
            const GstMessageType type = GST_MESSAGE_TYPE(msg);
            if (type == GST_MESSAGE_ELEMENT &&
                gst_message_has_name(msg, GST_EDGE_TENSOR_IMPORT_STATS_NAME))
                stats = gst_structure_copy(gst_message_get_structure(msg));
            if (type == GST_MESSAGE_ERROR) {
                GError* e = nullptr;
                gchar* dbg = nullptr;
                gst_message_parse_error(msg, &e, &dbg);
                error = std::string(e->message) + " (" + (dbg ? dbg : "") + ")";
                g_error_free(e);
                g_free(dbg);
            }
            gst_message_unref(msg);
            if (type != GST_MESSAGE_ELEMENT)
                break;
        }
        const double secs = double(g_get_monotonic_time() - t0) / 1e6;
        gst_element_set_state(pipeline, GST_STATE_NULL);
        gst_object_unref(bus);
        gst_object_unref(sink);
        gst_object_unref(src);
        gst_object_unref(imp);
        gst_object_unref(pipeline);

        ASSERT_TRUE(error.empty()) << error;
        ASSERT_TRUE(stats) << "no edgetensor-stats message at EOS";
        gchar* str = gst_structure_to_string(stats);
        std::printf("%s, %d frames in %.1f s: %s\n", io_mode, kFrames, secs, str);
        g_free(str);

        guint64 hits = 0, misses = 0, copies = 1, frames = 0;
        gst_structure_get_uint64(stats, "hits", &hits);
        gst_structure_get_uint64(stats, "misses", &misses);
        gst_structure_get_uint64(stats, "copies", &copies);
        gst_structure_get_uint64(stats, "frames", &frames);
        std::set<guint64> cached;
        const GValue* inodes = gst_structure_get_value(stats, "inodes");
        for (guint i = 0; inodes && i < gst_value_array_get_size(inodes); ++i)
            cached.insert(g_value_get_uint64(gst_value_array_get_value(inodes, i)));
        gst_structure_free(stats);

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
