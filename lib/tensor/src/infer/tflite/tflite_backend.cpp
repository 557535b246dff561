// SPDX-License-Identifier: MIT
//
// The TensorFlow Lite backend module (edgetensor-infer-tflite.so): links libtensorflow-lite (its
// C++ API: custom allocations and buffer handles have no C API in 2.14), is loaded by the
// library on first use, and exports the module entry point.

#include "config.h"
#include "infer/tflite/tflite_session.hpp"

#include <tensorflow/lite/core/c/c_api.h>

#include <new>

namespace edgetensor::detail::infer::tflite
{
namespace
{

class TfliteBackend final : public Backend
{
public:
    InferBackend kind() const noexcept override { return InferBackend::TfLite; }
    std::string runtime_version() const override
    {
        const char* v = TfLiteVersion();
        return v ? v : "unknown";
    }
    std::vector<std::string> execution_providers() const override { return {"cpu"}; }
    Result<std::unique_ptr<BackendSession>> open(const OpenRequest& request) noexcept override
    {
        try {
            return open_session(request);
        } catch (const std::bad_alloc&) {
            return make_error(ErrorCode::AllocationFailed,
                              "model '" + request.model_path + "': out of memory opening it");
        } catch (...) {
            return make_error(ErrorCode::Device, "model '" + request.model_path +
                                                     "': TensorFlow Lite threw opening it");
        }
    }
};

Backend* instance() noexcept
{
    static TfliteBackend backend;
    return &backend;
}

const ModuleEntry kEntry{kModuleAbi, EDGETENSOR_VERSION, InferBackend::TfLite, &instance};

} // namespace
} // namespace edgetensor::detail::infer::tflite

extern "C" __attribute__((visibility("default"))) const edgetensor::detail::infer::ModuleEntry*
edgetensor_infer_module_v1()
{
    return &edgetensor::detail::infer::tflite::kEntry;
}
