// SPDX-License-Identifier: MIT
//
// One ONNX Runtime session: the model's description, and runs through an OrtIoBinding whose
// inputs are OrtValues over the tensors' own mappings.

#pragma once

#include "infer/backend.hpp"

namespace edgetensor::detail::infer::ort
{

/// Execution providers whose kernels read host memory where it lies: an input bound over our
/// mapping is read there. Any other provider copies it to its device (counted as a copy).
bool reads_host_memory(const std::string& provider) noexcept;

Result<std::unique_ptr<BackendSession>> open_session(const OpenRequest& request);

} // namespace edgetensor::detail::infer::ort
