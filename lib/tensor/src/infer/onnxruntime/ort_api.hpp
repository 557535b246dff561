// SPDX-License-Identifier: MIT
//
// ONNX Runtime through its C API (no exceptions, errors as OrtStatus): the API table and the
// process's one OrtEnv, owners for its objects, and OrtStatus turned into our errors.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/types.hpp"

#include <onnxruntime_c_api.h>

#include <memory>
#include <optional>
#include <string>

namespace edgetensor::detail::infer::ort
{

/// The API table of the loaded runtime, or why there is none (a runtime older than the
/// headers this module was built with).
Result<const OrtApi*> api();
/// The process's one environment (created on first use with a logger that forwards into the
/// library's log, category "onnxruntime"; never released).
Result<OrtEnv*> env();

/// The message of `status` (which it releases); empty when `status` is null (success).
std::string take(OrtStatus* status);

struct Release {
    void operator()(OrtSession* p) const noexcept;
    void operator()(OrtSessionOptions* p) const noexcept;
    void operator()(OrtValue* p) const noexcept;
    void operator()(OrtIoBinding* p) const noexcept;
    void operator()(OrtMemoryInfo* p) const noexcept;
    void operator()(OrtTypeInfo* p) const noexcept;
    void operator()(OrtTensorTypeAndShapeInfo* p) const noexcept;
    void operator()(OrtDnnlProviderOptions* p) const noexcept;
};
template <typename T> using Ptr = std::unique_ptr<T, Release>;

/// ONNX element type <-> DType; nullopt for types edgetensor has no dtype for.
std::optional<DType> dtype_of(ONNXTensorElementDataType t) noexcept;
ONNXTensorElementDataType onnx_type_of(DType d) noexcept;
/// "bool", "string", "bfloat16", ... for error messages.
const char* onnx_type_name(ONNXTensorElementDataType t) noexcept;

/// "cpu", "dnnl", ... from ONNX Runtime's "CPUExecutionProvider", "DnnlExecutionProvider".
std::string provider_short_name(const char* ort_name);

} // namespace edgetensor::detail::infer::ort
