// SPDX-License-Identifier: MIT
//
// The "edgetensor" plugin: registration, generic state cycling of every element, and
// tensortestsrc through GstHarness.

#include "element_harness.hpp"
#include "fd_count.hpp"
#include "gst_test_util.hpp"

#include <gst/check/gstharness.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace edgetensor::test
{
namespace
{

using namespace std::chrono_literals;

std::vector<std::string> plugin_elements()
{
    std::vector<std::string> names;
    GList* features = gst_registry_get_feature_list_by_plugin(gst_registry_get(), "edgetensor");
    for (GList* l = features; l; l = l->next)
        if (GST_IS_ELEMENT_FACTORY(l->data))
            names.emplace_back(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(l->data)));
    gst_plugin_feature_list_free(features);
    return names;
}

bool has_pad_template(const std::string& factory_name, GstPadDirection dir)
{
    GstElementFactory* f = gst_element_factory_find(factory_name.c_str());
    if (!f)
        return false;
    bool found = false;
    for (const GList* l = gst_element_factory_get_static_pad_templates(f); l; l = l->next)
        found = found || static_cast<GstStaticPadTemplate*>(l->data)->direction == dir;
    gst_object_unref(f);
    return found;
}

// The name to ask for a sink pad of the element by: "sink", or a request template's
// ("sink_%u": tensorbatch).
std::string sink_pad_name(const std::string& factory_name)
{
    std::string name = "sink";
    GstElementFactory* f = gst_element_factory_find(factory_name.c_str());
    if (!f)
        return name;
    for (const GList* l = gst_element_factory_get_static_pad_templates(f); l; l = l->next) {
        auto* t = static_cast<GstStaticPadTemplate*>(l->data);
        if (t->direction == GST_PAD_SINK)
            name = t->name_template;
    }
    gst_object_unref(f);
    return name;
}

// Waits up to `timeout` for a buffer at the harness sink.
BufferPtr pull_within(GstHarness* h, std::chrono::milliseconds timeout)
{
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
        if (GstBuffer* b = gst_harness_try_pull(h))
            return BufferPtr(b);
        std::this_thread::sleep_for(2ms);
    }
    return {};
}

TEST(GstPlugin, IsRegisteredWithItsElements)
{
    GstPlugin* plugin = gst_registry_find_plugin(gst_registry_get(), "edgetensor");
    ASSERT_TRUE(plugin) << "GST_PLUGIN_PATH must point at the build's gst/ directory";
    EXPECT_STREQ(gst_plugin_get_license(plugin), "MIT/X11");
    gst_object_unref(plugin);
    const auto names = plugin_elements();
    EXPECT_NE(std::find(names.begin(), names.end(), "tensortestsrc"), names.end());
}

// What an element needs around it to run: the IPC elements need a socket, and tensoripcsrc a
// tensoripcsink serving frames on it.
struct Surroundings {
    std::string dir;
    GstElement* peer = nullptr;
    explicit Surroundings(const std::string& name, GstElement* element)
    {
        if (name.rfind("tensoripc", 0) != 0)
            return;
        char tmpl[] = "/tmp/et-cycle-XXXXXX";
        if (!::mkdtemp(tmpl))
            return;
        dir = tmpl;
        const std::string path = dir + "/s";
        g_object_set(element, "socket-path", path.c_str(), nullptr);
        if (name == "tensoripcsrc") {
            const std::string launch =
                "tensortestsrc is-live=true ! tensoripcsink socket-path=" + path;
            peer = gst_parse_launch(launch.c_str(), nullptr);
            if (peer)
                gst_element_set_state(peer, GST_STATE_PLAYING);
        }
    }
    ~Surroundings()
    {
        if (peer) {
            gst_element_set_state(peer, GST_STATE_NULL);
            gst_object_unref(peer);
        }
        if (!dir.empty()) {
            ::unlink((dir + "/s").c_str());
            ::rmdir(dir.c_str());
        }
    }
    Surroundings(const Surroundings&) = delete;
    Surroundings& operator=(const Surroundings&) = delete;
};

