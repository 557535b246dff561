// SPDX-License-Identifier: MIT

#include "infer/onnxruntime/ort_api.hpp"

#include "log.hpp"

#include <cctype>
#include <cstring>
#include <mutex>

namespace edgetensor::detail::infer::ort
{
namespace
{

const OrtApi* g_api = nullptr;
std::once_flag g_api_once;
OrtEnv* g_env = nullptr;
std::string g_env_error;
std::once_flag g_env_once;

void forward_log(void*, OrtLoggingLevel severity, const char* category, const char*,
                 const char* code_location, const char* message)
{
    LogLevel level = LogLevel::Debug;
    if (severity >= ORT_LOGGING_LEVEL_ERROR)
        level = LogLevel::Error;
    else if (severity == ORT_LOGGING_LEVEL_WARNING)
        level = LogLevel::Warning;
    else if (severity == ORT_LOGGING_LEVEL_INFO)
        level = LogLevel::Info;
    ET_LOG(level, "onnxruntime", "%s (%s, %s)", message ? message : "", category ? category : "",
           code_location ? code_location : "");
}

} // namespace

Result<const OrtApi*> api()
{
    std::call_once(g_api_once, [] {
        const OrtApiBase* base = OrtGetApiBase();
        g_api = base ? base->GetApi(ORT_API_VERSION) : nullptr;
    });
    if (!g_api) {
        const OrtApiBase* base = OrtGetApiBase();
        return make_error(ErrorCode::Unavailable,
                          std::string("ONNX Runtime ") +
                              (base ? base->GetVersionString() : "(unknown version)") +
                              " does not offer API version " + std::to_string(ORT_API_VERSION) +
                              ", which this backend was built for: install the runtime it was "
                              "built against");
    }
    return g_api;
}

Result<OrtEnv*> env()
{
    auto a = api();
    if (!a)
        return unexpected(std::move(a).error());
    std::call_once(g_env_once, [a = *a] {
        g_env_error = take(a->CreateEnvWithCustomLogger(
            forward_log, nullptr, ORT_LOGGING_LEVEL_WARNING, "edgetensor", &g_env));
        if (g_env_error.empty() && !g_env)
            g_env_error = "CreateEnvWithCustomLogger returned no environment";
    });
    if (!g_env)
        return make_error(ErrorCode::Device, "ONNX Runtime cannot start: " + g_env_error);
    return g_env;
}

std::string take(OrtStatus* status)
{
    if (!status)
        return {};
    std::string msg = g_api->GetErrorMessage(status);
    g_api->ReleaseStatus(status);
    return msg.empty() ? "unspecified ONNX Runtime error" : msg;
}

void Release::operator()(OrtSession* p) const noexcept
{
    g_api->ReleaseSession(p);
}
void Release::operator()(OrtSessionOptions* p) const noexcept
{
    g_api->ReleaseSessionOptions(p);
}
void Release::operator()(OrtValue* p) const noexcept
{
    g_api->ReleaseValue(p);
}
void Release::operator()(OrtIoBinding* p) const noexcept
{
    g_api->ReleaseIoBinding(p);
}
void Release::operator()(OrtMemoryInfo* p) const noexcept
{
    g_api->ReleaseMemoryInfo(p);
}
void Release::operator()(OrtTypeInfo* p) const noexcept
{
    g_api->ReleaseTypeInfo(p);
}
void Release::operator()(OrtTensorTypeAndShapeInfo* p) const noexcept
{
    g_api->ReleaseTensorTypeAndShapeInfo(p);
}
void Release::operator()(OrtDnnlProviderOptions* p) const noexcept
{
    g_api->ReleaseDnnlProviderOptions(p);
}

std::optional<DType> dtype_of(ONNXTensorElementDataType t) noexcept
{
    switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8:
        return DType::U8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
        return DType::I8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16:
        return DType::U16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
        return DType::I16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32:
        return DType::U32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
        return DType::I32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64:
        return DType::U64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
        return DType::I64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
        return DType::F16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
        return DType::F32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
        return DType::F64;
    default:
        return std::nullopt;
    }
}

ONNXTensorElementDataType onnx_type_of(DType d) noexcept
{
    switch (d) {
    case DType::U8:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case DType::I8:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case DType::U16:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16;
    case DType::I16:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
    case DType::U32:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32;
    case DType::I32:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case DType::U64:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64;
    case DType::I64:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case DType::F16:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case DType::F32:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case DType::F64:
        return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    }
    return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

const char* onnx_type_name(ONNXTensorElementDataType t) noexcept
{
    switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING:
        return "string";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL:
        return "bool";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64:
        return "complex64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128:
        return "complex128";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
        return "bfloat16";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED:
        return "undefined";
    default:
        return "an 8- or 4-bit type";
    }
}

std::string provider_short_name(const char* ort_name)
{
    std::string s = ort_name ? ort_name : "";
    static constexpr const char kSuffix[] = "ExecutionProvider";
    const size_t n = sizeof(kSuffix) - 1;
    if (s.size() > n && s.compare(s.size() - n, n, kSuffix) == 0)
        s.resize(s.size() - n);
    for (char& c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

} // namespace edgetensor::detail::infer::ort
