// SPDX-License-Identifier: MIT
//
// The library's log lines of one category, kept while a LogCapture lives (tests that check
// what the library says, not only what it returns).

#pragma once

#include <edgetensor/log.hpp>

#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::test
{

/// Installs itself as the log handler and sets the library's level to `level`; keeps the
/// messages of `category` at `level` or more severe. Restores the default handler and the
/// Warning level when it goes.
class LogCapture
{
public:
    LogCapture(std::string category, LogLevel level) : category_(std::move(category)), level_(level)
    {
        set_log_handler(&LogCapture::handle, this);
        set_log_level(level);
    }
    ~LogCapture()
    {
        set_log_level(LogLevel::Warning);
        set_log_handler(nullptr, nullptr);
    }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    /// The lines kept since the last take().
    std::vector<std::string> take()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::exchange(lines_, {});
    }

private:
    static void handle(LogLevel level, const char* category, const char* message, void* self)
    {
        auto* c = static_cast<LogCapture*>(self);
        if (int(level) > int(c->level_) || c->category_ != category)
            return;
        std::lock_guard<std::mutex> lock(c->mutex_);
        c->lines_.emplace_back(message);
    }

    const std::string category_;
    const LogLevel level_;
    std::mutex mutex_;
    std::vector<std::string> lines_;
};

} // namespace edgetensor::test
