// SPDX-License-Identifier: MIT
#include "require.hpp"

#include <cstdlib>
#include <cstring>

namespace edgetensor::test
{

bool dma_required()
{
    const char* v = std::getenv("EDGETENSOR_TEST_REQUIRE_DMA");
    return v && std::strcmp(v, "1") == 0;
}

} // namespace edgetensor::test
