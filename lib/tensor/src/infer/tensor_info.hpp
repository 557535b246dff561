// SPDX-License-Identifier: MIT
//
// What backends share when they describe a model's tensors.

#pragma once

#include "edgetensor/infer.hpp"

namespace edgetensor::detail::infer
{

/// InferTensorInfo::layout from a shape (see infer.hpp); `backend` gives the convention that
/// settles a shape where both the first and the last candidate look like channels.
InferLayout guess_layout(std::span<const int64_t> shape, InferBackend backend) noexcept;

/// `u8 [1, 64, 64, 3] (channels-last)`: a tensor info as errors print it.
std::string describe(const InferTensorInfo& info);

} // namespace edgetensor::detail::infer
