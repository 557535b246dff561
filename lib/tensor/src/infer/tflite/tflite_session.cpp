// SPDX-License-Identifier: MIT

#include "infer/tflite/tflite_session.hpp"

#include "infer/host_io.hpp"
#include "infer/tensor_info.hpp"
#include "infer/tflite/tflite_delegate.hpp"
#include "log.hpp"

#include <tensorflow/lite/core/api/error_reporter.h>
#include <tensorflow/lite/interpreter.h>
#include <tensorflow/lite/interpreter_builder.h>
#include <tensorflow/lite/kernels/register.h>
#include <tensorflow/lite/model_builder.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <optional>

namespace edgetensor::detail::infer::tflite
{
namespace
{

// TensorFlow Lite's kDefaultTensorAlignment: what SetCustomAllocationForTensor checks, and the
// padding its arena leaves after every tensor, which XNNPACK's vector loads read into.
constexpr size_t kAlignment = 64;
constexpr HostRules kInputRules{kAlignment, kAlignment};
constexpr HostRules kOutputRules{kAlignment, 0};

/// Collects what TensorFlow Lite reports, for the error that follows.
class Reporter final : public ::tflite::ErrorReporter
{
public:
    using ::tflite::ErrorReporter::Report;
    int Report(const char* format, va_list args) override
    {
        char buf[1024];
        const int n = std::vsnprintf(buf, sizeof(buf), format, args);
        ET_LOG_DEBUG("tflite", "%s", buf);
        try {
            if (text_.size() < 4096)
                text_ += (text_.empty() ? "" : "; ") + std::string(buf);
        } catch (...) {
        }
        return n;
    }
    /// What was reported since the last take(), or `fallback`.
    std::string take(const char* fallback)
    {
        std::string s;
        s.swap(text_);
        return s.empty() ? fallback : s;
    }

private:
    std::string text_;
};

std::optional<DType> dtype_of(TfLiteType t) noexcept
{
    switch (t) {
    case kTfLiteUInt8:
        return DType::U8;
    case kTfLiteInt8:
        return DType::I8;
    case kTfLiteUInt16:
        return DType::U16;
    case kTfLiteInt16:
        return DType::I16;
    case kTfLiteUInt32:
        return DType::U32;
    case kTfLiteInt32:
        return DType::I32;
    case kTfLiteUInt64:
        return DType::U64;
    case kTfLiteInt64:
        return DType::I64;
    case kTfLiteFloat16:
        return DType::F16;
    case kTfLiteFloat32:
        return DType::F32;
    case kTfLiteFloat64:
        return DType::F64;
    default:
        return std::nullopt;
    }
}

std::vector<int64_t> dims_of(const TfLiteIntArray* a)
{
    std::vector<int64_t> out;
    if (a)
        for (int i = 0; i < a->size; ++i)
            out.push_back(a->data[i] < 0 ? -1 : a->data[i]);
    return out;
}

class TfliteSession final : public BackendSession
{
public:
    explicit TfliteSession(std::string path) : path_(std::move(path)) {}

    Result<void> init(const OpenRequest& req);
    const ModelInfo& info() const noexcept override { return info_; }
    InferBufferRules input_rules() const noexcept override
    {
        return {kInputRules.alignment, kInputRules.readable_after};
    }
    Result<void> run(RunContext& ctx) noexcept override;

private:
    Result<void> run_bound(RunContext& ctx, std::vector<int>& handed);
    Result<InferTensorInfo> describe_tensor(int index, const char* what);
    /// True when only nodes of our delegate read tensor `index` (and it is no graph output).
    bool only_delegate_reads(int index) const;
    std::optional<EdgeTensorDelegateBuffer> dmabuf_of(const TensorDyn& t, const Shape& shape) const;
    Unexpected failure(ErrorCode code, const std::string& what)
    {
        return make_error(code, "model '" + path_ + "': " + what + ": " +
                                    reporter_->take("TensorFlow Lite gave no reason"));
    }

