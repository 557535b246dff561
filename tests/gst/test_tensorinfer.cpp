// SPDX-License-Identifier: MIT
//
// tensorinfer in pipelines. Everywhere: the errors of a missing, unreadable or unloadable model
// (naming the file and the cause; a build without the backend says so) with no fd left open, and
// a runtime absent at run time (run again with EDGETENSOR_INFER_MODULE_DIR at modules whose
// runtime is gone). Where ONNX Runtime is built (the 1.26 and 1.28 lanes; skipped with the
// reason elsewhere, failed where EDGETENSOR_TEST_REQUIRE_INFER names it): outputs against values
// computed here, other/tensors in and out, a batch into a dynamic first dimension, no copy
// through the element (its stats: every input read in place, 0 copies, through tensorconvert
// too), system memory copied, counted and warned once (or refused), a mismatch refused at caps
// time naming both sides, and frames carrying the tensor and leaving with the outputs.

#include "fd_count.hpp"
#include "reference.hpp"
#include "tensorinfer_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace edgetensor::test
{
namespace
{

constexpr const char* kSsdTensorCaps =
    "other/tensors,num_tensors=1,format=static,types=uint8,dimensions=3:16:16:1,framerate=30/1";

std::string model(const std::string& name)
{
    return infer_models().path(name);
}

std::vector<float> floats_of(GstMemory* mem)
{
    GstMapInfo map;
    EXPECT_TRUE(gst_memory_map(mem, &map, GST_MAP_READ));
    std::vector<float> v(map.size / sizeof(float));
    std::memcpy(v.data(), map.data, v.size() * sizeof(float));
    gst_memory_unmap(mem, &map);
    return v;
}

guint64 stat(const PipelineRun& r, const char* field)
{
    guint64 v = G_MAXUINT64;
    if (r.stats)
        gst_structure_get_uint64(r.stats.get(), field, &v);
    return v;
}

bool has(const std::vector<std::string>& v, const std::string& text)
{
    for (const auto& s : v)
        if (s.find(text) != std::string::npos)
            return true;
    return false;
}

// The element alone: NULL -> PAUSED, the bus's error.
std::string start_error(const std::string& props)
{
    PipelineRun r = run_pipeline(
        "fakesrc num-buffers=1 ! tensorinfer name=inf " + props + " ! fakesink", "", {});
    return r.all_errors();
}

// ---- everywhere ----------------------------------------------------------------------------

TEST(TensorInferErrors, NoModelIsAnErrorAtStart_Negative)
{
    const std::string e = start_error("");
    EXPECT_NE(e.find("tensorinfer has no model: set the \"model\" property"), std::string::npos)
        << e;
}

TEST(TensorInferErrors, AMissingModelNamesTheFileAndTheCause_Negative)
{
    const std::string e = start_error("model=/nonexistent/dir/m.onnx");
    EXPECT_NE(e.find("model '/nonexistent/dir/m.onnx': cannot open it: No such file or directory"),
              std::string::npos)
        << e;
}

TEST(TensorInferErrors, ACorruptModelNamesTheFileAndTheCause_Negative)
{
    TempDir dir;
    const std::string path = dir.write("broken.onnx", "this is no model");
    const std::string e = start_error("model=" + path);
    if (!infer_backend_built(InferBackend::OnnxRuntime)) {
        EXPECT_NE(e.find("this edgetensor was built without ONNX Runtime"), std::string::npos) << e;
        EXPECT_NE(e.find(path), std::string::npos) << e;
        return;
    }
    if (!infer_unavailable_reason(InferBackend::OnnxRuntime).empty())
        GTEST_SKIP() << infer_unavailable_reason(InferBackend::OnnxRuntime);
    EXPECT_NE(e.find("model '" + path + "' is not a valid ONNX model"), std::string::npos) << e;
}

TEST(TensorInferErrors, AProviderOrDelegateOfTheOtherRuntimeIsRefused_Negative)
{
    TempDir dir;
    const std::string path = dir.write("m.onnx", "x");
    const std::string e = start_error("model=" + path + " delegate=libvx_delegate.so");
    // Decided from the options and the file alone, built or not.
    EXPECT_NE(e.find("model '" + path +
                     "': a delegate (libvx_delegate.so) is a TensorFlow Lite "
                     "setting"),
              std::string::npos)
        << e;
}

TEST(TensorInferErrors, FailedStartsLeaveNoFdOpen_Negative)
{
    TempDir dir;
    const std::string broken = dir.write("broken.onnx", "this is no model");
    start_error("model=" + broken); // the runtime's own process-wide state, made once
    const auto before = open_fds();
    for (int i = 0; i < 5; ++i) {
        start_error("model=/nonexistent/m.onnx");
        start_error("model=" + broken);
        start_error("model=" + broken + " execution-provider=no-such-provider");
    }
    std::set<int> leaked;
    for (int fd : open_fds())
        if (!before.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << describe_fds(leaked);
}

// Registered a second time with EDGETENSOR_INFER_MODULE_DIR at modules whose runtime library
// is gone (tests/infer/absent) and EDGETENSOR_TEST_RUNTIME_ABSENT=1.
TEST(TensorInferErrors, RuntimeAbsentIsAnErrorNamingTheMissingLibrary_Negative)
{
    if (env_or_empty("EDGETENSOR_TEST_RUNTIME_ABSENT") != "1")
        GTEST_SKIP() << "runs as gst-tensorinfer-runtime-absent";
    TempDir dir;
    const std::string path = dir.write("m.onnx", "x");
    const std::string e = start_error("model=" + path);
    if (!infer_backend_built(InferBackend::OnnxRuntime)) {
        EXPECT_NE(e.find("built without ONNX Runtime"), std::string::npos) << e;
        return;
    }
    EXPECT_NE(e.find("model '" + path + "': ONNX Runtime cannot be loaded"), std::string::npos)
        << e;
    EXPECT_NE(e.find("libet-infer-runtime-gone.so.1"), std::string::npos) << e;
}

// ---- ONNX Runtime --------------------------------------------------------------------------

class TensorInferOnnx : public OnnxElementTest
{
protected:
    PoolPtr ssd_input_pool() { return make_active_pool(kSsdTensorCaps); }
};

void expect_ssd_outputs(GstBuffer* b, const char* what)
{
    SCOPED_TRACE(what);
    ASSERT_EQ(gst_buffer_n_memory(b), 4u);
    const auto boxes = floats_of(gst_buffer_peek_memory(b, 0));
    const auto classes = floats_of(gst_buffer_peek_memory(b, 1));
    const auto scores = floats_of(gst_buffer_peek_memory(b, 2));
    const auto num = floats_of(gst_buffer_peek_memory(b, 3));
    ASSERT_GE(boxes.size(), 12u);
    ASSERT_GE(scores.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        for (int k = 0; k < 4; ++k)
            EXPECT_NEAR(boxes[size_t(i * 4 + k)], ssd_box(i)[size_t(k)], 1e-6);
        EXPECT_EQ(classes[size_t(i)], float(i + 1));
        EXPECT_NEAR(scores[size_t(i)], kChannelValues[size_t(i)] / 255.0f, 1e-5);
    }
    EXPECT_EQ(num[0], 3.0f);
}

TEST_F(TensorInferOnnx, TensorsInOneTensorPerOutputOutNothingCopied)
{
    PoolPtr pool = ssd_input_pool();
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> in;
    for (int i = 0; i < 4; ++i)
        in.push_back(filled_image_tensor(pool.get(), 16, 16));
    PipelineRun r =
        run_pipeline("appsrc name=src ! tensorinfer name=inf model=" + model("ssd_u8.onnx") +
                         " ! appsink name=sink",
                     kSsdTensorCaps, std::move(in));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 4u);
    ASSERT_TRUE(r.src_caps);
    const GstStructure* s = gst_caps_get_structure(r.src_caps.get(), 0);
    EXPECT_STREQ(gst_structure_get_name(s), "other/tensors");
    gint n = 0;
    EXPECT_TRUE(gst_structure_get_int(s, "num_tensors", &n));
    EXPECT_EQ(n, 4);
    EXPECT_STREQ(gst_structure_get_string(s, "types"), "float32,float32,float32,float32");
    EXPECT_STREQ(gst_structure_get_string(s, "dimensions"), "4:3:1,3:1,3:1,1");
    for (auto& sample : r.samples)
        expect_ssd_outputs(gst_sample_get_buffer(sample.get()), "output");
    // The outputs also travel as GstTensorMeta where GStreamer has it, under the decoders' ids.
    GstBuffer* first = gst_sample_get_buffer(r.samples[0].get());
    auto metas = gst::read_gst_tensor_metas(first);
    EXPECT_EQ(metas.size(), gst::have_gst_tensor_meta() ? 4u : 0u);
    if (!metas.empty()) {
        EXPECT_TRUE(metas[0].id == "Gst.Model.ObjectDetector.Boxes" ||
                    metas[0].id == "ssd-mobilenet-v1-variant-1-out-boxes")
            << metas[0].id;
    }
    // The proof of no copy: every input read where it lay.
    EXPECT_EQ(stat(r, "frames"), 4u);
    EXPECT_EQ(stat(r, "runs"), 4u);
    EXPECT_EQ(stat(r, "inputs-in-place"), 4u);
    EXPECT_EQ(stat(r, "copies"), 0u);
    gboolean zero = FALSE;
    EXPECT_TRUE(gst_structure_get_boolean(r.stats.get(), "zero-copy", &zero) && zero);
    EXPECT_FALSE(has(r.warnings, "Copying")) << r.warnings.size();
}

TEST_F(TensorInferOnnx, ThroughTensorconvertNothingIsCopied)
{
    PipelineRun r =
        run_pipeline("tensortestsrc num-buffers=6 pattern=white ! "
                     "video/x-raw,format=NV12,width=64,height=48 ! "
                     "tensorconvert width=16 height=16 letterbox=true ! tensorinfer name=inf "
                     "model=" +
                         model("ssd_u8.onnx") + " ! appsink name=sink",
                     "", {});
    ASSERT_TRUE(r.eos) << r.all_errors();
    EXPECT_EQ(r.samples.size(), 6u);
    EXPECT_EQ(stat(r, "inputs-in-place"), 6u);
    EXPECT_EQ(stat(r, "copies"), 0u);
}

TEST_F(TensorInferOnnx, SystemMemoryIsCopiedCountedAndWarnedOnce)
{
    std::vector<BufferPtr> in;
    for (int i = 0; i < 3; ++i) {
        BufferPtr b(gst_buffer_new_allocate(nullptr, 16 * 16 * 3, nullptr));
        GstMapInfo map;
        gst_buffer_map(b.get(), &map, GST_MAP_WRITE);
        for (size_t p = 0; p < 16 * 16; ++p)
            for (size_t c = 0; c < 3; ++c)
                map.data[p * 3 + c] = kChannelValues[c];
        gst_buffer_unmap(b.get(), &map);
        in.push_back(std::move(b));
    }
    PipelineRun r =
        run_pipeline("appsrc name=src ! tensorinfer name=inf model=" + model("ssd_u8.onnx") +
                         " ! appsink name=sink",
                     kSsdTensorCaps, std::move(in));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 3u);
    expect_ssd_outputs(gst_sample_get_buffer(r.samples[2].get()), "copied input");
    EXPECT_EQ(stat(r, "copies"), 3u);
    EXPECT_EQ(stat(r, "input-copies"), 3u);
    int copy_warnings = 0;
    for (const auto& w : r.warnings)
        copy_warnings += w.find("Copying frames") != std::string::npos;
    EXPECT_EQ(copy_warnings, 1) << "warned once";
    EXPECT_TRUE(has(r.warnings, "memory of type \"SystemMemory\"")) << r.warnings.size();
}

TEST_F(TensorInferOnnx, SystemMemoryIsRefusedWithCopyModeNever_Negative)
{
    std::vector<BufferPtr> in;
    in.emplace_back(gst_buffer_new_allocate(nullptr, 16 * 16 * 3, nullptr));
    PipelineRun r = run_pipeline("appsrc name=src ! tensorinfer name=inf copy-mode=never model=" +
                                     model("ssd_u8.onnx") + " ! fakesink",
                                 kSsdTensorCaps, std::move(in));
    EXPECT_FALSE(r.eos);
    EXPECT_NE(r.all_errors().find("copy-mode is \"never\""), std::string::npos) << r.all_errors();
    EXPECT_NE(r.all_errors().find("Upstream element \"src\""), std::string::npos)
        << "names upstream";
}

TEST_F(TensorInferOnnx, AMismatchIsRefusedAtCapsTimeNamingBoth_Negative)
{
    PoolPtr pool = make_active_pool(
        "other/tensors,num_tensors=1,format=static,types=float32,dimensions=3:16:16:1");
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> in;
    in.push_back(acquire(pool.get()));
    PipelineRun r = run_pipeline(
        "appsrc name=src ! tensorinfer name=inf model=" + model("ssd_u8.onnx") + " ! fakesink",
        "other/tensors,num_tensors=1,format=static,types=float32,"
        "dimensions=3:16:16:1,framerate=30/1",
        std::move(in));
    EXPECT_FALSE(r.eos);
    const std::string e = r.all_errors();
    EXPECT_NE(e.find("model '" + model("ssd_u8.onnx") + "'"), std::string::npos) << e;
    EXPECT_NE(e.find("input 'image' takes u8"), std::string::npos) << e;
    EXPECT_NE(e.find("f32"), std::string::npos) << e;
    // Said once, though the same caps are offered again before the first buffer.
    EXPECT_EQ(std::count_if(r.errors.begin(), r.errors.end(),
                            [](const std::string& m) {
                                return m.find("input 'image' takes u8") != std::string::npos;
                            }),
              1)
        << e;
}

TEST_F(TensorInferOnnx, ABatchFeedsADynamicFirstDimension)
{
    const char* caps = "other/tensors,num_tensors=1,format=static,types=float32,"
                       "dimensions=8:8:3:4,framerate=30/1";
    PoolPtr pool = make_active_pool(caps);
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> in;
    in.push_back(acquire(pool.get()));
    {
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(in[0].get(), &map, GST_MAP_WRITE));
        auto* f = reinterpret_cast<float*>(map.data);
        for (size_t b = 0; b < 4; ++b)
            for (size_t c = 0; c < 3; ++c)
                for (size_t y = 0; y < 8; ++y)
                    for (size_t x = 0; x < 8; ++x)
                        f[((b * 3 + c) * 8 + y) * 8 + x] = pattern(b, c, y, x);
        gst_buffer_unmap(in[0].get(), &map);
    }
    PipelineRun r =
        run_pipeline("appsrc name=src ! tensorinfer name=inf model=" + model("conv_batch.onnx") +
                         " ! appsink name=sink",
                     caps, std::move(in));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 1u);
    EXPECT_STREQ(
        gst_structure_get_string(gst_caps_get_structure(r.src_caps.get(), 0), "dimensions"),
        "8:8:2:4");
    const auto got =
        floats_of(gst_buffer_peek_memory(gst_sample_get_buffer(r.samples[0].get()), 0));
    ASSERT_EQ(got.size(), 4u * 2 * 64);
    for (size_t b = 0; b < 4; ++b) {
        const auto ref = conv_reference(
            8, 8, [&](int c, int y, int x) { return pattern(b, size_t(c), size_t(y), size_t(x)); });
        for (size_t i = 0; i < ref.size(); ++i)
            ASSERT_NEAR(got[b * 128 + i], ref[i], 1e-4) << "batch " << b << " element " << i;
    }
    // The input was read where it lay; the output, dynamic in the model, is copied out of the
    // runtime's buffer (the session takes caller tensors for static outputs only): counted.
    EXPECT_EQ(stat(r, "inputs-in-place"), 1u);
    EXPECT_EQ(stat(r, "input-copies"), 0u);
    EXPECT_EQ(stat(r, "output-copies"), 1u);
    EXPECT_TRUE(has(r.warnings, "Copying outputs")) << r.warnings.size();
}

