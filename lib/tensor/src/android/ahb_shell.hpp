// SPDX-License-Identifier: MIT
//
// The AHardwareBuffer shell: the only code that calls the NDK. Built into libedgetensor on
// Android, and in tests against the simulated NDK (tests/android), which installs it with
// set_platform_buffer_ops(&platform_ops()).

#pragma once

#include "platform_buffer.hpp"

namespace edgetensor::detail::ahb
{

/// The shell as a platform-buffer provider (name "ahardwarebuffer").
const PlatformBufferOps& platform_ops() noexcept;

} // namespace edgetensor::detail::ahb
