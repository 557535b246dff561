// SPDX-License-Identifier: MIT
//
// GStreamer's own fd-passing IPC (unixfdsink/unixfdsrc, 1.24+) as our neighbour (issue 22
// item 5): frames a unixfdsink in another process sends (memfds of GstShmAllocator from
// videotestsrc; DMA-BUFs where a provider exists) import through tensorimport without a copy,
// one import per sender buffer (misses = the sender's pool, every other frame a hit), and
// convert; our own memories (tensortestsrc's pool, tensorconvert's output) sent through
// unixfdsink arrive as those very memories with every pixel intact, carrying their
// GstEdgeTensorMeta (serialized, 1.24+), and tensorbatch's provenance (GstEdgeTensorBatchMeta,
// serialized likewise) maps a slot back to its frame in the receiver. Needs the unixfd plugin:
// skips without it unless EDGETENSOR_TEST_REQUIRE_GST126=1 (the 1.26 and 1.28 lanes).

#include "gst126_require.hpp"
#include "ipc_test_util.hpp"
#include "require.hpp"

#include <edgetensor/dma.hpp>

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>

#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

constexpr int kFrames = 60;
constexpr const char* kNv12 = "video/x-raw,format=NV12,width=320,height=240,framerate=30/1";

class GstUnixfd : public ::testing::Test
{
protected:
    static void SetUpTestSuite() { load_system_plugins(); }
    void SetUp() override
    {
        std::string why;
        const bool have = load_system_plugin("libgstunixfd.so", &why) &&
                          load_system_plugin("libgstvideotestsrc.so", &why);
        ET_REQUIRE_GST126_OR_SKIP(have, "unixfdsink/unixfdsrc (GStreamer 1.24+): " + why);
    }
    SocketDir dir;
};

// Where the fd of a received memory comes from: "/memfd:<name> (deleted)", "/dmabuf:...".
std::string fd_target(int fd)
{
    char buf[PATH_MAX] = {};
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

// The frame's pixels, row by row without padding (through GstVideoMeta when there is one).
std::vector<guint8> pixels_of(GstSample* s)
{
    GstVideoInfo info;
    std::vector<guint8> out;
    if (!gst_video_info_from_caps(&info, gst_sample_get_caps(s)))
        return out;
    GstVideoFrame f;
    if (!gst_video_frame_map(&f, &info, gst_sample_get_buffer(s), GST_MAP_READ))
        return out;
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&f); ++p) {
        const auto* data = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&f, p));
        const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(&f, p);
        const gint rows = GST_VIDEO_FRAME_COMP_HEIGHT(&f, p);
        const gint row = GST_VIDEO_FRAME_COMP_WIDTH(&f, p) * GST_VIDEO_FRAME_COMP_PSTRIDE(&f, p);
        for (gint y = 0; y < rows; ++y)
            out.insert(out.end(), data + y * stride, data + y * stride + row);
    }
    gst_video_frame_unmap(&f);
    return out;
}

// True when a Unix socket bound at `path` listens (/proc/net/unix: __SO_ACCEPTCON in its
// flags). unixfdsink's socket file appears at bind(), a moment before listen(): a receiver
// connecting in between is refused and fails to start.
bool listening_at(const std::string& path)
{
    std::ifstream in("/proc/net/unix");
    std::string line;
    std::getline(in, line); // the header
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string num, refs, proto, flags, type, st, inode, where;
        if (fields >> num >> refs >> proto >> flags >> type >> st >> inode >> where &&
            where == path)
            return (std::stoul(flags, nullptr, 16) & 0x10000u) != 0;
    }
    return false;
}

// Starts `launch ! unixfdsink` in another process and waits for its socket to listen.
std::unique_ptr<Peer> unixfd_sender(const SocketDir& dir, const std::string& launch)
{
    auto args = split_launch(launch + " ! unixfdsink socket-path=" + dir.path() +
                             " wait-for-connection=true");
    auto peer = std::make_unique<Peer>(dir.dir(), args);
    EXPECT_TRUE(eventually([&] { return listening_at(dir.path()); }, 30s))
        << "no unixfdsink socket listening; the sender said:\n"
        << peer->output();
    return peer;
}

