// SPDX-License-Identifier: MIT
//
// A backend built but its runtime absent at run time: the library and this process carry on;
// open() says which runtime and which file is missing, names the model, is asked once, and
// leaves nothing open. Runs with EDGETENSOR_INFER_MODULE_DIR at modules whose runtime library
// does not exist (tests/infer/absent). Where a backend is not built, "built without" is the
// answer instead.

#include "fd_count.hpp"
#include "infer/module_loader.hpp"
#include "infer_require.hpp"
#include "infer_test_util.hpp"

namespace edgetensor::test
{
namespace
{

class InferAbsent : public testing::TestWithParam<InferBackend>
{
};

TEST_P(InferAbsent, OpenSaysTheRuntimeIsMissing_Negative)
{
    const InferBackend b = GetParam();
    const char* runtime = b == InferBackend::TfLite ? "TensorFlow Lite" : "ONNX Runtime";
    TempDir dir;
    const std::string model = dir.write(b == InferBackend::TfLite ? "m.tflite" : "m.onnx", "x");
    InferOptions o;
    o.backend = b;
    if (!infer_backend_built(b)) {
        if (infer_required(b))
            FAIL() << "EDGETENSOR_TEST_REQUIRE_INFER names " << infer_backend_name(b)
                   << " but this build lacks it";
        EXPECT_ERROR_HAS(InferSession::open(model, o), ErrorCode::NotSupported,
                         std::string("built without ") + runtime);
        return;
    }
    const auto before = open_fds();
    auto r = InferSession::open(model, o);
    EXPECT_ERROR_HAS(r, ErrorCode::Unavailable,
                     "model '" + model + "': " + runtime + " cannot be loaded: ");
    EXPECT_ERROR_HAS(r, ErrorCode::Unavailable, "libet-infer-runtime-gone.so.1");
    EXPECT_ERROR_HAS(infer_runtime_info(b), ErrorCode::Unavailable,
                     "libet-infer-runtime-gone.so.1");
    // The answer is kept: the module is not looked for again.
    const uint64_t calls = detail::infer::module_dlopen_calls();
    EXPECT_FALSE(InferSession::open(model, o));
    EXPECT_EQ(detail::infer::module_dlopen_calls(), calls);
    std::set<int> leaked;
    for (int fd : open_fds())
        if (!before.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << describe_fds(leaked);
    // Everything else still works.
    EXPECT_TRUE(TensorDyn::create(DType::U8, {16}, TensorMemory::Mem));
}

INSTANTIATE_TEST_SUITE_P(Backends, InferAbsent,
                         testing::Values(InferBackend::OnnxRuntime, InferBackend::TfLite),
                         [](const auto& p) { return std::string(infer_backend_name(p.param)); });

} // namespace
} // namespace edgetensor::test
