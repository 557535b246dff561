// SPDX-License-Identifier: MIT
//
// The Linux DMA-BUF providers behind TensorMemory::Dma: which exist on this host, and which
// the allocation chain may use. TensorDyn::provider() says which one backs a given tensor.

#pragma once

#include "edgetensor/error.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace edgetensor
{

/// A DMA-BUF exporter edgetensor can allocate from, listed in the default chain order.
enum class DmaProvider : uint32_t {
    /// A dma-heap: /dev/dma_heap/linux,cma first (physically contiguous), then
    /// /dev/dma_heap/system. Backs tensors named "dma-heap:linux,cma" / "dma-heap:system".
    DmaHeap = 0,
    /// /dev/udmabuf turning a sealed memfd into a DMA-BUF ("udmabuf"). The kernel caps one
    /// buffer at udmabuf.size_limit_mb (64 MiB by default).
    Udmabuf = 1,
    /// A DRM dumb buffer exported with PRIME from the first /dev/dri node that offers both
    /// (vgem does): "drm-prime:<driver>", e.g. "drm-prime:vgem".
    DrmPrime = 2,
};

inline constexpr size_t kDmaProviderCount = 3;
/// The order the allocation chain walks when nothing restricts it.
inline constexpr std::array<DmaProvider, kDmaProviderCount> kDefaultDmaProviders = {
    DmaProvider::DmaHeap, DmaProvider::Udmabuf, DmaProvider::DrmPrime};

/// "dma-heap", "udmabuf", "drm-prime": the names EDGETENSOR_DMA_PROVIDERS uses.
std::string_view dma_provider_name(DmaProvider provider) noexcept;

/// Parses one provider name. InvalidArgument names the unknown word and lists the known ones.
Result<DmaProvider> parse_dma_provider(std::string_view name);

/// Parses an ordered provider list such as "udmabuf,drm-prime" (commas and/or spaces). "none"
/// is the empty list (DMA allocation disabled). InvalidArgument for an unknown or repeated
/// name, or an empty string.
Result<std::vector<DmaProvider>> parse_dma_provider_list(std::string_view list);

/// True when `provider` can allocate on this host. Decided once per process (and cached) by a
/// real one-page allocation, so it never claims a provider that cannot deliver; the reason for
/// a `false` is logged in category "dma" at debug level. Ignores set_dma_providers().
bool is_dma_provider_available(DmaProvider provider) noexcept;
inline bool is_dma_heap_available() noexcept
{
    return is_dma_provider_available(DmaProvider::DmaHeap);
}
inline bool is_udmabuf_available() noexcept
{
    return is_dma_provider_available(DmaProvider::Udmabuf);
}
inline bool is_drm_prime_available() noexcept
{
    return is_dma_provider_available(DmaProvider::DrmPrime);
}

/// The providers the DMA allocation chain walks now, in order: the list given to
/// set_dma_providers() if any, else EDGETENSOR_DMA_PROVIDERS if set, else
/// kDefaultDmaProviders. InvalidArgument when EDGETENSOR_DMA_PROVIDERS cannot be parsed (DMA
/// allocation then fails with the same error instead of guessing).
Result<std::vector<DmaProvider>> active_dma_providers();

/// Restricts and orders the providers the chain walks, for the whole process (thread-safe;
/// affects allocations started afterwards and is_dma_available()). An empty list disables DMA
/// allocation, which then falls through to the next backend. InvalidArgument for a repeated
/// provider or a value outside DmaProvider; the previous setting is then kept.
Result<void> set_dma_providers(std::span<const DmaProvider> providers);

/// Drops the set_dma_providers() override: back to EDGETENSOR_DMA_PROVIDERS or the default.
void reset_dma_providers() noexcept;

} // namespace edgetensor
