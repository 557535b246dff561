// SPDX-License-Identifier: MIT
#include "log.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor
{
namespace
{

struct Rule {
    std::string category; // "*" matches all
    LogLevel level;
};

struct LogConfig {
    std::vector<Rule> rules;
    LogLevel fallback = LogLevel::Warning;
};

LogLevel parse_level(const std::string& s)
{
    char* end = nullptr;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (end && *end == '\0' && !s.empty())
        return static_cast<LogLevel>(v < 0 ? 0 : (v > 5 ? 5 : v));
    static const char* names[] = {"none", "error", "warning", "info", "debug", "trace"};
    for (int i = 0; i < 6; ++i)
        if (s == names[i])
            return static_cast<LogLevel>(i);
    return LogLevel::Warning;
}

// EDGETENSOR_DEBUG="3" or "dma:5,shm:4,*:2"
LogConfig parse_env()
{
    LogConfig cfg;
    const char* env = std::getenv("EDGETENSOR_DEBUG");
    if (!env || !*env)
        return cfg;
    std::string spec(env);
    size_t pos = 0;
    while (pos <= spec.size()) {
        size_t comma = spec.find(',', pos);
        if (comma == std::string::npos)
            comma = spec.size();
        std::string item = spec.substr(pos, comma - pos);
        const size_t colon = item.find(':');
        if (colon == std::string::npos) {
            if (!item.empty())
                cfg.fallback = parse_level(item);
        } else {
            std::string cat = item.substr(0, colon);
            LogLevel lvl = parse_level(item.substr(colon + 1));
            if (cat == "*")
                cfg.fallback = lvl;
            else
                cfg.rules.push_back({std::move(cat), lvl});
        }
        pos = comma + 1;
    }
    return cfg;
}

const LogConfig& config()
{
    static const LogConfig cfg = parse_env();
    return cfg;
}

std::atomic<int> g_override{-1};
std::mutex g_handler_mutex;
LogHandler g_handler = nullptr;
void* g_handler_data = nullptr;

} // namespace

void set_log_handler(LogHandler handler, void* user_data) noexcept
{
    std::lock_guard lock(g_handler_mutex);
    g_handler = handler;
    g_handler_data = user_data;
}

void set_log_level(LogLevel level) noexcept
{
    g_override.store(static_cast<int>(level), std::memory_order_relaxed);
}

namespace detail
{

LogLevel log_threshold(const char* category) noexcept
{
    const int o = g_override.load(std::memory_order_relaxed);
    if (o >= 0)
        return static_cast<LogLevel>(o);
    const LogConfig& cfg = config();
    for (const Rule& r : cfg.rules)
        if (r.category == category)
            return r.level;
    return cfg.fallback;
}

void log_message(LogLevel level, const char* category, const char* fmt, ...) noexcept
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);

    std::lock_guard lock(g_handler_mutex);
    if (g_handler) {
        g_handler(level, category, buf, g_handler_data);
        return;
    }
    static const char* names[] = {"", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
    std::fprintf(stderr, "edgetensor %s %s: %s\n", names[static_cast<int>(level)], category, buf);
}

} // namespace detail
} // namespace edgetensor
