// SPDX-License-Identifier: MIT
//
// Storage: the bytes behind a tensor (fd, capacity, how to reach them from the CPU),
// separate from the view of them (dtype, shape, strides, window offset) that TensorDyn holds.

#pragma once

#include "edgetensor/compression.hpp"
#include "edgetensor/error.hpp"
#include "edgetensor/types.hpp"
#include "edgetensor/unique_fd.hpp"
#include "fault.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

struct AHardwareBuffer;

namespace edgetensor::detail
{

class Storage
{
public:
    Storage(size_t capacity, CpuAccess declared) : capacity_(capacity), declared_(declared)
    {
        count_storage(1, capacity);
    }
    virtual ~Storage() { count_storage(-1, capacity_); }
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    virtual TensorMemory memory() const noexcept = 0;
    /// Short provider name for logs, stats and tests.
    virtual std::string_view provider() const noexcept = 0;
    /// Borrowed fd, -1 when the storage has none.
    virtual int fd() const noexcept { return -1; }
    /// Borrowed platform buffer (Android AHardwareBuffer), null for every other storage.
    virtual AHardwareBuffer* hardware_buffer() const noexcept { return nullptr; }
    /// The platform's stable id of the buffer (AHardwareBuffer_getId), when it has one: the
    /// key identities are interned on.
    virtual std::optional<uint64_t> platform_id() const noexcept { return std::nullopt; }
    /// The vendor tile compression recorded at allocation (physical layout, so every tensor
    /// sharing the storage reports it).
    virtual std::optional<CompressionScheme> compression() const noexcept { return std::nullopt; }

    /// Starts CPU access to the whole allocation and returns its first byte. DMA storage
    /// issues DMA_BUF_IOCTL_SYNC START here; every successful call is paired with one
    /// end_cpu_access() with the same access.
    virtual Result<uint8_t*> begin_cpu_access(CpuAccess access) = 0;
    virtual void end_cpu_access(CpuAccess access) noexcept = 0;

    /// Starts CUDA access to the whole allocation and returns its first byte's device address
    /// (edgetensor/cuda.hpp); every success is paired with one end_cuda_access(). Storage that
    /// CUDA cannot reach (heap, shm) refuses with NotSupported naming its memory kind.
    virtual Result<void*> begin_cuda_access();
    virtual void end_cuda_access() noexcept {}

    size_t capacity() const noexcept { return capacity_; }
    CpuAccess declared_access() const noexcept { return declared_; }
    /// Returns true exactly once per storage: the first unplanned access warns.
    bool first_unplanned_access() noexcept { return !unplanned_warned_.exchange(true); }

protected:
    size_t capacity_;
    CpuAccess declared_;

private:
    std::atomic<bool> unplanned_warned_{false};
};

/// What an allocator is asked for. `name` is used for memfd / DMA_BUF_SET_NAME labels.
struct AllocRequest {
    size_t bytes = 0;
    std::string_view name;
    CpuAccess access = CpuAccess::ReadWrite;
};

using StorageResult = Result<std::shared_ptr<Storage>>;

// Host backends (mem_storage.cpp, shm_storage.cpp).
StorageResult allocate_mem(const AllocRequest& req);
StorageResult allocate_shm(const AllocRequest& req);
/// Adopts a tmpfs fd (memfd or shm_open); `size` is its st_size.
StorageResult import_shm(UniqueFd fd, size_t size, CpuAccess access);

// The DMA seam (dma/): the Linux providers live behind these three calls so the core never
// changes when a provider is added.
/// Walks the DMA provider table in order; the error says why each provider was skipped.
StorageResult allocate_dma(const AllocRequest& req);
/// Adopts a DMA-BUF fd (already classified by its fs magic); `size` is its st_size.
StorageResult import_dma(UniqueFd fd, size_t size, CpuAccess access);
/// True when some provider can allocate (probed once, cached).
bool dma_available() noexcept;

} // namespace edgetensor::detail
