// SPDX-License-Identifier: MIT
//
// TensorFlow Lite on models written at test time with the schema its dev package ships
// (tflite_models.cpp): outputs against values computed here, inputs bound as custom allocations
// over the tensors' own mappings (the interpreter's data pointer is the mapping, no copy
// counted), a batch resized into a dynamic first dimension, quantisation reported, and every
// refusal naming the model and the cause. Then the external delegate path with the fake
// delegate (fake_delegate.cpp): options handed over, a DMA-BUF input's fd lent to the delegate
// and read by it with no CPU mapping, handles freed after each run, and the delegate errors.

#include "../infer_require.hpp"
#include "../infer_test_util.hpp"
#include "../model_dir.hpp"
#include "../reference.hpp"
#include "dma/dma_internal.hpp"
#include "fake_delegate.hpp"
#include "fd_count.hpp"
#include "require.hpp"
#include "tensor_access.hpp"
#include "tflite_models.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace edgetensor::test
{
namespace
{

ModelDir& models()
{
    static ModelDir dir = [] {
        ModelDir d;
        d.make_with([](const std::string& path) { return tfl::write_all(path); });
        return d;
    }();
    return dir;
}

template <typename T> std::vector<T> values(const TensorDyn& t)
{
    auto m = t.map_read();
    std::vector<T> v(t.len());
    std::memcpy(v.data(), m->cdata().data(), t.size());
    return v;
}

class Tflite : public testing::Test
{
protected:
    void SetUp() override
    {
        ET_REQUIRE_INFER_OR_SKIP(InferBackend::TfLite);
        ASSERT_EQ(models().why(), "");
    }
    static InferSession open(const std::string& name, InferOptions o = {})
    {
        auto s = InferSession::open(models().path(name), o);
        EXPECT_TRUE(s) << s.error().message();
        return s ? std::move(*s) : InferSession();
    }
    /// [n, 8, 8, 3] f32 (NHWC) filled with pattern(), in shared memory: page-granular maps
    /// leave the spare bytes TensorFlow Lite reads past an input.
    static TensorDyn nhwc_input(size_t n, TensorMemory memory = TensorMemory::Shm)
    {
        auto t = TensorDyn::create(DType::F32, {n, 8, 8, 3}, memory, "nhwc");
        EXPECT_TRUE(t) << t.error().message();
        auto m = t->map_as<float>(CpuAccess::Write);
        for (size_t b = 0; b < n; ++b)
            for (size_t y = 0; y < 8; ++y)
                for (size_t x = 0; x < 8; ++x)
                    for (size_t c = 0; c < 3; ++c)
                        m->data()[((b * 8 + y) * 8 + x) * 3 + c] = pattern(b, c, y, x);
        return *t;
    }
    static void expect_conv_nhwc(const std::vector<float>& got, size_t n)
    {
        ASSERT_EQ(got.size(), n * 128);
        for (size_t b = 0; b < n; ++b) {
            const auto ref = conv_reference(8, 8, [&](int c, int y, int x) {
                return pattern(b, size_t(c), size_t(y), size_t(x));
            });
            for (size_t o = 0; o < 2; ++o)
                for (size_t p = 0; p < 64; ++p)
                    ASSERT_NEAR(got[b * 128 + p * 2 + o], ref[o * 64 + p], 1e-4f)
                        << "batch " << b << " filter " << o << " pixel " << p;
        }
    }
};

TEST_F(Tflite, MeanModelDescribesItselfAndRunsInPlace)
{
    if (!is_shm_available())
        GTEST_SKIP() << "no shared memory on this host";
    auto s = open("mean.tflite");
    ASSERT_TRUE(s.is_open());
    EXPECT_EQ(s.backend(), InferBackend::TfLite); // Auto: by the TFL3 identifier
    EXPECT_EQ(s.execution_provider(), "cpu");
    ASSERT_EQ(s.inputs().size(), 1u);
    EXPECT_EQ(s.inputs()[0].name, "image");
    EXPECT_EQ(s.inputs()[0].dtype, DType::U8);
    EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{1, 8, 8, 3}));
    EXPECT_EQ(s.inputs()[0].layout, InferLayout::ChannelsLast);
    ASSERT_EQ(s.outputs().size(), 2u);
    EXPECT_EQ(s.outputs()[0].name, "mean");
    EXPECT_EQ(s.outputs()[1].name, "scores");
    EXPECT_EQ(s.input_rules().alignment, 64u);
    EXPECT_EQ(s.input_rules().trailing_bytes, 64u);

    auto img = TensorDyn::image(8, 8, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Shm, "frame");
    ASSERT_TRUE(img) << img.error().message();
    double sums[3] = {0, 0, 0};
    {
        auto m = img->map_write();
        for (size_t i = 0; i < 192; ++i) {
            m->data()[i] = uint8_t((i * 53) % 256);
            sums[i % 3] += double((i * 53) % 256);
        }
    }
    for (int run = 0; run < 3; ++run) {
        auto out = s.run(std::span(&*img, 1));
        ASSERT_TRUE(out) << out.error().message();
        const auto mean = values<float>((*out)[0].tensor);
        const auto scores = values<float>((*out)[1].tensor);
        for (size_t c = 0; c < 3; ++c) {
            EXPECT_NEAR(mean[c], sums[c] / 64.0, 1e-3) << c;
            EXPECT_NEAR(scores[c], sums[c] / 64.0 / 255.0, 1e-5) << c;
        }
    }
    // The proof of no copy: the interpreter's input data pointer is the tensor's mapping.
    const InferInputBinding b = s.input_binding(0);
    EXPECT_EQ(b.kind, InferBinding::InPlace) << b.reason;
    EXPECT_EQ(b.runtime_address, img->map_read()->cdata().data());
    const InferStats st = s.stats();
    EXPECT_EQ(st.runs, 3u);
    EXPECT_EQ(st.inputs_in_place, 3u);
    EXPECT_EQ(st.copies, 0u) << "static outputs are custom allocations over our tensors too";
}

