// SPDX-License-Identifier: MIT
//
// InferSession: opens a model through its backend module, validates what a run is given,
// allocates outputs, and counts (and warns once about) every copy a backend had to make.

#include "edgetensor/infer.hpp"

#include "infer/backend.hpp"
#include "infer/delegate_options.hpp"
#include "infer/input_fit.hpp"
#include "infer/model_file.hpp"
#include "infer/module_loader.hpp"
#include "infer/tensor_info.hpp"
#include "log.hpp"

#include <algorithm>
#include <mutex>
#include <new>

namespace edgetensor
{
namespace detail::infer
{

namespace
{
constexpr const char* kCat = "infer";
}

class SessionState
{
public:
    std::string path;
    InferOptions options;
    InferBackend backend = InferBackend::Auto;
    std::unique_ptr<BackendSession> session;

    std::mutex run_lock; // one run at a time
    mutable std::mutex stats_lock;
    InferStats stats;
    std::vector<InferInputBinding> bindings;
    std::vector<bool> input_warned;
    bool output_warned = false;

    const ModelInfo& info() const noexcept { return session->info(); }
    /// Validates, runs, fills `outputs`; `shapes` (when given) gets each output's shape.
    Result<void> run(std::span<const TensorDyn> inputs, std::span<TensorDyn> outputs,
                     std::vector<Shape>* shapes);

private:
    void account(const RunContext& ctx);
};

Result<void> SessionState::run(std::span<const TensorDyn> inputs, std::span<TensorDyn> outputs,
                               std::vector<Shape>* shapes)
{
    const ModelInfo& mi = info();
    const std::string where = "model '" + path + "'";
    if (inputs.size() != mi.inputs.size()) {
        std::string names;
        for (const auto& i : mi.inputs)
            names += (names.empty() ? "" : ", ") + i.name;
        return make_error(ErrorCode::InvalidArgument,
                          where + " has " + std::to_string(mi.inputs.size()) + " input(s) (" +
                              names + "); the run got " + std::to_string(inputs.size()) +
                              " tensor(s)");
    }
    if (outputs.size() != mi.outputs.size())
        return make_error(ErrorCode::InvalidArgument,
                          where + " has " + std::to_string(mi.outputs.size()) +
                              " output(s); the run was given " + std::to_string(outputs.size()));

    std::vector<RunInput> run_inputs(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        const TensorDyn& t = inputs[i];
        if (!t.is_valid())
            return make_error(ErrorCode::InvalidArgument,
                              where + ": input '" + mi.inputs[i].name + "' is an empty tensor");
        auto shape = fit_input(mi.inputs[i], t.dtype(), t.shape(), path);
        if (!shape)
            return unexpected(std::move(shape).error());
        run_inputs[i] = RunInput{t, std::move(*shape)};
    }

    std::vector<RunOutput> run_outputs(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
        const InferTensorInfo& o = mi.outputs[i];
        if (outputs[i].is_valid()) {
            if (o.is_dynamic())
                return make_error(ErrorCode::InvalidArgument,
                                  where + ": output '" + o.name + "' has the dynamic shape " +
                                      infer_shape_string(o.shape, o.dim_names) +
                                      "; pass an empty tensor for it (the session allocates it "
                                      "once the run has given its shape)");
            auto fit = fit_input(o, outputs[i].dtype(), outputs[i].shape(), path);
            if (!fit) {
                std::vector<int64_t> given(outputs[i].shape().begin(), outputs[i].shape().end());
                return make_error(fit.error().code(),
                                  where + ": output '" + o.name + "' is " + describe(o) +
                                      "; the tensor given for it is " +
                                      std::string(dtype_name(outputs[i].dtype())) + " " +
                                      infer_shape_string(given));
            }
            run_outputs[i].tensor = outputs[i];
            run_outputs[i].shape = *fit;
        } else if (!o.is_dynamic()) {
            Shape s(o.shape.begin(), o.shape.end());
            run_outputs[i].shape = s;
            auto t = TensorDyn::create(o.dtype, s, options.output_memory, o.name);
            if (!t)
                return make_error(t.error().code(), where + ": cannot allocate output '" + o.name +
                                                        "': " + t.error().message());
            run_outputs[i].tensor = std::move(*t);
        }
    }

    RunContext ctx;
    ctx.inputs = run_inputs;
    ctx.outputs = run_outputs;
    ctx.bindings.assign(inputs.size(), InferInputBinding{});
    const TensorMemory memory = options.output_memory;
    ctx.allocate = [memory](DType dtype, const Shape& shape, std::string_view name) {
        return TensorDyn::create(dtype, shape, memory, name);
    };
    auto r = session->run(ctx);
    if (!r)
        return r;
    for (size_t i = 0; i < outputs.size(); ++i) {
        const Shape& shape = run_outputs[i].shape;
        const bool empty = std::find(shape.begin(), shape.end(), size_t(0)) != shape.end();
        if (!run_outputs[i].tensor.is_valid() && !empty)
            return make_error(ErrorCode::Device, where +
                                                     ": the runtime gave no tensor for output '" +
                                                     mi.outputs[i].name + "'");
        outputs[i] = std::move(run_outputs[i].tensor);
    }
    if (shapes) {
        shapes->clear();
        for (auto& o : run_outputs)
            shapes->push_back(std::move(o.shape));
    }
    account(ctx);
    return {};
}

void SessionState::account(const RunContext& ctx)
{
    const ModelInfo& mi = info();
    std::lock_guard<std::mutex> g(stats_lock);
    stats.runs++;
    for (size_t i = 0; i < ctx.bindings.size(); ++i) {
        const InferInputBinding& b = ctx.bindings[i];
        switch (b.kind) {
        case InferBinding::InPlace:
            stats.inputs_in_place++;
            break;
        case InferBinding::DmaBuf:
            stats.dmabuf_handoffs++;
            break;
        case InferBinding::Copied:
            stats.input_copies++;
            if (!input_warned[i]) {
                input_warned[i] = true;
                // Once per input and session: a copy per frame is a pipeline to fix, not noise.
                ET_LOG_WARNING(kCat,
                               "model '%s': input '%s' is copied before every run (%s); further "
                               "copies are counted in the session's stats, not logged",
                               path.c_str(), mi.inputs[i].name.c_str(), b.reason.c_str());
            }
            break;
        case InferBinding::None:
            break;
        }
    }
    stats.output_copies += ctx.output_copies;
    stats.copies = stats.input_copies + stats.output_copies;
    if (ctx.output_copies && !output_warned) {
        output_warned = true;
        ET_LOG_WARNING(kCat, "model '%s': outputs are copied after the run (%s); counted in stats",
                       path.c_str(), ctx.output_copy_reason.c_str());
    }
    bindings = ctx.bindings;
}

} // namespace detail::infer

using detail::infer::SessionState;

InferSession::InferSession() noexcept = default;
InferSession::~InferSession() = default;
InferSession::InferSession(InferSession&&) noexcept = default;
InferSession& InferSession::operator=(InferSession&&) noexcept = default;
InferSession::InferSession(std::unique_ptr<SessionState> state) noexcept : state_(std::move(state))
{
}

Result<InferSession> InferSession::open(std::string_view model_path, const InferOptions& options)
{
    try {
        const std::string path(model_path);
        auto readable = detail::infer::check_model_file(path);
        if (!readable)
            return unexpected(std::move(readable).error());

        InferBackend b = options.backend;
        if (b == InferBackend::Auto) {
            auto picked = infer_backend_for_file(path);
            if (!picked)
                return unexpected(std::move(picked).error());
            b = *picked;
        } else if (b != InferBackend::OnnxRuntime && b != InferBackend::TfLite) {
            return make_error(ErrorCode::InvalidArgument,
                              "model '" + path + "': unknown backend value " +
                                  std::to_string(static_cast<uint32_t>(b)));
        }
        const std::string where = "model '" + path + "'";
        if (options.threads < 0)
            return make_error(ErrorCode::InvalidArgument,
                              where + ": threads must be 0 (the runtime's default) or more, not " +
                                  std::to_string(options.threads));
        if (b == InferBackend::TfLite && !options.execution_provider.empty() &&
            options.execution_provider != "cpu")
            return make_error(ErrorCode::InvalidArgument,
                              where + ": execution provider '" + options.execution_provider +
                                  "' is an ONNX Runtime setting; TensorFlow Lite takes a delegate "
                                  "library instead");
        if (b == InferBackend::OnnxRuntime && !options.delegate.empty())
            return make_error(ErrorCode::InvalidArgument,
                              where + ": a delegate (" + options.delegate +
                                  ") is a TensorFlow Lite setting; ONNX Runtime takes an "
                                  "execution provider instead");
        if (options.delegate.empty() && !options.delegate_options.empty())
            return make_error(ErrorCode::InvalidArgument,
                              where + ": delegate options given without a delegate library");
        auto delegate_options = detail::infer::parse_delegate_options(options.delegate_options);
        if (!delegate_options)
            return make_error(ErrorCode::InvalidArgument,
                              where + ": " + delegate_options.error().message());

        auto backend = detail::infer::backend(b);
        if (!backend)
            return make_error(backend.error().code(), where + ": " + backend.error().message());

        detail::infer::OpenRequest request;
        request.model_path = path;
        request.options = options;
        request.options.backend = b;
        if (request.options.execution_provider.empty())
            request.options.execution_provider = "cpu";
        request.delegate_options = std::move(*delegate_options);
        auto session = (*backend)->open(request);
        if (!session)
            return unexpected(std::move(session).error());

        auto state = std::make_unique<SessionState>();
        state->path = path;
        state->options = request.options;
        state->backend = b;
        state->session = std::move(*session);
        state->input_warned.assign(state->info().inputs.size(), false);
        state->bindings.assign(state->info().inputs.size(), InferInputBinding{});
        ET_LOG_INFO("infer", "model '%s' opened with %s (%s): %zu input(s), %zu output(s)",
                    path.c_str(), detail::infer::runtime_name(b),
                    state->info().execution_provider.c_str(), state->info().inputs.size(),
                    state->info().outputs.size());
        return InferSession(std::move(state));
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed,
                          "out of memory opening model '" + std::string(model_path) + "'");
    }
}

