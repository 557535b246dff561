// SPDX-License-Identifier: MIT
//
// The ONNX Runtime backend module (edgetensor-infer-onnxruntime.so): links libonnxruntime, is
// loaded by the library on first use, and exports the module entry point.

#include "config.h"
#include "infer/onnxruntime/ort_api.hpp"
#include "infer/onnxruntime/ort_session.hpp"

#include <new>

namespace edgetensor::detail::infer::ort
{
namespace
{

class OrtBackend final : public Backend
{
public:
    InferBackend kind() const noexcept override { return InferBackend::OnnxRuntime; }

    std::string runtime_version() const override
    {
        const OrtApiBase* base = OrtGetApiBase();
        return base && base->GetVersionString() ? base->GetVersionString() : "unknown";
    }

    std::vector<std::string> execution_providers() const override
    {
        std::vector<std::string> out{"cpu"};
        auto a = api();
        if (!a)
            return out;
        char** names = nullptr;
        int n = 0;
        if (!take((*a)->GetAvailableProviders(&names, &n)).empty())
            return out;
        for (int i = 0; i < n; ++i) {
            std::string s = provider_short_name(names[i]);
            if (s != "cpu")
                out.push_back(std::move(s));
        }
        take((*a)->ReleaseAvailableProviders(names, n));
        return out;
    }

    Result<std::unique_ptr<BackendSession>> open(const OpenRequest& request) noexcept override
    {
        try {
            return open_session(request);
        } catch (const std::bad_alloc&) {
            return make_error(ErrorCode::AllocationFailed,
                              "model '" + request.model_path + "': out of memory opening it");
        } catch (...) {
            return make_error(ErrorCode::Device,
                              "model '" + request.model_path + "': ONNX Runtime threw opening it");
        }
    }
};

Backend* instance() noexcept
{
    static OrtBackend backend;
    return &backend;
}

const ModuleEntry kEntry{kModuleAbi, EDGETENSOR_VERSION, InferBackend::OnnxRuntime, &instance};

} // namespace
} // namespace edgetensor::detail::infer::ort

extern "C" __attribute__((visibility("default"))) const edgetensor::detail::infer::ModuleEntry*
edgetensor_infer_module_v1()
{
    return &edgetensor::detail::infer::ort::kEntry;
}