TEST(GstPlugin, EveryElementCyclesThroughAllStatesRepeatedly)
{
    const auto names = plugin_elements();
    ASSERT_FALSE(names.empty());
    for (const char* expected : {"tensoripcsink", "tensoripcsrc", "tensorbatch"})
        EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
    for (const std::string& name : names) {
        SCOPED_TRACE(name);
        // tensorinfer needs a model and a runtime to start: gst-tensorinfer cycles it with one
        // where a runtime is built.
        if (name == "tensorinfer")
            continue;
        const bool produces = has_pad_template(name, GST_PAD_SRC);
        const bool consumes = has_pad_template(name, GST_PAD_SINK);
        // Configured before the harness takes it: the harness plays its element at once.
        GstElement* element = gst_element_factory_make(name.c_str(), nullptr);
        ASSERT_TRUE(element);
        Surroundings around(name, element);
        const std::string sink = sink_pad_name(name);
        HarnessPtr h(gst_harness_new_with_element(element, consumes ? sink.c_str() : nullptr,
                                                  produces ? "src" : nullptr));
        ASSERT_TRUE(h.get());
        if (consumes)
            gst_harness_add_src(h.get(), "tensortestsrc", FALSE);
        for (int round = 0; round < 5; ++round) {
            for (GstState s : {GST_STATE_READY, GST_STATE_PAUSED, GST_STATE_PLAYING}) {
                ASSERT_NE(gst_element_set_state(h->element, s), GST_STATE_CHANGE_FAILURE)
                    << "to " << gst_element_state_get_name(s) << " in round " << round;
                GstState cur = GST_STATE_VOID_PENDING;
                ASSERT_NE(gst_element_get_state(h->element, &cur, nullptr, 5 * GST_SECOND),
                          GST_STATE_CHANGE_FAILURE);
            }
            if (consumes && h->src_harness) {
                gst_harness_play(h->src_harness);
                EXPECT_EQ(gst_harness_push_from_src(h.get()), GST_FLOW_OK);
            }
            if (produces) {
                EXPECT_TRUE(pull_within(h.get(), 5s)) << "no data in round " << round;
            }
            ASSERT_EQ(gst_element_set_state(h->element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
            while (GstBuffer* b = gst_harness_try_pull(h.get()))
                gst_buffer_unref(b);
        }
    }
}

TEST(GstTensorTestSrc, ProducesFramesFromItsPoolWithMetaAndRecycledIdentities)
{
    HarnessPtr h(gst_harness_new("tensortestsrc"));
    g_object_set(h->element, "pattern", 4 /* frame-counter */, "min-buffers", 3, "max-buffers", 3,
                 nullptr);
    gst_harness_set_sink_caps_str(h.get(), "video/x-raw,format=NV12,width=320,height=240,"
                                           "framerate=30/1");
    gst_harness_play(h.get());
    std::set<guint64> ids;
    for (guint64 n = 0; n < 12; ++n) {
        BufferPtr b = pull_within(h.get(), 5s);
        ASSERT_TRUE(b) << "frame " << n;
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(b.get());
        ASSERT_TRUE(m);
        ids.insert(m->identity);
        EXPECT_EQ(GST_BUFFER_OFFSET(b.get()), n);
        EXPECT_EQ(GST_BUFFER_PTS(b.get()), gst_util_uint64_scale(n, GST_SECOND, 30));
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(b.get(), &map, GST_MAP_READ));
        EXPECT_EQ(map.data[0], guint8(n));
        EXPECT_EQ(map.data[320 * 240 + 5], guint8(n)) << "chroma plane of frame " << n;
        gst_buffer_unmap(b.get(), &map);
    }
    EXPECT_LE(ids.size(), 3u) << "the source must recycle its pool's tensors";
}

TEST(GstTensorTestSrc, AddsVideoMetaWhenDownstreamReadsIt)
{
    HarnessPtr h(gst_harness_new("tensortestsrc"));
    gst_harness_add_propose_allocation_meta(h.get(), GST_VIDEO_META_API_TYPE, nullptr);
    gst_harness_set_sink_caps_str(h.get(), "video/x-raw,format=RGB,width=321,height=10,"
                                           "framerate=30/1");
    gst_harness_play(h.get());
    BufferPtr b = pull_within(h.get(), 5s);
    ASSERT_TRUE(b);
    GstVideoMeta* vm = gst_buffer_get_video_meta(b.get());
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(b.get());
    ASSERT_TRUE(vm);
    ASSERT_TRUE(m);
    EXPECT_EQ(vm->stride[0], m->plane_strides[0]);
    EXPECT_GE(vm->stride[0], 963);
}

TEST(GstTensorTestSrc, ProducesOtherTensors)
{
    HarnessPtr h(gst_harness_new("tensortestsrc"));
    g_object_set(h->element, "pattern", 3 /* white */, nullptr);
    gst_harness_set_sink_caps_str(h.get(),
                                  "other/tensors,num_tensors=1,format=static,"
                                  "types=float32,dimensions=(string)3:8:4:1,framerate=10/1");
    gst_harness_play(h.get());
    BufferPtr b = pull_within(h.get(), 5s);
    ASSERT_TRUE(b);
    EXPECT_EQ(gst_buffer_get_size(b.get()), 3u * 8u * 4u * 4u);
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(b.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->desc.dtype, EDGETENSOR_DTYPE_F32);
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(b.get(), &map, GST_MAP_READ));
    const float* f = reinterpret_cast<const float*>(map.data);
    EXPECT_FLOAT_EQ(f[0], 1.0f);
    EXPECT_FLOAT_EQ(f[95], 1.0f);
    gst_buffer_unmap(b.get(), &map);
}

