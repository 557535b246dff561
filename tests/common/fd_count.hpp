// SPDX-License-Identifier: MIT
//
// fd accounting: tests snapshot /proc/self/fd before and after a workload.

#pragma once

#include <set>
#include <string>

namespace edgetensor::test
{

/// The fd numbers open in this process (the directory fd used to read them excluded).
std::set<int> open_fds();
/// "3 -> /memfd:x (deleted), ..." for the fds in `fds`, for failure messages.
std::string describe_fds(const std::set<int>& fds);

} // namespace edgetensor::test