TEST_F(TensorInferOnnx, DynamicOutputsCannotBeOtherTensors_Negative)
{
    const char* caps =
        "other/tensors,num_tensors=1,format=static,types=float32,dimensions=(string)4,"
        "framerate=30/1";
    PoolPtr pool = make_active_pool(caps);
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> in;
    in.push_back(acquire(pool.get()));
    PipelineRun r = run_pipeline(
        "appsrc name=src ! tensorinfer name=inf model=" + model("nonzero.onnx") + " ! fakesink",
        caps, std::move(in));
    EXPECT_FALSE(r.eos);
    EXPECT_NE(r.all_errors().find("Output 'indices' of model"), std::string::npos)
        << r.all_errors();
    EXPECT_NE(r.all_errors().find("has a dynamic shape"), std::string::npos);
}

TEST_F(TensorInferOnnx, AnUnknownExecutionProviderListsThoseThere_Negative)
{
    const std::string e =
        start_error("model=" + model("ssd_u8.onnx") + " execution-provider=no-such-provider");
    EXPECT_NE(e.find("execution provider 'no-such-provider' is not present"), std::string::npos)
        << e;
    EXPECT_NE(e.find("present: cpu"), std::string::npos) << e;
}

TEST_F(TensorInferOnnx, TensorIdsNamingNoOutputAreRefusedAtStart_Negative)
{
    const std::string e =
        start_error("model=" + model("ssd_u8.onnx") + " tensor-ids=boxes=my-boxes");
    EXPECT_NE(e.find("has no output 'boxes'"), std::string::npos) << e;
}

