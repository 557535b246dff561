// SPDX-License-Identifier: MIT
//
// tensorinfer's pieces without a runtime, on every host: the output ids upstream's decoders
// read (1.26's and 1.28's spellings) and the tensor-ids property, boxes mapped from a
// letterboxed tensor onto its frame, the frame transform, GstTensorMeta written and read
// (GStreamer 1.26+; NotSupported on older builds) and tensors riding on a frame in our meta
// (copied with the buffer, detached by id).

#include "attached_tensors.hpp"
#include "frame_transform.hpp"
#include "gst_tensor_meta.hpp"
#include "gst_test_util.hpp"
#include "tensorinfer_boxes.hpp"
#include "tensorinfer_naming.hpp"

#include <edgetensor/convert.hpp>

#include <cmath>
#include <cstring>

namespace edgetensor::test
{
namespace
{

namespace ti = gst::tensorinfer;

InferTensorInfo info(const std::string& name, std::vector<int64_t> shape, DType d = DType::F32)
{
    InferTensorInfo i;
    i.name = name;
    i.dtype = d;
    i.shape = std::move(shape);
    return i;
}

std::vector<InferTensorInfo> ssd_outputs()
{
    return {info("detection_boxes", {1, 3, 4}), info("detection_classes", {1, 3}),
            info("detection_scores", {1, 3}), info("num_detections", {1})};
}

TEST(TensorInferNaming, SsdOutputsGetEachReleasesDecoderIds)
{
    auto n126 = ti::name_outputs(ssd_outputs(), "/m/ssd.onnx", "", "", ti::DecoderRelease::Gst126);
    ASSERT_TRUE(n126) << n126.error().message();
    EXPECT_EQ(n126->outputs[0].id, "Gst.Model.ObjectDetector.Boxes");
    EXPECT_EQ(n126->outputs[1].id, "Gst.Model.ObjectDetector.Classes");
    EXPECT_EQ(n126->outputs[2].id, "Gst.Model.ObjectDetector.Scores");
    EXPECT_EQ(n126->outputs[3].id, "Gst.Model.ObjectDetector.NumDetections");
    EXPECT_EQ(n126->outputs[0].boxes, ti::BoxFormat::SsdNormalizedYxyx);
    EXPECT_EQ(n126->outputs[2].boxes, ti::BoxFormat::None);

    auto n128 = ti::name_outputs(ssd_outputs(), "/m/ssd.onnx", "", "", ti::DecoderRelease::Gst128);
    ASSERT_TRUE(n128);
    EXPECT_EQ(n128->outputs[0].id, "ssd-mobilenet-v1-variant-1-out-boxes");
    EXPECT_EQ(n128->outputs[1].id, "ssd-mobilenet-v1-variant-1-out-classes");
    EXPECT_EQ(n128->outputs[2].id, "ssd-mobilenet-v1-variant-1-out-scores");
    EXPECT_EQ(n128->outputs[3].id, "generic-variant-1-out-count");
    EXPECT_EQ(n128->group, "ssd-mobilenet-v1-variant-1-out");
    // Caps state the detection count as any size, as ssdtensordec's template does.
    EXPECT_EQ(n128->outputs[0].caps_any_dim, 1);
    EXPECT_EQ(n128->outputs[2].caps_any_dim, 1);
    EXPECT_EQ(n128->outputs[3].caps_any_dim, -1);
    for (const auto& o : n128->outputs)
        EXPECT_EQ(o.order, gst::TensorDimOrder::RowMajor);
}

TEST(TensorInferNaming, YoloOutput0IsColumnMajorYoloV8Out)
{
    auto n = ti::name_outputs({info("output0", {1, 84, 8400})}, "/m/yolov8n.onnx", "", "",
                              ti::DecoderRelease::Gst128);
    ASSERT_TRUE(n);
    EXPECT_EQ(n->outputs[0].id, "yolo-v8-out");
    EXPECT_EQ(n->outputs[0].order, gst::TensorDimOrder::ColMajor);
    EXPECT_EQ(n->outputs[0].boxes, ti::BoxFormat::YoloCxcywhPixels);
    EXPECT_EQ(n->group, "yolo-v8-out");
}

TEST(TensorInferNaming, OtherOutputsKeepTheirNamesAndTheGroupIsTheModelsName)
{
    auto n = ti::name_outputs({info("logits", {1, 1000})}, "/models/mobilenet.v2.onnx", "", "",
                              ti::DecoderRelease::Gst128);
    ASSERT_TRUE(n);
    EXPECT_EQ(n->outputs[0].id, "logits");
    EXPECT_EQ(n->group, "mobilenet.v2");
    auto g = ti::name_outputs({info("logits", {1, 1000})}, "/m/x.onnx", "", "mine",
                              ti::DecoderRelease::Gst128);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->group, "mine");
}

TEST(TensorInferNaming, TensorIdsRemapOutputsAndAGivenDecoderIdBringsItsConvention)
{
    auto n = ti::name_outputs({info("boxes", {1, 5, 4}), info("scores", {1, 5})}, "/m/d.onnx",
                              " boxes = ssd-mobilenet-v1-variant-1-out-boxes ,scores=s", "",
                              ti::DecoderRelease::Gst128);
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(n->outputs[0].id, "ssd-mobilenet-v1-variant-1-out-boxes");
    EXPECT_EQ(n->outputs[0].boxes, ti::BoxFormat::SsdNormalizedYxyx);
    EXPECT_EQ(n->outputs[1].id, "s");
}

TEST(TensorInferNaming, BadTensorIdsAreRefusedByName_Negative)
{
    const auto outs = ssd_outputs();
    auto missing = ti::name_outputs(outs, "/m/ssd.onnx", "boxes=x", "", ti::DecoderRelease::Gst126);
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message().find("model '/m/ssd.onnx' has no output 'boxes'"),
              std::string::npos)
        << missing.error().message();
    EXPECT_NE(missing.error().message().find("detection_boxes, detection_classes"),
              std::string::npos);
    for (const char* bad : {"detection_boxes", "=x", "detection_boxes=", "a=b,a=c"}) {
        auto r = ti::parse_tensor_ids(bad);
        EXPECT_FALSE(r) << bad;
    }
    auto dup = ti::name_outputs(outs, "/m/ssd.onnx", "detection_boxes=x,detection_scores=x", "",
                                ti::DecoderRelease::Gst126);
    ASSERT_FALSE(dup);
    EXPECT_NE(dup.error().message().find("would be 'x'"), std::string::npos);
}

