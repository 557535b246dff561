// SPDX-License-Identifier: MIT
//
// Soak (suite "soak", docs/testing.md): a pipeline runs for EDGETENSOR_SOAK_FRAMES frames
// (default 20,000) while its process is sampled every 500 frames. After the warm-up (a tenth of
// the run, at least 1,000 frames) the open fds must stay exactly as they were, RSS may grow by
// less than 1 MiB, and no pool or import cache may take in a buffer it had not seen: the set of
// tensor identities stops growing.
//
//   Soak.TestsrcImportConvertStaysFlat   tensortestsrc ! tensorimport ! tensorconvert ! fakesink
//   Soak.VividImportConvertStaysFlat     v4l2src io-mode=dmabuf (vivid, the VM lane) ! ... same

#include "fault.hpp"
#include "fd_count.hpp"
#include "vivid.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace
{

using edgetensor::test::describe_fds;
using edgetensor::test::open_fds;

constexpr int kSampleEvery = 500;
constexpr long kRssSlackBytes = 1 << 20;

int soak_frames()
{
    const char* v = std::getenv("EDGETENSOR_SOAK_FRAMES");
    const int n = v ? std::atoi(v) : 0;
    return n > 0 ? n : 20000;
}

long rss_bytes()
{
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return resident * sysconf(_SC_PAGESIZE);
}

bool sanitized()
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true; // the sanitizer's allocator holds freed memory back: RSS is not the program's
#else
    return false;
#endif
}

struct Sample {
    int frame;
    long rss;
    size_t fds;
    size_t in_ids;
    size_t out_ids;
    uint64_t storages; // tensor storages alive in the process (the pools' and the import cache's)
};

// Everything the probes see, under one lock (they run on the streaming thread).
struct Soak {
    std::mutex mu;
    int frames = 0;
    int warmup = 0;
    std::set<guint64> in_ids;  // tensorimport's output: the producer's buffers
    std::set<guint64> out_ids; // tensorconvert's output pool
    std::vector<Sample> samples;
    std::set<int> fds_at_warmup;
    std::string fd_drift; // the first difference seen after the warm-up
    int without_meta = 0;
};

GstPadProbeReturn on_import_out(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* s = static_cast<Soak*>(data);
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(GST_PAD_PROBE_INFO_BUFFER(info));
    std::lock_guard<std::mutex> lock(s->mu);
    if (m)
        s->in_ids.insert(m->identity);
    else
        s->without_meta++;
    return GST_PAD_PROBE_OK;
}

GstPadProbeReturn on_sink(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* s = static_cast<Soak*>(data);
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(GST_PAD_PROBE_INFO_BUFFER(info));
    std::lock_guard<std::mutex> lock(s->mu);
    if (m)
        s->out_ids.insert(m->identity);
    else
        s->without_meta++;
    const int n = ++s->frames;
    if (n % kSampleEvery == 0 || n == s->warmup) {
        const std::set<int> fds = open_fds();
        s->samples.push_back({n, rss_bytes(), fds.size(), s->in_ids.size(), s->out_ids.size(),
                              edgetensor::detail::live_storage().count});
        if (n == s->warmup) {
            s->fds_at_warmup = fds;
        } else if (n > s->warmup && s->fd_drift.empty() && fds != s->fds_at_warmup) {
            std::set<int> added, gone;
            std::set_difference(fds.begin(), fds.end(), s->fds_at_warmup.begin(),
                                s->fds_at_warmup.end(), std::inserter(added, added.end()));
            std::set_difference(s->fds_at_warmup.begin(), s->fds_at_warmup.end(), fds.begin(),
                                fds.end(), std::inserter(gone, gone.end()));
            s->fd_drift = "frame " + std::to_string(n) + ": opened " + describe_fds(added) +
                          "; closed " + std::to_string(gone.size());
        }
    }
    return GST_PAD_PROBE_OK;
}

