// SPDX-License-Identifier: MIT
//
// Shared pieces of the DMA-BUF seam: request validation and provider order (dma_select.cpp,
// every platform) and the Linux providers (dma_buf.cpp, dma_providers.cpp, dma_drm.cpp).

#pragma once

#include "edgetensor/dma.hpp"
#include "storage.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace edgetensor::detail
{

/// ioctl() retried on EINTR and EAGAIN, the way libdrm's drmIoctl does: both mean "the call
/// was interrupted before it did anything, ask again".
int dma_ioctl(int fd, unsigned long request, void* arg) noexcept;

/// System page size (allocations are rounded up to it: every exporter works in pages).
size_t dma_page_size() noexcept;
/// `bytes` rounded up to whole pages; 0 when that would overflow.
size_t dma_round_to_pages(size_t bytes) noexcept;

/// Validates an allocation request (size not zero, page rounding does not overflow) and returns
/// the providers to walk for it: active_dma_providers(), which must not be empty.
Result<std::vector<DmaProvider>> dma_request_order(const AllocRequest& req);

/// "edgetensor:<name>" cut to what the kernel keeps for a DMA-BUF (DMA_BUF_NAME_LEN - 1).
std::string dma_buffer_label(std::string_view name);
/// Best-effort DMA_BUF_SET_NAME, so the buffer is recognisable in /proc/*/fdinfo and
/// /sys/kernel/debug/dma_buf/bufinfo. Failure (old kernel) is only logged.
void dma_set_name(int fd, std::string_view label) noexcept;

/// Wraps a DMA-BUF fd this library allocated or imported. `size` is the buffer size in bytes
/// (what the kernel reports, page-rounded for allocations); `provider` is kept as a copy.
StorageResult make_dma_storage(UniqueFd fd, size_t size, CpuAccess declared, std::string provider);

/// One provider's allocator: a DMA-BUF storage of at least req.bytes, or an error whose
/// message says why this provider could not deliver (it becomes the debug-log skip reason).
using DmaAllocateFn = StorageResult (*)(const AllocRequest& req);

StorageResult dma_heap_allocate(const AllocRequest& req);
StorageResult udmabuf_allocate(const AllocRequest& req);
/// dma_drm.cpp when libdrm is available, else a stub that says the provider is not built.
StorageResult drm_prime_allocate(const AllocRequest& req);

} // namespace edgetensor::detail