// A 1920x1080 frame letterboxed into 640x640: content 640x360 at y = 140.
gst::FrameTransform letterbox_1080p_to_640()
{
    return gst::frame_transform_from(
        compute_convert_geometry(Region{0, 0, 1920, 1080}, 640, 640, true), 1920, 1080, 640, 640);
}

TEST(TensorInferBoxes, FrameTransformUndoesLetterboxAndCrop)
{
    const auto t = letterbox_1080p_to_640();
    ASSERT_EQ(t.dst_y, 140.0);
    EXPECT_DOUBLE_EQ(t.frame_x(320), 960);
    EXPECT_DOUBLE_EQ(t.frame_y(140), 0);
    EXPECT_DOUBLE_EQ(t.frame_y(500), 1080);
    EXPECT_DOUBLE_EQ(t.frame_w(64), 192);
    // A crop of (100, 50, 400x300) scaled to 200x150 with no padding.
    gst::FrameTransform c{100, 50, 400, 300, 0, 0, 200, 150, 640, 480, 200, 150};
    EXPECT_DOUBLE_EQ(c.frame_x(10), 120);
    EXPECT_DOUBLE_EQ(c.frame_y(15), 80);
    EXPECT_FALSE(c.identity());
    gst::FrameTransform same{0, 0, 64, 48, 0, 0, 64, 48, 64, 48, 64, 48};
    EXPECT_TRUE(same.identity());
}

TensorDyn f32(const Shape& shape, const std::vector<float>& v)
{
    auto t = TensorDyn::create(DType::F32, shape, TensorMemory::Mem);
    EXPECT_TRUE(t);
    auto m = t->map_as<float>(CpuAccess::Write);
    std::memcpy(m->data().data(), v.data(), v.size() * sizeof(float));
    return *t;
}

