// SPDX-License-Identifier: MIT
//
// Installs the AHardwareBuffer shell (built against the simulated NDK) as the Dma backend for
// one test, and checks on the way out that the test left the simulated gralloc balanced: no
// buffer alive, every lock unlocked, no contract violation.

#pragma once

#include "ahb_shell.hpp"
#include "platform_buffer.hpp"
#include "sim_ndk_control.h"

#include <gtest/gtest.h>

class SimNdkTest : public ::testing::Test
{
protected:
    void SetUp() override
    {
        sim_ndk_reset();
        edgetensor::detail::set_platform_buffer_ops(&edgetensor::detail::ahb::platform_ops());
    }
    void TearDown() override
    {
        edgetensor::detail::set_platform_buffer_ops(nullptr);
        const SimNdkStats s = stats();
        EXPECT_EQ(s.live, 0u) << "AHardwareBuffers leaked (acquire/release unbalanced)";
        EXPECT_EQ(s.locks, s.unlocks) << "lock/unlock unbalanced";
        EXPECT_EQ(s.violations, 0u) << "the shell broke the NDK contract (see stderr)";
        EXPECT_EQ(s.allocated + s.acquired, s.released)
            << "references handed out and released do not balance";
    }
    static SimNdkStats stats()
    {
        SimNdkStats s{};
        sim_ndk_get_stats(&s);
        return s;
    }
    static AHardwareBuffer_Desc describe(const AHardwareBuffer* b)
    {
        AHardwareBuffer_Desc d{};
        AHardwareBuffer_describe(b, &d);
        return d;
    }
};
