// SPDX-License-Identifier: MIT
//
// Device requirements for tests. A test that needs DMA-BUF skips with a reason on a host
// without a provider, and fails instead when EDGETENSOR_TEST_REQUIRE_DMA=1 (the VM lane).

#pragma once

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

namespace edgetensor::test
{

/// True when EDGETENSOR_TEST_REQUIRE_DMA=1.
bool dma_required();

} // namespace edgetensor::test

#define ET_REQUIRE_DMA_OR_SKIP()                                                                   \
    do {                                                                                           \
        if (!::edgetensor::is_dma_available()) {                                                   \
            if (::edgetensor::test::dma_required())                                                \
                FAIL() << "EDGETENSOR_TEST_REQUIRE_DMA=1 but no DMA-BUF provider is available";    \
            GTEST_SKIP() << "no DMA-BUF provider on this host (/dev/dma_heap, /dev/udmabuf, "      \
                            "/dev/dri missing)";                                                   \
        }                                                                                          \
    } while (0)
