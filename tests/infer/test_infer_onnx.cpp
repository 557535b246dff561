// SPDX-License-Identifier: MIT
//
// ONNX Runtime on models made at test time (make_onnx_models.py): outputs against values
// computed here, inputs read where they lie (the runtime's data pointer is the tensor's
// mapping, no copy counted), batches into a dynamic first dimension, execution providers,
// empty outputs, and every refusal naming the model and the cause. Skips where the backend is
// not built or python3-onnx is missing, and fails instead where
// EDGETENSOR_TEST_REQUIRE_INFER names onnxruntime.

#include "fd_count.hpp"
#include "infer_require.hpp"
#include "infer_test_util.hpp"
#include "model_dir.hpp"
#include "reference.hpp"

#include <cmath>
#include <cstring>

namespace edgetensor::test
{
namespace
{

ModelDir& models()
{
    static ModelDir dir = [] {
        ModelDir d;
        d.make_with_python(env_or_empty("EDGETENSOR_TEST_PYTHON"),
                           env_or_empty("EDGETENSOR_TEST_ONNX_MODELS"));
        return d;
    }();
    return dir;
}

class Onnx : public testing::Test
{
protected:
    void SetUp() override
    {
        ET_REQUIRE_INFER_OR_SKIP(InferBackend::OnnxRuntime);
        if (!models().why().empty()) {
            if (!models().host_lacks_tools() || infer_required(InferBackend::OnnxRuntime))
                FAIL() << models().why();
            GTEST_SKIP() << models().why();
        }
    }

    static InferSession open(const std::string& name, InferOptions o = {})
    {
        auto s = InferSession::open(models().path(name), o);
        EXPECT_TRUE(s) << s.error().message();
        return s ? std::move(*s) : InferSession();
    }
    template <typename T> static std::vector<T> values(const TensorDyn& t)
    {
        auto m = t.map_read();
        std::vector<T> v(t.len());
        std::memcpy(v.data(), m->cdata().data(), t.size());
        return v;
    }
    /// [n, 3, 8, 8] f32 filled with pattern().
    static TensorDyn conv_input(size_t n, TensorMemory memory = TensorMemory::Mem)
    {
        auto t = TensorDyn::create(DType::F32, {n, 3, 8, 8}, memory, "conv-in");
        EXPECT_TRUE(t) << t.error().message();
        auto m = t->map_as<float>(CpuAccess::Write);
        for (size_t b = 0; b < n; ++b)
            for (size_t c = 0; c < 3; ++c)
                for (size_t y = 0; y < 8; ++y)
                    for (size_t x = 0; x < 8; ++x)
                        m->data()[((b * 3 + c) * 8 + y) * 8 + x] = pattern(b, c, y, x);
        return *t;
    }
    static void expect_conv(const std::vector<float>& got, size_t n, float tol = 1e-4f)
    {
        ASSERT_EQ(got.size(), n * 2 * 64);
        for (size_t b = 0; b < n; ++b) {
            const auto ref = conv_reference(8, 8, [&](int c, int y, int x) {
                return pattern(b, size_t(c), size_t(y), size_t(x));
            });
            for (size_t i = 0; i < ref.size(); ++i)
                ASSERT_NEAR(got[b * 128 + i], ref[i], tol) << "batch " << b << " element " << i;
        }
    }
};

TEST_F(Onnx, SsdModelDescribesItselfAndRunsInPlace)
{
    auto s = open("ssd_u8.onnx"); // backend Auto: by the .onnx name
    ASSERT_TRUE(s.is_open());
    EXPECT_EQ(s.backend(), InferBackend::OnnxRuntime);
    EXPECT_EQ(s.execution_provider(), "cpu");
    ASSERT_EQ(s.inputs().size(), 1u);
    EXPECT_EQ(s.inputs()[0].name, "image");
    EXPECT_EQ(s.inputs()[0].dtype, DType::U8);
    EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{1, 16, 16, 3}));
    EXPECT_EQ(s.inputs()[0].layout, InferLayout::ChannelsLast);
    ASSERT_EQ(s.outputs().size(), 4u);
    const char* names[] = {"detection_boxes", "detection_classes", "detection_scores",
                           "num_detections"};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(s.outputs()[i].name, names[i]);
        EXPECT_EQ(s.outputs()[i].dtype, DType::F32);
    }
    EXPECT_EQ(s.outputs()[0].shape, (std::vector<int64_t>{1, 3, 4}));

    // What tensorconvert hands over: a 16x16 RGB image, [H, W, C] without the batch dimension.
    auto img = TensorDyn::image(16, 16, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem, "frame");
    ASSERT_TRUE(img) << img.error().message();
    ASSERT_TRUE(img->is_contiguous());
    double sums[3] = {0, 0, 0};
    {
        auto m = img->map_write();
        for (size_t i = 0; i < 16 * 16 * 3; ++i) {
            m->data()[i] = uint8_t((i * 37) % 251);
            sums[i % 3] += double((i * 37) % 251);
        }
    }
    ASSERT_TRUE(s.check_input(0, img->dtype(), img->shape()));
    for (int run = 0; run < 3; ++run) {
        auto out = s.run(std::span(&*img, 1));
        ASSERT_TRUE(out) << out.error().message();
        ASSERT_EQ(out->size(), 4u);
        EXPECT_EQ((*out)[2].name, "detection_scores");
        const auto scores = values<float>((*out)[2].tensor);
        for (size_t c = 0; c < 3; ++c)
            EXPECT_NEAR(scores[c], sums[c] / 256.0 / 255.0, 1e-5) << "channel " << c;
        const auto boxes = values<float>((*out)[0].tensor);
        for (size_t i = 0; i < 3; ++i) {
            EXPECT_NEAR(boxes[i * 4 + 0], 0.1 * double(i), 1e-6);
            EXPECT_NEAR(boxes[i * 4 + 2], 0.5 + 0.1 * double(i), 1e-6);
        }
        EXPECT_EQ(values<float>((*out)[1].tensor), (std::vector<float>{1, 2, 3}));
        EXPECT_EQ(values<float>((*out)[3].tensor), (std::vector<float>{3}));
    }
    // The proof of no copy: the address ONNX Runtime was given is the tensor's own mapping.
    const InferInputBinding b = s.input_binding(0);
    EXPECT_EQ(b.kind, InferBinding::InPlace);
    EXPECT_EQ(b.runtime_address, img->map_read()->cdata().data());
    const InferStats st = s.stats();
    EXPECT_EQ(st.runs, 3u);
    EXPECT_EQ(st.inputs_in_place, 3u);
    EXPECT_EQ(st.copies, 0u) << "static outputs are written in place too";
}

