// SPDX-License-Identifier: MIT
//
// The DMA seam for builds without the Linux providers (dma feature disabled, or not Linux):
// requests are validated like everywhere else, then refused with a reason per provider, so the
// allocation chain falls through to Shm / Mem.

#include "dma_internal.hpp"

#include <string>

namespace edgetensor::detail
{

StorageResult allocate_dma(const AllocRequest& req)
{
    auto order = dma_request_order(req);
    if (!order)
        return unexpected(std::move(order).error());
    std::string why;
    for (DmaProvider p : *order) {
        if (!why.empty())
            why += "; ";
        why += std::string(dma_provider_name(p)) + " is not built into this edgetensor";
    }
    return make_error(ErrorCode::Unavailable, "no DMA-BUF provider could allocate " +
                                                  std::to_string(req.bytes) + " bytes: " + why +
                                                  " (dma feature disabled, or not Linux)");
}

StorageResult import_dma(UniqueFd fd, size_t, CpuAccess)
{
    if (!fd)
        return make_error(ErrorCode::InvalidArgument, "import of DMA-BUF: the fd is not valid");
    return make_error(ErrorCode::NotSupported,
                      "DMA-BUF import is not built into this edgetensor (dma feature disabled, "
                      "or not Linux)");
}

bool dma_available() noexcept
{
    return false;
}

} // namespace edgetensor::detail

namespace edgetensor
{

bool is_dma_provider_available(DmaProvider) noexcept
{
    return false;
}

} // namespace edgetensor
