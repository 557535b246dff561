// SPDX-License-Identifier: MIT
//
// CUDA device pointers for tensors, without a copy and without linking CUDA.
//
// libcudart is found at run time (dlopen, once per process) or not at all: nothing here needs
// the CUDA toolkit to build, and a process without CUDA runs everything else unchanged. The
// library tried is EDGETENSOR_CUDART when set (a path or a soname, and then only that one),
// else libcudart.so.13, .so.12, .so.11.0, then libcudart.so.
//
// TensorDyn::cuda_map() / Tensor<T>::cuda_map() give an RAII CudaMap over the tensor's window:
// - TensorMemory::Pbo: the pixel buffer object is registered with CUDA once
//   (cudaGraphicsGLRegisterBuffer) and mapped (cudaGraphicsMapResources) while any CudaMap of it
//   lives, every call on the GL context's own thread. While mapped for CUDA the PBO cannot be
//   mapped for the CPU nor used by a GL converter (and a CPU-mapped PBO cannot be mapped for
//   CUDA); the registration is dropped on the GL thread before the buffer is deleted.
// - TensorMemory::Dma: a dup of the DMA-BUF fd is imported as CUDA external memory
//   (cudaImportExternalMemory, cudaExternalMemoryHandleTypeOpaqueFd) and mapped as one buffer
//   the first time; the import lives as long as the storage and needs no GL thread. NVIDIA's
//   drivers for discrete GPUs refuse DMA-BUFs there (docs/cuda.md: an H200 refused even one
//   CUDA exported); the error says so: there, give CUDA shared memory (below) or a PBO.
// - TensorMemory::Shm, and Mem of 64 KiB or more: the pages are registered with CUDA in place
//   (cudaHostRegister, mapped; read-only for a buffer imported so) the first time and until the
//   storage dies; the device reads and writes them over the bus, without a copy. A smaller Mem
//   tensor shares its pages with other allocations and is NotSupported.
//
// Synchronisation: leaving a PBO's last CudaMap unmaps it, which orders the CUDA work issued
// before it ahead of later GL work. A DMA-BUF import or a host registration has no such bracket:
// finish the CUDA work (cudaStreamSynchronize) before mapping the tensor for the CPU or handing
// it on.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/types.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

namespace edgetensor
{

namespace detail
{
/// Ends a CUDA mapping when destroyed (unmaps a PBO on its GL thread; releases the storage).
class CudaGuard
{
public:
    virtual ~CudaGuard() = default;
};
} // namespace detail

/// What the CUDA runtime answered when it was loaded.
struct CudaInfo {
    /// What dlopen() was given ("libcudart.so.12", or EDGETENSOR_CUDART's value).
    std::string library;
    int device_count = 0;
    /// cudaRuntimeGetVersion(), e.g. 12040; 0 when the runtime does not say.
    int runtime_version = 0;
};

/// True when libcudart was loaded and cudaGetDeviceCount() reported at least one device.
/// Decided once per process; later calls only read the result.
bool cuda_available() noexcept;

/// The loaded runtime, or why there is none: ErrorCode::Unavailable naming the library tried
/// and the dlopen error, the missing entry point, or the cudaGetDeviceCount() error. The
/// runtime is never looked for twice in one process.
Result<CudaInfo> cuda_info();

/// A device pointer to a tensor's window, valid while this object lives. Move-only; a
/// moved-from or reset() map is inert. Holds the tensor's storage alive.
class CudaMap
{
public:
    CudaMap() = default;
    CudaMap(std::unique_ptr<detail::CudaGuard> guard, void* device_ptr, size_t bytes,
            TensorMemory memory) noexcept
        : guard_(std::move(guard)), ptr_(device_ptr), bytes_(bytes), memory_(memory)
    {
    }
    CudaMap(CudaMap&& o) noexcept { *this = std::move(o); }
    CudaMap& operator=(CudaMap&& o) noexcept
    {
        if (this != &o) {
            guard_ = std::move(o.guard_);
            ptr_ = std::exchange(o.ptr_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
            memory_ = o.memory_;
        }
        return *this;
    }
    CudaMap(const CudaMap&) = delete;
    CudaMap& operator=(const CudaMap&) = delete;

    bool is_mapped() const noexcept { return guard_ != nullptr; }
    /// The window's first byte in the CUDA address space (a CUdeviceptr); null when inert.
    void* device_ptr() const noexcept { return ptr_; }
    /// Bytes from device_ptr() to the window's last addressed byte (strided images included).
    size_t size_bytes() const noexcept { return bytes_; }
    /// Pbo or Dma: which backing the pointer comes from.
    TensorMemory memory() const noexcept { return memory_; }
    /// Ends the mapping now (a PBO's last map is unmapped on its GL thread).
    void reset() noexcept { *this = CudaMap(); }

private:
    std::unique_ptr<detail::CudaGuard> guard_;
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
    TensorMemory memory_ = TensorMemory::Mem;
};

} // namespace edgetensor
