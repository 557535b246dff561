// SPDX-License-Identifier: MIT

#include "infer/module_loader.hpp"

#include "config.h"

#include "infer/infer_config.h"
#include "log.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <sys/stat.h>

namespace edgetensor::detail::infer
{
namespace
{

constexpr const char* kCat = "infer";

struct Slot {
    std::mutex lock;
    bool tried = false;
    Backend* backend = nullptr;
    std::string error;
    std::string path;
    std::atomic<Backend*> test_backend{nullptr};
};

std::array<Slot, 3> g_slots;
std::atomic<uint64_t> g_dlopen_calls{0};

Slot* slot_of(InferBackend b) noexcept
{
    const auto i = static_cast<size_t>(b);
    return i > 0 && i < g_slots.size() ? &g_slots[i] : nullptr;
}

const char* dev_package(InferBackend b) noexcept
{
    return b == InferBackend::TfLite ? "libtensorflow-lite-dev" : "libonnxruntime-dev";
}

const char* meson_option(InferBackend b) noexcept
{
    return b == InferBackend::TfLite ? "tflite" : "onnxruntime";
}

} // namespace

const char* runtime_name(InferBackend backend) noexcept
{
    switch (backend) {
    case InferBackend::OnnxRuntime:
        return "ONNX Runtime";
    case InferBackend::TfLite:
        return "TensorFlow Lite";
    case InferBackend::Auto:
        break;
    }
    return "auto";
}

std::string module_file_name(InferBackend backend)
{
    return "edgetensor-infer-" + std::string(infer_backend_name(backend)) + ".so";
}

std::string module_dir()
{
    const char* dir = std::getenv("EDGETENSOR_INFER_MODULE_DIR");
    if (dir && *dir)
        return dir;
    return EDGETENSOR_INFER_MODULE_DIR_DEFAULT;
}

Result<Backend*> load_module(const std::string& path, InferBackend expected)
{
    const char* name = runtime_name(expected);
    struct stat st {
    };
    if (::stat(path.c_str(), &st) != 0)
        return make_error(ErrorCode::Unavailable,
                          std::string("the ") + name + " backend module " + path +
                              " is not there (" + std::strerror(errno) +
                              "): install it beside libedgetensor, or point "
                              "EDGETENSOR_INFER_MODULE_DIR at the directory that holds it");
    g_dlopen_calls.fetch_add(1, std::memory_order_relaxed);
    // Never dlclose()d, even when refused below: a runtime's static constructors may have run.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = ::dlerror();
        return make_error(ErrorCode::Unavailable,
                          std::string(name) + " cannot be loaded: " + (why ? why : path) + " (is " +
                              name +
                              " installed? edgetensor works without it; this "
                              "backend does not)");
    }
    auto entry =
        reinterpret_cast<EdgeTensorInferModuleEntryFn>(::dlsym(handle, kModuleEntrySymbol));
    if (!entry)
        return make_error(ErrorCode::Unavailable, path +
                                                      " is not an edgetensor inference module: "
                                                      "it lacks " +
                                                      kModuleEntrySymbol);
    const ModuleEntry* e = entry();
    if (!e || e->abi != kModuleAbi || !e->edgetensor_version ||
        std::strcmp(e->edgetensor_version, EDGETENSOR_VERSION) != 0 || !e->instance)
        return make_error(ErrorCode::Unavailable,
                          path + " was built for another edgetensor (module ABI " +
                              std::to_string(e ? e->abi : 0) + ", version " +
                              (e && e->edgetensor_version ? e->edgetensor_version : "?") +
                              "; this library: ABI " + std::to_string(kModuleAbi) + ", version " +
                              EDGETENSOR_VERSION + "): install the module of this build");
    if (e->backend != expected)
        return make_error(ErrorCode::Unavailable, path + " is the module of " +
                                                      runtime_name(e->backend) + ", not of " +
                                                      name);
    Backend* b = e->instance();
    if (!b)
        return make_error(ErrorCode::Unavailable,
                          path + " could not start its " + name + " backend");
    return b;
}

Result<Backend*> backend(InferBackend b)
{
    Slot* s = slot_of(b);
    if (!s)
        return make_error(ErrorCode::InvalidArgument,
                          "no backend is named 'auto': pick one with infer_backend_for_file()");
    if (Backend* t = s->test_backend.load(std::memory_order_acquire))
        return t;
    if (!infer_backend_built(b))
        return make_error(ErrorCode::NotSupported,
                          std::string("this edgetensor was built without ") + runtime_name(b) +
                              " (" + dev_package(b) +
                              " was not found when it was configured); rebuild with it "
                              "installed (meson setup -D" +
                              meson_option(b) + "=enabled)");
    std::lock_guard<std::mutex> g(s->lock);
    if (!s->tried) {
        s->tried = true;
        s->path = module_dir() + "/" + module_file_name(b);
        auto r = load_module(s->path, b);
        if (r) {
            s->backend = *r;
            ET_LOG_INFO(kCat, "%s backend: %s (runtime %s)", runtime_name(b), s->path.c_str(),
                        s->backend->runtime_version().c_str());
        } else {
            s->error = r.error().message();
            ET_LOG_INFO(kCat, "%s backend unavailable: %s", runtime_name(b), s->error.c_str());
        }
    }
    if (!s->backend)
        return make_error(ErrorCode::Unavailable, s->error);
    return s->backend;
}

std::string loaded_module_path(InferBackend b)
{
    Slot* s = slot_of(b);
    if (!s || s->test_backend.load(std::memory_order_acquire))
        return {};
    std::lock_guard<std::mutex> g(s->lock);
    return s->backend ? s->path : std::string();
}

void set_backend_for_testing(InferBackend b, Backend* backend) noexcept
{
    if (Slot* s = slot_of(b))
        s->test_backend.store(backend, std::memory_order_release);
}

uint64_t module_dlopen_calls() noexcept
{
    return g_dlopen_calls.load(std::memory_order_relaxed);
}

} // namespace edgetensor::detail::infer

namespace edgetensor
{

bool infer_backend_built(InferBackend backend) noexcept
{
    switch (backend) {
    case InferBackend::OnnxRuntime:
        return EDGETENSOR_INFER_HAVE_ONNXRUNTIME != 0;
    case InferBackend::TfLite:
        return EDGETENSOR_INFER_HAVE_TFLITE != 0;
    case InferBackend::Auto:
        return EDGETENSOR_INFER_HAVE_ONNXRUNTIME != 0 || EDGETENSOR_INFER_HAVE_TFLITE != 0;
    }
    return false;
}

Result<InferRuntimeInfo> infer_runtime_info(InferBackend backend)
{
    auto b = detail::infer::backend(backend);
    if (!b)
        return unexpected(std::move(b).error());
    InferRuntimeInfo info;
    info.backend = backend;
    info.module = detail::infer::loaded_module_path(backend);
    // Nothing a module returns may throw into a caller: std::string/vector copies can only
    // throw bad_alloc, which is caught here.
    try {
        info.runtime_version = (*b)->runtime_version();
        info.execution_providers = (*b)->execution_providers();
    } catch (...) {
        return make_error(ErrorCode::AllocationFailed, "out of memory describing the runtime");
    }
    return info;
}

} // namespace edgetensor
