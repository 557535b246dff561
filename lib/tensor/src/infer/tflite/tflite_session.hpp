// SPDX-License-Identifier: MIT
//
// One TensorFlow Lite interpreter: inputs bound as custom allocations over the tensors' own
// mappings, DMA-BUF inputs handed to a delegate that takes them, static outputs written
// straight into our tensors.

#pragma once

#include "infer/backend.hpp"

namespace edgetensor::detail::infer::tflite
{

Result<std::unique_ptr<BackendSession>> open_session(const OpenRequest& request);

} // namespace edgetensor::detail::infer::tflite