// Frames whose tensor rides on them (what tensorconvert output-mode=meta makes): the frame
// passes through untouched, the input leaves it, the outputs ride on, boxes mapped onto it.
TEST_F(TensorInferOnnx, FramesCarryTheTensorAndLeaveWithTheOutputs)
{
    PoolPtr pool = ssd_input_pool();
    ASSERT_TRUE(pool);
    const gst::FrameTransform t = transform_of(64, 48, 16, 16, true); // content 16x12 at y 2
    ASSERT_EQ(t.dst_y, 2.0);
    std::vector<BufferPtr> frames;
    std::vector<GstBuffer*> sent;
    for (int i = 0; i < 3; ++i) {
        BufferPtr frame(gst_buffer_new_allocate(nullptr, 64 * 48 * 3, nullptr));
        gst_buffer_memset(frame.get(), 0, guint8(i + 7), 64 * 48 * 3);
        gst::AttachedTensor rider;
        rider.tensor.id = "image";
        rider.tensor.dtype = DType::U8;
        rider.tensor.dims = {1, 16, 16, 3};
        rider.tensor.data = filled_image_tensor(pool.get(), 16, 16);
        rider.transform = t;
        std::vector<gst::AttachedTensor> v{rider};
        ASSERT_TRUE(gst::attach_tensors(frame.get(), std::move(v), false));
        sent.push_back(frame.get());
        frames.push_back(std::move(frame));
    }
    PipelineRun r =
        run_pipeline("appsrc name=src ! tensorinfer name=inf model=" + model("ssd_u8.onnx") +
                         " ! appsink name=sink",
                     "video/x-raw,format=RGB,width=64,height=48,framerate=30/1", std::move(frames));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 3u);
    EXPECT_TRUE(gst_caps_can_intersect(
        r.src_caps.get(), caps_from("video/x-raw,format=RGB,width=64,height=48").get()));
    for (size_t i = 0; i < 3; ++i) {
        GstBuffer* out = gst_sample_get_buffer(r.samples[i].get());
        EXPECT_EQ(out, sent[i]) << "the frame itself passes through";
        guint8 px = 0;
        gst_buffer_extract(out, 100, &px, 1);
        EXPECT_EQ(px, guint8(i + 7)) << "untouched";
        auto riders = gst::attached_tensors(out);
        ASSERT_EQ(riders.size(), 4u) << "the input left, the four outputs rode on";
        EXPECT_EQ(riders[0].tensor.dims, (std::vector<size_t>{1, 3, 4}));
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(riders[0].tensor.data.get(), &map, GST_MAP_READ));
        const auto* boxes = reinterpret_cast<const float*>(map.data);
        for (int b = 0; b < 3; ++b) {
            const auto in = ssd_box(b);
            // y: tensor row (ny * 16 - 2) of the 12 content rows; x: the full width.
            auto fy = [](float ny) { return std::clamp((ny * 16.0f - 2.0f) / 12.0f, 0.0f, 1.0f); };
            EXPECT_NEAR(boxes[b * 4 + 0], fy(in[0]), 1e-5);
            EXPECT_NEAR(boxes[b * 4 + 1], in[1], 1e-5);
            EXPECT_NEAR(boxes[b * 4 + 2], fy(in[2]), 1e-5);
            EXPECT_NEAR(boxes[b * 4 + 3], in[3], 1e-5);
        }
        gst_buffer_unmap(riders[0].tensor.data.get(), &map);
        EXPECT_EQ(gst::have_gst_tensor_meta(), !gst::read_gst_tensor_metas(out).empty());
    }
    EXPECT_EQ(stat(r, "copies"), 0u);
    EXPECT_EQ(stat(r, "inputs-in-place"), 3u);
}