TEST_F(Onnx, ConvModelMatchesTheReferenceInSharedMemory)
{
    if (!is_shm_available())
        GTEST_SKIP() << "no shared memory on this host";
    InferOptions o;
    o.output_memory = TensorMemory::Shm;
    auto s = open("conv_f32.onnx", o);
    ASSERT_TRUE(s.is_open());
    EXPECT_EQ(s.inputs()[0].layout, InferLayout::ChannelsFirst);
    const TensorDyn in = conv_input(1, TensorMemory::Shm);
    auto out = s.run(std::span(&in, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ((*out)[0].tensor.memory(), TensorMemory::Shm);
    EXPECT_EQ((*out)[0].tensor.shape(), (Shape{1, 2, 8, 8}));
    expect_conv(values<float>((*out)[0].tensor), 1);
    EXPECT_EQ(s.input_binding(0).runtime_address, in.map_read()->cdata().data());
    EXPECT_EQ(s.stats().copies, 0u);
}

TEST_F(Onnx, ABatchFeedsADynamicFirstDimension)
{
    auto s = open("conv_batch.onnx");
    ASSERT_TRUE(s.is_open());
    EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{-1, 3, 8, 8}));
    EXPECT_EQ(s.inputs()[0].dim_names[0], "N");
    EXPECT_TRUE(s.outputs()[0].is_dynamic());
    for (size_t n : {4u, 1u, 3u}) {
        const TensorDyn in = conv_input(n);
        auto out = s.run(std::span(&in, 1));
        ASSERT_TRUE(out) << out.error().message();
        EXPECT_EQ((*out)[0].shape, (Shape{n, 2, 8, 8}));
        expect_conv(values<float>((*out)[0].tensor), n);
        EXPECT_EQ(s.input_binding(0).kind, InferBinding::InPlace);
    }
    const InferStats st = s.stats();
    EXPECT_EQ(st.input_copies, 0u);
    // The output's shape is known only after each run: one counted copy per run.
    EXPECT_EQ(st.output_copies, 3u);
}