std::vector<float> values(const TensorDyn& t)
{
    auto m = t.map_as<const float>(CpuAccess::Read);
    return {m->cdata().begin(), m->cdata().end()};
}

TEST(TensorInferBoxes, SsdBoxesBecomeNormalisedToTheFrameAndClamped)
{
    const auto t = letterbox_1080p_to_640();
    // ymin, xmin, ymax, xmax in the 640x640 tensor: the content's top-left quarter, and a box
    // reaching into the top padding.
    TensorDyn boxes = f32({1, 2, 4}, {140.f / 640, 0, 320.f / 640, 0.5f, 0, 0.25f, 0.5f, 0.75f});
    ASSERT_TRUE(ti::map_boxes(ti::BoxFormat::SsdNormalizedYxyx, boxes, boxes.shape(), t));
    const auto v = values(boxes);
    EXPECT_NEAR(v[0], 0.0, 1e-6);
    EXPECT_NEAR(v[1], 0.0, 1e-6);
    EXPECT_NEAR(v[2], 0.5, 1e-6); // 320 -> (320 - 140) * 3 = 540 of 1080
    EXPECT_NEAR(v[3], 0.5, 1e-6);
    EXPECT_NEAR(v[4], 0.0, 1e-6); // in the padding: clamped to the frame's top
    EXPECT_NEAR(v[5], 0.25, 1e-6);
    EXPECT_NEAR(v[6], 0.5, 1e-6);
    EXPECT_NEAR(v[7], 0.75, 1e-6);
}

TEST(TensorInferBoxes, YoloCentresAndSizesBecomeFramePixels)
{
    const auto t = letterbox_1080p_to_640();
    // [1, 4 + 1 class, 2 candidates]: rows cx, cy, w, h, score.
    TensorDyn out = f32({1, 5, 2}, {320, 100, 320, 200, 64, 10, 32, 20, 0.9f, 0.1f});
    ASSERT_TRUE(ti::map_boxes(ti::BoxFormat::YoloCxcywhPixels, out, out.shape(), t));
    const auto v = values(out);
    EXPECT_FLOAT_EQ(v[0], 960);
    EXPECT_FLOAT_EQ(v[1], 300);
    EXPECT_FLOAT_EQ(v[2], 540);
    EXPECT_FLOAT_EQ(v[3], 180);
    EXPECT_FLOAT_EQ(v[4], 192);
    EXPECT_FLOAT_EQ(v[5], 30);
    EXPECT_FLOAT_EQ(v[8], 0.9f); // scores untouched
}

TEST(TensorInferBoxes, WrongShapesAreRefused_Negative)
{
    const auto t = letterbox_1080p_to_640();
    TensorDyn bad = f32({1, 3}, {0, 0, 0});
    EXPECT_FALSE(ti::map_boxes(ti::BoxFormat::SsdNormalizedYxyx, bad, bad.shape(), t));
    auto u8 = TensorDyn::create(DType::U8, {1, 1, 4}, TensorMemory::Mem);
    EXPECT_FALSE(ti::map_boxes(ti::BoxFormat::SsdNormalizedYxyx, *u8, u8->shape(), t));
}

BufferPtr bytes_buffer(size_t n)
{
    return BufferPtr(gst_buffer_new_allocate(nullptr, n, nullptr));
}

gst::TensorRecord record(const std::string& id, std::vector<size_t> dims)
{
    gst::TensorRecord r;
    r.id = id;
    r.dtype = DType::F32;
    r.dims = std::move(dims);
    r.data = bytes_buffer(r.bytes());
    return r;
}

