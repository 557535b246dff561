// SPDX-License-Identifier: MIT
//
// tensorimport through GstHarness: cache hits on re-wrapped memfds, the meta, copy-mode,
// invalidation, stats at EOS, the proposed pool, state cycling and fd accounting.

#include "fd_count.hpp"
#include "gst_test_util.hpp"
#include "require.hpp"

#include <gst/allocators/allocators.h>
#include <gst/check/gstharness.h>
#include <gst/edgetensor/edgetensor.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <initializer_list>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace edgetensor::test
{
namespace
{

using namespace std::chrono_literals;

struct Harness {
    GstHarness* h;
    GstBus* bus;
    /// tensorimport with `props` ("name=value" pairs) set before it starts.
    explicit Harness(std::initializer_list<const char*> props = {})
        : h(gst_harness_new("tensorimport")), bus(gst_bus_new())
    {
        gst_element_set_bus(h->element, bus);
        if (props.size() == 0)
            return;
        // The harness starts the element; READY-only properties need it stopped.
        gst_element_set_state(h->element, GST_STATE_NULL);
        for (const char* p : props) {
            gchar** kv = g_strsplit(p, "=", 2);
            gst_util_set_object_arg(G_OBJECT(h->element), kv[0], kv[1]);
            g_strfreev(kv);
        }
        gst_harness_play(h);
    }
    ~Harness()
    {
        gst_harness_teardown(h);
        // Queued messages hold the element, which holds the bus: drop them to break the cycle.
        gst_bus_set_flushing(bus, TRUE);
        gst_object_unref(bus);
    }
    Harness(const Harness&) = delete;
    Harness& operator=(const Harness&) = delete;
    GstHarness* operator->() const { return h; }
    GstHarness* get() const { return h; }

    /// Messages of `type` on the bus so far (popped).
    std::vector<MiniObjectPtr<GstMessage>> messages(GstMessageType type)
    {
        std::vector<MiniObjectPtr<GstMessage>> out;
        while (GstMessage* m = gst_bus_pop_filtered(bus, type))
            out.emplace_back(m);
        return out;
    }
};

UniqueFd make_memfd(size_t size)
{
    UniqueFd fd(memfd_create("tensorimport-test", MFD_CLOEXEC));
    EXPECT_TRUE(fd);
    EXPECT_EQ(ftruncate(fd.get(), off_t(size)), 0);
    return fd;
}

/// The same memfd in a new GstMemory with a new fd (dup), as a camera pool may hand it out.
BufferPtr rewrap(GstAllocator* alloc, int fd, size_t size)
{
    UniqueFd d = UniqueFd::dup(fd);
    GstMemory* m = gst_fd_allocator_alloc(alloc, d.release(), size, GST_FD_MEMORY_FLAG_NONE);
    GstBuffer* b = gst_buffer_new();
    gst_buffer_append_memory(b, m);
    return BufferPtr(b);
}

guint64 u64_prop(GstElement* e, const char* name)
{
    guint64 v = 0;
    g_object_get(e, name, &v, nullptr);
    return v;
}

constexpr const char* kCaps = "video/x-raw,format=RGBA,width=64,height=16,framerate=30/1";
constexpr size_t kSize = 64 * 4 * 16;

struct MemfdSource {
    AllocatorPtr alloc{gst_fd_allocator_new()};
    std::vector<UniqueFd> fds;
    explicit MemfdSource(int n, size_t size = kSize)
    {
        for (int i = 0; i < n; ++i)
            fds.push_back(make_memfd(size));
    }
    BufferPtr frame(int n, size_t size = kSize)
    {
        return rewrap(alloc.get(), fds[size_t(n) % fds.size()].get(), size);
    }
};

TEST(TensorImport, RewrappedMemfdsHitAndTheMetaIdentityRepeats)
{
    Harness h;
    gst_harness_set_src_caps_str(h.get(), kCaps);
    MemfdSource src(4);
    std::vector<guint64> ids;
    for (int n = 0; n < 20; ++n) {
        ASSERT_EQ(gst_harness_push(h.get(), src.frame(n).release()), GST_FLOW_OK);
        BufferPtr out(gst_harness_pull(h.get()));
        ASSERT_TRUE(out);
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
        ASSERT_TRUE(m) << "frame " << n;
        ids.push_back(m->identity);
        GstMemory* mem = gst_buffer_peek_memory(out.get(), 0);
        EXPECT_EQ(m->desc.handle, gst_fd_memory_get_fd(mem)) << "handle borrows the memory's fd";
        EXPECT_EQ(m->memory_kind, GST_EDGE_TENSOR_MEMORY_SHM);
        EXPECT_EQ(m->width, 64u);
        EXPECT_EQ(m->plane_strides[0], 256);
        EXPECT_EQ(m->desc.format, guint32(PixelFormat::Rgba));
    }
    for (int n = 4; n < 20; ++n)
        EXPECT_EQ(ids[size_t(n)], ids[size_t(n % 4)]) << "frame " << n;
    EXPECT_EQ(std::set<guint64>(ids.begin(), ids.end()).size(), 4u);
    EXPECT_EQ(u64_prop(h->element, "cache-misses"), 4u);
    EXPECT_EQ(u64_prop(h->element, "cache-hits"), 16u);
    EXPECT_EQ(u64_prop(h->element, "cache-evictions"), 0u);
    EXPECT_EQ(u64_prop(h->element, "copies"), 0u);
}

TEST(TensorImport, CopyModeNeverRefusesSystemMemoryNamingTypeAndUpstream_Negative)
{
    // A real pipeline, so the upstream element has a name to report.
    GstObjectPtr<GstElement> pipeline(gst_pipeline_new("p"));
    gst_object_ref_sink(pipeline.get());
    GstElement* src = gst_element_factory_make("tensortestsrc", "camera");
    GstElement* imp = gst_element_factory_make("tensorimport", nullptr);
    ASSERT_TRUE(src && imp);
    g_object_set(src, "memory", GST_EDGE_TENSOR_MEMORY_SYSTEM, "num-buffers", 3, nullptr);
    gst_util_set_object_arg(G_OBJECT(imp), "copy-mode", "never");
    gst_bin_add_many(GST_BIN(pipeline.get()), src, imp, nullptr);
    ASSERT_TRUE(gst_element_link(src, imp));
    gst_element_set_state(pipeline.get(), GST_STATE_PLAYING);
    GstObjectPtr<GstBus> bus(gst_element_get_bus(pipeline.get()));
    MiniObjectPtr<GstMessage> msg(gst_bus_timed_pop_filtered(
        bus.get(), 10 * GST_SECOND, GstMessageType(GST_MESSAGE_ERROR | GST_MESSAGE_EOS)));
    gst_element_set_state(pipeline.get(), GST_STATE_NULL);
    ASSERT_TRUE(msg);
    ASSERT_EQ(GST_MESSAGE_TYPE(msg.get()), GST_MESSAGE_ERROR);
    EXPECT_EQ(GST_MESSAGE_SRC(msg.get()), GST_OBJECT(imp));
    GError* err = nullptr;
    gchar* dbg = nullptr;
    gst_message_parse_error(msg.get(), &err, &dbg);
    const std::string text = err->message;
    EXPECT_NE(text.find("SystemMemory"), std::string::npos) << text;
    EXPECT_NE(text.find("\"camera\""), std::string::npos) << text;
    EXPECT_NE(text.find("never"), std::string::npos) << text;
    g_error_free(err);
    g_free(dbg);
    guint64 copies = 1;
    g_object_get(imp, "copies", &copies, nullptr);
    EXPECT_EQ(copies, 0u);
}

TEST(TensorImport, CopyModeAutoCopiesIntoFdMemoryCountsAndWarnsOnce)
{
    Harness h;
    gst_harness_add_src_parse(h.get(), "tensortestsrc memory=system pattern=frame-counter", FALSE);
    gst_harness_set_sink_caps_str(h->src_harness, kCaps);
    gst_harness_play(h->src_harness);
    for (int n = 0; n < 5; ++n) {
        ASSERT_EQ(gst_harness_push_from_src(h.get()), GST_FLOW_OK);
        BufferPtr out(gst_harness_pull(h.get()));
        ASSERT_TRUE(out);
        GstMemory* mem = gst_buffer_peek_memory(out.get(), 0);
        EXPECT_TRUE(gst_is_fd_memory(mem)) << "copied into a pooled fd-backed tensor";
        ASSERT_TRUE(gst_buffer_get_edge_tensor_meta(out.get()));
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(out.get(), &map, GST_MAP_READ));
        EXPECT_EQ(map.data[0], guint8(n));
        EXPECT_EQ(map.data[kSize - 1], guint8(n));
        gst_buffer_unmap(out.get(), &map);
        EXPECT_EQ(GST_BUFFER_OFFSET(out.get()), guint64(n)) << "metadata travels with the copy";
    }
    EXPECT_EQ(u64_prop(h->element, "copies"), 5u);
    EXPECT_EQ(h.messages(GST_MESSAGE_WARNING).size(), 1u) << "warned once";
    GstStructure* s = nullptr;
    g_object_get(h->element, "stats", &s, nullptr);
    ASSERT_TRUE(s);
    gboolean zero_copy = TRUE;
    EXPECT_TRUE(gst_structure_get_boolean(s, "zero-copy", &zero_copy));
    EXPECT_FALSE(zero_copy);
    gst_structure_free(s);
}

TEST(TensorImport, CopiesLandInDmaBufWhereTheHostHasIt)
{
    ET_REQUIRE_DMA_OR_SKIP();
    Harness h;
    gst_harness_add_src_parse(h.get(), "tensortestsrc memory=system", FALSE);
    gst_harness_set_sink_caps_str(h->src_harness, kCaps);
    gst_harness_play(h->src_harness);
    ASSERT_EQ(gst_harness_push_from_src(h.get()), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(h.get()));
    ASSERT_TRUE(out);
    EXPECT_TRUE(gst_is_dmabuf_memory(gst_buffer_peek_memory(out.get(), 0)));
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->memory_kind, GST_EDGE_TENSOR_MEMORY_DMA);
    EXPECT_TRUE(m->flags & GST_EDGE_TENSOR_META_FLAG_STRIDES_ALIGNED);
    EXPECT_EQ(u64_prop(h->element, "copies"), 1u);
}