    std::string path_;
    ModelInfo info_;
    std::vector<bool> delegate_only_;
    std::vector<bool> declined_logged_;
    std::vector<ScratchBuffer> in_scratch_;
    std::vector<ScratchBuffer> out_scratch_;
    // Destroyed in reverse: the interpreter before the delegate, the resolver, the model and the
    // reporter it points to.
    std::unique_ptr<Reporter> reporter_ = std::make_unique<Reporter>();
    std::unique_ptr<::tflite::FlatBufferModel> model_;
    std::unique_ptr<::tflite::ops::builtin::BuiltinOpResolver> resolver_;
    std::unique_ptr<ExternalDelegate> delegate_;
    std::unique_ptr<::tflite::Interpreter> interp_;
};

Result<InferTensorInfo> TfliteSession::describe_tensor(int index, const char* what)
{
    const TfLiteTensor* t = interp_->tensor(index);
    InferTensorInfo info;
    info.name = t && t->name ? t->name : "";
    if (!t)
        return make_error(ErrorCode::InvalidArgument, "model '" + path_ + "': " + what +
                                                          " tensor " + std::to_string(index) +
                                                          " does not exist");
    auto dt = dtype_of(t->type);
    if (!dt)
        return make_error(ErrorCode::InvalidArgument,
                          "model '" + path_ + "': " + what + " '" + info.name + "' has the type " +
                              TfLiteTypeGetName(t->type) + ", which edgetensor has no dtype for");
    info.dtype = *dt;
    info.shape = t->dims_signature && t->dims_signature->size > 0 ? dims_of(t->dims_signature)
                                                                  : dims_of(t->dims);
    info.dim_names.assign(info.shape.size(), std::string());
    info.layout = guess_layout(info.shape, InferBackend::TfLite);
    if (t->params.scale != 0.0f)
        info.quantization = InferQuantization{t->params.scale, t->params.zero_point};
    return info;
}

bool TfliteSession::only_delegate_reads(int index) const
{
    if (!delegate_)
        return false;
    for (int o : interp_->outputs())
        if (o == index)
            return false;
    bool read = false;
    for (int n : interp_->execution_plan()) {
        const auto* nr = interp_->node_and_registration(n);
        if (!nr)
            return false;
        const TfLiteIntArray* in = nr->first.inputs;
        for (int k = 0; in && k < in->size; ++k) {
            if (in->data[k] != index)
                continue;
            if (nr->first.delegate != delegate_->get())
                return false;
            read = true;
        }
    }
    return read;
}

std::optional<EdgeTensorDelegateBuffer> TfliteSession::dmabuf_of(const TensorDyn& t,
                                                                 const Shape& shape) const
{
    if (t.memory() != TensorMemory::Dma || t.fd() < 0 || t.plane_count() != 1 ||
        !t.is_contiguous() || shape.size() > EDGETENSOR_DESC_MAX_NDIM)
        return std::nullopt;
    EdgeTensorDelegateBuffer b{};
    b.version = EDGETENSOR_DELEGATE_BUFFER_VERSION;
    b.offset = t.offset();
    b.size = t.size();
    EdgeTensorDesc& d = b.desc;
    d.version = EDGETENSOR_DESC_VERSION;
    d.kind = EDGETENSOR_KIND_DMABUF;
    d.handle = t.fd();
    d.ptr = nullptr;
    d.ndim = uint32_t(shape.size());
    d.dtype = static_cast<uint32_t>(t.dtype());
    int64_t stride = int64_t(dtype_size(t.dtype()));
    for (size_t i = shape.size(); i-- > 0;) {
        d.shape[i] = shape[i];
        d.strides[i] = stride;
        stride *= int64_t(shape[i]);
    }
    if (t.is_image()) {
        d.format = static_cast<uint32_t>(t.format());
        d.fourcc = to_drm_fourcc(t.format());
    }
    d.colorimetry = t.colorimetry().pack();
    d.capacity = t.capacity_bytes();
    return b;
}

Result<void> TfliteSession::init(const OpenRequest& req)
{
    model_ =
        ::tflite::FlatBufferModel::VerifyAndBuildFromFile(path_.c_str(), nullptr, reporter_.get());
    if (!model_)
        return failure(ErrorCode::InvalidArgument, "it is not a valid TensorFlow Lite model");
    resolver_ = std::make_unique<::tflite::ops::builtin::BuiltinOpResolver>();
    ::tflite::InterpreterBuilder builder(*model_, *resolver_);
    if (req.options.threads > 0)
        builder.SetNumThreads(req.options.threads);
    if (builder(&interp_) != kTfLiteOk || !interp_)
        return failure(ErrorCode::InvalidArgument, "TensorFlow Lite cannot build an interpreter");

    info_.execution_provider = "cpu";
    if (!req.options.delegate.empty()) {
        auto d = ExternalDelegate::load(req.options.delegate, req.delegate_options, path_);
        if (!d)
            return unexpected(std::move(d).error());
        delegate_ = std::move(*d);
        if (interp_->ModifyGraphWithDelegate(delegate_->get()) != kTfLiteOk)
            return failure(ErrorCode::Device,
                           "delegate '" + delegate_->library() + "' refused the model");
        info_.execution_provider = "delegate:" + delegate_->library();
    }
    if (interp_->AllocateTensors() != kTfLiteOk)
        return failure(ErrorCode::Device, "TensorFlow Lite cannot allocate its tensors");

    for (int index : interp_->inputs()) {
        auto t = describe_tensor(index, "input");
        if (!t)
            return unexpected(std::move(t).error());
        info_.inputs.push_back(std::move(*t));
        delegate_only_.push_back(only_delegate_reads(index));
    }
    for (int index : interp_->outputs()) {
        auto t = describe_tensor(index, "output");
        if (!t)
            return unexpected(std::move(t).error());
        info_.outputs.push_back(std::move(*t));
    }
    declined_logged_.assign(info_.inputs.size(), false);
    in_scratch_.resize(info_.inputs.size());
    out_scratch_.resize(info_.outputs.size());
    return {};
}

Result<void> TfliteSession::run(RunContext& ctx) noexcept
{
    std::vector<int> handed; // inputs bound to a delegate's buffer handle in this run
    Result<void> r;
    try {
        r = run_bound(ctx, handed);
    } catch (const std::bad_alloc&) {
        r = make_error(ErrorCode::AllocationFailed,
                       "model '" + path_ + "': out of memory in a run");
    }
    // Handles live for one run: the delegate's FreeBufferHandle ends its use of the borrowed fd.
    for (int index : handed)
        interp_->SetBufferHandle(index, kTfLiteNullBufferHandle, delegate_->get());
    return r;
}

Result<void> TfliteSession::run_bound(RunContext& ctx, std::vector<int>& handed)
{
    const std::vector<int>& in_idx = interp_->inputs();
    const std::vector<int>& out_idx = interp_->outputs();
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
        const TfLiteTensor* t = interp_->tensor(in_idx[i]);
        std::vector<int> dims(ctx.inputs[i].shape.begin(), ctx.inputs[i].shape.end());
        bool same = t->dims && t->dims->size == int(dims.size());
        for (size_t k = 0; same && k < dims.size(); ++k)
            same = t->dims->data[k] == dims[k];
        if (!same && interp_->ResizeInputTensorStrict(in_idx[i], dims) != kTfLiteOk)
            return failure(ErrorCode::InvalidShape,
                           "input '" + info_.inputs[i].name + "' cannot take the shape " +
                               infer_shape_string(std::vector<int64_t>(dims.begin(), dims.end())));
    }

