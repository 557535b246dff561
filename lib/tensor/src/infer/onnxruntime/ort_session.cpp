// SPDX-License-Identifier: MIT

#include "infer/onnxruntime/ort_session.hpp"

#include "infer/host_io.hpp"
#include "infer/onnxruntime/ort_api.hpp"
#include "infer/tensor_info.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace edgetensor::detail::infer::ort
{
namespace
{

/// The failure of an ONNX Runtime call that opens a model, as our error.
Unexpected open_error(const OrtApi& a, OrtStatus* status, const std::string& path)
{
    const OrtErrorCode code = a.GetErrorCode(status);
    const std::string msg = take(status);
    const std::string where = "model '" + path + "'";
    switch (code) {
    case ORT_NO_SUCHFILE:
        return unexpected(Error::io(ENOENT, where + ": ONNX Runtime cannot find it (" + msg + ")"));
    case ORT_INVALID_PROTOBUF:
    case ORT_INVALID_GRAPH:
    case ORT_NO_MODEL:
    case ORT_INVALID_ARGUMENT:
        return make_error(ErrorCode::InvalidArgument, where + " is not a valid ONNX model: " + msg);
    case ORT_NOT_IMPLEMENTED:
        return make_error(ErrorCode::NotSupported, where + ": ONNX Runtime cannot run it: " + msg);
    default:
        return make_error(ErrorCode::Device, where + ": ONNX Runtime refused it: " + msg);
    }
}

struct GenericProvider {
    const char* ours;
    const char* ort;
};
// Providers ONNX Runtime adds by name through SessionOptionsAppendExecutionProvider.
constexpr GenericProvider kGenericProviders[] = {
    {"xnnpack", "XNNPACK"}, {"qnn", "QNN"},       {"snpe", "SNPE"},   {"openvino", "OpenVINO"},
    {"vitisai", "VitisAI"}, {"coreml", "CoreML"}, {"azure", "AZURE"},
};

Result<void> add_provider(const OrtApi& a, OrtSessionOptions* so, const std::string& name,
                          const std::vector<std::string>& present, const std::string& where)
{
    if (name == "cpu")
        return {};
    if (std::find(present.begin(), present.end(), name) == present.end()) {
        std::string list;
        for (const auto& p : present)
            list += (list.empty() ? "" : ", ") + p;
        return make_error(ErrorCode::InvalidArgument,
                          where + ": execution provider '" + name +
                              "' is not present in this ONNX Runtime (present: " + list + ")");
    }
    std::string err;
    if (name == "dnnl") {
        OrtDnnlProviderOptions* raw = nullptr;
        err = take(a.CreateDnnlProviderOptions(&raw));
        Ptr<OrtDnnlProviderOptions> opts(raw);
        if (err.empty())
            err = take(a.SessionOptionsAppendExecutionProvider_Dnnl(so, opts.get()));
    } else {
        const GenericProvider* g = nullptr;
        for (const auto& p : kGenericProviders)
            if (name == p.ours)
                g = &p;
        if (!g)
            return make_error(ErrorCode::NotSupported,
                              where + ": execution provider '" + name +
                                  "' is present, but edgetensor does not know how to add it yet "
                                  "(it adds cpu, dnnl, xnnpack, qnn, snpe, openvino, vitisai, "
                                  "coreml and azure)");
        err = take(a.SessionOptionsAppendExecutionProvider(so, g->ort, nullptr, nullptr, 0));
    }
    if (!err.empty())
        return make_error(ErrorCode::Unavailable,
                          where + ": the " + name + " execution provider cannot be added: " + err);
    return {};
}

/// Describes input or output `index`.
Result<InferTensorInfo> describe_io(const OrtApi& a, OrtSession* s, OrtAllocator* alloc, bool input,
                                    size_t index, const std::string& where)
{
    InferTensorInfo info;
    char* name = nullptr;
    std::string err = take(input ? a.SessionGetInputName(s, index, alloc, &name)
                                 : a.SessionGetOutputName(s, index, alloc, &name));
    if (!err.empty())
        return make_error(ErrorCode::Device, where + ": cannot read a name: " + err);
    info.name = name ? name : "";
    take(a.AllocatorFree(alloc, name));
    const char* what = input ? "input" : "output";

    OrtTypeInfo* raw = nullptr;
    err = take(input ? a.SessionGetInputTypeInfo(s, index, &raw)
                     : a.SessionGetOutputTypeInfo(s, index, &raw));
    Ptr<OrtTypeInfo> type(raw);
    if (!err.empty())
        return make_error(ErrorCode::Device, where + ": cannot read the type of " + what + " '" +
                                                 info.name + "': " + err);
    ONNXType kind = ONNX_TYPE_UNKNOWN;
    take(a.GetOnnxTypeFromTypeInfo(type.get(), &kind));
    const OrtTensorTypeAndShapeInfo* tsi = nullptr;
    if (kind == ONNX_TYPE_TENSOR)
        take(a.CastTypeInfoToTensorInfo(type.get(), &tsi));
    if (!tsi)
        return make_error(ErrorCode::InvalidArgument,
                          where + ": " + what + " '" + info.name +
                              "' is not a tensor (a sequence, map or optional); edgetensor "
                              "exchanges tensors only");
    ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    take(a.GetTensorElementType(tsi, &et));
    auto dt = dtype_of(et);
    if (!dt)
        return make_error(ErrorCode::InvalidArgument,
                          where + ": " + what + " '" + info.name + "' has the element type " +
                              onnx_type_name(et) + ", which edgetensor has no dtype for");
    info.dtype = *dt;
    size_t n = 0;
    take(a.GetDimensionsCount(tsi, &n));
    info.shape.assign(n, -1);
    take(a.GetDimensions(tsi, info.shape.data(), n));
    for (auto& d : info.shape)
        if (d < 0)
            d = -1;
    std::vector<const char*> sym(n, nullptr);
    take(a.GetSymbolicDimensions(tsi, sym.data(), n));
    info.dim_names.resize(n);
    for (size_t i = 0; i < n; ++i)
        if (info.shape[i] < 0 && sym[i])
            info.dim_names[i] = sym[i];
    info.layout = guess_layout(info.shape, InferBackend::OnnxRuntime);
    return info;
}

class OrtSessionImpl final : public BackendSession
{
public:
    OrtSessionImpl(const OrtApi& a, std::string path) : a_(a), path_(std::move(path)) {}

    Result<void> init(const OpenRequest& req);
    const ModelInfo& info() const noexcept override { return info_; }
    InferBufferRules input_rules() const noexcept override { return {}; }
    Result<void> run(RunContext& ctx) noexcept override;

private:
    Result<void> run_bound(RunContext& ctx);
    Unexpected run_error(const std::string& what, const std::string& msg) const
    {
        return make_error(ErrorCode::Device, "model '" + path_ + "': " + what + ": " + msg);
    }

    const OrtApi& a_;
    std::string path_;
    ModelInfo info_;
    bool host_memory_ = true;
    Ptr<OrtSession> session_;
    Ptr<OrtMemoryInfo> cpu_;
    Ptr<OrtIoBinding> binding_;
    std::vector<ScratchBuffer> in_scratch_;
    std::vector<ScratchBuffer> out_scratch_;
};

Result<void> OrtSessionImpl::init(const OpenRequest& req)
{
    const std::string where = "model '" + path_ + "'";
    auto environment = env();
    if (!environment)
        return unexpected(std::move(environment).error());

    OrtSessionOptions* so_raw = nullptr;
    std::string err = take(a_.CreateSessionOptions(&so_raw));
    Ptr<OrtSessionOptions> so(so_raw);
    if (!err.empty())
        return make_error(ErrorCode::Device, where + ": CreateSessionOptions failed: " + err);
    if (req.options.threads > 0)
        err = take(a_.SetIntraOpNumThreads(so.get(), req.options.threads));
    // A streaming element waits for frames between runs; ONNX Runtime's spinning workers would
    // burn that time as CPU load.
    if (err.empty())
        err = take(a_.AddSessionConfigEntry(so.get(), "session.intra_op.allow_spinning", "0"));
    if (!err.empty())
        return make_error(ErrorCode::Device, where + ": session options refused: " + err);

    std::vector<std::string> present{"cpu"};
    {
        char** names = nullptr;
        int n = 0;
        if (take(a_.GetAvailableProviders(&names, &n)).empty()) {
            for (int i = 0; i < n; ++i) {
                std::string s = provider_short_name(names[i]);
                if (s != "cpu")
                    present.push_back(std::move(s));
            }
            take(a_.ReleaseAvailableProviders(names, n));
        }
    }
    const std::string& provider = req.options.execution_provider;
    auto added = add_provider(a_, so.get(), provider, present, where);
    if (!added)
        return added;
    host_memory_ = reads_host_memory(provider);
    info_.execution_provider = provider;

    OrtSession* s_raw = nullptr;
    if (OrtStatus* st = a_.CreateSession(*environment, path_.c_str(), so.get(), &s_raw))
        return open_error(a_, st, path_);
    session_.reset(s_raw);

    OrtAllocator* alloc = nullptr;
    err = take(a_.GetAllocatorWithDefaultOptions(&alloc));
    if (!err.empty())
        return make_error(ErrorCode::Device, where + ": no default allocator: " + err);
    size_t n_in = 0, n_out = 0;
    take(a_.SessionGetInputCount(session_.get(), &n_in));
    take(a_.SessionGetOutputCount(session_.get(), &n_out));
    for (size_t i = 0; i < n_in; ++i) {
        auto t = describe_io(a_, session_.get(), alloc, true, i, where);
        if (!t)
            return unexpected(std::move(t).error());
        info_.inputs.push_back(std::move(*t));
    }
    for (size_t i = 0; i < n_out; ++i) {
        auto t = describe_io(a_, session_.get(), alloc, false, i, where);
        if (!t)
            return unexpected(std::move(t).error());
        info_.outputs.push_back(std::move(*t));
    }

    OrtMemoryInfo* mi = nullptr;
    err = take(a_.CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &mi));
    cpu_.reset(mi);
    OrtIoBinding* b = nullptr;
    if (err.empty())
        err = take(a_.CreateIoBinding(session_.get(), &b));
    binding_.reset(b);
    if (!err.empty())
        return make_error(ErrorCode::Device, where + ": cannot create an I/O binding: " + err);
    in_scratch_.resize(n_in);
    out_scratch_.resize(n_out);
    return {};
}

Result<void> OrtSessionImpl::run(RunContext& ctx) noexcept
{
    try {
        auto r = run_bound(ctx);
        // The binding must not keep pointers into tensors the caller may free or reuse.
        a_.ClearBoundInputs(binding_.get());
        a_.ClearBoundOutputs(binding_.get());
        return r;
    } catch (const std::bad_alloc&) {
        a_.ClearBoundInputs(binding_.get());
        a_.ClearBoundOutputs(binding_.get());
        return make_error(ErrorCode::AllocationFailed,
                          "model '" + path_ + "': out of memory in a run");
    }
}

Result<void> OrtSessionImpl::run_bound(RunContext& ctx)
{
    std::vector<Ptr<OrtValue>> values; // alive until the binding is cleared
    std::vector<HostInput> inputs;
    inputs.reserve(ctx.inputs.size());
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
        const RunInput& in = ctx.inputs[i];
        auto host = HostInput::prepare(in.tensor, HostRules{}, in_scratch_[i]);
        if (!host)
            return make_error(host.error().code(), "model '" + path_ + "': input '" +
                                                       info_.inputs[i].name +
                                                       "': " + host.error().message());
        inputs.push_back(std::move(*host));
        const HostInput& h = inputs.back();
        std::vector<int64_t> dims(in.shape.begin(), in.shape.end());
        OrtValue* v = nullptr;
        std::string err = take(a_.CreateTensorWithDataAsOrtValue(
            cpu_.get(), const_cast<uint8_t*>(h.data()), h.bytes(), dims.data(), dims.size(),
            onnx_type_of(in.tensor.dtype()), &v));
        values.emplace_back(v);
        if (err.empty())
            err = take(a_.BindInput(binding_.get(), info_.inputs[i].name.c_str(), v));
        if (!err.empty())
            return run_error("cannot bind input '" + info_.inputs[i].name + "'", err);
        InferInputBinding& b = ctx.bindings[i];
        b.runtime_address = h.data();
        if (h.copied()) {
            b.kind = InferBinding::Copied;
            b.reason = h.reason();
        } else if (!host_memory_) {
            b.kind = InferBinding::Copied;
            b.reason = "the " + info_.execution_provider +
                       " execution provider copies inputs into its device's memory";
        } else {
            b.kind = InferBinding::InPlace;
        }
    }

    std::vector<HostOutput> outs(ctx.outputs.size());
    for (size_t i = 0; i < ctx.outputs.size(); ++i) {
        const InferTensorInfo& o = info_.outputs[i];
        std::string err;
        if (ctx.outputs[i].tensor.is_valid()) {
            auto host = HostOutput::prepare(ctx.outputs[i].tensor, HostRules{}, out_scratch_[i]);
            if (!host)
                return make_error(host.error().code(), "model '" + path_ + "': output '" + o.name +
                                                           "': " + host.error().message());
            outs[i] = std::move(*host);
            OrtValue* v = nullptr;
            err = take(a_.CreateTensorWithDataAsOrtValue(
                cpu_.get(), outs[i].data(), outs[i].bytes(), o.shape.data(), o.shape.size(),
                onnx_type_of(o.dtype), &v));
            values.emplace_back(v);
            if (err.empty())
                err = take(a_.BindOutput(binding_.get(), o.name.c_str(), v));
        } else {
            err = take(a_.BindOutputToDevice(binding_.get(), o.name.c_str(), cpu_.get()));
        }
        if (!err.empty())
            return run_error("cannot bind output '" + o.name + "'", err);
    }

    std::string err = take(a_.RunWithBinding(session_.get(), nullptr, binding_.get()));
    inputs.clear(); // ends the read maps (DMA-BUF sync END) as soon as the runtime is done
    if (!err.empty())
        return run_error("ONNX Runtime failed to run it", err);

    for (size_t i = 0; i < outs.size(); ++i) {
        if (outs[i].copied()) {
            ctx.output_copies++;
            if (ctx.output_copy_reason.empty())
                ctx.output_copy_reason =
                    "output '" + info_.outputs[i].name + "': " + outs[i].reason();
        }
        outs[i].finish();
    }

    bool any_dynamic = false;
    for (const auto& o : ctx.outputs)
        any_dynamic = any_dynamic || !o.tensor.is_valid();
    if (!any_dynamic)
        return {};
    OrtAllocator* alloc = nullptr;
    take(a_.GetAllocatorWithDefaultOptions(&alloc));
    OrtValue** bound = nullptr;
    size_t count = 0;
    err = take(a_.GetBoundOutputValues(binding_.get(), alloc, &bound, &count));
    if (!err.empty())
        return run_error("cannot read the outputs", err);
    std::vector<Ptr<OrtValue>> owned;
    for (size_t i = 0; i < count; ++i)
        owned.emplace_back(bound[i]);
    take(a_.AllocatorFree(alloc, bound));
    if (count != ctx.outputs.size())
        return run_error("cannot read the outputs", "the binding returned " +
                                                        std::to_string(count) + " of " +
                                                        std::to_string(ctx.outputs.size()));
    for (size_t i = 0; i < count; ++i) {
        if (ctx.outputs[i].tensor.is_valid())
            continue;
        const InferTensorInfo& o = info_.outputs[i];
        OrtTensorTypeAndShapeInfo* ts_raw = nullptr;
        err = take(a_.GetTensorTypeAndShape(owned[i].get(), &ts_raw));
        Ptr<OrtTensorTypeAndShapeInfo> ts(ts_raw);
        size_t n = 0;
        if (err.empty())
            err = take(a_.GetDimensionsCount(ts.get(), &n));
        std::vector<int64_t> dims(n);
        if (err.empty())
            err = take(a_.GetDimensions(ts.get(), dims.data(), n));
        void* data = nullptr;
        if (err.empty())
            err = take(a_.GetTensorMutableData(owned[i].get(), &data));
        if (!err.empty())
            return run_error("cannot read output '" + o.name + "'", err);
        Shape shape;
        for (int64_t d : dims)
            shape.push_back(size_t(std::max<int64_t>(d, 0)));
        size_t elems = 1;
        for (size_t d : shape)
            elems *= d;
        ctx.outputs[i].shape = shape;
        if (elems == 0)
            continue; // empty this run (no detections): no tensor, the shape says so
        auto t = ctx.allocate(o.dtype, shape, o.name);
        if (!t)
            return make_error(t.error().code(), "model '" + path_ + "': cannot allocate output '" +
                                                    o.name + "': " + t.error().message());
        auto m = t->map_raw(CpuAccess::Write);
        if (!m)
            return unexpected(std::move(m).error());
        std::memcpy(m->bytes(), data, t->size());
        m->reset();
        ctx.outputs[i].tensor = std::move(*t);
        ctx.output_copies++;
        if (ctx.output_copy_reason.empty())
            ctx.output_copy_reason = "output '" + o.name + "' has the dynamic shape " +
                                     infer_shape_string(o.shape, o.dim_names) +
                                     ", known only after the run";
    }
    return {};
}

} // namespace

bool reads_host_memory(const std::string& provider) noexcept
{
    return provider == "cpu" || provider == "dnnl" || provider == "xnnpack";
}

Result<std::unique_ptr<BackendSession>> open_session(const OpenRequest& request)
{
    auto a = api();
    if (!a)
        return make_error(a.error().code(),
                          "model '" + request.model_path + "': " + a.error().message());
    auto s = std::make_unique<OrtSessionImpl>(**a, request.model_path);
    auto r = s->init(request);
    if (!r)
        return unexpected(std::move(r).error());
    return std::unique_ptr<BackendSession>(std::move(s));
}

} // namespace edgetensor::detail::infer::ort
