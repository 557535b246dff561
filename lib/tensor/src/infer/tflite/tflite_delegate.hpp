// SPDX-License-Identifier: MIT
//
// A TensorFlow Lite external delegate library, loaded by us rather than through TensorFlow
// Lite's external-delegate wrapper: the same ABI (tflite_plugin_create_delegate /
// tflite_plugin_destroy_delegate), but errors that name the library and the loader's or the
// delegate's words, and the delegate itself (not a wrapper) applied to the interpreter, so its
// buffer handles (edgetensor/infer_delegate.h) are its own.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/infer_delegate.h"

#include <tensorflow/lite/core/c/common.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::detail::infer::tflite
{

class ExternalDelegate
{
public:
    /// dlopen()s `library` and creates its delegate with `options`. Unavailable when the
    /// library cannot be loaded or lacks the entry points, Device when creation fails (with
    /// what the delegate reported). Messages name the model, the library and the cause.
    static Result<std::unique_ptr<ExternalDelegate>>
    load(const std::string& library,
         const std::vector<std::pair<std::string, std::string>>& options,
         const std::string& model_path);

    ~ExternalDelegate();
    ExternalDelegate(const ExternalDelegate&) = delete;
    ExternalDelegate& operator=(const ExternalDelegate&) = delete;

    TfLiteDelegate* get() const noexcept { return delegate_; }
    const std::string& library() const noexcept { return library_; }
    /// True when the library exports EDGETENSOR_DELEGATE_IMPORT_DMABUF.
    bool takes_dmabuf() const noexcept { return import_ != nullptr; }
    /// The delegate's buffer handle for `buffer`, or -1 with its reason in `why`.
    int import_dmabuf(int tensor_index, const EdgeTensorDelegateBuffer& buffer,
                      std::string& why) const noexcept;

private:
    ExternalDelegate() = default;
    using CreateFn = TfLiteDelegate* (*)(char**, char**, size_t, void (*)(const char*));
    using DestroyFn = void (*)(TfLiteDelegate*);

    std::string library_;
    CreateFn create_ = nullptr;
    DestroyFn destroy_ = nullptr;
    EdgeTensorDelegateImportDmabuf import_ = nullptr;
    TfLiteDelegate* delegate_ = nullptr;
};

} // namespace edgetensor::detail::infer::tflite
