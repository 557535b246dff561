// SPDX-License-Identifier: MIT
//
// InferSession's own work, on every host, through a fake backend put in place of a module
// (detail::infer::set_backend_for_testing): input checks with both dtypes and shapes named,
// in-place binding (the runtime's data pointer is the tensor's mapping), the copies made when a
// tensor cannot be read in place (counted, warned once), outputs allocated, caller-provided or
// empty, and no fd left behind.

#include "fd_count.hpp"
#include "infer/backend.hpp"
#include "infer/host_io.hpp"
#include "infer/module_loader.hpp"
#include "infer/tensor_info.hpp"
#include "infer_test_util.hpp"
#include "log_capture.hpp"

#include <atomic>
#include <cstring>
#include <thread>

namespace edgetensor::test
{
namespace
{

using namespace detail::infer;

/// A "runtime" that reads its input through the pointer it is given, as a real one does.
/// Model "image": input "image" u8 [1, 8, 8, 3]; outputs "sum" f32 [1] (static: the sum of the
/// input bytes) and "bytes" u8 [?] (dynamic: the input bytes, or empty when they are all 0).
/// Model "flat": input "x" u8 [?]; output "first" u8 [1] (the first byte).
class FakeSession final : public BackendSession
{
public:
    FakeSession(ModelInfo info, HostRules rules, bool flat)
        : info_(std::move(info)), rules_(rules), flat_(flat)
    {
    }
    const ModelInfo& info() const noexcept override { return info_; }
    InferBufferRules input_rules() const noexcept override
    {
        return {rules_.alignment, rules_.readable_after};
    }
    Result<void> run(RunContext& ctx) noexcept override
    {
        const RunInput& in = ctx.inputs[0];
        auto h = HostInput::prepare(in.tensor, rules_, scratch_);
        if (!h)
            return unexpected(std::move(h).error());
        ctx.bindings[0].kind = h->copied() ? InferBinding::Copied : InferBinding::InPlace;
        ctx.bindings[0].runtime_address = h->data();
        ctx.bindings[0].reason = h->reason();
        if (flat_) {
            auto out = HostOutput::prepare(ctx.outputs[0].tensor, rules_, out_scratch_);
            if (!out)
                return unexpected(std::move(out).error());
            out->data()[0] = h->data()[0];
            out->finish();
            return {};
        }
        float sum = 0;
        for (size_t i = 0; i < h->bytes(); ++i)
            sum += float(h->data()[i]);
        auto out = HostOutput::prepare(ctx.outputs[0].tensor, rules_, out_scratch_);
        if (!out)
            return unexpected(std::move(out).error());
        std::memcpy(out->data(), &sum, sizeof(sum));
        if (out->copied()) {
            ctx.output_copies++;
            ctx.output_copy_reason = out->reason();
        }
        out->finish();
        if (sum == 0) {
            ctx.outputs[1].shape = {0};
            return {};
        }
        auto bytes = ctx.allocate(DType::U8, {h->bytes()}, "bytes");
        if (!bytes)
            return unexpected(std::move(bytes).error());
        auto m = bytes->map_write();
        std::memcpy(m->data().data(), h->data(), h->bytes());
        ctx.outputs[1].tensor = std::move(*bytes);
        ctx.outputs[1].shape = {h->bytes()};
        ctx.output_copies++;
        ctx.output_copy_reason = "dynamic";
        return {};
    }

private:
    ModelInfo info_;
    HostRules rules_;
    bool flat_;
    ScratchBuffer scratch_;
    ScratchBuffer out_scratch_;
};

InferTensorInfo tensor_info(std::string name, DType dtype, std::vector<int64_t> shape)
{
    InferTensorInfo i;
    i.name = std::move(name);
    i.dtype = dtype;
    i.shape = std::move(shape);
    i.dim_names.assign(i.shape.size(), "");
    i.layout = guess_layout(i.shape, InferBackend::OnnxRuntime);
    return i;
}

class FakeBackend final : public Backend
{
public:
    HostRules rules;
    std::atomic<int> opened{0};