TEST_F(Tflite, ConvModelMatchesTheReference)
{
    if (!is_shm_available())
        GTEST_SKIP() << "no shared memory on this host";
    InferOptions o;
    o.threads = 2;
    o.output_memory = TensorMemory::Shm;
    auto s = open("conv.tflite", o);
    const TensorDyn in = nhwc_input(1);
    auto out = s.run(std::span(&in, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ((*out)[0].tensor.shape(), (Shape{1, 8, 8, 2}));
    expect_conv_nhwc(values<float>((*out)[0].tensor), 1);
    EXPECT_EQ(s.input_binding(0).runtime_address, in.map_read()->cdata().data());
    EXPECT_EQ(s.stats().copies, 0u);
}

TEST_F(Tflite, ABatchResizesADynamicFirstDimension)
{
    auto s = open("conv_batch.tflite");
    EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{-1, 8, 8, 3}));
    EXPECT_TRUE(s.outputs()[0].is_dynamic());
    for (size_t n : {2u, 1u, 3u}) {
        const TensorDyn in = nhwc_input(n, TensorMemory::Mem);
        auto out = s.run(std::span(&in, 1));
        ASSERT_TRUE(out) << out.error().message();
        EXPECT_EQ((*out)[0].shape, (Shape{n, 8, 8, 2}));
        expect_conv_nhwc(values<float>((*out)[0].tensor), n);
    }
    EXPECT_EQ(s.stats().runs, 3u);
    EXPECT_EQ(s.stats().output_copies, 3u) << "a dynamic output is copied out of the arena";
}

