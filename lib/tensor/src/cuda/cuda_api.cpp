// SPDX-License-Identifier: MIT

#include "cuda/cuda_api.hpp"

#include "log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace edgetensor::detail::cuda
{
namespace
{

constexpr const char* kCat = "cuda";

// Newest first: a process gets the runtime its CUDA consumers most likely use. The bare name
// is the toolkit's development link, last because it is absent where only the runtime is.
constexpr const char* kDefaultLibraries[] = {"libcudart.so.13", "libcudart.so.12",
                                             "libcudart.so.11.0", "libcudart.so"};

Api g_api;
CudaInfo g_info;
std::once_flag g_once;
std::string g_error; // empty on success; written once under g_once
std::atomic<uint64_t> g_dlopen_calls{0};

void* open_library(const char* name, std::string& why)
{
    g_dlopen_calls.fetch_add(1, std::memory_order_relaxed);
    // Never dlclose()d: the runtime keeps threads and atexit handlers of its own.
    void* h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = ::dlerror();
        why += std::string(why.empty() ? "" : "; ") + (e ? e : name);
    }
    return h;
}

std::string load()
{
    const char* named = std::getenv("EDGETENSOR_CUDART");
    std::vector<const char*> names;
    if (named && *named)
        names.push_back(named);
    else
        names.assign(std::begin(kDefaultLibraries), std::end(kDefaultLibraries));

    void* lib = nullptr;
    std::string why;
    for (const char* n : names) {
        lib = open_library(n, why);
        if (lib) {
            g_info.library = n;
            break;
        }
    }
    if (!lib) {
        if (named && *named)
            return std::string("cannot load the CUDA runtime EDGETENSOR_CUDART=") + named + " (" +
                   why + ")";
        return "no CUDA runtime (libcudart.so.13/.12/.11.0 or libcudart.so) can be loaded: " + why +
               "; install the CUDA runtime or point EDGETENSOR_CUDART at libcudart";
    }
#define ET_CUDA_RESOLVE(ret, name, args)                                                           \
    g_api.name = reinterpret_cast<ret(*) args>(::dlsym(lib, #name));                               \
    if (!g_api.name)                                                                               \
        return g_info.library + " is not a usable CUDA runtime: it lacks " #name;
    ET_CUDA_FUNCS(ET_CUDA_RESOLVE)
#undef ET_CUDA_RESOLVE
    g_api.cudaRuntimeGetVersion =
        reinterpret_cast<cudaError_t (*)(int*)>(::dlsym(lib, "cudaRuntimeGetVersion"));

    int count = 0;
    const cudaError_t e = g_api.cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return g_info.library +
               " loaded but no CUDA device answers: cudaGetDeviceCount failed with " +
               error_text(g_api, e);
    if (count <= 0)
        return g_info.library + " loaded but cudaGetDeviceCount reports no CUDA device";
    g_info.device_count = count;
    if (g_api.cudaRuntimeGetVersion) {
        int v = 0;
        if (g_api.cudaRuntimeGetVersion(&v) == cudaSuccess)
            g_info.runtime_version = v;
    }
    return {};
}

} // namespace

Result<const Api*> api()
{
    std::call_once(g_once, [] {
        g_error = load();
        if (g_error.empty())
            ET_LOG_INFO(kCat, "CUDA runtime %s (version %d), %d device(s)", g_info.library.c_str(),
                        g_info.runtime_version, g_info.device_count);
        else
            ET_LOG_INFO(kCat, "CUDA unavailable: %s", g_error.c_str());
    });
    if (!g_error.empty())
        return make_error(ErrorCode::Unavailable, g_error);
    return &g_api;
}

const CudaInfo& info()
{
    return g_info;
}

std::string error_text(const Api& a, cudaError_t e)
{
    const char* name = a.cudaGetErrorName ? a.cudaGetErrorName(e) : nullptr;
    const char* text = a.cudaGetErrorString ? a.cudaGetErrorString(e) : nullptr;
    std::string out = name ? name : "cudaError " + std::to_string(e);
    if (text && *text)
        out += std::string(" (") + text + ")";
    return out;
}

Unexpected call_failed(const Api& a, std::string_view what, const char* call, cudaError_t e)
{
    // cudaErrorMemoryAllocation and cudaErrorNotSupported have codes of their own; any other
    // CUDA failure is the runtime's (Io would promise an errno there is not).
    const ErrorCode code = e == 2     ? ErrorCode::AllocationFailed
                           : e == 801 ? ErrorCode::NotSupported
                                      : ErrorCode::Device;
    return make_error(code, std::string(what) + ": " + call + " failed with " + error_text(a, e));
}

uint64_t dlopen_calls() noexcept
{
    return g_dlopen_calls.load(std::memory_order_relaxed);
}

} // namespace edgetensor::detail::cuda

namespace edgetensor
{

bool cuda_available() noexcept
{
    return bool(detail::cuda::api());
}

Result<CudaInfo> cuda_info()
{
    auto a = detail::cuda::api();
    if (!a)
        return unexpected(std::move(a).error());
    return detail::cuda::info();
}

} // namespace edgetensor
