// SPDX-License-Identifier: MIT
//
// Heap backend: zero-filled, no fd; 64-byte aligned, and whole pages from 64 KiB up so that
// CUDA can register a tensor's pages (cudaHostRegister) without touching another allocation's.

#include "cuda/cuda_import.hpp"
#include "dma/dma_internal.hpp"
#include "log.hpp"
#include "storage.hpp"

#include "edgetensor/pixel_format.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace edgetensor::detail
{
namespace
{

constexpr size_t kWholePagesFrom = 64 * 1024;

class MemStorage final : public Storage
{
public:
    MemStorage(uint8_t* data, size_t capacity, CpuAccess access)
        : Storage(capacity, access), data_(data)
    {
    }
    ~MemStorage() override
    {
        cuda_.reset(); // unregistered before the pages go back to the heap
        std::free(data_);
    }

    TensorMemory memory() const noexcept override { return TensorMemory::Mem; }
    std::string_view provider() const noexcept override { return "heap"; }
    Result<uint8_t*> begin_cpu_access(CpuAccess) override { return data_; }
    void end_cpu_access(CpuAccess) noexcept override {}

    Result<void*> begin_cuda_access() override
    {
        // Only allocations of whole pages (kWholePagesFrom up, allocate_mem) own every page
        // they touch.
        if (capacity_ < kWholePagesFrom)
            return make_error(ErrorCode::NotSupported,
                              "cuda_map() of a TensorMemory::Mem (heap) tensor of " +
                                  std::to_string(capacity_) +
                                  " bytes: heap tensors under 64 KiB share their memory pages "
                                  "with other allocations, and CUDA registers whole pages; "
                                  "create it as TensorMemory::Shm or in a PBO");
        return cuda_.begin(data_, capacity_, false, "CUDA registration of a heap tensor");
    }

private:
    uint8_t* data_;
    cuda::HostAccess cuda_;
};

} // namespace

StorageResult allocate_mem(const AllocRequest& req)
{
    if (req.bytes == 0)
        return make_error(ErrorCode::InvalidShape, "cannot allocate a zero-byte heap tensor");
    const size_t align = req.bytes >= kWholePagesFrom ? dma_page_size() : kDmaRowAlignment;
    const size_t bytes = align_up(req.bytes, align);
    if (bytes < req.bytes)
        return make_error(ErrorCode::AllocationFailed, "heap allocation size overflows");
    void* p = nullptr;
    if (posix_memalign(&p, align, bytes) != 0 || !p)
        return make_error(ErrorCode::AllocationFailed,
                          "heap allocation of " + std::to_string(bytes) + " bytes failed");
    std::memset(p, 0, bytes);
    ET_LOG_TRACE("mem", "allocated %zu bytes", bytes);
    auto* s = new (std::nothrow) MemStorage(static_cast<uint8_t*>(p), req.bytes, req.access);
    if (!s) {
        std::free(p);
        return make_error(ErrorCode::AllocationFailed, "out of memory");
    }
    return std::shared_ptr<Storage>(s);
}

} // namespace edgetensor::detail
