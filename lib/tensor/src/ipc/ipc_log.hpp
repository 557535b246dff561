// SPDX-License-Identifier: MIT
//
// How both IPC sessions (ipc::Server, ipc::Receiver) reach their element's log: the element
// implements LogObserver over its debug category, so a line lands where its other lines do,
// with the element named, and a level nobody reads costs no formatting.

#pragma once

#include <edgetensor/log.hpp>

#include <cstdarg>
#include <string>

namespace edgetensor::ipc
{

class LogObserver
{
public:
    virtual ~LogObserver() = default;
    /// Lets a session skip formatting what would not be logged (a line per dropped frame).
    virtual bool log_enabled(LogLevel level) const noexcept = 0;
    /// Called from whichever thread the session runs on: must be thread-safe.
    virtual void log(LogLevel level, const std::string& message) noexcept = 0;
};

/// printf-formats one line (up to 1 KiB) for `observer` when it logs `level`. Never throws:
/// a line that cannot be built is dropped.
void log_to(LogObserver& observer, LogLevel level, const char* format, ...) noexcept
    __attribute__((format(printf, 3, 4)));
void vlog_to(LogObserver& observer, LogLevel level, const char* format, va_list ap) noexcept
    __attribute__((format(printf, 3, 0)));

} // namespace edgetensor::ipc
