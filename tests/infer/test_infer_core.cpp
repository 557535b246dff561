// SPDX-License-Identifier: MIT
//
// The inference core without a runtime (runs on every host): names, the Auto backend's file
// rules, delegate options, the input fit rules that caps-time checks use, the "built without"
// and option errors of open(), and the module loader's refusals (fake modules).

#include "infer/delegate_options.hpp"
#include "infer/input_fit.hpp"
#include "infer/module_loader.hpp"
#include "infer/tensor_info.hpp"
#include "infer_require.hpp"
#include "infer_test_util.hpp"

#include <cerrno>

namespace edgetensor::test
{
namespace
{

using detail::infer::fit_input;
using detail::infer::guess_layout;
using detail::infer::load_module;
using detail::infer::parse_delegate_options;

TEST(InferNames, BackendNamesRoundTrip)
{
    for (auto b : {InferBackend::Auto, InferBackend::OnnxRuntime, InferBackend::TfLite}) {
        auto back = infer_backend_from_name(infer_backend_name(b));
        ASSERT_TRUE(back) << back.error().message();
        EXPECT_EQ(*back, b);
    }
    EXPECT_EQ(infer_backend_name(InferBackend::OnnxRuntime), "onnxruntime");
    EXPECT_EQ(infer_backend_name(InferBackend::TfLite), "tflite");
}

TEST(InferNames, UnknownBackendNameListsTheKnownOnes_Negative)
{
    EXPECT_ERROR_HAS(infer_backend_from_name("tensorrt"), ErrorCode::InvalidArgument,
                     "'tensorrt' (known: auto, onnxruntime, tflite)");
}

TEST(InferNames, LayoutAndBindingNames)
{
    EXPECT_EQ(infer_layout_name(InferLayout::ChannelsLast), "channels-last");
    EXPECT_EQ(infer_layout_name(InferLayout::ChannelsFirst), "channels-first");
    EXPECT_EQ(infer_layout_name(InferLayout::Unknown), "unknown");
    EXPECT_EQ(infer_binding_name(InferBinding::InPlace), "in-place");
    EXPECT_EQ(infer_binding_name(InferBinding::Copied), "copied");
    EXPECT_EQ(infer_binding_name(InferBinding::DmaBuf), "dmabuf");
    EXPECT_EQ(infer_binding_name(InferBinding::None), "none");
}

TEST(InferNames, ShapeStringShowsDynamicDimensionsByName)
{
    const std::vector<int64_t> s{-1, 3, 224, -1};
    const std::vector<std::string> names{"batch", "", "", ""};
    EXPECT_EQ(infer_shape_string(s), "[?, 3, 224, ?]");
    EXPECT_EQ(infer_shape_string(s, names), "[batch, 3, 224, ?]");
    EXPECT_EQ(infer_shape_string(std::vector<int64_t>{}), "[]");
}

TEST(InferLayoutRule, ChannelsFromTheShape)
{
    using V = std::vector<int64_t>;
    EXPECT_EQ(guess_layout(V{1, 640, 640, 3}, InferBackend::OnnxRuntime),
              InferLayout::ChannelsLast);
    EXPECT_EQ(guess_layout(V{1, 3, 640, 640}, InferBackend::TfLite), InferLayout::ChannelsFirst);
    EXPECT_EQ(guess_layout(V{-1, 3, -1, -1}, InferBackend::OnnxRuntime),
              InferLayout::ChannelsFirst);
    EXPECT_EQ(guess_layout(V{480, 640, 4}, InferBackend::OnnxRuntime), InferLayout::ChannelsLast);
    // Both candidates look like channels: the runtime's image convention decides.
    EXPECT_EQ(guess_layout(V{1, 3, 3, 3}, InferBackend::TfLite), InferLayout::ChannelsLast);
    EXPECT_EQ(guess_layout(V{1, 3, 3, 3}, InferBackend::OnnxRuntime), InferLayout::ChannelsFirst);
    // Neither, or not image-like.
    EXPECT_EQ(guess_layout(V{1, 16, 16, 16}, InferBackend::TfLite), InferLayout::Unknown);
    EXPECT_EQ(guess_layout(V{1, 10}, InferBackend::TfLite), InferLayout::Unknown);
    EXPECT_EQ(guess_layout(V{1, 1, 3, 8, 8}, InferBackend::OnnxRuntime), InferLayout::Unknown);
}

TEST(InferModelFile, TfliteIsToldByItsIdentifierWhateverItsName)
{
    TempDir dir;
    const std::string head("\x1c\0\0\0TFL3", 8);
    EXPECT_EQ(*infer_backend_for_file(dir.write("model.bin", head + "rest")), InferBackend::TfLite);
    EXPECT_EQ(*infer_backend_for_file(dir.write("model.onnx", head + "rest")),
              InferBackend::TfLite);
}

TEST(InferModelFile, ExtensionsAndOnnxFirstField)
{
    TempDir dir;
    EXPECT_EQ(*infer_backend_for_file(dir.write("m.tflite", "not really")), InferBackend::TfLite);
    EXPECT_EQ(*infer_backend_for_file(dir.write("m.ONNX", "not really")),
              InferBackend::OnnxRuntime);
    // A nameless protobuf whose first field is ONNX's ir_version (tag 0x08).
    EXPECT_EQ(*infer_backend_for_file(dir.write("model", std::string("\x08\x08\x12\x04", 4))),
              InferBackend::OnnxRuntime);
}

TEST(InferModelFile, NothingTells_Negative)
{
    TempDir dir;
    const std::string p = dir.write("weights.bin", "GGUF....");
    EXPECT_ERROR_HAS(infer_backend_for_file(p), ErrorCode::InvalidArgument,
                     "cannot tell which runtime reads model '" + p + "'");
}

TEST(InferModelFile, MissingEmptyAndDirectory_Negative)
{
    TempDir dir;
    const std::string missing = dir.file("absent.onnx");
    auto r = infer_backend_for_file(missing);
    EXPECT_ERROR_HAS(r, ErrorCode::Io, "model '" + missing + "': cannot open it");
    EXPECT_EQ(r.error().sys_errno(), ENOENT);
    EXPECT_ERROR_HAS(infer_backend_for_file(dir.write("empty.onnx", "")),
                     ErrorCode::InvalidArgument, "empty.onnx' is empty");
    EXPECT_ERROR_HAS(infer_backend_for_file(dir.path()), ErrorCode::InvalidArgument,
                     "is not a regular file");
    // open() reports the same, whatever the backend (no runtime is asked about a missing file).
    InferOptions o;
    o.backend = InferBackend::TfLite;
    EXPECT_ERROR_HAS(InferSession::open(missing, o), ErrorCode::Io, "absent.onnx': cannot open it");
}

TEST(InferDelegateOptions, KeyValuePairs)
{
    auto r = parse_delegate_options(" cache_file_path = /tmp/x ;device=npu0;;empty=; ");
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->size(), 3u);
    EXPECT_EQ((*r)[0], std::make_pair(std::string("cache_file_path"), std::string("/tmp/x")));
    EXPECT_EQ((*r)[1], std::make_pair(std::string("device"), std::string("npu0")));
    EXPECT_EQ((*r)[2], std::make_pair(std::string("empty"), std::string()));
    EXPECT_TRUE(parse_delegate_options("")->empty());
}

TEST(InferDelegateOptions, Malformed_Negative)
{
    EXPECT_ERROR_HAS(parse_delegate_options("a=1;verbose"), ErrorCode::InvalidArgument,
                     "'verbose' has no '='");
    EXPECT_ERROR_HAS(parse_delegate_options("=3"), ErrorCode::InvalidArgument, "empty key");
    EXPECT_ERROR_HAS(parse_delegate_options("a=1;a=2"), ErrorCode::InvalidArgument,
                     "'a' is given twice");
}

InferTensorInfo info(std::string name, DType dtype, std::vector<int64_t> shape,
                     InferBackend b = InferBackend::OnnxRuntime)
{
    InferTensorInfo i;
    i.name = std::move(name);
    i.dtype = dtype;
    i.shape = std::move(shape);
    i.dim_names.assign(i.shape.size(), "");
    i.layout = guess_layout(i.shape, b);
    return i;
}

TEST(InferInputFit, ExactLeadingOnesAndDynamicDimensions)
{
    const auto nhwc = info("images", DType::U8, {1, 64, 64, 3});
    EXPECT_EQ(*fit_input(nhwc, DType::U8, {1, 64, 64, 3}, "m"), (Shape{1, 64, 64, 3}));
    // An [H, W, C] image feeds a [1, H, W, C] input; an extra leading 1 is dropped.
    EXPECT_EQ(*fit_input(nhwc, DType::U8, {64, 64, 3}, "m"), (Shape{1, 64, 64, 3}));
    EXPECT_EQ(*fit_input(nhwc, DType::U8, {1, 1, 64, 64, 3}, "m"), (Shape{1, 64, 64, 3}));
    // A batch of 4 into a dynamic first dimension; a missing dynamic dimension becomes 1.
    const auto dyn = info("input", DType::F32, {-1, 3, 8, 8});
    EXPECT_EQ(*fit_input(dyn, DType::F32, {4, 3, 8, 8}, "m"), (Shape{4, 3, 8, 8}));
    EXPECT_EQ(*fit_input(dyn, DType::F32, {3, 8, 8}, "m"), (Shape{1, 3, 8, 8}));
}

TEST(InferInputFit, DTypeMismatchNamesBoth_Negative)
{
    const auto in = info("input", DType::F32, {1, 3, 8, 8});
    EXPECT_ERROR_HAS(fit_input(in, DType::U8, {1, 3, 8, 8}, "/m/conv.onnx"),
                     ErrorCode::DTypeMismatch,
                     "model '/m/conv.onnx': input 'input' takes f32 [1, 3, 8, 8] "
                     "(channels-first); the tensor is u8 [1, 3, 8, 8]");
}

TEST(InferInputFit, ShapeMismatchNamesBothAndTheDimension_Negative)
{
    const auto in = info("images", DType::U8, {1, 64, 64, 3});
    EXPECT_ERROR_HAS(fit_input(in, DType::U8, {1, 3, 64, 64}, "m.onnx"), ErrorCode::InvalidShape,
                     "takes u8 [1, 64, 64, 3] (channels-last); the tensor is u8 [1, 3, 64, 64] "
                     "(dimension 1 is 64 in the model, 3 in the tensor)");
    EXPECT_ERROR_HAS(fit_input(in, DType::U8, {4, 64, 64, 3}, "m.onnx"), ErrorCode::InvalidShape,
                     "a batch of 4 needs a model whose first dimension is dynamic or 4");
    EXPECT_ERROR_HAS(fit_input(in, DType::U8, {64, 3}, "m.onnx"), ErrorCode::InvalidShape,
                     "the model's dimension 1 is 64, not 1");
    EXPECT_ERROR_HAS(fit_input(in, DType::U8, {2, 1, 64, 64, 3}, "m.onnx"), ErrorCode::InvalidShape,
                     "the tensor's extra dimension 0 is 2, not 1");
    const auto named = [] {
        auto i = info("x", DType::F32, {-1, 4});
        i.dim_names[0] = "batch";
        return i;
    }();
    EXPECT_ERROR_HAS(fit_input(named, DType::F32, {2, 5}, "m.onnx"), ErrorCode::InvalidShape,
                     "takes f32 [batch, 4]");
}

TEST(InferBuilt, BackendsNotBuiltSaySo)
{
    bool any = false;
    for (auto b : {InferBackend::OnnxRuntime, InferBackend::TfLite}) {
        if (infer_backend_built(b))
            continue;
        any = true;
        if (infer_required(b))
            ADD_FAILURE() << "EDGETENSOR_TEST_REQUIRE_INFER names " << infer_backend_name(b)
                          << " but this build lacks it";
        TempDir dir;
        const std::string model =
            dir.write(b == InferBackend::TfLite ? "m.tflite" : "m.onnx", "not read");
        InferOptions o;
        o.backend = b;
        const char* runtime = b == InferBackend::TfLite ? "TensorFlow Lite" : "ONNX Runtime";
        EXPECT_ERROR_HAS(InferSession::open(model, o), ErrorCode::NotSupported,
                         std::string("built without ") + runtime);
        EXPECT_ERROR_HAS(infer_runtime_info(b), ErrorCode::NotSupported,
                         std::string("built without ") + runtime);
    }
    if (!any)
        GTEST_SKIP() << "this build has both backends: there is no 'built without' path";
}

TEST(InferBuilt, AutoIsNoBackend_Negative)
{
    EXPECT_ERROR_HAS(infer_runtime_info(InferBackend::Auto), ErrorCode::InvalidArgument,
                     "no backend is named 'auto'");
}

class InferRuntime : public testing::TestWithParam<InferBackend>
{
};

TEST_P(InferRuntime, LoadsAndDescribesItself)
{
    ET_REQUIRE_INFER_OR_SKIP(GetParam());
    auto info = infer_runtime_info(GetParam());
    ASSERT_TRUE(info) << info.error().message();
    EXPECT_EQ(info->backend, GetParam());
    EXPECT_NE(info->module.find(detail::infer::module_file_name(GetParam())), std::string::npos)
        << info->module;
    EXPECT_FALSE(info->runtime_version.empty());
    ASSERT_FALSE(info->execution_providers.empty());
    EXPECT_EQ(info->execution_providers.front(), "cpu");
    // Loaded once: a second question costs no dlopen.
    const uint64_t calls = detail::infer::module_dlopen_calls();
    ASSERT_TRUE(infer_runtime_info(GetParam()));
    EXPECT_EQ(detail::infer::module_dlopen_calls(), calls);
}

INSTANTIATE_TEST_SUITE_P(Backends, InferRuntime,
                         testing::Values(InferBackend::OnnxRuntime, InferBackend::TfLite),
                         [](const auto& p) { return std::string(infer_backend_name(p.param)); });

TEST(InferOpen, OptionsThatBelongToTheOtherRuntime_Negative)
{
    TempDir dir;
    const std::string onnx = dir.write("m.onnx", "not read");
    const std::string tfl = dir.write("m.tflite", "not read");
    InferOptions o;
    o.execution_provider = "dnnl";
    EXPECT_ERROR_HAS(InferSession::open(tfl, o), ErrorCode::InvalidArgument,
                     "execution provider 'dnnl' is an ONNX Runtime setting");
    o = {};
    o.delegate = "libvx_delegate.so";
    EXPECT_ERROR_HAS(InferSession::open(onnx, o), ErrorCode::InvalidArgument,
                     "a delegate (libvx_delegate.so) is a TensorFlow Lite setting");
    o = {};
    o.delegate_options = "a=1";
    EXPECT_ERROR_HAS(InferSession::open(tfl, o), ErrorCode::InvalidArgument,
                     "delegate options given without a delegate library");
    o = {};
    o.delegate = "libvx_delegate.so";
    o.delegate_options = "a=1;b";
    EXPECT_ERROR_HAS(InferSession::open(tfl, o), ErrorCode::InvalidArgument,
                     "m.tflite': delegate option 'b' has no '='");
    o = {};
    o.threads = -2;
    EXPECT_ERROR_HAS(InferSession::open(onnx, o), ErrorCode::InvalidArgument,
                     "threads must be 0 (the runtime's default) or more, not -2");
}

TEST(InferSessionClosed, EveryCallSaysItIsNotOpen_Negative)
{
    InferSession s;
    EXPECT_FALSE(s.is_open());
    EXPECT_TRUE(s.inputs().empty());
    EXPECT_TRUE(s.outputs().empty());
    EXPECT_TRUE(s.model_path().empty());
    EXPECT_ERROR_HAS(s.run({}), ErrorCode::InvalidArgument, "not open");
    EXPECT_ERROR_HAS(s.check_input(0, DType::U8, {1}), ErrorCode::InvalidArgument, "not open");
    EXPECT_EQ(s.stats().runs, 0u);
    EXPECT_EQ(s.input_binding(0).kind, InferBinding::None);
}

// The module loader, on fake modules (tests/infer/fake_module.cpp) built beside this test.
class InferModuleLoader : public testing::Test
{
protected:
    std::string fake(const char* name)
    {
        return env_or_empty("EDGETENSOR_TEST_FAKE_MODULES") + "/" + name;
    }
};

TEST_F(InferModuleLoader, AGoodModuleLoads)
{
    const uint64_t calls = detail::infer::module_dlopen_calls();
    auto b = load_module(fake("et-infer-fake-good.so"), InferBackend::OnnxRuntime);
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ((*b)->kind(), InferBackend::OnnxRuntime);
    EXPECT_EQ((*b)->runtime_version(), "fake-module");
    EXPECT_EQ(detail::infer::module_dlopen_calls(), calls + 1);
}

TEST_F(InferModuleLoader, MissingModule_Negative)
{
    const std::string p = fake("edgetensor-infer-nothing.so");
    EXPECT_ERROR_HAS(load_module(p, InferBackend::TfLite), ErrorCode::Unavailable,
                     "the TensorFlow Lite backend module " + p + " is not there");
}

TEST_F(InferModuleLoader, NotAModule_Negative)
{
    EXPECT_ERROR_HAS(load_module(fake("et-infer-fake-no-entry.so"), InferBackend::OnnxRuntime),
                     ErrorCode::Unavailable, "lacks edgetensor_infer_module_v1");
}

TEST_F(InferModuleLoader, ModuleOfAnotherBuild_Negative)
{
    EXPECT_ERROR_HAS(load_module(fake("et-infer-fake-abi.so"), InferBackend::OnnxRuntime),
                     ErrorCode::Unavailable, "was built for another edgetensor (module ABI 99");
}

TEST_F(InferModuleLoader, ModuleOfTheOtherBackend_Negative)
{
    EXPECT_ERROR_HAS(load_module(fake("et-infer-fake-tflite.so"), InferBackend::OnnxRuntime),
                     ErrorCode::Unavailable,
                     "is the module of TensorFlow Lite, not of ONNX Runtime");
}

TEST_F(InferModuleLoader, RuntimeAbsentAtRunTime_Negative)
{
    // The module needs a runtime library that is not there (a soname no file has), as on a
    // machine without ONNX Runtime: the loader's words name it.
    auto r = load_module(fake("et-infer-fake-needs-runtime.so"), InferBackend::OnnxRuntime);
    EXPECT_ERROR_HAS(r, ErrorCode::Unavailable, "ONNX Runtime cannot be loaded: ");
    EXPECT_ERROR_HAS(r, ErrorCode::Unavailable,
                     "libet-infer-runtime-gone.so.1: cannot open shared object file");
    EXPECT_ERROR_HAS(r, ErrorCode::Unavailable, "is ONNX Runtime installed?");
}

} // namespace
} // namespace edgetensor::test
