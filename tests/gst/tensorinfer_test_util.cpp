// SPDX-License-Identifier: MIT
#include "tensorinfer_test_util.hpp"

#include <chrono>

namespace edgetensor::test
{

namespace
{

ModelDir make_models(const char* script_env)
{
    ModelDir d;
    d.make_with_python(env_or_empty("EDGETENSOR_TEST_PYTHON"), env_or_empty(script_env));
    return d;
}

std::string message_text(GstMessage* m)
{
    GError* err = nullptr;
    gchar* debug = nullptr;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR)
        gst_message_parse_error(m, &err, &debug);
    else
        gst_message_parse_warning(m, &err, &debug);
    std::string s = std::string(err ? err->message : "?") + " | " + (debug ? debug : "");
    g_clear_error(&err);
    g_free(debug);
    return s;
}

} // namespace

ModelDir& infer_models()
{
    static ModelDir d = make_models("EDGETENSOR_TEST_ONNX_MODELS");
    return d;
}

ModelDir& detector_models()
{
    static ModelDir d = make_models("EDGETENSOR_TEST_TENSORINFER_MODELS");
    return d;
}

void OnnxElementTest::SetUp()
{
    ET_REQUIRE_INFER_OR_SKIP(InferBackend::OnnxRuntime);
    for (ModelDir* d : {&infer_models(), &detector_models()}) {
        if (d->why().empty())
            continue;
        if (!d->host_lacks_tools() || infer_required(InferBackend::OnnxRuntime))
            FAIL() << d->why();
        GTEST_SKIP() << d->why();
    }
}

BufferPtr filled_image_tensor(GstBufferPool* pool, size_t h, size_t w)
{
    BufferPtr b = acquire(pool);
    if (!b)
        return b;
    GstMapInfo map;
    EXPECT_TRUE(gst_buffer_map(b.get(), &map, GST_MAP_WRITE));
    for (size_t i = 0; i < h * w; ++i)
        for (size_t c = 0; c < 3; ++c)
            map.data[i * 3 + c] = kChannelValues[c];
    gst_buffer_unmap(b.get(), &map);
    return b;
}

gst::FrameTransform transform_of(size_t fw, size_t fh, size_t tw, size_t th, bool letterbox)
{
    return gst::frame_transform_from(
        compute_convert_geometry(Region{0, 0, fw, fh}, tw, th, letterbox), uint32_t(fw),
        uint32_t(fh), uint32_t(tw), uint32_t(th));
}

std::string PipelineRun::all_errors() const
{
    std::string s;
    for (const auto& e : errors)
        s += e + "\n";
    return s;
}

PipelineRun run_pipeline(const std::string& launch, const std::string& src_caps,
                         std::vector<BufferPtr> buffers)
{
    using namespace std::chrono;
    PipelineRun r;
    GError* err = nullptr;
    GstObjectPtr<GstElement> p(gst_parse_launch(launch.c_str(), &err));
    if (!p) {
        r.errors.push_back(std::string("parse: ") + (err ? err->message : "?"));
        g_clear_error(&err);
        return r;
    }
    g_clear_error(&err);
    GstObjectPtr<GstElement> src(gst_bin_get_by_name(GST_BIN(p.get()), "src"));
    GstObjectPtr<GstElement> sink(gst_bin_get_by_name(GST_BIN(p.get()), "sink"));
    GstObjectPtr<GstElement> inf(gst_bin_get_by_name(GST_BIN(p.get()), "inf"));
    if (src) {
        CapsPtr caps = caps_from(src_caps);
        g_object_set(src.get(), "caps", caps.get(), "format", GST_FORMAT_TIME, "max-bytes",
                     guint64(0), nullptr);
    }
    if (sink)
        g_object_set(sink.get(), "sync", FALSE, nullptr);
    GstObjectPtr<GstBus> bus(gst_element_get_bus(p.get()));
    if (gst_element_set_state(p.get(), GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        r.errors.push_back("the pipeline did not start");
    if (src) {
        GstClockTime pts = 0;
        for (auto& b : buffers) {
            GST_BUFFER_PTS(b.get()) = pts;
            GST_BUFFER_DURATION(b.get()) = GST_SECOND / 30;
            pts += GST_SECOND / 30;
            gst_app_src_push_buffer(GST_APP_SRC(src.get()), b.release());
        }
        gst_app_src_end_of_stream(GST_APP_SRC(src.get()));
    }
    const auto until = steady_clock::now() + seconds(60);
    bool done = false;
    while (!done && steady_clock::now() < until) {
        if (sink)
            while (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink.get()), 0))
                r.samples.emplace_back(s);
        MiniObjectPtr<GstMessage> m(gst_bus_timed_pop_filtered(
            bus.get(), 10 * GST_MSECOND,
            GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)));
        if (!m)
            continue;
        switch (GST_MESSAGE_TYPE(m.get())) {
        case GST_MESSAGE_EOS:
            r.eos = true;
            done = true;
            break;
        case GST_MESSAGE_ERROR:
            r.errors.push_back(message_text(m.get()));
            done = true;
            break;
        default:
            r.warnings.push_back(message_text(m.get()));
            break;
        }
    }
    // After an error, the errors that follow it (a refusal said twice would show here).
    if (!r.errors.empty())
        while (GstMessage* m =
                   gst_bus_timed_pop_filtered(bus.get(), 500 * GST_MSECOND, GST_MESSAGE_ERROR)) {
            r.errors.push_back(message_text(m));
            gst_message_unref(m);
        }
    if (sink) {
        while (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink.get()), 0))
            r.samples.emplace_back(s);
        GstObjectPtr<GstPad> pad(gst_element_get_static_pad(sink.get(), "sink"));
        r.src_caps.reset(gst_pad_get_current_caps(pad.get()));
    }
    // Late warnings (posted just before EOS) are still on the bus.
    while (GstMessage* m = gst_bus_pop_filtered(bus.get(), GST_MESSAGE_WARNING)) {
        r.warnings.push_back(message_text(m));
        gst_message_unref(m);
    }
    if (inf) {
        GstStructure* s = nullptr;
        g_object_get(inf.get(), "stats", &s, nullptr);
        r.stats.reset(s);
    }
    gst_element_set_state(p.get(), GST_STATE_NULL);
    EXPECT_TRUE(unref_and_wait_finalized(p.release()))
        << "the pipeline outlives its last reference";
    return r;
}

} // namespace edgetensor::test
