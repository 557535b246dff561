// SPDX-License-Identifier: MIT
//
// tensorinfer on TensorFlow Lite (built where libtensorflow-lite-dev is: the 1.28 lane), on
// models written at test time with its schema (tests/infer/tflite/tflite_models.cpp). A 64x64
// RGB u8 tensor is exactly three pages, so the runtime reads it in place only when 64 spare
// bytes follow it: through tensorconvert, which writes into the pool tensorinfer proposes, it
// is read in place; from a pool without them it is copied, counted and said why. A delegate
// that will not load is an element error naming it; edgetensor's fake delegate runs the model.

#include "tensorinfer_test_util.hpp"
#include "tflite/tflite_models.hpp"

#include <cmath>
#include <cstring>

namespace edgetensor::test
{
namespace
{

constexpr const char* kMeanCaps = "other/tensors,num_tensors=1,format=static,types=uint8,"
                                  "dimensions=3:64:64:1,framerate=30/1";

ModelDir& tflite_models()
{
    static ModelDir dir = [] {
        ModelDir d;
        d.make_with([](const std::string& path) {
            const std::string r = tfl::write_all(path);
            return r.empty() ? tfl::write_mean(path + "/mean64.tflite", 64, 64) : r;
        });
        return d;
    }();
    return dir;
}

class TensorInferTflite : public testing::Test
{
protected:
    void SetUp() override
    {
        ET_REQUIRE_INFER_OR_SKIP(InferBackend::TfLite);
        ASSERT_EQ(tflite_models().why(), "");
    }
    static std::string model(const std::string& name) { return tflite_models().path(name); }
};

guint64 stat(const PipelineRun& r, const char* field)
{
    guint64 v = G_MAXUINT64;
    if (r.stats)
        gst_structure_get_uint64(r.stats.get(), field, &v);
    return v;
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

TEST_F(TensorInferTflite, ThroughTensorconvertAPageSizedTensorIsReadInPlace)
{
    PipelineRun r = run_pipeline("tensortestsrc num-buffers=4 pattern=white ! "
                                 "video/x-raw,format=NV12,width=128,height=96 ! "
                                 "tensorconvert width=64 height=64 ! tensorinfer name=inf model=" +
                                     model("mean64.tflite") + " ! appsink name=sink",
                                 "", {});
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 4u);
    // Outputs "mean" and "scores", [1, 3] each: white is 255 in every channel.
    GstBuffer* out = gst_sample_get_buffer(r.samples[3].get());
    ASSERT_EQ(gst_buffer_n_memory(out), 2u);
    for (float v : floats_of(gst_buffer_peek_memory(out, 1)))
        EXPECT_NEAR(v, 1.0f, 0.01f);
    EXPECT_EQ(stat(r, "inputs-in-place"), 4u);
    EXPECT_EQ(stat(r, "copies"), 0u);
    EXPECT_STREQ(gst_structure_get_string(r.stats.get(), "backend"), "tflite");
}

// output-mode=meta: tensorinfer tells tensorconvert (the attached-tensor meta's parameters in
// the allocation query) the spare bytes TensorFlow Lite reads past a tensor, and the tensor
// riding on the frame is read in place; the outputs ride on the frame.
TEST_F(TensorInferTflite, ATensorRidingOnTheFrameIsReadInPlace)
{
    PipelineRun r = run_pipeline("tensortestsrc num-buffers=4 pattern=white ! "
                                 "video/x-raw,format=NV12,width=128,height=96 ! "
                                 "tensorconvert width=64 height=64 output-mode=meta ! "
                                 "tensorinfer name=inf model=" +
                                     model("mean64.tflite") + " ! appsink name=sink",
                                 "", {});
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 4u);
    GstBuffer* frame = gst_sample_get_buffer(r.samples[3].get());
    EXPECT_EQ(gst_buffer_get_size(frame), 128u * 96 * 3 / 2) << "the NV12 frame goes on";
    bool scored = false;
    for (const auto& t : gst::attached_tensors(frame)) {
        if (t.tensor.id != "scores")
            continue;
        scored = true;
        for (float v : floats_of(gst_buffer_peek_memory(t.tensor.data.get(), 0)))
            EXPECT_NEAR(v, 1.0f, 0.01f);
    }
    EXPECT_TRUE(scored) << "the outputs ride on the frame";
    EXPECT_EQ(stat(r, "inputs-in-place"), 4u);
    EXPECT_EQ(stat(r, "copies"), 0u);
}

TEST_F(TensorInferTflite, WithoutSpareBytesItIsCopiedCountedAndSaysWhy)
{
    PoolPtr pool = make_active_pool(kMeanCaps); // a pool of exactly one tensor per buffer
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> in;
    for (int i = 0; i < 3; ++i)
        in.push_back(filled_image_tensor(pool.get(), 64, 64));
    PipelineRun r =
        run_pipeline("appsrc name=src ! tensorinfer name=inf model=" + model("mean64.tflite") +
                         " ! appsink name=sink",
                     kMeanCaps, std::move(in));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 3u);
    const auto scores =
        floats_of(gst_buffer_peek_memory(gst_sample_get_buffer(r.samples[0].get()), 1));
    ASSERT_EQ(scores.size(), 3u);
    for (size_t c = 0; c < 3; ++c)
        EXPECT_NEAR(scores[c], kChannelValues[c] / 255.0f, 1e-5);
    EXPECT_EQ(stat(r, "input-copies"), 3u);
    int warnings = 0;
    for (const auto& w : r.warnings)
        warnings += w.find("Copying the input") != std::string::npos;
    EXPECT_EQ(warnings, 1) << "once";
    bool says_why = false;
    for (const auto& w : r.warnings)
        says_why = says_why || w.find("64 bytes") != std::string::npos;
    EXPECT_TRUE(says_why);
}