TEST(TensorImport, UpstreamUsesTheProposedPoolAndStaysZeroCopy)
{
    Harness h;
    gst_harness_add_src_parse(h.get(), "tensortestsrc min-buffers=3 max-buffers=3", FALSE);
    gst_harness_set_sink_caps_str(h->src_harness, "video/x-raw,format=NV12,width=64,"
                                                  "height=32,framerate=30/1");
    gst_harness_play(h->src_harness);
    std::set<guint64> ids;
    for (int n = 0; n < 12; ++n) {
        ASSERT_EQ(gst_harness_push_from_src(h.get()), GST_FLOW_OK);
        BufferPtr out(gst_harness_pull(h.get()));
        ASSERT_TRUE(out);
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
        ASSERT_TRUE(m);
        EXPECT_EQ(m->identity, identity_of(out.get())) << "a pool tensor keeps its own identity";
        ids.insert(m->identity);
    }
    EXPECT_EQ(u64_prop(h->element, "copies"), 0u);
    EXPECT_EQ(u64_prop(h->element, "cache-misses"), ids.size());
    EXPECT_EQ(u64_prop(h->element, "cache-hits"), 12u - ids.size());
}

TEST(TensorImport, ProposesAnEdgeTensorPoolAndVideoMeta)
{
    Harness h;
    gst_harness_set_src_caps_str(h.get(), kCaps);
    CapsPtr caps = caps_from(kCaps);
    MiniObjectPtr<GstQuery> q(gst_query_new_allocation(caps.get(), TRUE));
    ASSERT_TRUE(gst_pad_peer_query(h->srcpad, q.get()));
    ASSERT_GE(gst_query_get_n_allocation_pools(q.get()), 1u);
    GstBufferPool* pool = nullptr;
    guint size = 0;
    gst_query_parse_nth_allocation_pool(q.get(), 0, &pool, &size, nullptr, nullptr);
    ASSERT_TRUE(pool);
    EXPECT_TRUE(GST_IS_EDGE_TENSOR_BUFFER_POOL(pool));
    EXPECT_GE(size, kSize);
    gst_object_unref(pool);
    EXPECT_TRUE(gst_query_find_allocation_meta(q.get(), GST_VIDEO_META_API_TYPE, nullptr));
}

