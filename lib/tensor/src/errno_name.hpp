// SPDX-License-Identifier: MIT
//
// errno values by name, both ways: messages name the errno ("Cannot allocate memory (ENOMEM)")
// so a user can search for it, and EDGETENSOR_FAULT takes names.

#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace edgetensor::detail
{

/// The kernel's internal "not supported" code. It is not in libc's errno.h, yet some drivers'
/// hooks hand it to user space: NVIDIA's DMA-BUF exports of GPU memory refuse mmap with it.
inline constexpr int kEnotsupp = 524;

/// "ENOMEM" for ENOMEM; nullptr for a value without a name here.
const char* errno_name(int err) noexcept;
/// The value of "ENOMEM", ...; nullopt when unknown.
std::optional<int> errno_from_name(std::string_view name) noexcept;
/// strerror(err) followed by the name: "Too many open files (EMFILE)".
std::string errno_text(int err);

} // namespace edgetensor::detail
