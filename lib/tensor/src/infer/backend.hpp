// SPDX-License-Identifier: MIT
//
// The interface between the library's inference core (InferSession) and a backend module
// (edgetensor-infer-onnxruntime.so, edgetensor-infer-tflite.so). The core validates inputs,
// allocates outputs, counts and warns; a backend opens the model with its runtime, binds what it
// is given and runs. Modules are built from the same tree as the library and refused unless
// their ABI number and edgetensor version match, so C++ types cross this boundary freely;
// exceptions never do (a module catches everything its runtime may throw).

#pragma once

#include "edgetensor/infer.hpp"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::detail::infer
{

/// Bumped whenever anything in this header changes meaning or layout.
inline constexpr uint32_t kModuleAbi = 1;
/// The C symbol every module exports: `const ModuleEntry* edgetensor_infer_module_v1(void)`.
inline constexpr const char* kModuleEntrySymbol = "edgetensor_infer_module_v1";

/// What a backend needs to open a model. The core has read the file once (it exists and is a
/// regular file) and parsed the delegate options.
struct OpenRequest {
    std::string model_path;
    InferOptions options;
    std::vector<std::pair<std::string, std::string>> delegate_options;
};

/// What the model looks like, as the backend read it.
struct ModelInfo {
    std::vector<InferTensorInfo> inputs;
    std::vector<InferTensorInfo> outputs;
    /// "cpu", "dnnl", "delegate:libfoo.so", ...
    std::string execution_provider;
};

/// One validated input of a run: the caller's tensor (its dtype is the model's; its shape may
/// differ from `shape` in leading 1s only) and the shape the runtime gets (the model's rank,
/// dynamic dimensions resolved).
struct RunInput {
    TensorDyn tensor;
    Shape shape;
};

/// One output of a run. `tensor` is valid when the core allocated it (static shape) or the
/// caller gave it: its dtype is the model's and its shape the output's. Invalid when the
/// output's shape is dynamic: the backend allocates it with RunContext::allocate after the run.
struct RunOutput {
    TensorDyn tensor;
    /// The output's shape in this run: set by the core for static outputs, by the backend for
    /// the ones it allocates. A dynamic output may come back empty (a 0 dimension: no
    /// detections); the backend then sets the shape and leaves `tensor` invalid.
    Shape shape;
};

/// Everything a backend's run() reads and reports.
struct RunContext {
    std::span<const RunInput> inputs;
    std::span<RunOutput> outputs;
    /// Allocates an output of a shape known only after the run (in the session's output memory).
    std::function<Result<TensorDyn>(DType, const Shape&, std::string_view name)> allocate;
    /// One per input: how the backend bound it (kind, runtime address, buffer handle, reason).
    std::vector<InferInputBinding> bindings;
    /// Copies of output bytes the backend made (an output shape known only after the run, a
    /// tensor the runtime could not write in place), and why (the first one's reason warns).
    uint64_t output_copies = 0;
    std::string output_copy_reason;
};

class BackendSession
{
public:
    virtual ~BackendSession() = default;
    virtual const ModelInfo& info() const noexcept = 0;
    /// What an input needs to be bound in place (the HostRules its run() applies).
    virtual InferBufferRules input_rules() const noexcept = 0;
    /// Binds ctx.inputs, runs, fills ctx.outputs; never throws. Errors name the model.
    virtual Result<void> run(RunContext& ctx) noexcept = 0;
};

class Backend
{
public:
    virtual ~Backend() = default;
    virtual InferBackend kind() const noexcept = 0;
    virtual std::string runtime_version() const = 0;
    /// "cpu" first, then whatever else the runtime offers in this process.
    virtual std::vector<std::string> execution_providers() const = 0;
    /// Opens the model; never throws. Errors name the model and the runtime's own words.
    virtual Result<std::unique_ptr<BackendSession>> open(const OpenRequest& request) noexcept = 0;
};

/// What kModuleEntrySymbol returns. The backend lives as long as the process (modules are
/// never unloaded: runtimes keep threads and atexit handlers of their own).
struct ModuleEntry {
    uint32_t abi;
    const char* edgetensor_version;
    InferBackend backend;
    Backend* (*instance)() noexcept;
};

} // namespace edgetensor::detail::infer

extern "C" {
using EdgeTensorInferModuleEntryFn = const edgetensor::detail::infer::ModuleEntry* (*)();
}
