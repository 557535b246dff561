// SPDX-License-Identifier: MIT
//
// TensorDyn::cuda_map(): the storage gives the device address of its allocation (a PBO through
// its GL thread, a DMA-BUF through its CUDA import); the map offsets it to the tensor's window.

#include "cuda/cuda_import.hpp"
#include "log.hpp"
#include "tensor_internal.hpp"

#include "edgetensor/tensor_dyn.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace edgetensor
{
namespace detail
{
namespace
{

class StorageCudaGuard final : public CudaGuard
{
public:
    explicit StorageCudaGuard(std::shared_ptr<Storage> s) noexcept : storage_(std::move(s)) {}
    ~StorageCudaGuard() override { storage_->end_cuda_access(); }

private:
    std::shared_ptr<Storage> storage_;
};

} // namespace

Result<void*> Storage::begin_cuda_access()
{
    return make_error(ErrorCode::NotSupported,
                      "cuda_map() of a tensor of provider '" + std::string(provider()) +
                          "', which CUDA cannot address without a copy; PBO, DMA-BUF, "
                          "shared-memory and heap tensors can be mapped");
}

namespace cuda
{

Result<std::unique_ptr<ExternalBuffer>> ExternalBuffer::import(int fd, size_t size,
                                                               std::string_view what)
{
    auto a = api();
    if (!a)
        return unexpected(std::move(a).error());
    const Api& cu = **a;
    if (fd < 0 || size == 0)
        return make_error(ErrorCode::InvalidArgument,
                          std::string(what) + ": no DMA-BUF fd or size to import into CUDA");
    // CUDA takes the fd it imports: give it a dup so the storage keeps its own.
    const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0)
        return unexpected(
            Error::io(errno, std::string(what) + ": cannot duplicate the DMA-BUF fd for CUDA"));
    cudaExternalMemoryHandleDesc desc{};
    desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = dup;
    desc.size = size;
    cudaExternalMemory_t mem = nullptr;
    cudaError_t e = cu.cudaImportExternalMemory(&mem, &desc);
    if (e != cudaSuccess) {
        // Only a successful import transfers the fd to CUDA.
        ::close(dup);
        // Allocation failures say enough; anything else is the driver refusing the handle.
        Unexpected u = call_failed(cu, what, "cudaImportExternalMemory", e);
        if (u.error.code() == ErrorCode::AllocationFailed)
            return u;
        return make_error(
            u.error.code(),
            u.error.message() +
                ". The driver does not take this DMA-BUF as CUDA external memory: CUDA imports "
                "the opaque fds CUDA or Vulkan export, and NVIDIA's drivers for discrete GPUs "
                "refuse DMA-BUFs (from a camera, a dma-heap, another device, or CUDA itself). "
                "Map a shared-memory tensor (TensorMemory::Shm, registered in place) or a PBO "
                "instead");
    }
    cudaExternalMemoryBufferDesc buf{};
    buf.offset = 0;
    buf.size = size;
    void* ptr = nullptr;
    e = cu.cudaExternalMemoryGetMappedBuffer(&ptr, mem, &buf);
    if (e != cudaSuccess) {
        const cudaError_t d = cu.cudaDestroyExternalMemory(mem);
        if (d != cudaSuccess)
            ET_LOG_ERROR("cuda", "%.*s: cudaDestroyExternalMemory failed with %s", int(what.size()),
                         what.data(), error_text(cu, d).c_str());
        return call_failed(cu, what, "cudaExternalMemoryGetMappedBuffer", e);
    }
    ET_LOG_DEBUG("cuda", "%.*s: %zu bytes imported as CUDA external memory at %p", int(what.size()),
                 what.data(), size, ptr);
    auto* out = new (std::nothrow) ExternalBuffer(&cu, mem, ptr);
    if (!out) {
        cu.cudaFree(ptr);
        cu.cudaDestroyExternalMemory(mem);
        return make_error(ErrorCode::AllocationFailed, "out of memory");
    }
    return std::unique_ptr<ExternalBuffer>(out);
}

ExternalBuffer::~ExternalBuffer()
{
    cudaError_t e = api_->cudaFree(ptr_);
    if (e != cudaSuccess)
        ET_LOG_ERROR("cuda", "cudaFree of an imported DMA-BUF mapping failed with %s",
                     error_text(*api_, e).c_str());
    e = api_->cudaDestroyExternalMemory(mem_);
    if (e != cudaSuccess)
        ET_LOG_ERROR("cuda", "cudaDestroyExternalMemory failed with %s",
                     error_text(*api_, e).c_str());
}

} // namespace cuda
} // namespace detail

Result<CudaMap> TensorDyn::cuda_map() const
{
    if (!storage_)
        return make_error(ErrorCode::InvalidArgument, "cuda_map() of an empty tensor");
    if (chroma_ && chroma_->storage != storage_)
        return make_error(ErrorCode::NotSupported,
                          "cuda_map() of '" + name_ +
                              "': its luma and chroma planes live in two buffers; map the "
                              "tensor of each plane instead");
    const size_t bytes = window_bytes();
    if (offset_ + bytes > storage_->capacity())
        return make_error(ErrorCode::InsufficientCapacity,
                          "internal: tensor window exceeds its storage");
    auto base = storage_->begin_cuda_access();
    if (!base)
        return unexpected(std::move(base).error());
    std::unique_ptr<detail::CudaGuard> guard(new (std::nothrow) detail::StorageCudaGuard(storage_));
    if (!guard) {
        storage_->end_cuda_access();
        return make_error(ErrorCode::AllocationFailed, "out of memory");
    }
    return CudaMap(std::move(guard), static_cast<uint8_t*>(*base) + offset_, bytes,
                   storage_->memory());
}

} // namespace edgetensor