namespace
{
const std::string& empty_string()
{
    static const std::string s;
    return s;
}
const std::vector<InferTensorInfo>& empty_infos()
{
    static const std::vector<InferTensorInfo> v;
    return v;
}
Unexpected closed()
{
    return make_error(ErrorCode::InvalidArgument, "the inference session is not open");
}
} // namespace

InferBackend InferSession::backend() const noexcept
{
    return state_ ? state_->backend : InferBackend::Auto;
}

const std::string& InferSession::model_path() const noexcept
{
    return state_ ? state_->path : empty_string();
}

const std::string& InferSession::execution_provider() const noexcept
{
    return state_ ? state_->info().execution_provider : empty_string();
}

const std::vector<InferTensorInfo>& InferSession::inputs() const noexcept
{
    return state_ ? state_->info().inputs : empty_infos();
}

const std::vector<InferTensorInfo>& InferSession::outputs() const noexcept
{
    return state_ ? state_->info().outputs : empty_infos();
}

std::optional<size_t> InferSession::input_index(std::string_view name) const noexcept
{
    const auto& v = inputs();
    for (size_t i = 0; i < v.size(); ++i)
        if (v[i].name == name)
            return i;
    return std::nullopt;
}

std::optional<size_t> InferSession::output_index(std::string_view name) const noexcept
{
    const auto& v = outputs();
    for (size_t i = 0; i < v.size(); ++i)
        if (v[i].name == name)
            return i;
    return std::nullopt;
}

