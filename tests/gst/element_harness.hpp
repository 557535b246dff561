// SPDX-License-Identifier: MIT
//
// A GstHarness around one element made from a gst-launch description (so READY-only
// properties are set before it starts), with a bus of its own whose errors and warnings the
// tests read; and pipelines run to their end with a timeout.

#pragma once

#include "gst_test_util.hpp"

#include <gst/check/gstharness.h>

#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::test
{

/// Owns a GstHarness made some other way (gst_harness_new() and friends).
struct HarnessPtr {
    GstHarness* h = nullptr;
    explicit HarnessPtr(GstHarness* harness) : h(harness) {}
    ~HarnessPtr()
    {
        if (h)
            gst_harness_teardown(h);
    }
    HarnessPtr(const HarnessPtr&) = delete;
    HarnessPtr& operator=(const HarnessPtr&) = delete;
    GstHarness* operator->() const { return h; }
    GstHarness* get() const { return h; }
};

struct ElementHarness {
    GstHarness* h = nullptr;
    GstElement* element = nullptr;
    gst::GstObjectPtr<GstBus> bus{gst_bus_new()};

    /// `launch` is "tensorconvert width=8 ..."; `video_meta`: downstream reads GstVideoMeta.
    explicit ElementHarness(const std::string& launch, bool video_meta = true)
    {
        static GstStaticPadTemplate any_src =
            GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
        static GstStaticPadTemplate any_sink =
            GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
        GError* err = nullptr;
        element = gst_parse_launch(launch.c_str(), &err);
        if (!element) {
            ADD_FAILURE() << "cannot create " << launch << ": " << (err ? err->message : "?");
            g_clear_error(&err);
            return;
        }
        g_clear_error(&err);
        gst_element_set_bus(element, bus.get());
        h = gst_harness_new_empty();
        gst_harness_add_element_full(h, element, &any_src, "sink", &any_sink, "src");
        gst_object_unref(element); // the harness holds it
        if (video_meta)
            gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, nullptr);
    }
    ~ElementHarness()
    {
        if (h)
            gst_harness_teardown(h);
        // Queued messages hold the element, which holds the bus: drop them to free both.
        gst_bus_set_flushing(bus.get(), TRUE);
    }
    ElementHarness(const ElementHarness&) = delete;
    ElementHarness& operator=(const ElementHarness&) = delete;
    GstHarness* operator->() const { return h; }
    GstHarness* get() const { return h; }

    /// "message | debug" of every error (or warning) posted and not yet returned, one per
    /// line. Reading one type keeps the other for later.
    std::string messages(GstMessageType type)
    {
        while (GstMessage* m = gst_bus_pop(bus.get())) {
            const GstMessageType t = GST_MESSAGE_TYPE(m);
            if (t == GST_MESSAGE_ERROR || t == GST_MESSAGE_WARNING) {
                std::string line = bus_message_text(m);
                for (char& c : line)
                    if (c == '\n')
                        c = ' ';
                (t == GST_MESSAGE_ERROR ? errors_ : warnings_) += line + "\n";
            }
            gst_message_unref(m);
        }
        return std::exchange(type == GST_MESSAGE_ERROR ? errors_ : warnings_, std::string());
    }

private:
    std::string errors_;
    std::string warnings_;
};

/// Loads one of GStreamer's own plugins (capsfilter, fakesink, ...) by file: the test
/// environment empties the system plugin path.
inline bool load_system_plugin(const char* name)
{
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&gst_init), &info) || !info.dli_fname)
        return false;
    const std::filesystem::path dir =
        std::filesystem::path(info.dli_fname).parent_path() / "gstreamer-1.0";
    const std::string file = (dir / (std::string("libgst") + name + ".so")).string();
    GError* err = nullptr;
    GstPlugin* p = gst_plugin_load_file(file.c_str(), &err);
    if (!p) {
        ADD_FAILURE() << "cannot load " << file << ": " << (err ? err->message : "?")
                      << " (install gstreamer1.0-plugins-base and -good)";
        g_clear_error(&err);
        return false;
    }
    gst_object_unref(p);
    return true;
}

/// What a pipeline run to its end (EOS, an error, or the timeout) left on its bus.
struct PipelineRun {
    bool eos = false;
    bool timed_out = false;
    std::string errors;   ///< "message | debug" per error
    std::string warnings; ///< "message | debug" per warning
};

/// Sets `pipeline` to PLAYING and collects its messages until EOS, the first error or
/// `timeout`; leaves it in NULL.
inline PipelineRun run_pipeline(GstElement* pipeline, GstClockTime timeout = 30 * GST_SECOND)
{
    PipelineRun r;
    gst::GstObjectPtr<GstBus> bus(gst_element_get_bus(pipeline));
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    const GstClockTime deadline = gst_util_get_timestamp() + timeout;
    while (true) {
        const GstClockTime now = gst_util_get_timestamp();
        if (now >= deadline) {
            r.timed_out = true;
            break;
        }
        GstMessage* m = gst_bus_timed_pop_filtered(
            bus.get(), deadline - now,
            GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING));
        if (!m) {
            r.timed_out = true;
            break;
        }
        const GstMessageType type = GST_MESSAGE_TYPE(m);
        if (type == GST_MESSAGE_EOS) {
            r.eos = true;
            gst_message_unref(m);
            break;
        }
        (type == GST_MESSAGE_ERROR ? r.errors : r.warnings) += bus_message_text(m) + "\n";
        gst_message_unref(m);
        if (type == GST_MESSAGE_ERROR)
            break;
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
    return r;
}

/// `launch` parsed as gst-launch-1.0 would; null (a test failure naming the line) when it
/// does not parse. A recoverable error (a property that could not be set) is the test's to see
/// in what the pipeline does.
inline GstElement* parse_launch(const std::string& launch)
{
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launch(launch.c_str(), &err);
    if (!pipeline)
        ADD_FAILURE() << "cannot parse \"" << launch << "\": " << (err ? err->message : "?");
    g_clear_error(&err);
    return pipeline;
}

/// `launch` run to its end (run_pipeline()), and what it posted.
inline PipelineRun run_launch(const std::string& launch)
{
    GstElement* pipeline = parse_launch(launch);
    if (!pipeline)
        return {};
    PipelineRun r = run_pipeline(pipeline);
    EXPECT_TRUE(unref_and_wait_finalized(pipeline)) << "the pipeline outlives its last reference";
    return r;
}

/// The error texts the element named `name` posts while `launch` negotiates and settles, in
/// order: how many times a refusal is said. Collected until a second passes without another
/// error (the first waited for up to 5 s; a bin forwards an error after aborting its state
/// change, so the state change's result cannot say when they are all in).
inline std::vector<std::string> errors_posted_by(const std::string& launch, const char* name)
{
    GstElement* pipeline = parse_launch(launch);
    if (!pipeline)
        return {};
    gst::GstObjectPtr<GstBus> bus(gst_element_get_bus(pipeline));
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    std::vector<std::string> out;
    GstClockTime wait = 5 * GST_SECOND;
    while (GstMessage* m = gst_bus_timed_pop_filtered(bus.get(), wait, GST_MESSAGE_ERROR)) {
        GError* e = nullptr;
        gst_message_parse_error(m, &e, nullptr);
        if (g_strcmp0(GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), name) == 0)
            out.push_back(e ? e->message : "");
        g_clear_error(&e);
        gst_message_unref(m);
        wait = GST_SECOND;
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    return out;
}

} // namespace edgetensor::test
