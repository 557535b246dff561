// SPDX-License-Identifier: MIT
//
// Whether a Google Benchmark run has no usable timing. Benchmark 1.7 says so with
// `Run::error_occurred`; 1.8 replaced it by `Run::skipped` (an enum whose zero is NotSkipped,
// also set by SkipWithMessage). The member is detected, not guessed from a version number: the
// headers carry no version macro.
#pragma once

namespace edgetensor::bench
{

template <typename Run> bool run_skipped(const Run& r)
{
    if constexpr (requires { r.error_occurred; })
        return r.error_occurred;
    else
        return static_cast<unsigned>(r.skipped) != 0;
}

} // namespace edgetensor::bench
