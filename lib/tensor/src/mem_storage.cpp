// SPDX-License-Identifier: MIT
//
// Heap backend: 64-byte aligned, zero-filled, no fd.

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

class MemStorage final : public Storage
{
public:
    MemStorage(uint8_t* data, size_t capacity, CpuAccess access)
        : Storage(capacity, access), data_(data)
    {
    }
    ~MemStorage() override { std::free(data_); }

    TensorMemory memory() const noexcept override { return TensorMemory::Mem; }
    std::string_view provider() const noexcept override { return "heap"; }
    Result<uint8_t*> begin_cpu_access(CpuAccess) override { return data_; }
    void end_cpu_access(CpuAccess) noexcept override {}

private:
    uint8_t* data_;
};

} // namespace

StorageResult allocate_mem(const AllocRequest& req)
{
    if (req.bytes == 0)
        return make_error(ErrorCode::InvalidShape, "cannot allocate a zero-byte heap tensor");
    const size_t bytes = align_up(req.bytes, kDmaRowAlignment);
    if (bytes < req.bytes)
        return make_error(ErrorCode::AllocationFailed, "heap allocation size overflows");
    void* p = nullptr;
    if (posix_memalign(&p, kDmaRowAlignment, bytes) != 0 || !p)
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
