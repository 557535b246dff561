// SPDX-License-Identifier: MIT
//
// A DMA-BUF imported as CUDA external memory and mapped as one linear buffer. The DMA-BUF
// storage keeps one for its whole life (created at its first cuda_map()).

#pragma once

#include "cuda/cuda_api.hpp"

#include <memory>
#include <string_view>

namespace edgetensor::detail::cuda
{

class ExternalBuffer
{
public:
    /// Imports a CLOEXEC dup of `fd` (borrowed; left open whatever happens) as
    /// cudaExternalMemoryHandleTypeOpaqueFd of `size` bytes and maps all of it. CUDA owns the
    /// dup once the import succeeds; when the import fails the dup is closed here, and when the
    /// mapping fails the import is destroyed (which releases the dup).
    static Result<std::unique_ptr<ExternalBuffer>> import(int fd, size_t size,
                                                          std::string_view what);
    /// cudaFree of the mapping, then cudaDestroyExternalMemory.
    ~ExternalBuffer();
    ExternalBuffer(const ExternalBuffer&) = delete;
    ExternalBuffer& operator=(const ExternalBuffer&) = delete;

    void* device_ptr() const noexcept { return ptr_; }

private:
    ExternalBuffer(const Api* api, cudaExternalMemory_t mem, void* ptr)
        : api_(api), mem_(mem), ptr_(ptr)
    {
    }
    const Api* api_;
    cudaExternalMemory_t mem_;
    void* ptr_;
};

} // namespace edgetensor::detail::cuda