TEST_F(TensorInferOnnx, AFrameWithoutATensorIsAnError_Negative)
{
    std::vector<BufferPtr> frames;
    frames.emplace_back(gst_buffer_new_allocate(nullptr, 64 * 48 * 3, nullptr));
    PipelineRun r = run_pipeline(
        "appsrc name=src ! tensorinfer name=inf model=" + model("ssd_u8.onnx") + " ! fakesink",
        "video/x-raw,format=RGB,width=64,height=48,framerate=30/1", std::move(frames));
    EXPECT_FALSE(r.eos);
    EXPECT_NE(r.all_errors().find("no tensor riding on it"), std::string::npos) << r.all_errors();
    EXPECT_NE(r.all_errors().find("output-mode=meta"), std::string::npos);
}

TEST_F(TensorInferOnnx, CyclesThroughAllStatesWithAModelLeavingNoFdOpen)
{
    GstObjectPtr<GstElement> e(gst_element_factory_make("tensorinfer", nullptr));
    gst_object_ref_sink(e.get());
    g_object_set(e.get(), "model", model("ssd_u8.onnx").c_str(), nullptr);
    auto cycle = [&](int round) {
        for (GstState s : {GST_STATE_READY, GST_STATE_PAUSED, GST_STATE_READY, GST_STATE_NULL})
            ASSERT_NE(gst_element_set_state(e.get(), s), GST_STATE_CHANGE_FAILURE) << round;
    };
    cycle(0); // the runtime's process-wide state is made by its first session
    const auto before = open_fds();
    for (int round = 1; round < 4; ++round)
        cycle(round);
    std::set<int> leaked;
    for (int fd : open_fds())
        if (!before.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << describe_fds(leaked);
}

TEST_F(TensorInferOnnx, AModelWithTwoInputsIsRefusedAtStart_Negative)
{
    const std::string e = start_error("model=" + detector_models().path("two_inputs.onnx"));
    EXPECT_NE(e.find("has 2 inputs (a, b); tensorinfer feeds a model one tensor"),
              std::string::npos)
        << e;
}

} // namespace
} // namespace edgetensor::test