TEST(TensorImport, CapsChangeAndFlushStopInvalidate)
{
    Harness h;
    gst_harness_set_src_caps_str(h.get(), kCaps);
    MemfdSource src(2, 2 * kSize);
    for (int n = 0; n < 4; ++n) {
        ASSERT_EQ(gst_harness_push(h.get(), src.frame(n, 2 * kSize).release()), GST_FLOW_OK);
        gst_buffer_unref(gst_harness_pull(h.get()));
    }
    EXPECT_EQ(u64_prop(h->element, "cache-misses"), 2u);
    gst_harness_set_src_caps_str(h.get(), "video/x-raw,format=RGBA,width=64,height=32,"
                                          "framerate=30/1");
    ASSERT_EQ(gst_harness_push(h.get(), src.frame(0, 2 * kSize).release()), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h.get()));
    EXPECT_EQ(u64_prop(h->element, "cache-misses"), 3u) << "new caps: imported again";

    ASSERT_TRUE(gst_harness_push_event(h.get(), gst_event_new_flush_start()));
    ASSERT_TRUE(gst_harness_push_event(h.get(), gst_event_new_flush_stop(TRUE)));
    // flush-stop drops the segment: send one again before data.
    GstSegment seg;
    gst_segment_init(&seg, GST_FORMAT_TIME);
    ASSERT_TRUE(gst_harness_push_event(h.get(), gst_event_new_segment(&seg)));
    ASSERT_EQ(gst_harness_push(h.get(), src.frame(0, 2 * kSize).release()), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h.get()));
    EXPECT_EQ(u64_prop(h->element, "cache-misses"), 4u) << "flush-stop: imported again";
    GstStructure* s = nullptr;
    g_object_get(h->element, "stats", &s, nullptr);
    guint64 inval = 0;
    EXPECT_TRUE(gst_structure_get_uint64(s, "invalidations", &inval));
    EXPECT_EQ(inval, 2u);
    gst_structure_free(s);
}

