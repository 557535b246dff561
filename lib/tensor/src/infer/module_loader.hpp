// SPDX-License-Identifier: MIT
//
// Finding and loading backend modules. Each backend is a module of its own, dlopen()ed on the
// first call that needs it, so the library carries no runtime in its NEEDED entries; a module
// whose runtime is absent fails to load with the loader's own words, which name the file.

#pragma once

#include "infer/backend.hpp"

#include <string>

namespace edgetensor::detail::infer
{

/// "ONNX Runtime", "TensorFlow Lite".
const char* runtime_name(InferBackend backend) noexcept;
/// The module's file name: "edgetensor-infer-onnxruntime.so", "edgetensor-infer-tflite.so".
std::string module_file_name(InferBackend backend);
/// Where modules are looked for: EDGETENSOR_INFER_MODULE_DIR when set (then only there), else
/// the directory they are installed in.
std::string module_dir();

/// The backend, its module loaded on the first call of the process. The answer (a backend or
/// why there is none) is kept: a module is never looked for twice. NotSupported when this
/// build lacks the backend, Unavailable when the module or its runtime cannot be loaded.
Result<Backend*> backend(InferBackend backend);
/// The path of the module backend() loaded (empty for a test backend or before loading).
std::string loaded_module_path(InferBackend backend);

/// Loads and checks one module file (entry point, ABI, version, backend); uncached.
Result<Backend*> load_module(const std::string& path, InferBackend expected);

/// Tests: backend(b) returns `backend` from now on, built or not (nullptr: back to modules).
void set_backend_for_testing(InferBackend b, Backend* backend) noexcept;
/// How many times a module was dlopen()ed in this process.
uint64_t module_dlopen_calls() noexcept;

} // namespace edgetensor::detail::infer
