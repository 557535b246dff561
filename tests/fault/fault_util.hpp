// SPDX-License-Identifier: MIT
//
// Fault-injection tests: each runs in a process of its own with EDGETENSOR_FAULT set (meson
// suite "fault", tests/fault/meson.build), skips with the spec it needs when run by hand without
// it, and counts what an error path must give back: fds and live tensor storages.

#pragma once

#include "fault.hpp"
#include "fd_count.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace edgetensor::test
{

/// What a failure path must leave as it found it.
struct Footprint {
    std::set<int> fds = open_fds();
    detail::LiveStorage storage = detail::live_storage();
};

inline void expect_same_footprint(const Footprint& before, const char* when)
{
    const Footprint now;
    std::set<int> leaked;
    for (int fd : now.fds)
        if (!before.fds.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << when << ": leaked fds " << describe_fds(leaked);
    EXPECT_EQ(now.storage.count, before.storage.count) << when << ": tensor storages left alive";
    EXPECT_EQ(now.storage.bytes, before.storage.bytes) << when << ": bytes left allocated";
}

inline uint64_t injected(detail::FaultPoint p)
{
    return detail::fault_injected(p);
}

} // namespace edgetensor::test

/// Skips unless this process runs with EDGETENSOR_FAULT=`spec` (meson sets it per test).
#define ET_REQUIRE_FAULT(spec)                                                                     \
    do {                                                                                           \
        if (::edgetensor::detail::fault_spec() != (spec))                                          \
            GTEST_SKIP() << "needs EDGETENSOR_FAULT=" << (spec)                                    \
                         << " (run it with: meson test --suite fault)";                            \
    } while (0)