TEST_F(Tflite, QuantisationIsReported)
{
    auto s = open("quant.tflite");
    ASSERT_TRUE(s.inputs()[0].quantization);
    EXPECT_FLOAT_EQ(s.inputs()[0].quantization->scale, tfl::kQuantScale);
    EXPECT_EQ(s.inputs()[0].quantization->zero_point, tfl::kQuantZeroPoint);
    EXPECT_FALSE(s.outputs()[0].quantization);
    auto q = TensorDyn::create(DType::U8, {4}, TensorMemory::Mem);
    {
        auto m = q->map_write();
        const uint8_t v[4] = {10, 12, 20, 0};
        std::memcpy(m->data().data(), v, 4);
    }
    auto out = s.run(std::span(&*q, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ(values<float>((*out)[0].tensor), (std::vector<float>{0, 1, 5, -5}));
}

TEST_F(Tflite, InputsItCannotFeedNameBoth_Negative)
{
    auto s = open("conv.tflite");
    const std::string path = models().path("conv.tflite");
    EXPECT_ERROR_HAS(s.check_input(0, DType::U8, {1, 8, 8, 3}), ErrorCode::DTypeMismatch,
                     "model '" + path +
                         "': input 'x' takes f32 [1, 8, 8, 3] (channels-last); the tensor is u8 "
                         "[1, 8, 8, 3]");
    EXPECT_ERROR_HAS(s.check_input(0, DType::F32, {2, 8, 8, 3}), ErrorCode::InvalidShape,
                     "a batch of 2 needs a model whose first dimension is dynamic or 2");
}

TEST_F(Tflite, BadModels_Negative)
{
    TempDir dir;
    const std::string corrupt =
        dir.write("corrupt.tflite", std::string("\x1c\0\0\0TFL3\xff\xff\xff\x7f garbage", 20));
    EXPECT_ERROR_HAS(InferSession::open(corrupt), ErrorCode::InvalidArgument,
                     "model '" + corrupt + "': it is not a valid TensorFlow Lite model");
    const std::string boolean = models().path("bool.tflite");
    EXPECT_ERROR_HAS(InferSession::open(boolean), ErrorCode::InvalidArgument,
                     "model '" + boolean +
                         "': input 'flags' has the type BOOL, which edgetensor "
                         "has no dtype for");
}

// --- The external delegate path ---------------------------------------------------------------

class TfliteDelegate : public Tflite
{
protected:
    void SetUp() override
    {
        Tflite::SetUp();
        if (IsSkipped() || HasFatalFailure())
            return;
        lib_ = env_or_empty("EDGETENSOR_TEST_FAKE_DELEGATE");
        ASSERT_FALSE(lib_.empty()) << "EDGETENSOR_TEST_FAKE_DELEGATE is not set";
        handle_ = ::dlopen(lib_.c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(handle_, nullptr) << ::dlerror();
        stats_fn_ = reinterpret_cast<FakeDelegateStatsFn>(::dlsym(handle_, "fake_delegate_stats"));
        auto reset = reinterpret_cast<FakeDelegateResetFn>(::dlsym(handle_, "fake_delegate_reset"));
        ASSERT_TRUE(stats_fn_ && reset);
        reset();
    }
    void TearDown() override
    {
        if (handle_)
            ::dlclose(handle_);
    }
    const FakeDelegateStats& fake() const { return *stats_fn_(); }
    InferOptions with_delegate(std::string options = {}) const
    {
        InferOptions o;
        o.delegate = lib_;
        o.delegate_options = std::move(options);
        return o;
    }

    /// A DMA-BUF tensor of `shape` f32 with a real provider, else a memfd wrapped as DMA
    /// storage (the library's seam): the fd path is the same, and a CPU map of it would fail
    /// (a memfd has no DMA_BUF_IOCTL_SYNC), so a successful run proves no CPU map was made.
    Result<TensorDyn> dma_tensor(const Shape& shape)
    {
        if (is_dma_available())
            return TensorDyn::create(DType::F32, shape, TensorMemory::Dma, "dma-in");
        size_t bytes = sizeof(float);
        for (size_t d : shape)
            bytes *= d;
        const size_t cap = detail::dma_round_to_pages(bytes);
        UniqueFd fd(::memfd_create("infer-test", MFD_CLOEXEC));
        if (!fd || ::ftruncate(fd.get(), off_t(cap)) != 0)
            return unexpected(Error::io(errno, "memfd"));
        auto st =
            detail::make_dma_storage(std::move(fd), cap, CpuAccess::ReadWrite, "test:memfd-as-dma");
        if (!st)
            return unexpected(std::move(st).error());
        return detail::TensorAccess::wrap(std::move(*st), DType::F32, shape, {}, 0, "dma-in");
    }
    /// Writes pattern() into a DMA tensor's window through a plain mmap of its fd.
    static void fill_through_fd(const TensorDyn& t)
    {
        const size_t len = t.offset() + t.size();
        void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, t.fd(), 0);
        ASSERT_NE(p, MAP_FAILED) << std::strerror(errno);
        auto* f = reinterpret_cast<float*>(static_cast<uint8_t*>(p) + t.offset());
        for (size_t y = 0; y < 8; ++y)
            for (size_t x = 0; x < 8; ++x)
                for (size_t c = 0; c < 3; ++c)
                    f[(y * 8 + x) * 3 + c] = pattern(7, c, y, x);
        ::munmap(p, len);
    }
    static void expect_add(const TensorDyn& y)
    {
        const auto v = values<float>(y);
        ASSERT_EQ(v.size(), 192u);
        for (size_t y0 = 0; y0 < 8; ++y0)
            for (size_t x = 0; x < 8; ++x)
                for (size_t c = 0; c < 3; ++c)
                    ASSERT_FLOAT_EQ(v[(y0 * 8 + x) * 3 + c],
                                    pattern(7, c, y0, x) + tfl::kAddConstant[c]);
    }

    std::string lib_;
    void* handle_ = nullptr;
    FakeDelegateStatsFn stats_fn_ = nullptr;
};

TEST_F(TfliteDelegate, ADmaBufInputIsHandedToTheDelegate)
{
    auto s = open("add.tflite", with_delegate("mode = npu ; cache=/tmp/c"));
    ASSERT_TRUE(s.is_open());
    EXPECT_EQ(s.execution_provider(), "delegate:" + lib_);
    EXPECT_STREQ(fake().options, "mode=npu;cache=/tmp/c;");
    EXPECT_EQ(fake().claimed_nodes, 1);

    auto in = dma_tensor({1, 8, 8, 3});
    ASSERT_TRUE(in) << in.error().message();
    fill_through_fd(*in);
    auto out = s.run(std::span(&*in, 1));
    ASSERT_TRUE(out) << out.error().message();
    expect_add((*out)[0].tensor);

    const InferInputBinding b = s.input_binding(0);
    EXPECT_EQ(b.kind, InferBinding::DmaBuf);
    EXPECT_GE(b.buffer_handle, 0);
    EXPECT_EQ(b.runtime_address, nullptr);
    EXPECT_EQ(fake().imports, 1);
    EXPECT_EQ(fake().invokes_through_fd, 1) << "the delegate read the input through the fd";
    EXPECT_EQ(fake().borrowed_fd_valid_at_invoke, 1);
    EXPECT_EQ(fake().frees, 1) << "the handle lives for one run";
    auto id = in->stat_identity();
    ASSERT_TRUE(id);
    EXPECT_EQ(fake().last_dev, id->first);
    EXPECT_EQ(fake().last_ino, id->second);
    EXPECT_EQ(fake().last_offset, 0u);
    EXPECT_EQ(fake().last_size, 768u);
    EXPECT_EQ(fake().last_ndim, 4u);
    EXPECT_EQ(fake().last_dtype, uint32_t(DType::F32));
    EXPECT_EQ(fake().last_shape[3], 3u);
    const InferStats st = s.stats();
    EXPECT_EQ(st.dmabuf_handoffs, 1u);
    EXPECT_EQ(st.copies, 0u);
}

TEST_F(TfliteDelegate, ABatchSlotIsHandedOverWithItsOffset)
{
    auto s = open("add.tflite", with_delegate());
    auto parent = dma_tensor({2, 8, 8, 3});
    ASSERT_TRUE(parent) << parent.error().message();
    auto slot = parent->batch(1);
    ASSERT_TRUE(slot);
    fill_through_fd(*slot);
    auto out = s.run(std::span(&*slot, 1)); // [8, 8, 3] feeds [1, 8, 8, 3]
    ASSERT_TRUE(out) << out.error().message();
    expect_add((*out)[0].tensor);
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::DmaBuf);
    EXPECT_EQ(fake().last_offset, 768u);
    EXPECT_EQ(fake().last_size, 768u);
    EXPECT_EQ(fake().last_ndim, 4u) << "the runtime's shape, the model's rank";
}

TEST_F(TfliteDelegate, HostMemoryIsBoundInPlaceForTheDelegateToo)
{
    auto s = open("add.tflite", with_delegate());
    const TensorDyn in = [] {
        auto t = TensorDyn::create(DType::F32, {1, 8, 8, 3}, TensorMemory::Shm);
        auto m = t->map_as<float>(CpuAccess::Write);
        for (size_t y = 0; y < 8; ++y)
            for (size_t x = 0; x < 8; ++x)
                for (size_t c = 0; c < 3; ++c)
                    m->data()[(y * 8 + x) * 3 + c] = pattern(7, c, y, x);
        return *t;
    }();
    auto out = s.run(std::span(&in, 1));
    ASSERT_TRUE(out) << out.error().message();
    expect_add((*out)[0].tensor);
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::InPlace);
    EXPECT_EQ(s.input_binding(0).runtime_address, in.map_read()->cdata().data());
    EXPECT_EQ(fake().imports, 0);
    EXPECT_EQ(fake().invokes, 1);
    EXPECT_EQ(fake().invokes_through_fd, 0);
}

