// SPDX-License-Identifier: MIT
//
// tensorconvert output-mode=meta: the source frame passes through untouched, its caps unchanged,
// and the tensor it was converted into rides on it (our attached-tensor meta under the
// element's name, with the letterbox it was converted with; on 1.26+ a GstTensorMeta too),
// holding the bytes output-mode=tensor makes of the same frame. Then through tensorinfer (where
// ONNX Runtime is built): the model reads the riding tensor in place and the outputs ride on
// the untouched frame.

#include "tensorinfer_test_util.hpp"

#include <cstring>

namespace edgetensor::test
{
namespace
{

constexpr size_t kW = 64, kH = 48;

std::string frame_caps()
{
    return "video/x-raw,format=RGB,width=" + std::to_string(kW) + ",height=" + std::to_string(kH) +
           ",framerate=30/1";
}

// A frame whose bytes say where they are (so a conversion of it is not uniform), per `seed`.
std::vector<uint8_t> frame_bytes(int seed)
{
    std::vector<uint8_t> b(kW * kH * 3);
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = uint8_t((i * 7 + size_t(seed) * 31) % 251);
    return b;
}

// Frames of uniform kChannelValues pixels (the SSD test model's scores are then known).
std::vector<uint8_t> uniform_bytes()
{
    std::vector<uint8_t> b(kW * kH * 3);
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = kChannelValues[i % 3];
    return b;
}

std::vector<BufferPtr> buffers_of(const std::vector<std::vector<uint8_t>>& frames)
{
    std::vector<BufferPtr> out;
    for (const auto& f : frames) {
        BufferPtr b(gst_buffer_new_allocate(nullptr, f.size(), nullptr));
        gst_buffer_fill(b.get(), 0, f.data(), f.size());
        out.push_back(std::move(b));
    }
    return out;
}

std::vector<uint8_t> bytes_of(GstBuffer* b, size_t n)
{
    std::vector<uint8_t> v(n);
    EXPECT_EQ(gst_buffer_extract(b, 0, v.data(), n), n);
    return v;
}

TEST(TensorconvertMeta, OutputModeIsTensorUnlessSetAndReadsBack)
{
    GstObjectPtr<GstElement> e(gst_element_factory_make("tensorconvert", nullptr));
    ASSERT_TRUE(e);
    gst_object_ref_sink(e.get());
    gint mode = -1;
    g_object_get(e.get(), "output-mode", &mode, nullptr);
    EXPECT_EQ(mode, 0) << "tensor: today's behaviour";
    gst_util_set_object_arg(G_OBJECT(e.get()), "output-mode", "meta");
    g_object_get(e.get(), "output-mode", &mode, nullptr);
    EXPECT_EQ(mode, 1);
}

TEST(TensorconvertMeta, TheFramePassesUntouchedWithItsTensorRidingOnIt)
{
    const std::vector<std::vector<uint8_t>> frames{frame_bytes(1), frame_bytes(2)};
    const std::string convert = "tensorconvert name=image width=16 height=16 letterbox=true";
    PipelineRun ref = run_pipeline("appsrc name=src ! " + convert + " ! appsink name=sink",
                                   frame_caps(), buffers_of(frames));
    ASSERT_TRUE(ref.eos) << ref.all_errors();
    ASSERT_EQ(ref.samples.size(), 2u);
    PipelineRun r =
        run_pipeline("appsrc name=src ! " + convert + " output-mode=meta ! appsink name=sink",
                     frame_caps(), buffers_of(frames));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 2u);
    EXPECT_TRUE(gst_caps_is_equal(r.src_caps.get(), caps_from(frame_caps()).get()))
        << "the frame's caps go on";
    const gst::FrameTransform want = transform_of(kW, kH, 16, 16, true);
    for (size_t i = 0; i < 2; ++i) {
        SCOPED_TRACE(i);
        GstBuffer* out = gst_sample_get_buffer(r.samples[i].get());
        ASSERT_EQ(gst_buffer_get_size(out), frames[i].size());
        EXPECT_EQ(bytes_of(out, frames[i].size()), frames[i]) << "the frame is untouched";
        auto riders = gst::attached_tensors(out);
        ASSERT_EQ(riders.size(), 1u);
        const gst::AttachedTensor& t = riders[0];
        EXPECT_EQ(t.tensor.id, "image") << "the tensor's id is the element's name";
        EXPECT_EQ(t.tensor.dtype, DType::U8);
        EXPECT_EQ(t.tensor.dims, (std::vector<size_t>{1, 16, 16, 3}));
        ASSERT_TRUE(t.transform);
        EXPECT_EQ(t.transform->dst_y, want.dst_y);
        EXPECT_EQ(t.transform->dst_h, want.dst_h);
        EXPECT_EQ(t.transform->frame_width, kW);
        EXPECT_EQ(t.transform->frame_height, kH);
        ASSERT_TRUE(t.tensor.data);
        ASSERT_GE(gst_buffer_get_size(t.tensor.data.get()), 16u * 16 * 3);
        EXPECT_NE(gst_buffer_get_edge_tensor_meta(t.tensor.data.get()), nullptr)
            << "the tensor is in an edgetensor pool's memory";
        GstBuffer* tensor_out = gst_sample_get_buffer(ref.samples[i].get());
        EXPECT_EQ(bytes_of(t.tensor.data.get(), 16 * 16 * 3), bytes_of(tensor_out, 16 * 16 * 3))
            << "the bytes output-mode=tensor makes of the same frame";
        EXPECT_EQ(gst::have_gst_tensor_meta(), !gst::read_gst_tensor_metas(out).empty());
    }
}

// A frame someone else holds too (a tee's other branch) is not writable: the meta goes on a
// shallow copy (the same memory), so the frame's pixels are still neither copied nor touched.
TEST(TensorconvertMeta, AFrameHeldElsewhereGetsTheTensorOnAShallowCopy)
{
    const std::vector<std::vector<uint8_t>> frames{frame_bytes(3)};
    PipelineRun r =
        run_pipeline("appsrc name=src ! tee name=t ! queue ! tensorconvert width=16 height=16 "
                     "output-mode=meta ! appsink name=sink t. ! queue ! fakesink sync=false",
                     frame_caps(), buffers_of(frames));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 1u);
    GstBuffer* out = gst_sample_get_buffer(r.samples[0].get());
    EXPECT_EQ(bytes_of(out, frames[0].size()), frames[0]);
    EXPECT_EQ(gst::attached_tensors(out).size(), 1u);
}