struct Imported {
    std::set<ino_t> inodes;
    std::set<std::string> targets;
    int frames = 0;
    std::mutex mu;
};

GstPadProbeReturn record_import(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* im = static_cast<Imported*>(data);
    GstBuffer* b = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMemory* mem = gst_buffer_peek_memory(b, 0);
    std::lock_guard<std::mutex> lock(im->mu);
    ++im->frames;
    if (gst_is_fd_memory(mem)) {
        im->inodes.insert(inode_of(gst_fd_memory_get_fd(mem)));
        const std::string t = fd_target(gst_fd_memory_get_fd(mem));
        im->targets.insert(t.substr(0, t.find(':') + 1));
    }
    return GST_PAD_PROBE_OK;
}

struct Sender {
    const char* name;
    const char* launch;  ///< up to, not including, the unixfdsink
    bool dma;            ///< needs a DMA-BUF provider
    const char* fd_kind; ///< what the received fds are ("/memfd:" or "/dmabuf")
};

class GstUnixfdImport : public GstUnixfd, public ::testing::WithParamInterface<Sender>
{
};

// The sender's buffers import once each: misses = the distinct buffers the sender's pool
// cycled through, every other frame a hit, no copy; and they convert.
TEST_P(GstUnixfdImport, FromAnotherProcessWithoutACopyAndOneImportPerSenderBuffer)
{
    const Sender& sp = GetParam();
    if (sp.dma)
        ET_REQUIRE_DMA_OR_SKIP();
    auto tx = unixfd_sender(dir, std::string(sp.launch));
    Pipeline rx("unixfdsrc socket-path=" + dir.path() +
                " ! tensorimport name=imp copy-mode=never ! tensorconvert width=160 height=120 ! "
                "video/x-raw,format=RGB ! appsink name=out sync=false max-buffers=4 "
                "enable-last-sample=false");
    ASSERT_TRUE(rx);
    Imported im;
    GstObjectPtr<GstPad> pad(gst_element_get_static_pad(rx.by_name("imp"), "sink"));
    gst_pad_add_probe(pad.get(), GST_PAD_PROBE_TYPE_BUFFER, record_import, &im, nullptr);
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    GstAppSink* out = GST_APP_SINK(rx.by_name("out"));
    for (int n = 0; n < kFrames; ++n) {
        MiniObjectPtr<GstSample> s(gst_app_sink_try_pull_sample(out, 30 * GST_SECOND));
        ASSERT_TRUE(s) << "frame " << n << "; the sender said:\n" << tx->output();
        EXPECT_FALSE(pixels_of(s.get()).empty());
    }
    auto eos = rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 10s);
    ASSERT_TRUE(eos);
    EXPECT_EQ(GST_MESSAGE_TYPE(eos.get()), GST_MESSAGE_EOS) << message_text(eos.get());
    GstElement* imp = rx.by_name("imp");
    guint64 copies = 1;
    g_object_get(imp, "copies", &copies, nullptr);
    EXPECT_EQ(copies, 0u) << "a frame was copied";
    GstStructure* st = nullptr;
    g_object_get(imp, "stats", &st, nullptr);
    ASSERT_TRUE(st);
    guint64 hits = 0, misses = 0;
    gst_structure_get_uint64(st, GST_EDGE_TENSOR_STATS_HITS, &hits);
    gst_structure_get_uint64(st, GST_EDGE_TENSOR_STATS_MISSES, &misses);
    gst_structure_free(st);
    std::lock_guard<std::mutex> lock(im.mu);
    EXPECT_EQ(im.frames, kFrames);
    EXPECT_EQ(misses, guint64(im.inodes.size())) << "one import per sender buffer";
    EXPECT_EQ(hits + misses, guint64(kFrames));
    EXPECT_LT(im.inodes.size(), size_t(kFrames / 4)) << "the sender's buffers are recycled";
    EXPECT_GT(hits, guint64(kFrames / 2));
    ASSERT_EQ(im.targets.size(), 1u);
    EXPECT_EQ(im.targets.begin()->rfind(sp.fd_kind, 0), 0u)
        << *im.targets.begin() << " is not a " << sp.fd_kind;
    auto st_tx = tx->wait(20s);
    ASSERT_TRUE(st_tx) << "the sender did not end";
    EXPECT_TRUE(WIFEXITED(*st_tx) && WEXITSTATUS(*st_tx) == 0) << tx->output();
}