    InferBackend kind() const noexcept override { return InferBackend::OnnxRuntime; }
    std::string runtime_version() const override { return "fake"; }
    std::vector<std::string> execution_providers() const override { return {"cpu"}; }
    Result<std::unique_ptr<BackendSession>> open(const OpenRequest& req) noexcept override
    {
        opened++;
        ModelInfo info;
        info.execution_provider = req.options.execution_provider;
        const bool flat = req.model_path.find("flat") != std::string::npos;
        if (flat) {
            info.inputs.push_back(tensor_info("x", DType::U8, {-1}));
            info.outputs.push_back(tensor_info("first", DType::U8, {1}));
        } else {
            info.inputs.push_back(tensor_info("image", DType::U8, {1, 8, 8, 3}));
            info.outputs.push_back(tensor_info("sum", DType::F32, {1}));
            info.outputs.push_back(tensor_info("bytes", DType::U8, {-1}));
        }
        return std::unique_ptr<BackendSession>(std::make_unique<FakeSession>(info, rules, flat));
    }
};

class InferSessionCore : public testing::Test
{
protected:
    void SetUp() override
    {
        set_backend_for_testing(InferBackend::OnnxRuntime, &fake_);
        image_model_ = dir_.write("image.onnx", "fake");
        flat_model_ = dir_.write("flat.onnx", "fake");
    }
    void TearDown() override { set_backend_for_testing(InferBackend::OnnxRuntime, nullptr); }

    InferSession open(const std::string& model, InferOptions o = {})
    {
        auto s = InferSession::open(model, o);
        EXPECT_TRUE(s) << s.error().message();
        return s ? std::move(*s) : InferSession();
    }
    static TensorDyn image_tensor(const Shape& shape, uint8_t seed,
                                  TensorMemory memory = TensorMemory::Mem)
    {
        auto t = TensorDyn::create(DType::U8, shape, memory, "in");
        EXPECT_TRUE(t) << t.error().message();
        auto m = t->map_write();
        for (size_t i = 0; i < m->data().size(); ++i)
            m->data()[i] = uint8_t(seed + i);
        return *t;
    }
    static float sum_of(const TensorDyn& t)
    {
        auto m = t.map_read();
        float s = 0;
        for (uint8_t v : m->cdata())
            s += float(v);
        return s;
    }
    static float read_f32(const TensorDyn& t)
    {
        auto m = t.map_read();
        float v = 0;
        std::memcpy(&v, m->cdata().data(), sizeof(v));
        return v;
    }