bool load_system_plugin(const char* name)
{
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&gst_init), &info) || !info.dli_fname)
        return false;
    const auto file = std::filesystem::path(info.dli_fname).parent_path() / "gstreamer-1.0" /
                      (std::string("libgst") + name + ".so");
    GError* err = nullptr;
    GstPlugin* p = gst_plugin_load_file(file.c_str(), &err);
    if (!p) {
        ADD_FAILURE() << "cannot load " << file << ": " << (err ? err->message : "?");
        g_clear_error(&err);
        return false;
    }
    gst_object_unref(p);
    return true;
}

// Runs `launch` (with elements named imp, conv and sink) for `frames` frames and checks that it
// stays flat after the warm-up.
void soak(const std::string& launch, int frames)
{
    Soak s;
    s.warmup = std::max(1000, frames / 10);
    ASSERT_GT(frames, s.warmup) << "EDGETENSOR_SOAK_FRAMES must exceed the warm-up";
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launch(launch.c_str(), &err);
    ASSERT_TRUE(pipeline) << launch << ": " << (err ? err->message : "?");
    g_clear_error(&err);
    GstElement* imp = gst_bin_get_by_name(GST_BIN(pipeline), "imp");
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    ASSERT_TRUE(imp && sink);
    GstPad* imp_src = gst_element_get_static_pad(imp, "src");
    GstPad* sink_pad = gst_element_get_static_pad(sink, "sink");
    gst_pad_add_probe(imp_src, GST_PAD_PROBE_TYPE_BUFFER, on_import_out, &s, nullptr);
    gst_pad_add_probe(sink_pad, GST_PAD_PROBE_TYPE_BUFFER, on_sink, &s, nullptr);
    gst_object_unref(imp_src);
    gst_object_unref(sink_pad);

    const gint64 t0 = g_get_monotonic_time();
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    GstBus* bus = gst_element_get_bus(pipeline);
    std::string error;
    GstStructure* stats = nullptr;
    // Generous: the vivid chain runs at the camera's 60 fps, in a TCG guest.
    const GstClockTime limit = GstClockTime(frames / 20 + 120) * GST_SECOND;
    for (bool done = false; !done;) {
        GstMessage* msg = gst_bus_timed_pop_filtered(
            bus, limit, GstMessageType(GST_MESSAGE_ERROR | GST_MESSAGE_EOS | GST_MESSAGE_ELEMENT));
        if (!msg) {
            error = "timed out";
            break;
        }
        switch (GST_MESSAGE_TYPE(msg)) {
        case GST_MESSAGE_ERROR: {
            GError* e = nullptr;
            gchar* dbg = nullptr;
            gst_message_parse_error(msg, &e, &dbg);
            error = std::string(e ? e->message : "?") + " (" + (dbg ? dbg : "") + ")";
            g_clear_error(&e);
            g_free(dbg);
            done = true;
            break;
        }
        case GST_MESSAGE_EOS:
            done = true;
            break;
        default:
            if (gst_message_has_name(msg, GST_EDGE_TENSOR_IMPORT_STATS_NAME)) {
                if (stats)
                    gst_structure_free(stats);
                stats = gst_structure_copy(gst_message_get_structure(msg));
            }
            break;
        }
        gst_message_unref(msg);
    }
    const double secs = double(g_get_monotonic_time() - t0) / 1e6;
    gst_element_set_state(pipeline, GST_STATE_NULL);
    guint64 dropped = 0;
    if (GstElement* conv = gst_bin_get_by_name(GST_BIN(pipeline), "conv")) {
        g_object_get(conv, "dropped", &dropped, nullptr);
        gst_object_unref(conv);
    }
    gst_object_unref(bus);
    gst_object_unref(imp);
    gst_object_unref(sink);
    gst_object_unref(pipeline);

    ASSERT_EQ(error, "");
    std::lock_guard<std::mutex> lock(s.mu);
    EXPECT_EQ(s.frames, frames);
    EXPECT_EQ(s.without_meta, 0);
    EXPECT_EQ(dropped, 0u);

    const Sample* warm = nullptr;
    for (const Sample& x : s.samples)
        if (x.frame == s.warmup)
            warm = &x;
    ASSERT_TRUE(warm);
    long peak = warm->rss;
    uint64_t peak_storages = warm->storages;
    std::string table;
    for (const Sample& x : s.samples) {
        if (x.frame >= s.warmup) {
            peak = std::max(peak, x.rss);
            peak_storages = std::max(peak_storages, x.storages);
        }
        char row[160];
        std::snprintf(row, sizeof(row),
                      "  frame %6d  rss %8ld KiB  fds %3zu  ids %zu/%zu  storages %llu\n", x.frame,
                      x.rss / 1024, x.fds, x.in_ids, x.out_ids, (unsigned long long)x.storages);
        table += row;
    }
    const Sample& last = s.samples.back();
    std::printf("soak: %d frames in %.1f s (%.0f fps); after warm-up at frame %d: rss %+ld KiB "
                "(peak %+ld KiB), fds %zu -> %zu, producer buffers %zu -> %zu, output buffers "
                "%zu -> %zu\n",
                s.frames, secs, s.frames / secs, s.warmup, (last.rss - warm->rss) / 1024,
                (peak - warm->rss) / 1024, warm->fds, last.fds, warm->in_ids, last.in_ids,
                warm->out_ids, last.out_ids);
    SCOPED_TRACE(table);
    EXPECT_EQ(s.fd_drift, "") << "open fds must stay exactly as after the warm-up";
    if (!sanitized()) {
        EXPECT_LT(peak - warm->rss, kRssSlackBytes) << "RSS grew after the warm-up";
    }
    // No pool allocated after the warm-up. Counted as storages, not as identities seen: pools
    // hand out the newest free buffer, so one allocated early may first be used late.
    EXPECT_EQ(peak_storages, warm->storages) << "tensors were allocated after the warm-up";
    ASSERT_TRUE(stats) << "no edgetensor-stats at EOS";
    guint64 misses = 0, copies = 1;
    gst_structure_get_uint64(stats, "misses", &misses);
    gst_structure_get_uint64(stats, "copies", &copies);
    gst_structure_free(stats);
    EXPECT_EQ(copies, 0u) << "the chain must stay zero-copy";
    EXPECT_EQ(misses, last.in_ids) << "each producer buffer imported once";
}

