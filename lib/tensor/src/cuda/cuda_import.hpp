// SPDX-License-Identifier: MIT
//
// How storages give CUDA a device pointer without a copy, each kept for the storage's whole life
// (created at its first cuda_map()):
// - ExternalBuffer: a DMA-BUF imported as CUDA external memory, mapped as one linear buffer;
// - HostRegistration: host pages (shared memory, large heap tensors) page-locked and mapped
//   into the device's address space (cudaHostRegister), which the GPU reads and writes in
//   place over the bus. Discrete NVIDIA GPUs take these where they refuse DMA-BUFs.

#pragma once

#include "cuda/cuda_api.hpp"

#include <memory>
#include <mutex>
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

class HostRegistration
{
public:
    /// Registers [base, base + bytes) (whole pages, owned by the caller's storage and mapped
    /// for as long as the registration lives) as mapped, read-only when the pages are, and
    /// asks for its device pointer. A failed pointer query unregisters again.
    static Result<std::unique_ptr<HostRegistration>> create(void* base, size_t bytes,
                                                            bool read_only, std::string_view what);
    /// cudaHostUnregister: before the pages are unmapped or freed.
    ~HostRegistration();
    HostRegistration(const HostRegistration&) = delete;
    HostRegistration& operator=(const HostRegistration&) = delete;

    void* device_ptr() const noexcept { return dev_; }

private:
    HostRegistration(const Api* api, void* base, void* dev) : api_(api), base_(base), dev_(dev) {}
    const Api* api_;
    void* base_;
    void* dev_;
};

/// A host storage's CUDA side: its registration, made once at the first begin() and kept until
/// reset() (the storage's destructor, before it unmaps or frees its pages). Thread-safe.
class HostAccess
{
public:
    /// The device pointer of `base` (page-aligned): registers `bytes` rounded up to whole
    /// pages the first time. A failed registration is not remembered.
    Result<void*> begin(void* base, size_t bytes, bool read_only, std::string_view what);
    void reset() noexcept;

private:
    std::mutex mu_;
    std::unique_ptr<HostRegistration> reg_;
};

} // namespace edgetensor::detail::cuda
