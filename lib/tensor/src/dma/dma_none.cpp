// SPDX-License-Identifier: MIT
//
// Placeholder DMA seam for builds without the Linux providers: every request fails with a
// clear reason, so the allocation chain falls through to Shm / Mem.

#include "storage.hpp"

namespace edgetensor::detail {

StorageResult allocate_dma(const AllocRequest&)
{
    return make_error(ErrorCode::Unavailable,
                      "no DMA-BUF provider is built into this edgetensor (dma feature disabled)");
}

StorageResult import_dma(UniqueFd, size_t, CpuAccess)
{
    return make_error(ErrorCode::NotSupported,
                      "DMA-BUF import is not built into this edgetensor (dma feature disabled)");
}

bool dma_available() noexcept
{
    return false;
}

} // namespace edgetensor::detail