Result<void> InferSession::check_input(size_t index, DType dtype, const Shape& shape) const
{
    if (!state_)
        return closed();
    const auto& v = inputs();
    if (index >= v.size())
        return make_error(ErrorCode::InvalidArgument,
                          "model '" + state_->path + "' has " + std::to_string(v.size()) +
                              " input(s); there is no input " + std::to_string(index));
    try {
        auto r = detail::infer::fit_input(v[index], dtype, shape, state_->path);
        if (!r)
            return unexpected(std::move(r).error());
        return {};
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed, "out of memory checking an input");
    }
}

Result<std::vector<InferOutput>> InferSession::run(std::span<const TensorDyn> inputs)
{
    if (!state_)
        return closed();
    try {
        std::vector<TensorDyn> tensors(outputs().size());
        std::vector<Shape> shapes;
        {
            std::lock_guard<std::mutex> g(state_->run_lock);
            auto r = state_->run(inputs, tensors, &shapes);
            if (!r)
                return unexpected(std::move(r).error());
        }
        std::vector<InferOutput> out(tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i)
            out[i] = InferOutput{outputs()[i].name, std::move(shapes[i]), std::move(tensors[i])};
        return out;
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed,
                          "out of memory running model '" + state_->path + "'");
    }
}

Result<void> InferSession::run_into(std::span<const TensorDyn> inputs, std::span<TensorDyn> outputs)
{
    if (!state_)
        return closed();
    try {
        std::lock_guard<std::mutex> g(state_->run_lock);
        return state_->run(inputs, outputs, nullptr);
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed,
                          "out of memory running model '" + state_->path + "'");
    }
}

InferBufferRules InferSession::input_rules() const noexcept
{
    return state_ ? state_->session->input_rules() : InferBufferRules{};
}

InferStats InferSession::stats() const noexcept
{
    if (!state_)
        return {};
    std::lock_guard<std::mutex> g(state_->stats_lock);
    return state_->stats;
}

InferInputBinding InferSession::input_binding(size_t index) const
{
    if (!state_)
        return {};
    std::lock_guard<std::mutex> g(state_->stats_lock);
    return index < state_->bindings.size() ? state_->bindings[index] : InferInputBinding{};
}

} // namespace edgetensor
