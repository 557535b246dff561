// SPDX-License-Identifier: MIT
//
// ConvertCompute names, built with or without the GL backend.

#include "edgetensor/convert.hpp"

#include <iterator>

namespace edgetensor
{
namespace
{
constexpr std::string_view kComputeNames[] = {"auto", "cpu", "gl"};
}

std::string_view convert_compute_name(ConvertCompute c) noexcept
{
    const auto i = static_cast<uint32_t>(c);
    return i < std::size(kComputeNames) ? kComputeNames[i] : std::string_view("unknown");
}

std::optional<ConvertCompute> convert_compute_from_name(std::string_view name) noexcept
{
    for (uint32_t i = 0; i < std::size(kComputeNames); ++i)
        if (kComputeNames[i] == name)
            return static_cast<ConvertCompute>(i);
    return std::nullopt;
}

} // namespace edgetensor