TEST_F(TensorInferTflite, ADelegateThatWillNotLoadIsNamed_Negative)
{
    PipelineRun r =
        run_pipeline("fakesrc num-buffers=1 ! tensorinfer name=inf model=" + model("add.tflite") +
                         " delegate=/nonexistent/libno-delegate.so ! fakesink",
                     "", {});
    EXPECT_FALSE(r.eos);
    EXPECT_NE(r.all_errors().find("delegate '/nonexistent/libno-delegate.so' cannot be loaded"),
              std::string::npos)
        << r.all_errors();
    EXPECT_NE(r.all_errors().find(model("add.tflite")), std::string::npos);
}

TEST_F(TensorInferTflite, ADelegateThatRefusesTheModelIsNamed_Negative)
{
    const std::string delegate = env_or_empty("EDGETENSOR_TEST_FAKE_DELEGATE");
    ASSERT_FALSE(delegate.empty());
    PipelineRun r =
        run_pipeline("fakesrc num-buffers=1 ! tensorinfer name=inf model=" + model("add.tflite") +
                         " delegate=" + delegate + " delegate-options=fail=prepare ! fakesink",
                     "", {});
    EXPECT_FALSE(r.eos);
    EXPECT_NE(r.all_errors().find("refused the model"), std::string::npos) << r.all_errors();
}

TEST_F(TensorInferTflite, TheFakeDelegateRunsTheModel)
{
    const std::string delegate = env_or_empty("EDGETENSOR_TEST_FAKE_DELEGATE");
    ASSERT_FALSE(delegate.empty());
    const char* caps = "other/tensors,num_tensors=1,format=static,types=float32,"
                       "dimensions=3:8:8:1,framerate=30/1";
    PoolPtr pool = make_active_pool(caps);
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> in;
    in.push_back(acquire(pool.get()));
    {
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(in[0].get(), &map, GST_MAP_WRITE));
        auto* f = reinterpret_cast<float*>(map.data);
        for (size_t i = 0; i < 8 * 8 * 3; ++i)
            f[i] = float(i % 13) / 4.0f;
        gst_buffer_unmap(in[0].get(), &map);
    }
    PipelineRun r = run_pipeline(
        "appsrc name=src ! tensorinfer name=inf model=" + model("add.tflite") +
            " delegate=" + delegate + " delegate-options=\"mode=test\" ! appsink name=sink",
        caps, std::move(in));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 1u);
    const auto y = floats_of(gst_buffer_peek_memory(gst_sample_get_buffer(r.samples[0].get()), 0));
    ASSERT_EQ(y.size(), 8u * 8 * 3);
    for (size_t i = 0; i < y.size(); ++i)
        ASSERT_NEAR(y[i], float(i % 13) / 4.0f + tfl::kAddConstant[i % 3], 1e-6) << i;
    const std::string provider = gst_structure_get_string(r.stats.get(), "execution-provider");
    EXPECT_EQ(provider.rfind("delegate:", 0), 0u) << provider;
}

} // namespace
} // namespace edgetensor::test
