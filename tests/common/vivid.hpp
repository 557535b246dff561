// SPDX-License-Identifier: MIT
//
// The vivid V4L2 test camera for tests. A test that needs it skips with a reason on a host
// without one, and fails instead when EDGETENSOR_TEST_REQUIRE_VIVID=1 (the VM lane loads vivid).

#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace edgetensor::test
{

/// The first vivid node (/dev/video0..63) that captures single-planar video with streaming
/// I/O; nullopt when there is none.
std::optional<std::string> find_vivid_capture();

/// True when EDGETENSOR_TEST_REQUIRE_VIVID=1.
bool vivid_required();

} // namespace edgetensor::test

// Sets `var` (a std::string) to the vivid capture node, or skips/fails the test.
#define ET_REQUIRE_VIVID_OR_SKIP(var)                                                              \
    do {                                                                                           \
        auto et_vivid_node_ = ::edgetensor::test::find_vivid_capture();                            \
        if (!et_vivid_node_) {                                                                     \
            if (::edgetensor::test::vivid_required())                                              \
                FAIL() << "EDGETENSOR_TEST_REQUIRE_VIVID=1 but there is no vivid capture node "    \
                          "among /dev/video* (modprobe vivid)";                                    \
            GTEST_SKIP() << "no vivid capture node among /dev/video* (the VM lane has one)";       \
        }                                                                                          \
        var = *et_vivid_node_;                                                                     \
    } while (0)