TEST(TensorImport, EosPostsTheStatsMessage)
{
    Harness h;
    gst_harness_set_src_caps_str(h.get(), kCaps);
    MemfdSource src(3);
    for (int n = 0; n < 9; ++n) {
        ASSERT_EQ(gst_harness_push(h.get(), src.frame(n).release()), GST_FLOW_OK);
        gst_buffer_unref(gst_harness_pull(h.get()));
    }
    ASSERT_TRUE(gst_harness_push_event(h.get(), gst_event_new_eos()));
    auto msgs = h.messages(GST_MESSAGE_ELEMENT);
    ASSERT_EQ(msgs.size(), 1u);
    const GstStructure* s = gst_message_get_structure(msgs[0].get());
    EXPECT_STREQ(gst_structure_get_name(s), "edgetensor-stats");
    guint64 hits = 0, misses = 0, copies = 9, frames = 0;
    guint entries = 0;
    gboolean zero_copy = FALSE;
    EXPECT_TRUE(gst_structure_get_uint64(s, "hits", &hits));
    EXPECT_TRUE(gst_structure_get_uint64(s, "misses", &misses));
    EXPECT_TRUE(gst_structure_get_uint64(s, "copies", &copies));
    EXPECT_TRUE(gst_structure_get_uint64(s, "frames", &frames));
    EXPECT_TRUE(gst_structure_get_uint(s, "entries", &entries));
    EXPECT_TRUE(gst_structure_get_boolean(s, "zero-copy", &zero_copy));
    EXPECT_EQ(hits, 6u);
    EXPECT_EQ(misses, 3u);
    EXPECT_EQ(copies, 0u);
    EXPECT_EQ(frames, 9u);
    EXPECT_EQ(entries, 3u);
    EXPECT_TRUE(zero_copy);
}

