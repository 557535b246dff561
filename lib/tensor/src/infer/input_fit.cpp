// SPDX-License-Identifier: MIT

#include "infer/input_fit.hpp"

#include "infer/tensor_info.hpp"

namespace edgetensor::detail::infer
{
namespace
{

std::string tensor_words(DType dtype, const Shape& shape)
{
    std::vector<int64_t> s(shape.begin(), shape.end());
    return std::string(dtype_name(dtype)) + " " + infer_shape_string(s);
}

} // namespace

Result<Shape> fit_input(const InferTensorInfo& info, DType dtype, const Shape& shape,
                        const std::string& model_path)
{
    const std::string head = "model '" + model_path + "': input '" + info.name + "' takes " +
                             describe(info) + "; the tensor is " + tensor_words(dtype, shape);
    if (dtype != info.dtype)
        return make_error(ErrorCode::DTypeMismatch, head + " (convert it to " +
                                                        std::string(dtype_name(info.dtype)) +
                                                        " first, e.g. tensorconvert dtype=)");
    auto shape_error = [&](const std::string& why) {
        return make_error(ErrorCode::InvalidShape, head + " (" + why + ")");
    };
    for (size_t d : shape)
        if (d == 0)
            return shape_error("the tensor has a dimension of 0");

    const size_t m = info.shape.size();
    const size_t t = shape.size();
    Shape out(m, 1);
    size_t mi = 0; // first model dimension the tensor's dimensions line up with
    size_t ti = 0;
    if (t < m) {
        for (; mi < m - t; ++mi)
            if (info.shape[mi] > 1)
                return shape_error("the tensor has rank " + std::to_string(t) + ", the model " +
                                   std::to_string(m) + ", and the model's dimension " +
                                   std::to_string(mi) + " is " + std::to_string(info.shape[mi]) +
                                   ", not 1");
    } else if (t > m) {
        for (; ti < t - m; ++ti)
            if (shape[ti] != 1)
                return shape_error("the tensor has rank " + std::to_string(t) + ", the model " +
                                   std::to_string(m) + ", and the tensor's extra dimension " +
                                   std::to_string(ti) + " is " + std::to_string(shape[ti]) +
                                   ", not 1");
    }
    for (; mi < m; ++mi, ++ti) {
        const int64_t want = info.shape[mi];
        const size_t have = shape[ti];
        if (want >= 0 && size_t(want) != have) {
            std::string why = "dimension " + std::to_string(mi) + " is " + std::to_string(want) +
                              " in the model, " + std::to_string(have) + " in the tensor";
            if (mi == 0 && m >= 2)
                why += "; a batch of " + std::to_string(have) +
                       " needs a model whose first dimension is dynamic or " + std::to_string(have);
            return shape_error(why);
        }
        out[mi] = have;
    }
    return out;
}

} // namespace edgetensor::detail::infer