TEST_F(Onnx, APaddedImageIsCopiedAndCounted)
{
    auto s = open("ssd_u8.onnx");
    auto big = TensorDyn::image(20, 16, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem);
    ASSERT_TRUE(big);
    {
        auto m = big->map_write();
        std::memset(m->data().data(), 51, m->data().size());
    }
    auto view = big->view(Region{2, 0, 16, 16});
    ASSERT_TRUE(view);
    auto out = s.run(std::span(&*view, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_NEAR(values<float>((*out)[2].tensor)[0], 51.0 / 255.0, 1e-6);
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::Copied);
    EXPECT_EQ(s.stats().input_copies, 1u);
}

TEST_F(Onnx, EveryPresentExecutionProviderRunsTheModel)
{
    auto info = infer_runtime_info(InferBackend::OnnxRuntime);
    ASSERT_TRUE(info);
    const TensorDyn in = conv_input(1);
    for (const std::string& ep : info->execution_providers) {
        SCOPED_TRACE(ep);
        InferOptions o;
        o.execution_provider = ep;
        o.threads = 1;
        auto s = InferSession::open(models().path("conv_f32.onnx"), o);
        if (!s) {
            ADD_FAILURE() << "execution provider '" << ep
                          << "' is listed but refused: " << s.error().message();
            continue;
        }
        EXPECT_EQ(s->execution_provider(), ep);
        auto out = s->run(std::span(&in, 1));
        ASSERT_TRUE(out) << out.error().message();
        expect_conv(values<float>((*out)[0].tensor), 1, 1e-3f);
        EXPECT_EQ(s->input_binding(0).kind, InferBinding::InPlace);
    }
}

TEST_F(Onnx, AProviderThatIsNotPresent_Negative)
{
    InferOptions o;
    o.execution_provider = "tensorrt";
    EXPECT_ERROR_HAS(
        InferSession::open(models().path("conv_f32.onnx"), o), ErrorCode::InvalidArgument,
        "execution provider 'tensorrt' is not present in this ONNX Runtime (present: cpu");
}

TEST_F(Onnx, AnEmptyOutputHasItsShapeAndNoTensor)
{
    auto s = open("nonzero.onnx");
    auto x = TensorDyn::create(DType::F32, {4}, TensorMemory::Mem);
    ASSERT_TRUE(x);
    auto out = s.run(std::span(&*x, 1)); // all zeros
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ((*out)[0].shape, (Shape{1, 0}));
    EXPECT_FALSE((*out)[0].tensor.is_valid());
    {
        auto m = x->map_as<float>(CpuAccess::Write);
        m->data()[1] = 2.0f;
        m->data()[3] = -1.0f;
    }
    out = s.run(std::span(&*x, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ((*out)[0].tensor.dtype(), DType::I64);
    EXPECT_EQ(values<int64_t>((*out)[0].tensor), (std::vector<int64_t>{1, 3}));
}

TEST_F(Onnx, InputsItCannotFeedNameBoth_Negative)
{
    auto s = open("ssd_u8.onnx");
    const std::string path = models().path("ssd_u8.onnx");
    auto f = TensorDyn::create(DType::F32, {1, 16, 16, 3}, TensorMemory::Mem);
    EXPECT_ERROR_HAS(s.run(std::span(&*f, 1)), ErrorCode::DTypeMismatch,
                     "model '" + path +
                         "': input 'image' takes u8 [1, 16, 16, 3] (channels-last); the tensor "
                         "is f32 [1, 16, 16, 3]");
    EXPECT_ERROR_HAS(s.check_input(0, DType::U8, {1, 3, 16, 16}), ErrorCode::InvalidShape,
                     "the tensor is u8 [1, 3, 16, 16] (dimension 1 is 16 in the model, 3");
    EXPECT_ERROR_HAS(s.check_input(0, DType::U8, {2, 16, 16, 3}), ErrorCode::InvalidShape,
                     "a batch of 2 needs a model whose first dimension is dynamic or 2");
    EXPECT_EQ(s.stats().runs, 0u);
}

TEST_F(Onnx, AModelWithATypeWeHaveNoDTypeFor_Negative)
{
    const std::string path = models().path("bool.onnx");
    EXPECT_ERROR_HAS(InferSession::open(path), ErrorCode::InvalidArgument,
                     "model '" + path +
                         "': input 'flags' has the element type bool, which "
                         "edgetensor has no dtype for");
}

TEST_F(Onnx, ACorruptModel_Negative)
{
    TempDir dir;
    const std::string path = dir.write("corrupt.onnx", std::string("\x08\x07garbage\xff\xff", 11));
    EXPECT_ERROR_HAS(InferSession::open(path), ErrorCode::InvalidArgument,
                     "model '" + path + "' is not a valid ONNX model: ");
    // A TensorFlow Lite model handed to ONNX Runtime by force is no ONNX model either.
    InferOptions o;
    o.backend = InferBackend::OnnxRuntime;
    const std::string tfl = dir.write("m.tflite", std::string("\x1c\0\0\0TFL3xxxx", 12));
    EXPECT_ERROR_HAS(InferSession::open(tfl, o), ErrorCode::InvalidArgument,
                     "is not a valid ONNX model");
}

TEST_F(Onnx, NothingIsLeftBehind)
{
    if (!is_shm_available())
        GTEST_SKIP() << "no shared memory on this host";
    InferOptions o;
    o.output_memory = TensorMemory::Shm;
    const TensorDyn in = conv_input(2, TensorMemory::Shm);
    {
        // The runtime's process-wide state (environment, thread pools) is made on first use.
        auto warm = open("conv_batch.onnx", o);
        ASSERT_TRUE(warm.run(std::span(&in, 1)));
    }
    const auto before = open_fds();
    for (int i = 0; i < 3; ++i) {
        auto s = open("conv_batch.onnx", o);
        ASSERT_TRUE(s.run(std::span(&in, 1)));
        auto bad = InferSession::open(models().path("bool.onnx"), o);
        EXPECT_FALSE(bad);
    }
    std::set<int> leaked;
    for (int fd : open_fds())
        if (!before.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << describe_fds(leaked);
}

} // namespace
} // namespace edgetensor::test
