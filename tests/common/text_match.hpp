// SPDX-License-Identifier: MIT
//
// Matching the words of an error message in tests.

#pragma once

#include <string_view>

namespace edgetensor::test
{

/// Whether `text` holds `what` (an error message naming its cause, a log line, ...).
inline bool contains(std::string_view text, std::string_view what)
{
    return text.find(what) != std::string_view::npos;
}

} // namespace edgetensor::test