    std::vector<HostInput> held;
    held.reserve(ctx.inputs.size());
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
        const TensorDyn& t = ctx.inputs[i].tensor;
        const int index = in_idx[i];
        InferInputBinding& b = ctx.bindings[i];
        if (delegate_ && delegate_->takes_dmabuf() && delegate_only_[i]) {
            if (auto buf = dmabuf_of(t, ctx.inputs[i].shape)) {
                std::string why;
                const int h = delegate_->import_dmabuf(index, *buf, why);
                if (h >= 0) {
                    if (interp_->SetBufferHandle(index, h, delegate_->get()) != kTfLiteOk)
                        return failure(ErrorCode::Device, "cannot bind the delegate's buffer "
                                                          "handle to input '" +
                                                              info_.inputs[i].name + "'");
                    handed.push_back(index);
                    // TensorFlow Lite still checks a CPU buffer for the tensor when it plans:
                    // a scratch one it never reads (only the delegate reads this input).
                    uint8_t* placeholder = in_scratch_[i].get(t.size());
                    if (!placeholder ||
                        interp_->SetCustomAllocationForTensor(
                            index, TfLiteCustomAllocation{placeholder, t.size()}) != kTfLiteOk)
                        return failure(ErrorCode::Device,
                                       "cannot plan input '" + info_.inputs[i].name + "'");
                    b.kind = InferBinding::DmaBuf;
                    b.buffer_handle = h;
                    b.runtime_address = nullptr;
                    continue;
                }
                if (!declined_logged_[i]) {
                    declined_logged_[i] = true;
                    ET_LOG_INFO("tflite",
                                "model '%s': delegate '%s' declined the DMA-BUF of input "
                                "'%s' (%s); its CPU mapping is bound instead",
                                path_.c_str(), delegate_->library().c_str(),
                                info_.inputs[i].name.c_str(), why.c_str());
                }
            }
        }
        auto host = HostInput::prepare(t, kInputRules, in_scratch_[i]);
        if (!host)
            return make_error(host.error().code(), "model '" + path_ + "': input '" +
                                                       info_.inputs[i].name +
                                                       "': " + host.error().message());
        held.push_back(std::move(*host));
        const HostInput& h = held.back();
        if (interp_->SetCustomAllocationForTensor(
                index, TfLiteCustomAllocation{const_cast<uint8_t*>(h.data()), h.bytes()}) !=
            kTfLiteOk)
            return failure(ErrorCode::Device,
                           "cannot bind input '" + info_.inputs[i].name + "' in place");
        b.kind = h.copied() ? InferBinding::Copied : InferBinding::InPlace;
        b.runtime_address = h.data();
        b.reason = h.reason();
    }

