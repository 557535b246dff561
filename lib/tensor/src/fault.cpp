// SPDX-License-Identifier: MIT
#include "fault.hpp"

#include "errno_name.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace edgetensor::detail
{
namespace
{

constexpr std::array<const char*, kFaultPointCount> kPointNames = {
    "dma-heap-alloc", "udmabuf-create", "memfd-create", "mmap",  "dma-buf-sync",
    "fstat",          "fstatfs",        "dup",          "throw",
};

struct Rule {
    bool armed = false;
    int err = 0;
    uint64_t skip = 0;
    uint64_t times = UINT64_MAX; // failures after the skipped calls
};

struct Config {
    std::array<Rule, kFaultPointCount> rules{};
    std::string spec;
};

bool parse_u64(std::string_view s, uint64_t* out)
{
    if (s.empty() || s.size() > 19)
        return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + uint64_t(c - '0');
    }
    *out = v;
    return true;
}

/// `"<quoted>"<what>`, appended piece by piece: `"\"" + std::string(x) + ...` makes GCC 12 at -O3
/// report a -Wrestrict overlap in the inlined operator+ that cannot happen (GCC bug 105329).
std::string quote(std::string_view quoted, std::string_view what)
{
    std::string s;
    s.reserve(quoted.size() + what.size() + 2);
    s += '"';
    s += quoted;
    s += '"';
    s += what;
    return s;
}

bool parse(std::string_view spec, Config* cfg, std::string* why)
{
    if (spec.empty()) {
        *why = "the spec is empty";
        return false;
    }
    while (!spec.empty()) {
        const size_t comma = spec.find(',');
        const std::string_view entry = spec.substr(0, comma);
        spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
        const size_t eq = entry.find('=');
        if (eq == std::string_view::npos) {
            *why = quote(entry, " is not <point>=<errno>[@skip][*times]");
            return false;
        }
        const std::string_view point = entry.substr(0, eq);
        std::string_view rest = entry.substr(eq + 1);
        unsigned index = kFaultPointCount;
        for (unsigned i = 0; i < kFaultPointCount; ++i)
            if (point == kPointNames[i])
                index = i;
        if (index == kFaultPointCount) {
            *why = "unknown fault point " +
                   quote(point, " (dma-heap-alloc, udmabuf-create, memfd-create, mmap, "
                                "dma-buf-sync, fstat, fstatfs, dup, throw)");
            return false;
        }
        Rule r;
        r.armed = true;
        const size_t star = rest.find('*');
        if (star != std::string_view::npos) {
            if (!parse_u64(rest.substr(star + 1), &r.times) || r.times == 0) {
                *why = quote(entry, ": *times must be a positive integer");
                return false;
            }
            rest = rest.substr(0, star);
        }
        const size_t at = rest.find('@');
        if (at != std::string_view::npos) {
            if (!parse_u64(rest.substr(at + 1), &r.skip)) {
                *why = quote(entry, ": @skip must be an integer");
                return false;
            }
            rest = rest.substr(0, at);
        }
        uint64_t num = 0;
        if (auto named = errno_from_name(rest)) {
            r.err = *named;
        } else if (parse_u64(rest, &num) && num > 0 && num < 4096) {
            r.err = int(num);
        } else {
            *why = quote(entry, ": ") +
                   quote(rest, " is not an errno name (ENOMEM, EIO, ...) or number");
            return false;
        }
        if (cfg->rules[index].armed) {
            *why = "fault point " + quote(point, " is given twice");
            return false;
        }
        cfg->rules[index] = r;
    }
    return true;
}

const Config& config() noexcept
{
    // Read once: a test process is configured by its environment, never half-way through.
    static const Config cfg = [] {
        Config c;
        const char* env = std::getenv("EDGETENSOR_FAULT");
        if (!env || !*env)
            return c;
        std::string why;
        Config parsed;
        if (!parse(env, &parsed, &why)) {
            // Not the logger: a fault test with a typo must say so whatever EDGETENSOR_DEBUG is.
            std::fprintf(stderr, "edgetensor: EDGETENSOR_FAULT=\"%s\" ignored: %s\n", env,
                         why.c_str());
            return c;
        }
        parsed.spec = env;
        return parsed;
    }();
    return cfg;
}

std::atomic<bool> g_any{true}; // until config() says otherwise
std::atomic<uint64_t> g_live_count{0};
std::atomic<uint64_t> g_live_bytes{0};
std::array<std::atomic<uint64_t>, kFaultPointCount> g_calls{};
std::array<std::atomic<uint64_t>, kFaultPointCount> g_injected{};

} // namespace

bool fault_inject(FaultPoint point) noexcept
{
    if (!g_any.load(std::memory_order_relaxed))
        return false;
    const Config& cfg = config();
    if (cfg.spec.empty()) {
        g_any.store(false, std::memory_order_relaxed);
        return false;
    }
    const unsigned i = static_cast<unsigned>(point);
    const Rule& r = cfg.rules[i];
    if (!r.armed)
        return false;
    const uint64_t n = g_calls[i].fetch_add(1, std::memory_order_relaxed);
    if (n < r.skip || n - r.skip >= r.times)
        return false;
    g_injected[i].fetch_add(1, std::memory_order_relaxed);
    errno = r.err;
    return true;
}

uint64_t fault_injected(FaultPoint point) noexcept
{
    return g_injected[static_cast<unsigned>(point)].load(std::memory_order_relaxed);
}

uint64_t fault_calls(FaultPoint point) noexcept
{
    return g_calls[static_cast<unsigned>(point)].load(std::memory_order_relaxed);
}

LiveStorage live_storage() noexcept
{
    return {g_live_count.load(std::memory_order_relaxed),
            g_live_bytes.load(std::memory_order_relaxed)};
}

void count_storage(int delta, uint64_t bytes) noexcept
{
    if (delta > 0) {
        g_live_count.fetch_add(1, std::memory_order_relaxed);
        g_live_bytes.fetch_add(bytes, std::memory_order_relaxed);
    } else {
        g_live_count.fetch_sub(1, std::memory_order_relaxed);
        g_live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
    }
}

const std::string& fault_spec() noexcept
{
    return config().spec;
}

const char* fault_point_name(FaultPoint point) noexcept
{
    const unsigned i = static_cast<unsigned>(point);
    return i < kFaultPointCount ? kPointNames[i] : "?";
}

bool fault_spec_valid(const std::string& spec, std::string* why)
{
    Config c;
    std::string w;
    const bool ok = parse(spec, &c, &w);
    if (why)
        *why = w;
    return ok;
}

} // namespace edgetensor::detail
