// SPDX-License-Identifier: MIT
//
// Backend modules that are wrong in one way each, for the module loader's tests (built several
// times with different defines): no entry point (ET_FAKE_NO_ENTRY), another ABI (ET_FAKE_ABI),
// another backend (ET_FAKE_BACKEND), a runtime that is not there at run time
// (ET_FAKE_NEEDS_RUNTIME: linked against a library the test hides), or none (a good module).

#include "config.h"
#include "infer/backend.hpp"

#ifndef ET_FAKE_ABI
#define ET_FAKE_ABI edgetensor::detail::infer::kModuleAbi
#endif
#ifndef ET_FAKE_BACKEND
#define ET_FAKE_BACKEND OnnxRuntime
#endif

#ifdef ET_FAKE_NEEDS_RUNTIME
extern "C" int et_infer_absent_runtime_version(void);
#endif

namespace
{

using namespace edgetensor;
using namespace edgetensor::detail::infer;

class FakeModuleBackend final : public Backend
{
public:
    InferBackend kind() const noexcept override { return InferBackend::ET_FAKE_BACKEND; }
    std::string runtime_version() const override
    {
#ifdef ET_FAKE_NEEDS_RUNTIME
        return std::to_string(et_infer_absent_runtime_version());
#else
        return "fake-module";
#endif
    }
    std::vector<std::string> execution_providers() const override
    {
        return {"cpu"};
    }
    Result<std::unique_ptr<BackendSession>> open(const OpenRequest& request) noexcept override
    {
        return make_error(ErrorCode::NotSupported,
                          "model '" + request.model_path + "': the fake module runs nothing");
    }
};

Backend* instance() noexcept
{
    static FakeModuleBackend b;
    return &b;
}

} // namespace

#ifndef ET_FAKE_NO_ENTRY
extern "C" __attribute__((visibility("default"))) const edgetensor::detail::infer::ModuleEntry*
edgetensor_infer_module_v1()
{
    static const edgetensor::detail::infer::ModuleEntry e{
        ET_FAKE_ABI, EDGETENSOR_VERSION, edgetensor::InferBackend::ET_FAKE_BACKEND, &instance};
    return &e;
}
#else
extern "C" __attribute__((visibility("default"))) int et_fake_module_without_entry()
{
    return instance() != nullptr;
}
#endif
