// SPDX-License-Identifier: MIT
//
// InferOptions::delegate_options: "key=value;key=value", the strings handed to a TensorFlow
// Lite external delegate's tflite_plugin_create_delegate().

#pragma once

#include "edgetensor/error.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edgetensor::detail::infer
{

/// Splits `text` at ';' into key=value pairs, trimming spaces and tabs around keys and values;
/// empty pieces (";;", a trailing ';') are skipped, a value may be empty ("key="). A piece
/// without '=' or with an empty key, or a key given twice, is InvalidArgument naming it.
Result<std::vector<std::pair<std::string, std::string>>>
parse_delegate_options(std::string_view text);

} // namespace edgetensor::detail::infer