INSTANTIATE_TEST_SUITE_P(
    Senders, GstUnixfdImport,
    ::testing::Values(
        // videotestsrc writes into what unixfdsink proposes: GstShmAllocator memfds.
        Sender{"ShmAllocatorMemfds",
               "videotestsrc num-buffers=60 pattern=ball ! "
               "video/x-raw,format=NV12,width=320,height=240,framerate=30/1",
               false, "/memfd:"},
        // Our DMA-BUF pool, where a provider exists.
        Sender{"DmaBufs",
               "tensortestsrc num-buffers=60 memory=dma pattern=gradient min-buffers=4 "
               "max-buffers=4 ! video/x-raw,format=NV12,width=320,height=240,framerate=30/1",
               true, "/dmabuf:"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// The frames a pipeline produces here, as a reference: pixels by offset (the frame number;
// unixfd carries it unchanged, while it moves timestamps into the receiver's running time).
std::map<guint64, std::vector<guint8>> reference_frames(const std::string& launch)
{
    std::map<guint64, std::vector<guint8>> frames;
    Pipeline p(launch + " ! appsink name=out sync=false enable-last-sample=false");
    EXPECT_NE(p.play(), GST_STATE_CHANGE_FAILURE);
    GstAppSink* out = GST_APP_SINK(p.by_name("out"));
    while (MiniObjectPtr<GstSample> s{gst_app_sink_try_pull_sample(out, 10 * GST_SECOND)})
        frames[GST_BUFFER_OFFSET(gst_sample_get_buffer(s.get()))] = pixels_of(s.get());
    return frames;
}

struct Ours {
    const char* name;
    const char* launch;
};

class GstUnixfdOurs : public GstUnixfd, public ::testing::WithParamInterface<Ours>
{
};

// Our memories through unixfdsink: unixfdsink passes any fd memory as it is, so the receiver
// maps the very memfd our pool made (its name says so) and reads every pixel the sender wrote,
// described by the GstEdgeTensorMeta that travelled with it.
TEST_P(GstUnixfdOurs, ArriveAsTheVeryMemoriesWithEveryPixelIntact)
{
    const std::string launch = GetParam().launch;
    const auto want = reference_frames(launch);
    ASSERT_EQ(want.size(), 30u);
    auto tx = unixfd_sender(dir, launch);
    Pipeline rx("unixfdsrc socket-path=" + dir.path() +
                " ! appsink name=out sync=false max-buffers=4 enable-last-sample=false");
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    GstAppSink* out = GST_APP_SINK(rx.by_name("out"));
    int got = 0, differ = 0, with_meta = 0;
    std::set<std::string> names;
    while (MiniObjectPtr<GstSample> s{gst_app_sink_try_pull_sample(out, 30 * GST_SECOND)}) {
        GstBuffer* b = gst_sample_get_buffer(s.get());
        ++got;
        auto it = want.find(GST_BUFFER_OFFSET(b));
        if (it == want.end() || it->second != pixels_of(s.get()))
            ++differ;
        GstMemory* mem = gst_buffer_peek_memory(b, 0);
        ASSERT_TRUE(gst_is_fd_memory(mem));
        const std::string target = fd_target(gst_fd_memory_get_fd(mem));
        names.insert(target.substr(0, target.find(' ')));
        if (GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(b)) {
            // The sender's description, without what names nothing here.
            if (m->identity == 0 && m->desc.handle == -1 && m->width > 0 && m->desc.capacity > 0)
                ++with_meta;
        }
        if (got == 30)
            break;
    }
    EXPECT_EQ(got, 30) << "the sender said:\n" << tx->output();
    EXPECT_EQ(differ, 0) << "frames whose pixels differ from what the sender drew";
    for (const std::string& n : names)
        EXPECT_EQ(n.rfind("/memfd:edgetensor:", 0) == 0 || n.rfind("/dmabuf", 0) == 0, true)
            << n << ": not one of our memories (unixfdsink copied?)";
#if GST_CHECK_VERSION(1, 24, 0)
    EXPECT_EQ(with_meta, got) << "GstEdgeTensorMeta did not travel with every frame";
#endif
    auto st_tx = tx->wait(20s);
    ASSERT_TRUE(st_tx) << "the sender did not end";
    EXPECT_TRUE(WIFEXITED(*st_tx) && WEXITSTATUS(*st_tx) == 0) << tx->output();
}

INSTANTIATE_TEST_SUITE_P(
    Memories, GstUnixfdOurs,
    ::testing::Values(
        Ours{"TensortestsrcPool",
             "tensortestsrc num-buffers=30 pattern=gradient min-buffers=4 max-buffers=4 ! "
             "video/x-raw,format=NV12,width=320,height=240,framerate=30/1"},
        Ours{"TensorconvertOutput",
             "videotestsrc num-buffers=30 pattern=ball ! "
             "video/x-raw,format=NV12,width=320,height=240,framerate=30/1 ! tensorconvert "
             "width=160 height=120 ! video/x-raw,format=RGB"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// tensorbatch's batches through unixfdsink: the provenance goes by the meta's own serialization
// (1.24+, the IPC protocol's BATCH record), so in the receiving process a slot's box maps back
// onto its source frame (320x240 letterboxed into 64x64: scale 0.2, 8 rows above and below).
TEST_F(GstUnixfd, ABatchsProvenanceTravelsAndMapsBackInTheReceiver)
{
    auto tx = unixfd_sender(dir, "tensortestsrc num-buffers=30 pattern=frame-counter ! "
                                 "video/x-raw,format=NV12,width=320,height=240,framerate=30/1,"
                                 "colorimetry=bt709 ! tensorbatch batch-size=1 width=64 "
                                 "height=64 letterbox=true");
    // No edgetensor element here: as an application does (gst_edge_tensor_init's
    // documentation), register our metas, or GStreamer cannot rebuild them.
    gst_edge_tensor_init();
    Pipeline rx("unixfdsrc socket-path=" + dir.path() +
                " ! appsink name=out sync=false max-buffers=4 enable-last-sample=false");
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    GstAppSink* out = GST_APP_SINK(rx.by_name("out"));
    int got = 0;
    while (MiniObjectPtr<GstSample> s{gst_app_sink_try_pull_sample(out, 30 * GST_SECOND)}) {
        SCOPED_TRACE(got);
        const GstEdgeTensorBatchMeta* m =
            gst_buffer_get_edge_tensor_batch_meta(gst_sample_get_buffer(s.get()));
        ASSERT_TRUE(m) << "the provenance did not travel";
        ASSERT_EQ(m->n_slots, 1u);
        EXPECT_EQ(m->slot_width, 64u);
        const GstEdgeTensorBatchSlot* slot = gst_edge_tensor_batch_meta_get_slot(m, 0);
        ASSERT_TRUE(slot->filled);
        EXPECT_EQ(slot->source_width, 320u);
        EXPECT_EQ(slot->roi_id, -1);
        EXPECT_TRUE(picture_maps_onto_frame(slot, 8, 64, 48, 320, 240));
        if (++got == 30)
            break;
    }
    EXPECT_EQ(got, 30) << "the sender said:\n" << tx->output();
    auto st_tx = tx->wait(20s);
    ASSERT_TRUE(st_tx) << "the sender did not end";
    EXPECT_TRUE(WIFEXITED(*st_tx) && WEXITSTATUS(*st_tx) == 0) << tx->output();
}

} // namespace
} // namespace edgetensor::test
