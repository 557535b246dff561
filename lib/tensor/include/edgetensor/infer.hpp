// SPDX-License-Identifier: MIT
//
// Inference on edgetensor tensors: ONNX Runtime and TensorFlow Lite behind one small interface.
//
// A model is opened into an InferSession, which describes its inputs and outputs (names,
// dtypes, shapes with dynamic dimensions, layout) and runs it on TensorDyn inputs. Inputs are
// bound where they lie: the runtime reads the tensor's own mapping (ONNX Runtime values over it,
// TensorFlow Lite custom allocations), and a DMA-BUF tensor's fd is offered to a TensorFlow Lite
// delegate that can take it (edgetensor/infer_delegate.h). Where a runtime cannot read the
// tensor in place, the bytes are copied, counted in InferStats and warned about once per input.
// Outputs come back as TensorDyn in our memory, with the model's names.
//
// Each backend lives in a module of its own, loaded on first use, so the library (and anything
// linking it) loads and runs without either runtime; a backend this build lacks, or whose
// runtime is absent at run time, is an error value that says which and why. docs/inference.md
// has the design, the zero-copy rules, the delegate convention and every error.
//
// Nothing here throws; every fallible call returns Result<T>.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/tensor_dyn.hpp"
#include "edgetensor/types.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace edgetensor
{

/// Which runtime runs a model. Auto picks by the model file (infer_backend_for_file).
enum class InferBackend : uint32_t {
    Auto = 0,
    OnnxRuntime = 1,
    TfLite = 2,
};

/// "auto", "onnxruntime", "tflite".
std::string_view infer_backend_name(InferBackend backend) noexcept;
/// The inverse of infer_backend_name(); InvalidArgument listing the names otherwise.
Result<InferBackend> infer_backend_from_name(std::string_view name);

/// True when this build of the library has the backend: its runtime's development package was
/// found when the library was configured. For Auto: true when either is built. Says nothing
/// about run time (see infer_runtime_info()).
bool infer_backend_built(InferBackend backend) noexcept;

/// What a loaded backend found at run time.
struct InferRuntimeInfo {
    InferBackend backend = InferBackend::Auto;
    /// The backend module that was loaded (a path).
    std::string module;
    /// The runtime's own version string ("1.21.0", "2.14.1").
    std::string runtime_version;
    /// What execution_provider accepts in this process, "cpu" first. ONNX Runtime: the
    /// providers its library reports present ("cpu", "dnnl", ...). TensorFlow Lite: "cpu" (a
    /// delegate is chosen with InferOptions::delegate instead).
    std::vector<std::string> execution_providers;
};

/// Loads the backend (once per process; later calls reuse the answer) and says what it found.
/// Errors: NotSupported when this build lacks the backend ("built without ONNX Runtime"),
/// Unavailable when its module or its runtime cannot be loaded (the loader's own words, which
/// name the missing file), InvalidArgument for Auto.
Result<InferRuntimeInfo> infer_runtime_info(InferBackend backend);

/// The backend that reads `model_path`, as InferBackend::Auto decides it: a TensorFlow Lite
/// flatbuffer (identifier "TFL3" at byte 4) or the extension ".tflite" -> TfLite; the extension
/// ".onnx", or a protobuf starting with ONNX's first field (ir_version) -> OnnxRuntime.
/// Io (with errno) when the file cannot be read, InvalidArgument when it is empty or nothing
/// tells; every message names the file.
Result<InferBackend> infer_backend_for_file(std::string_view model_path);

/// Where the channels are in an image-like tensor, as the shape shows it.
enum class InferLayout : uint32_t {
    /// Not image-like (rank below 3 or above 4), or the shape does not tell.
    Unknown = 0,
    /// NHWC / HWC: the last dimension is the channels.
    ChannelsLast = 1,
    /// NCHW / CHW: the dimension after the batch is the channels.
    ChannelsFirst = 2,
};

/// "unknown", "channels-last", "channels-first".
std::string_view infer_layout_name(InferLayout layout) noexcept;

/// Affine quantisation of a tensor (TensorFlow Lite's per-tensor parameters):
/// real = scale * (q - zero_point).
struct InferQuantization {
    float scale = 1.0f;
    int64_t zero_point = 0;
};

/// One input or output of a model.
struct InferTensorInfo {
    std::string name;
    DType dtype = DType::F32;
    /// Outermost first; -1 marks a dynamic dimension (any size at run time).
    std::vector<int64_t> shape;
    /// ONNX symbolic dimension names ("batch", "N"), one per dimension, empty where the model
    /// names none (always empty strings for TensorFlow Lite).
    std::vector<std::string> dim_names;
    /// From the shape (rank 3 or 4): the last dimension 1, 3 or 4 and the channel-first one
    /// (rank - 3) not -> ChannelsLast, the reverse -> ChannelsFirst; both -> the runtime's
    /// convention for image operators (TensorFlow Lite: ChannelsLast, ONNX: ChannelsFirst);
    /// neither -> Unknown (a dynamic dimension counts as none of 1, 3, 4).
    InferLayout layout = InferLayout::Unknown;
    /// TensorFlow Lite's per-tensor quantisation, when the model gives one.
    std::optional<InferQuantization> quantization;

    /// True when any dimension is -1.
    bool is_dynamic() const noexcept;
};

/// "[1, 3, 224, 224]"; dynamic dimensions print as "?" (or their ONNX name when given).
std::string infer_shape_string(std::span<const int64_t> shape,
                               std::span<const std::string> dim_names = {});

/// How a model is opened.
struct InferOptions {
    InferBackend backend = InferBackend::Auto;
    /// ONNX Runtime only: "cpu" (the default; empty means the same) or a provider that
    /// infer_runtime_info() lists ("dnnl", "xnnpack", ...). InvalidArgument with TfLite.
    std::string execution_provider = "cpu";
    /// TensorFlow Lite only: an external delegate library (a path or a soname), loaded the way
    /// TensorFlow Lite's external delegates are (tflite_plugin_create_delegate). Empty: none.
    std::string delegate;
    /// Options for the delegate: "key=value;key=value" (spaces around keys and values are
    /// trimmed; a value may be empty). InvalidArgument when malformed or without a delegate.
    std::string delegate_options;
    /// Threads the runtime may use for one run; 0 = the runtime's default.
    int threads = 0;
    /// Where run() allocates outputs (TensorDyn::create with this memory).
    TensorMemory output_memory = TensorMemory::Mem;
};

/// What a buffer needs for the runtime to read it in place (what a pool that feeds the model
/// allocates): its first byte aligned to `alignment`, and `trailing_bytes` of the buffer (or of
/// the mapped page) readable after the tensor's last byte. ONNX Runtime: 1 and 0. TensorFlow
/// Lite: 64 and 64 (its arena's alignment and padding, which XNNPACK's vector loads read into).
/// A contiguous input that meets them is read in place; one that does not is copied (counted).
struct InferBufferRules {
    size_t alignment = 1;
    size_t trailing_bytes = 0;
};

/// How one input reached the runtime in the last run.
enum class InferBinding : uint32_t {
    /// No run yet.
    None = 0,
    /// The runtime read the tensor's own mapping (no copy).
    InPlace = 1,
    /// The bytes were copied into a buffer of the session first (counted in InferStats).
    Copied = 2,
    /// The tensor's DMA-BUF fd was handed to the TensorFlow Lite delegate, which read it itself.
    DmaBuf = 3,
};

/// "none", "in-place", "copied", "dmabuf".
std::string_view infer_binding_name(InferBinding binding) noexcept;

struct InferInputBinding {
    InferBinding kind = InferBinding::None;
    /// The data pointer the runtime was given: inside the tensor's mapping for InPlace, the
    /// session's buffer for Copied, null for DmaBuf and None. Valid only as an address to
    /// compare; the memory may be gone.
    const void* runtime_address = nullptr;
    /// DmaBuf: the delegate's buffer handle (TfLiteBufferHandle); -1 otherwise.
    int buffer_handle = -1;
    /// Copied: why the runtime could not read the tensor where it lies.
    std::string reason;
};

/// Counters since the session was opened. `copies` is every copy of tensor bytes the session
/// made on the way in or out; a zero-copy pipeline keeps it at 0.
struct InferStats {
    uint64_t runs = 0;
    uint64_t copies = 0;
    uint64_t input_copies = 0;
    uint64_t output_copies = 0;
    /// Inputs the runtime read where they lie (InferBinding::InPlace).
    uint64_t inputs_in_place = 0;
    /// Inputs handed to a delegate as a DMA-BUF (InferBinding::DmaBuf).
    uint64_t dmabuf_handoffs = 0;
};

/// One output of a run: the model's name for it, its shape in this run and its tensor (our
/// memory). A dynamic output may be empty in a run (a dimension of 0: no detections); a tensor
/// cannot have a 0 dimension, so `tensor` is then empty and `shape` tells.
struct InferOutput {
    std::string name;
    Shape shape;
    TensorDyn tensor;
};

namespace detail::infer
{
class SessionState;
}

/// An opened model. Move-only; a moved-from session is closed (every call but is_open() on it
/// returns an error or an empty answer). One run at a time: concurrent run() calls wait for each
/// other; stats() and input_binding() may be read from any thread.
class InferSession
{
public:
    InferSession() noexcept;
    ~InferSession();
    InferSession(InferSession&&) noexcept;
    InferSession& operator=(InferSession&&) noexcept;
    InferSession(const InferSession&) = delete;
    InferSession& operator=(const InferSession&) = delete;

    /// Opens `model_path` with the backend of `options` (Auto: infer_backend_for_file()).
    /// Errors name the file and the cause: Io when it cannot be read; NotSupported when the
    /// backend is not built; Unavailable when its runtime or the delegate library cannot be
    /// loaded; InvalidArgument for a corrupt model, bad options, an execution provider that
    /// is not present, or an input/output of a type edgetensor has no dtype for; Device when
    /// the runtime or the delegate refuses the model.
    static Result<InferSession> open(std::string_view model_path, const InferOptions& options = {});

    bool is_open() const noexcept { return state_ != nullptr; }
    InferBackend backend() const noexcept;
    const std::string& model_path() const noexcept;
    /// What runs the model: "cpu", "dnnl", ... (ONNX Runtime), "cpu" or
    /// "delegate:<library>" (TensorFlow Lite).
    const std::string& execution_provider() const noexcept;
    const std::vector<InferTensorInfo>& inputs() const noexcept;
    const std::vector<InferTensorInfo>& outputs() const noexcept;
    std::optional<size_t> input_index(std::string_view name) const noexcept;
    std::optional<size_t> output_index(std::string_view name) const noexcept;

    /// Would a tensor of `dtype` and `shape` feed input `index`? Everything that can be checked
    /// without running: the dtype (DTypeMismatch), the rank and every static dimension
    /// (InvalidShape); dynamic dimensions take any size. The tensor may omit or add leading
    /// dimensions of 1 ([H, W, C] feeds [1, H, W, C]). Messages name the model, the input and
    /// both dtypes or shapes.
    Result<void> check_input(size_t index, DType dtype, const Shape& shape) const;

    /// Runs the model on `inputs` (one per model input, in inputs() order; each passes
    /// check_input()). Returns the outputs in outputs() order, allocated in
    /// InferOptions::output_memory. Outputs with static shapes are written by the runtime
    /// straight into those tensors; an output whose shape is only known after the run is
    /// copied into one (an output copy).
    Result<std::vector<InferOutput>> run(std::span<const TensorDyn> inputs);

    /// run() into caller-provided outputs, one per model output: an empty TensorDyn is
    /// allocated as run() does and replaced (it stays empty when the output is empty in this
    /// run); a valid one must have the output's dtype and a shape that fits its static shape (a
    /// pooled tensor, any memory; dynamic outputs take an empty one). A tensor the runtime
    /// cannot write in place (not contiguous, or misaligned for TensorFlow Lite) is written
    /// through a copy (an output copy).
    Result<void> run_into(std::span<const TensorDyn> inputs, std::span<TensorDyn> outputs);

    /// What an input buffer needs to be read in place (alignment, spare bytes after it).
    InferBufferRules input_rules() const noexcept;

    InferStats stats() const noexcept;
    /// How input `index` reached the runtime in the last run (kind None before the first).
    InferInputBinding input_binding(size_t index) const;

private:
    explicit InferSession(std::unique_ptr<detail::infer::SessionState> state) noexcept;
    std::unique_ptr<detail::infer::SessionState> state_;
};

} // namespace edgetensor
