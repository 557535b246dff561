// SPDX-License-Identifier: MIT
//
// Helpers shared by the DMA-BUF tests: provider requirements, kernel-side identity of an fd,
// and a scoped provider restriction.

#pragma once

#include "require.hpp"

#include <edgetensor/dma.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::test
{

inline constexpr uint32_t kDmaBufMagic = 0x444d4142;

/// True when EDGETENSOR_TEST_REQUIRE_DMA_PROVIDERS (a provider list, as
/// EDGETENSOR_DMA_PROVIDERS takes it) names `p`: the VM lane sets it so that a provider the
/// guest kernel has cannot silently skip.
bool dma_provider_required(DmaProvider p);
/// What TensorDyn::provider() starts with for tensors from `p` ("dma-heap:", "udmabuf",
/// "drm-prime:").
std::string provider_prefix(DmaProvider p);
/// EDGETENSOR_TEST_EXPECT_DMA_PROVIDER: the provider the lane expects the default chain to pick
/// (e.g. "udmabuf" when it hid the dma-heap), "none" when it hid them all; empty when unset.
std::string expected_default_provider();

/// fstatfs magic of `fd`, normalised to u32 (0 when fstatfs fails).
uint32_t fs_magic(int fd);
/// (st_dev, st_ino) of `fd`; (0, 0) when fstat fails.
std::pair<uint64_t, uint64_t> stat_identity_of(int fd);
/// The value of `key` in /proc/self/fdinfo/<fd> ("" when absent), e.g. "name" or "exp_name".
std::string fdinfo_field(int fd, const std::string& key);
/// True when FD_CLOEXEC is set on `fd`.
bool is_cloexec(int fd);

/// Restricts the DMA provider chain for one test; restores the default when destroyed.
class ScopedDmaProviders
{
public:
    explicit ScopedDmaProviders(std::initializer_list<DmaProvider> providers);
    ~ScopedDmaProviders() { reset_dma_providers(); }
    ScopedDmaProviders(const ScopedDmaProviders&) = delete;
    ScopedDmaProviders& operator=(const ScopedDmaProviders&) = delete;
};

} // namespace edgetensor::test

/// Skips (with the reason) when provider `p` cannot allocate here, unless the lane requires it.
#define ET_REQUIRE_DMA_PROVIDER_OR_SKIP(p)                                                         \
    do {                                                                                           \
        if (!::edgetensor::is_dma_provider_available(p)) {                                         \
            if (::edgetensor::test::dma_provider_required(p))                                      \
                FAIL() << "EDGETENSOR_TEST_REQUIRE_DMA_PROVIDERS names "                           \
                       << ::edgetensor::dma_provider_name(p)                                       \
                       << " but it cannot allocate (EDGETENSOR_DEBUG=dma:4 shows why)";            \
            GTEST_SKIP() << "DMA-BUF provider " << ::edgetensor::dma_provider_name(p)              \
                         << " is not available on this host";                                      \
        }                                                                                          \
    } while (0)
