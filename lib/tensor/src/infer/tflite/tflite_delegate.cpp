// SPDX-License-Identifier: MIT

#include "infer/tflite/tflite_delegate.hpp"

#include "log.hpp"

#include <dlfcn.h>

namespace edgetensor::detail::infer::tflite
{
namespace
{

// tflite_plugin_create_delegate's error callback takes no user data: what a delegate reports
// while we create it goes to the creating thread's collector.
thread_local std::string* t_reported = nullptr;

void collect_report(const char* message)
{
    if (t_reported && message) {
        if (!t_reported->empty())
            *t_reported += "; ";
        *t_reported += message;
    }
    ET_LOG_WARNING("tflite", "delegate: %s", message ? message : "");
}

} // namespace

Result<std::unique_ptr<ExternalDelegate>>
ExternalDelegate::load(const std::string& library,
                       const std::vector<std::pair<std::string, std::string>>& options,
                       const std::string& model_path)
{
    const std::string where = "model '" + model_path + "': delegate '" + library + "'";
    // Never dlclose()d: delegate libraries (NPU drivers) keep threads and handlers of their own.
    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* e = ::dlerror();
        return make_error(ErrorCode::Unavailable,
                          where + " cannot be loaded: " + (e ? e : "dlopen failed"));
    }
    std::unique_ptr<ExternalDelegate> d(new ExternalDelegate());
    d->library_ = library;
    d->create_ = reinterpret_cast<CreateFn>(::dlsym(handle, "tflite_plugin_create_delegate"));
    d->destroy_ = reinterpret_cast<DestroyFn>(::dlsym(handle, "tflite_plugin_destroy_delegate"));
    if (!d->create_ || !d->destroy_)
        return make_error(
            ErrorCode::Unavailable,
            where + " is not a TensorFlow Lite external delegate: it lacks " +
                (d->create_ ? "tflite_plugin_destroy_delegate" : "tflite_plugin_create_delegate"));
    d->import_ = reinterpret_cast<EdgeTensorDelegateImportDmabuf>(
        ::dlsym(handle, EDGETENSOR_DELEGATE_IMPORT_DMABUF));

    std::vector<char*> keys;
    std::vector<char*> values;
    for (const auto& kv : options) {
        keys.push_back(const_cast<char*>(kv.first.c_str()));
        values.push_back(const_cast<char*>(kv.second.c_str()));
    }
    std::string reported;
    t_reported = &reported;
    d->delegate_ = d->create_(keys.data(), values.data(), keys.size(), collect_report);
    t_reported = nullptr;
    if (!d->delegate_)
        return make_error(ErrorCode::Device,
                          where + " refused to start" +
                              (options.empty() ? std::string() : " with its options") + ": " +
                              (reported.empty() ? "it reported nothing" : reported));
    ET_LOG_INFO("tflite", "%s loaded%s", where.c_str(),
                d->import_ ? " (takes DMA-BUF inputs)" : "");
    return d;
}

ExternalDelegate::~ExternalDelegate()
{
    if (delegate_)
        destroy_(delegate_);
}

int ExternalDelegate::import_dmabuf(int tensor_index, const EdgeTensorDelegateBuffer& buffer,
                                    std::string& why) const noexcept
{
    if (!import_)
        return -1;
    char text[256] = {};
    const int h = import_(delegate_, tensor_index, &buffer, text, sizeof(text));
    text[sizeof(text) - 1] = '\0';
    if (h < 0) {
        try {
            why = text[0] ? text : "the delegate gave no reason";
        } catch (...) {
        }
    }
    return h < 0 ? -1 : h;
}

} // namespace edgetensor::detail::infer::tflite