TEST(TensorImport, CacheSizeBoundsTheCacheAndLowersWhilePlaying)
{
    Harness h({"cache-size=3"});
    gst_harness_set_src_caps_str(h.get(), kCaps);
    MemfdSource src(5);
    for (int n = 0; n < 10; ++n) {
        ASSERT_EQ(gst_harness_push(h.get(), src.frame(n).release()), GST_FLOW_OK);
        gst_buffer_unref(gst_harness_pull(h.get()));
    }
    EXPECT_EQ(u64_prop(h->element, "cache-misses"), 10u) << "5 buffers cycling through 3 slots";
    EXPECT_EQ(u64_prop(h->element, "cache-evictions"), 7u);
    g_object_set(h->element, "cache-size", 1u, nullptr);
    GstStructure* s = nullptr;
    g_object_get(h->element, "stats", &s, nullptr);
    guint entries = 99;
    EXPECT_TRUE(gst_structure_get_uint(s, "entries", &entries));
    EXPECT_EQ(entries, 1u);
    gst_structure_free(s);
}

TEST(TensorImport, CopyModeOnlyChangesInReady_Negative)
{
    Harness h;
    gst_harness_play(h.get());
    gst_harness_set_src_caps_str(h.get(), kCaps);
    g_object_set(h->element, "copy-mode", 1 /* never */, nullptr);
    gint mode = -1;
    g_object_get(h->element, "copy-mode", &mode, nullptr);
    EXPECT_EQ(mode, 0) << "refused while playing";
    EXPECT_EQ(h.messages(GST_MESSAGE_WARNING).size(), 1u);
}

TEST(TensorImport, StateCyclingClearsTheCacheAndRestartsTheCounts)
{
    Harness h;
    MemfdSource src(2);
    const auto before = open_fds();
    for (int round = 0; round < 3; ++round) {
        gst_harness_play(h.get());
        gst_harness_set_src_caps_str(h.get(), kCaps);
        for (int n = 0; n < 4; ++n) {
            ASSERT_EQ(gst_harness_push(h.get(), src.frame(n).release()), GST_FLOW_OK);
            gst_buffer_unref(gst_harness_pull(h.get()));
        }
        EXPECT_EQ(u64_prop(h->element, "cache-misses"), 2u) << "round " << round;
        EXPECT_EQ(u64_prop(h->element, "cache-hits"), 2u) << "round " << round;
        ASSERT_EQ(gst_element_set_state(h->element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
        EXPECT_EQ(open_fds(), before) << "stop releases every cached import";
    }
}

TEST(TensorImport, TenThousandFramesLeaveTheFdCountUnchanged)
{
    MemfdSource src(4);
    const auto before = open_fds();
    {
        Harness h;
        gst_harness_set_src_caps_str(h.get(), kCaps);
        std::set<int> steady;
        for (int n = 0; n < 10000; ++n) {
            ASSERT_EQ(gst_harness_push(h.get(), src.frame(n).release()), GST_FLOW_OK);
            gst_buffer_unref(gst_harness_pull(h.get()));
            if (n == 100)
                steady = open_fds();
        }
        EXPECT_EQ(open_fds(), steady) << describe_fds(open_fds());
        EXPECT_EQ(u64_prop(h->element, "cache-misses"), 4u);
        EXPECT_EQ(u64_prop(h->element, "cache-hits"), 9996u);
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

} // namespace
} // namespace edgetensor::test
