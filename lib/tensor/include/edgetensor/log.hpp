// SPDX-License-Identifier: MIT
//
// The library's log. Levels come from EDGETENSOR_DEBUG ("3", or "dma:5,shm:4,*:2");
// a host application (the GStreamer plugin) may install a handler to forward it.

#pragma once

namespace edgetensor
{

enum class LogLevel : int { None = 0, Error = 1, Warning = 2, Info = 3, Debug = 4, Trace = 5 };

/// Receives each message that passes the level filter. Must be thread-safe.
using LogHandler = void (*)(LogLevel level, const char* category, const char* message,
                            void* user_data);

/// Replaces the handler (nullptr restores the default: stderr). The previous one is dropped.
void set_log_handler(LogHandler handler, void* user_data) noexcept;
/// Sets the threshold for every category (overrides EDGETENSOR_DEBUG).
void set_log_level(LogLevel level) noexcept;

} // namespace edgetensor
