// SPDX-License-Identifier: MIT
//
// The IPC sessions' log lines (see ipc_log.hpp).

#include "ipc_log.hpp"

#include <cstdio>

namespace edgetensor::ipc
{

void vlog_to(LogObserver& observer, LogLevel level, const char* format, va_list ap) noexcept
{
    if (!observer.log_enabled(level))
        return;
    char buf[1024];
    std::vsnprintf(buf, sizeof(buf), format, ap);
    try {
        observer.log(level, buf);
    } catch (...) {
        // A log line that cannot be built is not worth ending the stream for.
    }
}

void log_to(LogObserver& observer, LogLevel level, const char* format, ...) noexcept
{
    va_list ap;
    va_start(ap, format);
    vlog_to(observer, level, format, ap);
    va_end(ap);
}

} // namespace edgetensor::ipc