TEST(Soak, TestsrcImportConvertStaysFlat)
{
    ASSERT_TRUE(load_system_plugin("coreelements"));
    const edgetensor::detail::LiveStorage before = edgetensor::detail::live_storage();
    const int frames = soak_frames();
    soak("tensortestsrc num-buffers=" + std::to_string(frames) +
             " ! video/x-raw,format=NV12,width=160,height=120,framerate=30/1 ! tensorimport "
             "name=imp ! tensorconvert name=conv width=64 height=64 dtype=float32 layout=chw "
             "mean=127.5 std=127.5 ! fakesink name=sink sync=false",
         frames);
    const edgetensor::detail::LiveStorage after = edgetensor::detail::live_storage();
    EXPECT_EQ(after.count, before.count) << "tensor storages outlived the pipeline";
    EXPECT_EQ(after.bytes, before.bytes);
}

TEST(Soak, VividImportConvertStaysFlat)
{
    std::string node;
    ET_REQUIRE_VIVID_OR_SKIP(node);
    ASSERT_TRUE(load_system_plugin("coreelements"));
    ASSERT_TRUE(load_system_plugin("video4linux2"));
    const int frames = soak_frames();
    // vivid's webcam input at 320x180 YUY2 and its fastest rate: 60 fps.
    soak("v4l2src device=" + node + " io-mode=dmabuf num-buffers=" + std::to_string(frames) +
             " ! video/x-raw,format=YUY2,width=320,height=180,framerate=60/1 ! tensorimport "
             "name=imp ! tensorconvert name=conv width=64 height=64 dtype=float32 ! fakesink "
             "name=sink sync=false",
         frames);
}

} // namespace
