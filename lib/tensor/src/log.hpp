// SPDX-License-Identifier: MIT
//
// The library's category logger. The level is checked before anything is formatted, so a
// disabled ET_LOG costs one relaxed load.

#pragma once

#include "edgetensor/log.hpp"

namespace edgetensor::detail
{

/// Level threshold for `category` (from EDGETENSOR_DEBUG or set_log_level()).
LogLevel log_threshold(const char* category) noexcept;
/// printf-style; delivers to the installed handler (default: stderr).
void log_message(LogLevel level, const char* category, const char* fmt, ...) noexcept
    __attribute__((format(printf, 3, 4)));

} // namespace edgetensor::detail

#define ET_LOG(level, category, ...)                                                               \
    do {                                                                                           \
        if (static_cast<int>(level) <=                                                             \
            static_cast<int>(::edgetensor::detail::log_threshold(category)))                       \
            ::edgetensor::detail::log_message(level, category, __VA_ARGS__);                       \
    } while (0)

#define ET_LOG_ERROR(cat, ...) ET_LOG(::edgetensor::LogLevel::Error, cat, __VA_ARGS__)
#define ET_LOG_WARNING(cat, ...) ET_LOG(::edgetensor::LogLevel::Warning, cat, __VA_ARGS__)
#define ET_LOG_INFO(cat, ...) ET_LOG(::edgetensor::LogLevel::Info, cat, __VA_ARGS__)
#define ET_LOG_DEBUG(cat, ...) ET_LOG(::edgetensor::LogLevel::Debug, cat, __VA_ARGS__)
#define ET_LOG_TRACE(cat, ...) ET_LOG(::edgetensor::LogLevel::Trace, cat, __VA_ARGS__)