TEST(GstTensorTestSrc, NumBuffersEndsWithEos)
{
    HarnessPtr h(gst_harness_new("tensortestsrc"));
    g_object_set(h->element, "num-buffers", 3, nullptr);
    gst_harness_play(h.get());
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(pull_within(h.get(), 5s)) << "buffer " << i;
    bool eos = false;
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (!eos && std::chrono::steady_clock::now() < until) {
        if (GstEvent* e = gst_harness_try_pull_event(h.get())) {
            eos = GST_EVENT_TYPE(e) == GST_EVENT_EOS;
            gst_event_unref(e);
        } else {
            std::this_thread::sleep_for(2ms);
        }
    }
    EXPECT_TRUE(eos);
    EXPECT_EQ(gst_harness_try_pull(h.get()), nullptr) << "no buffer after num-buffers";
}

TEST(GstTensorTestSrc, ReadyOnlyPropertiesAreRefusedWhilePlaying_Negative)
{
    HarnessPtr h(gst_harness_new("tensortestsrc"));
    gst_harness_play(h.get());
    ASSERT_TRUE(pull_within(h.get(), 5s));
    g_object_set(h->element, "is-live", TRUE, "min-buffers", 9, nullptr);
    gboolean live = TRUE;
    guint min = 0;
    g_object_get(h->element, "is-live", &live, "min-buffers", &min, nullptr);
    EXPECT_FALSE(live);
    EXPECT_EQ(min, 4u);
    // pattern is mutable while playing
    g_object_set(h->element, "pattern", 2, nullptr);
    gint pattern = 0;
    g_object_get(h->element, "pattern", &pattern, nullptr);
    EXPECT_EQ(pattern, 2);
}

TEST(GstTensorTestSrc, BufferOutlivesTheElement)
{
    const auto before = open_fds();
    {
        BufferPtr kept;
        {
            HarnessPtr h(gst_harness_new("tensortestsrc"));
            gst_harness_play(h.get());
            kept = pull_within(h.get(), 5s);
            ASSERT_TRUE(kept);
        }
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(kept.get(), &map, GST_MAP_READ));
        gst_buffer_unmap(kept.get(), &map);
        EXPECT_TRUE(gst_buffer_get_edge_tensor_meta(kept.get()));
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

} // namespace
} // namespace edgetensor::test