TEST(TensorconvertMeta, AnyInputFormatPassesThrough)
{
    BufferPtr nv12(gst_buffer_new_allocate(nullptr, kW * kH * 3 / 2, nullptr));
    gst_buffer_memset(nv12.get(), 0, 0x80, kW * kH * 3 / 2);
    std::vector<BufferPtr> in;
    in.push_back(std::move(nv12));
    PipelineRun r =
        run_pipeline("appsrc name=src ! tensorconvert width=16 height=16 dtype=float32 layout=chw "
                     "output-mode=meta ! appsink name=sink",
                     "video/x-raw,format=NV12,width=64,height=48,framerate=30/1", std::move(in));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 1u);
    EXPECT_STREQ(gst_structure_get_string(gst_caps_get_structure(r.src_caps.get(), 0), "format"),
                 "NV12");
    auto riders = gst::attached_tensors(gst_sample_get_buffer(r.samples[0].get()));
    ASSERT_EQ(riders.size(), 1u);
    EXPECT_EQ(riders[0].tensor.dtype, DType::F32);
    EXPECT_EQ(riders[0].tensor.dims, (std::vector<size_t>{1, 3, 16, 16}));
}

guint64 stat(const PipelineRun& r, const char* field)
{
    guint64 v = G_MAXUINT64;
    if (r.stats)
        gst_structure_get_uint64(r.stats.get(), field, &v);
    return v;
}

using TensorconvertMetaInfer = OnnxElementTest;

// The launch line of the issue: the model reads the tensor riding on the frame in place; the
// frame leaves untouched, with the model's outputs riding on it instead of the input.
TEST_F(TensorconvertMetaInfer, TensorinferRunsOnTheRidingTensorAndTheFrameGoesOnUntouched)
{
    const std::vector<std::vector<uint8_t>> frames{uniform_bytes(), uniform_bytes(),
                                                   uniform_bytes()};
    PipelineRun r = run_pipeline(
        "appsrc name=src ! tensorconvert width=16 height=16 output-mode=meta ! tensorinfer "
        "name=inf model=" +
            infer_models().path("ssd_u8.onnx") + " ! appsink name=sink",
        frame_caps(), buffers_of(frames));
    ASSERT_TRUE(r.eos) << r.all_errors();
    ASSERT_EQ(r.samples.size(), 3u);
    // The frame's caps (1.28's tensorinfer adds the tensors field its decoders match).
    EXPECT_TRUE(gst_caps_is_subset(r.src_caps.get(), caps_from(frame_caps()).get()));
    for (size_t i = 0; i < 3; ++i) {
        SCOPED_TRACE(i);
        GstBuffer* out = gst_sample_get_buffer(r.samples[i].get());
        EXPECT_EQ(bytes_of(out, frames[i].size()), frames[i]) << "the frame is untouched";
        auto riders = gst::attached_tensors(out);
        ASSERT_EQ(riders.size(), 4u) << "the input left, the four outputs rode on";
        for (const auto& t : riders) {
            if (t.tensor.id != "detection_boxes" && t.tensor.id != "detection_scores")
                continue;
            GstMapInfo map;
            ASSERT_TRUE(gst_buffer_map(t.tensor.data.get(), &map, GST_MAP_READ));
            const auto* v = reinterpret_cast<const float*>(map.data);
            for (int b = 0; b < 3; ++b) {
                if (t.tensor.id == "detection_scores") {
                    EXPECT_NEAR(v[b], kChannelValues[size_t(b)] / 255.0f, 1e-5);
                } else {
                    // Stretched over the whole frame: the model's boxes are the frame's.
                    for (int k = 0; k < 4; ++k)
                        EXPECT_NEAR(v[b * 4 + k], ssd_box(b)[size_t(k)], 1e-5);
                }
            }
            gst_buffer_unmap(t.tensor.data.get(), &map);
        }
    }
    EXPECT_EQ(stat(r, "copies"), 0u);
    EXPECT_EQ(stat(r, "inputs-in-place"), 3u);
}

} // namespace
} // namespace edgetensor::test
