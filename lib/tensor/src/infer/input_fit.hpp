// SPDX-License-Identifier: MIT
//
// Whether a tensor feeds a model input, decided without running: what InferSession::
// check_input() answers at caps time and run() enforces.

#pragma once

#include "edgetensor/infer.hpp"

namespace edgetensor::detail::infer
{

/// The shape the runtime gets for a tensor of `dtype` and `shape` fed to input `info` of the
/// model at `model_path`: the model's rank, its dynamic dimensions taking the tensor's sizes.
/// The tensor may lack leading dimensions the model has as 1 (or dynamic: then 1), or carry
/// extra leading 1s. DTypeMismatch / InvalidShape naming the model, the input, both dtypes and
/// shapes, and the first dimension that disagrees.
Result<Shape> fit_input(const InferTensorInfo& info, DType dtype, const Shape& shape,
                        const std::string& model_path);

} // namespace edgetensor::detail::infer
