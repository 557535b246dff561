// SPDX-License-Identifier: MIT
//
// Names of the inference enums, shape strings and the layout rule.

#include "edgetensor/infer.hpp"

#include "infer/tensor_info.hpp"

#include <algorithm>

namespace edgetensor
{

std::string_view infer_backend_name(InferBackend backend) noexcept
{
    switch (backend) {
    case InferBackend::Auto:
        return "auto";
    case InferBackend::OnnxRuntime:
        return "onnxruntime";
    case InferBackend::TfLite:
        return "tflite";
    }
    return "unknown";
}

Result<InferBackend> infer_backend_from_name(std::string_view name)
{
    for (auto b : {InferBackend::Auto, InferBackend::OnnxRuntime, InferBackend::TfLite})
        if (name == infer_backend_name(b))
            return b;
    return make_error(ErrorCode::InvalidArgument, "unknown inference backend '" +
                                                      std::string(name) +
                                                      "' (known: auto, onnxruntime, tflite)");
}

std::string_view infer_layout_name(InferLayout layout) noexcept
{
    switch (layout) {
    case InferLayout::Unknown:
        return "unknown";
    case InferLayout::ChannelsLast:
        return "channels-last";
    case InferLayout::ChannelsFirst:
        return "channels-first";
    }
    return "unknown";
}

std::string_view infer_binding_name(InferBinding binding) noexcept
{
    switch (binding) {
    case InferBinding::None:
        return "none";
    case InferBinding::InPlace:
        return "in-place";
    case InferBinding::Copied:
        return "copied";
    case InferBinding::DmaBuf:
        return "dmabuf";
    }
    return "none";
}

bool InferTensorInfo::is_dynamic() const noexcept
{
    return std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; });
}

std::string infer_shape_string(std::span<const int64_t> shape,
                               std::span<const std::string> dim_names)
{
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i)
            out += ", ";
        if (shape[i] >= 0)
            out += std::to_string(shape[i]);
        else if (i < dim_names.size() && !dim_names[i].empty())
            out += dim_names[i];
        else
            out += "?";
    }
    return out + "]";
}

namespace detail::infer
{

InferLayout guess_layout(std::span<const int64_t> shape, InferBackend backend) noexcept
{
    if (shape.size() != 3 && shape.size() != 4)
        return InferLayout::Unknown;
    auto channels = [](int64_t d) { return d == 1 || d == 3 || d == 4; };
    const bool last = channels(shape.back());
    const bool first = channels(shape[shape.size() - 3]);
    if (last && !first)
        return InferLayout::ChannelsLast;
    if (first && !last)
        return InferLayout::ChannelsFirst;
    if (last && first)
        return backend == InferBackend::TfLite ? InferLayout::ChannelsLast
                                               : InferLayout::ChannelsFirst;
    return InferLayout::Unknown;
}

std::string describe(const InferTensorInfo& info)
{
    std::string out =
        std::string(dtype_name(info.dtype)) + " " + infer_shape_string(info.shape, info.dim_names);
    if (info.layout != InferLayout::Unknown)
        out += " (" + std::string(infer_layout_name(info.layout)) + ")";
    return out;
}

} // namespace detail::infer
} // namespace edgetensor