    FakeBackend fake_;
    TempDir dir_;
    std::string image_model_;
    std::string flat_model_;
};

TEST_F(InferSessionCore, DescribesTheModel)
{
    auto s = open(image_model_);
    EXPECT_TRUE(s.is_open());
    EXPECT_EQ(s.backend(), InferBackend::OnnxRuntime);
    EXPECT_EQ(s.model_path(), image_model_);
    EXPECT_EQ(s.execution_provider(), "cpu");
    ASSERT_EQ(s.inputs().size(), 1u);
    EXPECT_EQ(s.inputs()[0].name, "image");
    EXPECT_EQ(s.inputs()[0].layout, InferLayout::ChannelsLast);
    ASSERT_EQ(s.outputs().size(), 2u);
    EXPECT_EQ(*s.output_index("bytes"), 1u);
    EXPECT_FALSE(s.input_index("nope"));
    EXPECT_TRUE(s.outputs()[1].is_dynamic());
}

TEST_F(InferSessionCore, TheRuntimeReadsTheTensorWhereItLies)
{
    auto s = open(image_model_);
    const TensorDyn in = image_tensor({1, 8, 8, 3}, 1);
    auto out = s.run(std::span(&in, 1));
    ASSERT_TRUE(out) << out.error().message();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ((*out)[0].name, "sum");
    EXPECT_EQ((*out)[0].shape, (Shape{1}));
    EXPECT_EQ(read_f32((*out)[0].tensor), sum_of(in));
    EXPECT_EQ((*out)[1].name, "bytes");
    EXPECT_EQ((*out)[1].shape, (Shape{192}));
    EXPECT_EQ((*out)[0].tensor.memory(), TensorMemory::Mem);

    const InferInputBinding b = s.input_binding(0);
    EXPECT_EQ(b.kind, InferBinding::InPlace);
    EXPECT_EQ(b.runtime_address, in.map_read()->cdata().data());
    const InferStats st = s.stats();
    EXPECT_EQ(st.runs, 1u);
    EXPECT_EQ(st.inputs_in_place, 1u);
    EXPECT_EQ(st.input_copies, 0u);
    // The dynamic output is the one copy: its shape was known only after the run.
    EXPECT_EQ(st.output_copies, 1u);
    EXPECT_EQ(st.copies, 1u);
}

TEST_F(InferSessionCore, AnImageWithoutItsBatchDimensionFeedsTheModel)
{
    auto s = open(image_model_);
    const TensorDyn in = image_tensor({8, 8, 3}, 7);
    ASSERT_TRUE(s.check_input(0, DType::U8, {8, 8, 3}));
    auto out = s.run(std::span(&in, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ(read_f32((*out)[0].tensor), sum_of(in));
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::InPlace);
}

TEST_F(InferSessionCore, AViewIsCopiedCountedAndWarnedOnce)
{
    LogCapture log("infer", LogLevel::Warning);
    auto s = open(image_model_);
    auto img = TensorDyn::image(12, 8, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem);
    ASSERT_TRUE(img) << img.error().message();
    {
        auto m = img->map_write();
        for (size_t i = 0; i < m->data().size(); ++i)
            m->data()[i] = uint8_t(i * 3);
    }
    auto view = img->view(Region{2, 0, 8, 8});
    ASSERT_TRUE(view) << view.error().message();
    ASSERT_FALSE(view->is_contiguous());
    float expect = 0;
    {
        auto m = view->map_read();
        const auto& p = m->plane(0);
        for (size_t y = 0; y < 8; ++y)
            for (size_t x = 0; x < 24; ++x)
                expect += float(p.data[y * p.row_stride + x]);
    }
    for (int run = 0; run < 3; ++run) {
        auto out = s.run(std::span(&*view, 1));
        ASSERT_TRUE(out) << out.error().message();
        EXPECT_EQ(read_f32((*out)[0].tensor), expect);
    }
    const InferInputBinding b = s.input_binding(0);
    EXPECT_EQ(b.kind, InferBinding::Copied);
    EXPECT_NE(b.reason.find("not contiguous"), std::string::npos) << b.reason;
    const InferStats st = s.stats();
    EXPECT_EQ(st.input_copies, 3u);
    EXPECT_EQ(st.inputs_in_place, 0u);
    const auto warnings = log.take();
    ASSERT_EQ(warnings.size(), 2u); // the input once, the dynamic output once
    EXPECT_NE(warnings[0].find("input 'image' is copied before every run"), std::string::npos)
        << warnings[0];
}

TEST_F(InferSessionCore, WrongDTypeNamesBoth_Negative)
{
    auto s = open(image_model_);
    auto f = TensorDyn::create(DType::F32, {1, 8, 8, 3}, TensorMemory::Mem);
    ASSERT_TRUE(f);
    EXPECT_ERROR_HAS(s.run(std::span(&*f, 1)), ErrorCode::DTypeMismatch,
                     "model '" + image_model_ +
                         "': input 'image' takes u8 [1, 8, 8, 3] (channels-last); the tensor is "
                         "f32 [1, 8, 8, 3]");
    EXPECT_ERROR_HAS(s.check_input(0, DType::F32, {1, 8, 8, 3}), ErrorCode::DTypeMismatch,
                     "the tensor is f32 [1, 8, 8, 3]");
    EXPECT_ERROR_HAS(s.check_input(0, DType::U8, {1, 3, 8, 8}), ErrorCode::InvalidShape,
                     "the tensor is u8 [1, 3, 8, 8] (dimension 1 is 8 in the model, 3 in the "
                     "tensor)");
    EXPECT_ERROR_HAS(s.check_input(1, DType::U8, {1}), ErrorCode::InvalidArgument,
                     "there is no input 1");
    EXPECT_EQ(s.stats().runs, 0u);
}

TEST_F(InferSessionCore, WrongInputCountOrAnEmptyTensor_Negative)
{
    auto s = open(image_model_);
    EXPECT_ERROR_HAS(s.run({}), ErrorCode::InvalidArgument,
                     "has 1 input(s) (image); the run got 0 tensor(s)");
    const TensorDyn empty;
    EXPECT_ERROR_HAS(s.run(std::span(&empty, 1)), ErrorCode::InvalidArgument,
                     "input 'image' is an empty tensor");
}

TEST_F(InferSessionCore, CallerOutputsAreWrittenInPlace)
{
    if (!is_shm_available())
        GTEST_SKIP() << "no shared memory on this host";
    auto s = open(image_model_);
    const TensorDyn in = image_tensor({1, 8, 8, 3}, 3);
    auto pooled = TensorDyn::create(DType::F32, {1}, TensorMemory::Shm, "pooled-sum");
    ASSERT_TRUE(pooled);
    const uint64_t id = pooled->buffer_identity().id();
    std::vector<TensorDyn> outs{*pooled, TensorDyn()};
    ASSERT_TRUE(s.run_into(std::span(&in, 1), outs));
    EXPECT_EQ(outs[0].buffer_identity().id(), id);
    EXPECT_EQ(read_f32(*pooled), sum_of(in));
    EXPECT_TRUE(outs[1].is_valid());
}

TEST_F(InferSessionCore, CallerOutputsThatDoNotFit_Negative)
{
    auto s = open(image_model_);
    const TensorDyn in = image_tensor({1, 8, 8, 3}, 3);
    auto u8 = TensorDyn::create(DType::U8, {1}, TensorMemory::Mem);
    std::vector<TensorDyn> outs{*u8, TensorDyn()};
    EXPECT_ERROR_HAS(s.run_into(std::span(&in, 1), outs), ErrorCode::DTypeMismatch,
                     "output 'sum' is f32 [1]; the tensor given for it is u8 [1]");
    auto f = TensorDyn::create(DType::F32, {1}, TensorMemory::Mem);
    outs = {*f, *u8};
    EXPECT_ERROR_HAS(s.run_into(std::span(&in, 1), outs), ErrorCode::InvalidArgument,
                     "output 'bytes' has the dynamic shape [?]; pass an empty tensor");
    outs = {*f};
    EXPECT_ERROR_HAS(s.run_into(std::span(&in, 1), outs), ErrorCode::InvalidArgument,
                     "has 2 output(s); the run was given 1");
}

TEST_F(InferSessionCore, AnEmptyDynamicOutputHasItsShapeAndNoTensor)
{
    auto s = open(image_model_);
    const TensorDyn zeros = [] {
        auto t = TensorDyn::create(DType::U8, {1, 8, 8, 3}, TensorMemory::Mem);
        return *t; // heap tensors are zero-filled
    }();
    auto out = s.run(std::span(&zeros, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ((*out)[1].shape, (Shape{0}));
    EXPECT_FALSE((*out)[1].tensor.is_valid());
    EXPECT_EQ(read_f32((*out)[0].tensor), 0.0f);
}

TEST_F(InferSessionCore, AMisalignedTensorIsCopiedWhereTheRuntimeNeedsAlignment)
{
    fake_.rules = HostRules{64, 0};
    auto s = open(flat_model_);
    EXPECT_EQ(s.input_rules().alignment, 64u);
    EXPECT_EQ(s.input_rules().trailing_bytes, 0u);
    auto parent = TensorDyn::create(DType::U8, {3, 40}, TensorMemory::Mem);
    ASSERT_TRUE(parent);
    {
        auto m = parent->map_write();
        for (size_t i = 0; i < 120; ++i)
            m->data()[i] = uint8_t(i);
    }
    auto slot0 = parent->batch(0);
    auto slot1 = parent->batch(1); // 40 bytes in: not 64-byte aligned
    auto out = s.run(std::span(&*slot0, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::InPlace);
    out = s.run(std::span(&*slot1, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ((*out)[0].tensor.map_read()->cdata()[0], 40);
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::Copied);
    EXPECT_NE(s.input_binding(0).reason.find("not 64-byte aligned"), std::string::npos)
        << s.input_binding(0).reason;
}

TEST_F(InferSessionCore, ATensorEndingAtItsBufferEndIsCopiedForARuntimeThatReadsPast)
{
    if (!is_shm_available())
        GTEST_SKIP() << "no shared memory on this host";
    fake_.rules = HostRules{64, 64};
    auto s = open(flat_model_);
    // Two pages of a memfd: the second slot ends where the mapping ends.
    auto parent = TensorDyn::create(DType::U8, {2, 4096}, TensorMemory::Shm);
    ASSERT_TRUE(parent);
    ASSERT_EQ(parent->capacity_bytes(), 8192u) << "the memfd is sized to the request";
    auto first = parent->batch(0);
    auto last = parent->batch(1);
    ASSERT_TRUE(s.run(std::span(&*first, 1)));
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::InPlace);
    ASSERT_TRUE(s.run(std::span(&*last, 1)));
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::Copied);
    EXPECT_NE(s.input_binding(0).reason.find("may read that far past an input"), std::string::npos)
        << s.input_binding(0).reason;
}

TEST_F(InferSessionCore, NoFdIsLeftBehind)
{
    if (!is_shm_available())
        GTEST_SKIP() << "no shared memory on this host";
    InferOptions o;
    o.output_memory = TensorMemory::Shm; // every output a memfd
    const TensorDyn in = image_tensor({1, 8, 8, 3}, 5, TensorMemory::Shm);
    {
        auto warm = open(image_model_, o);
        ASSERT_TRUE(warm.run(std::span(&in, 1)));
    }
    const auto before = open_fds();
    for (int i = 0; i < 4; ++i) {
        auto s = open(image_model_, o);
        for (int r = 0; r < 3; ++r) {
            auto out = s.run(std::span(&in, 1));
            ASSERT_TRUE(out) << out.error().message();
            EXPECT_GE((*out)[0].tensor.fd(), 0);
        }
    }
    const auto after = open_fds();
    std::set<int> leaked;
    for (int fd : after)
        if (!before.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << describe_fds(leaked);
}

TEST_F(InferSessionCore, ConcurrentRunsTakeTurns)
{
    auto s = open(image_model_);
    const TensorDyn in = image_tensor({1, 8, 8, 3}, 9);
    const float expect = sum_of(in);
    std::atomic<int> wrong{0};
    auto worker = [&] {
        for (int i = 0; i < 50; ++i) {
            auto out = s.run(std::span(&in, 1));
            if (!out || read_f32((*out)[0].tensor) != expect)
                wrong++;
            (void)s.stats();
        }
    };
    std::thread a(worker), b(worker);
    a.join();
    b.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(s.stats().runs, 100u);
}

TEST_F(InferSessionCore, AMovedFromSessionIsClosed)
{
    auto s = open(image_model_);
    InferSession t = std::move(s);
    EXPECT_FALSE(s.is_open()); // NOLINT(bugprone-use-after-move): the moved-from state is defined
    EXPECT_TRUE(t.is_open());
    EXPECT_ERROR_HAS(s.run({}), ErrorCode::InvalidArgument, "not open");
}

} // namespace
} // namespace edgetensor::test