    std::vector<HostOutput> outs(ctx.outputs.size());
    for (size_t i = 0; i < ctx.outputs.size(); ++i) {
        if (!ctx.outputs[i].tensor.is_valid())
            continue; // dynamic: the runtime's arena, copied out after the run
        auto host = HostOutput::prepare(ctx.outputs[i].tensor, kOutputRules, out_scratch_[i]);
        if (!host)
            return make_error(host.error().code(), "model '" + path_ + "': output '" +
                                                       info_.outputs[i].name +
                                                       "': " + host.error().message());
        outs[i] = std::move(*host);
        if (interp_->SetCustomAllocationForTensor(
                out_idx[i], TfLiteCustomAllocation{outs[i].data(), outs[i].bytes()}) != kTfLiteOk)
            return failure(ErrorCode::Device,
                           "cannot bind output '" + info_.outputs[i].name + "' in place");
    }

    // Cheap when nothing was resized: TensorFlow Lite only checks the custom allocations.
    if (interp_->AllocateTensors() != kTfLiteOk)
        return failure(ErrorCode::Device, "TensorFlow Lite cannot plan the run");
    // The runtime must see the input pointers we just bound (XNNPACK re-reads them per run).
    for (size_t i = 0; i < ctx.inputs.size(); ++i)
        if (ctx.bindings[i].kind != InferBinding::DmaBuf &&
            interp_->tensor(in_idx[i])->data.raw != ctx.bindings[i].runtime_address)
            return make_error(ErrorCode::Device, "model '" + path_ + "': input '" +
                                                     info_.inputs[i].name +
                                                     "' was not bound where it lies");
    if (interp_->Invoke() != kTfLiteOk)
        return failure(ErrorCode::Device, "TensorFlow Lite failed to run it");
    held.clear(); // ends the read maps as soon as the runtime is done

    for (size_t i = 0; i < ctx.outputs.size(); ++i) {
        const int index = out_idx[i];
        if (interp_->EnsureTensorDataIsReadable(index) != kTfLiteOk)
            return failure(ErrorCode::Device,
                           "cannot read output '" + info_.outputs[i].name + "' from the delegate");
        if (ctx.outputs[i].tensor.is_valid()) {
            if (outs[i].copied()) {
                ctx.output_copies++;
                if (ctx.output_copy_reason.empty())
                    ctx.output_copy_reason =
                        "output '" + info_.outputs[i].name + "': " + outs[i].reason();
            }
            outs[i].finish();
            continue;
        }
        const TfLiteTensor* t = interp_->tensor(index);
        Shape shape;
        bool empty = false;
        for (int64_t d : dims_of(t->dims)) {
            shape.push_back(size_t(d < 0 ? 0 : d));
            empty = empty || d <= 0;
        }
        ctx.outputs[i].shape = shape;
        if (empty)
            continue;
        auto out = ctx.allocate(info_.outputs[i].dtype, shape, info_.outputs[i].name);
        if (!out)
            return make_error(out.error().code(),
                              "model '" + path_ + "': cannot allocate output '" +
                                  info_.outputs[i].name + "': " + out.error().message());
        if (out->size() != t->bytes || !t->data.raw)
            return make_error(ErrorCode::Device, "model '" + path_ + "': output '" +
                                                     info_.outputs[i].name +
                                                     "' has no data of its shape's size");
        auto m = out->map_raw(CpuAccess::Write);
        if (!m)
            return unexpected(std::move(m).error());
        std::memcpy(m->bytes(), t->data.raw, t->bytes);
        m->reset();
        ctx.outputs[i].tensor = std::move(*out);
        ctx.output_copies++;
        if (ctx.output_copy_reason.empty())
            ctx.output_copy_reason = "output '" + info_.outputs[i].name +
                                     "' has a dynamic shape, known only after the run";
    }
    return {};
}

} // namespace

Result<std::unique_ptr<BackendSession>> open_session(const OpenRequest& request)
{
    auto s = std::make_unique<TfliteSession>(request.model_path);
    auto r = s->init(request);
    if (!r)
        return unexpected(std::move(r).error());
    return std::unique_ptr<BackendSession>(std::move(s));
}

} // namespace edgetensor::detail::infer::tflite