TEST_F(TfliteDelegate, ADelegateWithoutTheConventionGetsTheMapping)
{
    InferOptions o = with_delegate();
    o.delegate = env_or_empty("EDGETENSOR_TEST_FAKE_DELEGATE_NO_DMABUF");
    auto s = open("add.tflite", o);
    const TensorDyn in = nhwc_input(1);
    auto out = s.run(std::span(&in, 1));
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::InPlace);
    EXPECT_EQ(s.stats().dmabuf_handoffs, 0u);
}

TEST_F(TfliteDelegate, ADeclinedOrCpuReadDmaBufFallsBackToItsMapping)
{
    if (!is_dma_available()) {
        if (dma_required())
            FAIL() << "EDGETENSOR_TEST_REQUIRE_DMA=1 but no DMA-BUF provider is available";
        GTEST_SKIP() << "the fallback maps the DMA-BUF for the CPU, which needs a real one (no "
                        "DMA-BUF provider on this host)";
    }
    auto s = open("add.tflite", with_delegate("dmabuf=decline"));
    auto in = dma_tensor({1, 8, 8, 3});
    ASSERT_TRUE(in);
    fill_through_fd(*in);
    auto out = s.run(std::span(&*in, 1));
    ASSERT_TRUE(out) << out.error().message();
    expect_add((*out)[0].tensor);
    EXPECT_EQ(fake().declines, 1);
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::InPlace);
    // An input a CPU kernel reads too (CAST is not the delegate's) is never offered.
    auto m = open("mean.tflite", with_delegate());
    auto u8 = TensorDyn::create(DType::U8, {1, 8, 8, 3}, TensorMemory::Dma);
    ASSERT_TRUE(u8);
    const int imports = fake().imports;
    ASSERT_TRUE(m.run(std::span(&*u8, 1)));
    EXPECT_EQ(fake().imports, imports);
    EXPECT_EQ(m.input_binding(0).kind, InferBinding::InPlace);
}