TEST(GstTensorMetaHelpers, WrittenTensorsReadBackWithIdsTypesDimsAndData)
{
    BufferPtr buf = bytes_buffer(16);
    std::vector<gst::TensorRecord> recs{record("a", {1, 3, 4}), record("b", {1})};
    recs[1].order = gst::TensorDimOrder::ColMajor;
    auto r = gst::add_gst_tensor_meta(buf.get(), recs);
    if (!gst::have_gst_tensor_meta()) {
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::NotSupported);
        EXPECT_TRUE(gst::read_gst_tensor_metas(buf.get()).empty());
        GTEST_SKIP() << "GstTensorMeta needs GStreamer 1.26: " << r.error().message();
    }
    ASSERT_TRUE(r) << r.error().message();
    auto back = gst::read_gst_tensor_metas(buf.get());
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].id, "a");
    EXPECT_EQ(back[0].dims, (std::vector<size_t>{1, 3, 4}));
    EXPECT_EQ(back[0].dtype, DType::F32);
    EXPECT_EQ(back[0].data.get(), recs[0].data.get());
    EXPECT_EQ(back[1].order, gst::TensorDimOrder::ColMajor);
    EXPECT_TRUE(gst::find_gst_tensor(buf.get(), "b"));
    // 1.26's GstTensorMeta has no transform function: a copy of the buffer loses it (1.28's
    // keeps it). Removal by id takes the whole meta.
    BufferPtr copy(gst_buffer_copy(buf.get()));
    const size_t copied = gst::read_gst_tensor_metas(copy.get()).size();
    EXPECT_TRUE(copied == 0 || copied == 2) << copied;
    EXPECT_EQ(gst::remove_gst_tensor_metas_with(buf.get(), "b"), 1u);
    EXPECT_TRUE(gst::read_gst_tensor_metas(buf.get()).empty());
    EXPECT_EQ(gst::read_gst_tensor_metas(copy.get()).size(), copied);
}

TEST(GstTensorMetaHelpers, DataSmallerThanTheDimsIsRefused_Negative)
{
    if (!gst::have_gst_tensor_meta())
        GTEST_SKIP() << "GstTensorMeta needs GStreamer 1.26";
    BufferPtr buf = bytes_buffer(16);
    gst::TensorRecord r = record("a", {1, 3, 4});
    r.data = bytes_buffer(8);
    auto res = gst::add_gst_tensor_meta(buf.get(), std::span(&r, 1));
    ASSERT_FALSE(res);
    EXPECT_NE(res.error().message().find("needs 48 bytes"), std::string::npos);
}

TEST(GstTensorMetaHelpers, DtypesMapBothWays)
{
    for (DType d : {DType::U8, DType::I8, DType::U16, DType::I16, DType::U32, DType::I32,
                    DType::U64, DType::I64, DType::F16, DType::F32, DType::F64})
        EXPECT_EQ(gst::dtype_of_gst_tensor_data_type(gst::gst_tensor_data_type_of(d)), d);
    EXPECT_FALSE(gst::dtype_of_gst_tensor_data_type(0));  // int4
    EXPECT_FALSE(gst::dtype_of_gst_tensor_data_type(13)); // bfloat16
    EXPECT_STREQ(gst::gst_tensor_type_name(DType::F32), "float32");
}

TEST(AttachedTensors, RideWithCopiesOfTheFrameAndLeaveById)
{
    BufferPtr frame = bytes_buffer(64);
    gst::AttachedTensor a{record("input", {1, 4, 4, 3}), letterbox_1080p_to_640()};
    std::vector<gst::AttachedTensor> v{a};
    ASSERT_TRUE(gst::attach_tensors(frame.get(), std::move(v), true));
    auto got = gst::attached_tensors(frame.get());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].tensor.id, "input");
    ASSERT_TRUE(got[0].transform);
    EXPECT_EQ(got[0].transform->dst_y, 140.0);
    EXPECT_EQ(gst::have_gst_tensor_meta(), gst::find_gst_tensor(frame.get(), "input").has_value());

    BufferPtr copy(gst_buffer_copy(frame.get()));
    EXPECT_EQ(gst::attached_tensors(copy.get()).size(), 1u);
    EXPECT_GE(gst::detach_tensor(copy.get(), "input"), 1u);
    EXPECT_TRUE(gst::attached_tensors(copy.get()).empty());
    EXPECT_FALSE(gst::find_gst_tensor(copy.get(), "input"));
    EXPECT_FALSE(gst_buffer_get_meta(copy.get(), gst::attached_tensors_meta_api_type()));
    EXPECT_EQ(gst::attached_tensors(frame.get()).size(), 1u);
}

} // namespace
} // namespace edgetensor::test
