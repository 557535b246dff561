// SPDX-License-Identifier: MIT
//
// The model file before any runtime sees it: readable, a regular file, and which backend reads it.

#pragma once

#include "edgetensor/infer.hpp"

namespace edgetensor::detail::infer
{

/// Ok when `path` names a readable, non-empty regular file; otherwise Io (with errno) or
/// InvalidArgument, naming the file.
Result<void> check_model_file(const std::string& path);

} // namespace edgetensor::detail::infer