TEST_F(TfliteDelegate, DelegateFailures_Negative)
{
    const std::string model = models().path("add.tflite");
    InferOptions o = with_delegate();
    o.delegate = "/nonexistent/libnpu_delegate.so";
    EXPECT_ERROR_HAS(InferSession::open(model, o), ErrorCode::Unavailable,
                     "model '" + model +
                         "': delegate '/nonexistent/libnpu_delegate.so' cannot be loaded: "
                         "/nonexistent/libnpu_delegate.so: cannot open shared object file");
    o.delegate = "libm.so.6";
    EXPECT_ERROR_HAS(InferSession::open(model, o), ErrorCode::Unavailable,
                     "delegate 'libm.so.6' is not a TensorFlow Lite external delegate: it lacks "
                     "tflite_plugin_create_delegate");
    EXPECT_ERROR_HAS(InferSession::open(model, with_delegate("fail=create")), ErrorCode::Device,
                     "refused to start with its options: fake delegate: asked to fail "
                     "(fail=create)");
    EXPECT_ERROR_HAS(InferSession::open(model, with_delegate("fail=prepare")), ErrorCode::Device,
                     "delegate '" + lib_ + "' refused the model: ");
    EXPECT_EQ(fake().creates, fake().destroys) << "a refused delegate is destroyed";
}

TEST_F(TfliteDelegate, NothingIsLeftBehind)
{
    {
        auto warm = open("add.tflite", with_delegate());
        auto in = dma_tensor({1, 8, 8, 3});
        ASSERT_TRUE(in);
        ASSERT_TRUE(warm.run(std::span(&*in, 1)));
    }
    const auto before = open_fds();
    for (int i = 0; i < 3; ++i) {
        auto s = open("add.tflite", with_delegate());
        auto in = dma_tensor({1, 8, 8, 3});
        ASSERT_TRUE(in);
        for (int r = 0; r < 2; ++r)
            ASSERT_TRUE(s.run(std::span(&*in, 1)));
        EXPECT_FALSE(InferSession::open(models().path("add.tflite"), with_delegate("fail=create")));
    }
    std::set<int> leaked;
    for (int fd : open_fds())
        if (!before.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << describe_fds(leaked);
    EXPECT_EQ(fake().imports, fake().frees);
    EXPECT_EQ(fake().creates, fake().destroys);
}

} // namespace
} // namespace edgetensor::test
