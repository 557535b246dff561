// SPDX-License-Identifier: MIT
//
// Upstream's tensor decoders on tensorinfer's outputs, unchanged (GStreamer 1.26+, where
// GstTensorMeta and the decoders exist; built only against the analytics library): 1.26's
// ssdobjectdetector, 1.28's ssdtensordec, tensordecodebin and yolov8tensordec. Frames carry a
// letterboxed tensor; the boxes the decoders add (GstAnalyticsRelationMeta) must land where the
// model put them on the picture, i.e. on the frame, not on the tensor. Needs ONNX Runtime and
// python3-onnx (the models are made at test time), as gst-tensorinfer.

#include "tensorinfer_test_util.hpp"

#include <gst/analytics/analytics.h>

#include <algorithm>
#include <cmath>

namespace edgetensor::test
{
namespace
{

constexpr size_t kFrameW = 320, kFrameH = 240;

struct Box {
    int x, y, w, h;
    float confidence;
};

std::vector<Box> detections(GstBuffer* buf)
{
    std::vector<Box> out;
    GstAnalyticsRelationMeta* rmeta = gst_buffer_get_analytics_relation_meta(buf);
    if (!rmeta)
        return out;
    gpointer state = nullptr;
    GstAnalyticsMtd mtd;
    while (gst_analytics_relation_meta_iterate(rmeta, &state, gst_analytics_od_mtd_get_mtd_type(),
                                               &mtd)) {
        Box b{};
        gst_analytics_od_mtd_get_location(reinterpret_cast<GstAnalyticsODMtd*>(&mtd), &b.x, &b.y,
                                          &b.w, &b.h, &b.confidence);
        out.push_back(b);
    }
    std::sort(out.begin(), out.end(), [](const Box& a, const Box& b) { return a.y < b.y; });
    return out;
}

bool have_element(const char* name)
{
    GstElementFactory* f = gst_element_factory_find(name);
    if (f)
        gst_object_unref(f);
    return f != nullptr;
}

gst::FrameTransform frame_transform()
{
    return transform_of(kFrameW, kFrameH, 16, 16, true);
}

// SSD box i of the test model as a decoder scales it onto the frame: (x, y, w, h) pixels.
Box expected_ssd(int i)
{
    const gst::FrameTransform t = frame_transform();
    const auto b = ssd_box(i);
    auto ny = [&](float v) { return std::clamp(t.frame_ny(v), 0.0, 1.0); };
    auto nx = [&](float v) { return std::clamp(t.frame_nx(v), 0.0, 1.0); };
    const int x0 = int(nx(b[1]) * kFrameW), y0 = int(ny(b[0]) * kFrameH);
    return {x0, y0, int(nx(b[3]) * kFrameW - x0), int(ny(b[2]) * kFrameH - y0),
            kChannelValues[size_t(i)] / 255.0f};
}

void expect_near(const Box& got, const Box& want, const char* what)
{
    SCOPED_TRACE(what);
    EXPECT_NEAR(got.x, want.x, 1);
    EXPECT_NEAR(got.y, want.y, 1);
    EXPECT_NEAR(got.w, want.w, 1);
    EXPECT_NEAR(got.h, want.h, 1);
}

class TensorInferDecoders : public OnnxElementTest
{
protected:
    void SetUp() override
    {
        OnnxElementTest::SetUp();
        if (IsSkipped() || HasFailure())
            return;
        if (!gst::have_gst_tensor_meta())
            GTEST_SKIP() << "GstTensorMeta needs GStreamer 1.26";
    }
    // Frames of kFrameW x kFrameH carrying a 16x16 u8 tensor letterboxed from them.
    std::vector<BufferPtr> frames(size_t n)
    {
        pool_ = make_active_pool(
            "other/tensors,num_tensors=1,format=static,types=uint8,dimensions=3:16:16:1");
        std::vector<BufferPtr> out;
        for (size_t i = 0; i < n; ++i) {
            BufferPtr frame(gst_buffer_new_allocate(nullptr, kFrameW * kFrameH * 3, nullptr));
            gst_buffer_memset(frame.get(), 0, 0x40, kFrameW * kFrameH * 3);
            gst::AttachedTensor rider;
            rider.tensor.id = "image";
            rider.tensor.dtype = DType::U8;
            rider.tensor.dims = {1, 16, 16, 3};
            rider.tensor.data = filled_image_tensor(pool_.get(), 16, 16);
            rider.transform = frame_transform();
            std::vector<gst::AttachedTensor> v{rider};
            EXPECT_TRUE(gst::attach_tensors(frame.get(), std::move(v), false));
            out.push_back(std::move(frame));
        }
        return out;
    }
    static std::string frame_caps()
    {
        return "video/x-raw,format=RGB,width=" + std::to_string(kFrameW) +
               ",height=" + std::to_string(kFrameH) + ",framerate=30/1";
    }
    // The two boxes scoring above the decoders' 0.3 threshold (channels 1 and 2: 0.4, 0.8).
    void expect_ssd_boxes(const PipelineRun& r)
    {
        ASSERT_TRUE(r.eos) << r.all_errors();
        ASSERT_EQ(r.samples.size(), 2u);
        for (const auto& s : r.samples) {
            const auto got = detections(gst_sample_get_buffer(s.get()));
            ASSERT_EQ(got.size(), 2u);
            // The tensor's rows 2..14 hold the frame's 240 (letterboxed): box 1's top, at row
            // 1.6 of the tensor, is in the padding (clamped to the frame's top); box 2's, at
            // row 3.2, is 24 rows down the frame.
            expect_near(got[0], expected_ssd(1), "box 1");
            expect_near(got[1], expected_ssd(2), "box 2");
            EXPECT_EQ(got[0].y, 0);
            EXPECT_NEAR(got[1].y, 24, 1);
            EXPECT_NEAR(got[1].confidence, kChannelValues[2] / 255.0f, 1e-5);
        }
    }
    PoolPtr pool_;
};

TEST_F(TensorInferDecoders, SsdDecoderOfThisReleaseDrawsBoxesOnTheFrame)
{
    // 1.26: ssdobjectdetector; 1.28: ssdtensordec (its ssdobjectdetector is deprecated).
    const char* decoder = have_element("ssdtensordec") ? "ssdtensordec" : "ssdobjectdetector";
    ASSERT_TRUE(have_element(decoder)) << decoder << " (gst-plugins-bad's tensordecoders)";
    PipelineRun r = run_pipeline(
        "appsrc name=src ! tensorinfer name=inf model=" + infer_models().path("ssd_u8.onnx") +
            " ! " + decoder + " ! appsink name=sink",
        frame_caps(), frames(2));
    expect_ssd_boxes(r);
    guint64 copies = 1;
    gst_structure_get_uint64(r.stats.get(), "copies", &copies);
    EXPECT_EQ(copies, 0u);
}

// The launch line: tensorconvert letterboxes the frame into the tensor that rides on it
// (output-mode=meta), tensorinfer reads it there and the decoder draws on the frame. The
// padding is filled with the picture's own colour, so the scores are what the test model makes of
// a uniform picture.
TEST_F(TensorInferDecoders, TensorconvertMetaBoxesLandOnTheFrame)
{
    const char* decoder = have_element("ssdtensordec") ? "ssdtensordec" : "ssdobjectdetector";
    ASSERT_TRUE(have_element(decoder)) << decoder << " (gst-plugins-bad's tensordecoders)";
    std::vector<BufferPtr> in;
    for (int i = 0; i < 2; ++i) {
        std::vector<uint8_t> px(kFrameW * kFrameH * 3);
        for (size_t k = 0; k < px.size(); ++k)
            px[k] = kChannelValues[k % 3];
        BufferPtr frame(gst_buffer_new_allocate(nullptr, px.size(), nullptr));
        gst_buffer_fill(frame.get(), 0, px.data(), px.size());
        in.push_back(std::move(frame));
    }
    PipelineRun r = run_pipeline(
        "appsrc name=src ! tensorconvert width=16 height=16 letterbox=true fill-color=0xff3366cc "
        "output-mode=meta ! tensorinfer name=inf model=" +
            infer_models().path("ssd_u8.onnx") + " ! " + decoder + " ! appsink name=sink",
        frame_caps(), std::move(in));
    expect_ssd_boxes(r);
    guint64 copies = 1;
    gst_structure_get_uint64(r.stats.get(), "copies", &copies);
    EXPECT_EQ(copies, 0u);
}

class TensordecodebinPicksTheSsdDecoder : public TensorInferDecoders,
                                          public testing::WithParamInterface<const char*>
{
};

// A model with a fixed detection count (ssd_u8: [1, 3, 4]) and one with a dynamic count
// (ssd_dyn: [1, N, 4], its outputs copied out of the runtime).
TEST_P(TensordecodebinPicksTheSsdDecoder, FromTheCapsTensorinferStates)
{
    if (!have_element("tensordecodebin"))
        GTEST_SKIP() << "tensordecodebin is GStreamer 1.28's";
    const std::string name = GetParam();
    const std::string model =
        name == "ssd_dyn.onnx" ? detector_models().path(name) : infer_models().path(name);
    PipelineRun r = run_pipeline("appsrc name=src ! tensorinfer name=inf model=" + model +
                                     " ! tensordecodebin ! appsink name=sink",
                                 frame_caps(), frames(2));
    expect_ssd_boxes(r);
    ASSERT_TRUE(r.src_caps);
    EXPECT_STREQ(gst_structure_get_name(gst_caps_get_structure(r.src_caps.get(), 0)),
                 "video/x-raw");
}

INSTANTIATE_TEST_SUITE_P(Models, TensordecodebinPicksTheSsdDecoder,
                         testing::Values("ssd_u8.onnx", "ssd_dyn.onnx"));

TEST_F(TensorInferDecoders, Yolov8DecoderBoxesLandOnTheFrame)
{
    if (!have_element("yolov8tensordec"))
        GTEST_SKIP() << "yolov8tensordec is GStreamer 1.28's";
    PipelineRun r = run_pipeline(
        "appsrc name=src ! tensorinfer name=inf model=" + detector_models().path("yolo.onnx") +
            " ! yolov8tensordec ! appsink name=sink",
        frame_caps(), frames(1));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 1u);
    auto got = detections(gst_sample_get_buffer(r.samples[0].get()));
    ASSERT_EQ(got.size(), 2u);
    std::sort(got.begin(), got.end(), [](const Box& a, const Box& b) { return a.x < b.x; });
    const gst::FrameTransform t = frame_transform();
    for (int i = 0; i < 2; ++i) {
        const auto c = yolo_box(i);
        // The decoder's box: centre minus half the size, the size + 0.5, in frame pixels.
        const double w = t.frame_w(c[2]), h = t.frame_h(c[3]);
        const Box want{int(t.frame_x(c[0]) - w / 2), int(t.frame_y(c[1]) - h / 2), int(w + 0.5),
                       int(h + 0.5), 0.9f};
        expect_near(got[size_t(i)], want, i ? "candidate 1" : "candidate 0");
    }
}

} // namespace
} // namespace edgetensor::test
