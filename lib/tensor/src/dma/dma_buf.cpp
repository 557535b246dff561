// SPDX-License-Identifier: MIT
//
// DMA-BUF storage: the fd of a Linux DMA-BUF, whichever provider made it (or none: an import).
//
// CPU mapping: mmap once, lazily, on the first CPU access, and keep it until the storage dies.
// - Lazily, because most DMA tensors are never touched by the CPU (camera -> NPU): those never
//   cost a CPU mapping (on CMA or uncached heaps that is vmalloc space and page-table work).
// - Kept, because what makes CPU access coherent is the DMA_BUF_IOCTL_SYNC bracket, not the
//   mapping: re-mapping per access would add an mmap/munmap pair and a page fault per page for
//   every map (the dominant cost of a small map under the VM lane), and gives the exporter no
//   information the sync bracket does not already carry.
// Each begin_cpu_access()/end_cpu_access() pair is one SYNC START/END in the direction of the
// access (READ, WRITE or RW), so concurrent maps of one buffer each hold their own bracket.

#include "cuda/cuda_import.hpp"
#include "dma_internal.hpp"
#include "errno_name.hpp"
#include "fault.hpp"
#include "log.hpp"

#include "uapi/dma-buf.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace edgetensor::detail
{

int dma_ioctl(int fd, unsigned long request, void* arg) noexcept
{
    int r;
    do {
        r = request == DMA_BUF_IOCTL_SYNC && fault_inject(FaultPoint::DmaBufSync)
                ? -1
                : ::ioctl(fd, request, arg);
    } while (r == -1 && (errno == EINTR || errno == EAGAIN));
    return r;
}

std::string dma_buffer_label(std::string_view name)
{
    std::string label = "edgetensor:";
    label.append(name.empty() ? std::string_view("tensor") : name);
    if (label.size() > DMA_BUF_NAME_LEN - 1)
        label.resize(DMA_BUF_NAME_LEN - 1);
    return label;
}

void dma_set_name(int fd, std::string_view label) noexcept
{
    char buf[DMA_BUF_NAME_LEN] = {};
    std::memcpy(buf, label.data(), label.size() < sizeof(buf) - 1 ? label.size() : sizeof(buf) - 1);
    // DMA_BUF_SET_NAME takes the string pointer itself as the argument.
    if (dma_ioctl(fd, DMA_BUF_SET_NAME, buf) != 0)
        ET_LOG_TRACE("dma", "DMA_BUF_SET_NAME(\"%s\") on fd %d failed: %s", buf, fd,
                     std::strerror(errno));
}

namespace
{

uint64_t sync_direction(CpuAccess access) noexcept
{
    switch (access) {
    case CpuAccess::Read:
        return DMA_BUF_SYNC_READ;
    case CpuAccess::Write:
        return DMA_BUF_SYNC_WRITE;
    default:
        return DMA_BUF_SYNC_RW;
    }
}

const char* sync_direction_name(CpuAccess access) noexcept
{
    switch (sync_direction(access)) {
    case DMA_BUF_SYNC_READ:
        return "READ";
    case DMA_BUF_SYNC_WRITE:
        return "WRITE";
    default:
        return "RW";
    }
}

class DmaBufStorage final : public Storage
{
public:
    DmaBufStorage(UniqueFd fd, size_t capacity, CpuAccess declared, bool writable,
                  std::string provider)
        : Storage(capacity, declared), fd_(std::move(fd)), writable_(writable),
          provider_(std::move(provider))
    {
    }
    ~DmaBufStorage() override
    {
        // The CUDA import goes first: it was made of this buffer, so it ends before it.
        cuda_.reset();
        if (base_)
            ::munmap(base_, capacity_);
    }

    TensorMemory memory() const noexcept override { return TensorMemory::Dma; }
    std::string_view provider() const noexcept override { return provider_; }
    int fd() const noexcept override { return fd_.get(); }

    Result<uint8_t*> begin_cpu_access(CpuAccess access) override
    {
        if (access == CpuAccess::None)
            return make_error(ErrorCode::InvalidArgument,
                              "CpuAccess::None cannot be mapped; ask for Read, Write or "
                              "ReadWrite");
        if (access_writes(access) && !writable_)
            return make_error(ErrorCode::NotSupported,
                              "this DMA-BUF fd is read-only (opened without O_RDWR), so it "
                              "cannot be mapped for writing");
        uint8_t* base = nullptr;
        {
            std::lock_guard lock(mutex_);
            if (!base_) {
                const int prot = PROT_READ | (writable_ ? PROT_WRITE : 0);
                void* p = fault_inject(FaultPoint::Mmap)
                              ? MAP_FAILED
                              : ::mmap(nullptr, capacity_, prot, MAP_SHARED, fd_.get(), 0);
                if (p == MAP_FAILED) {
                    const int err = errno;
                    return unexpected(mmap_failed(err));
                }
                base_ = static_cast<uint8_t*>(p);
            }
            base = base_;
        }
        dma_buf_sync sync{};
        sync.flags = DMA_BUF_SYNC_START | sync_direction(access);
        if (dma_ioctl(fd_.get(), DMA_BUF_IOCTL_SYNC, &sync) != 0) {
            const int err = errno;
            return unexpected(
                Error::io(err, "DMA_BUF_IOCTL_SYNC START on a " + provider_ + " buffer failed"));
        }
        ET_LOG_TRACE("dma", "fd %d: DMA_BUF_IOCTL_SYNC START|%s", fd_.get(),
                     sync_direction_name(access));
        return base;
    }

    void end_cpu_access(CpuAccess access) noexcept override
    {
        dma_buf_sync sync{};
        sync.flags = DMA_BUF_SYNC_END | sync_direction(access);
        if (dma_ioctl(fd_.get(), DMA_BUF_IOCTL_SYNC, &sync) != 0)
            ET_LOG_ERROR("dma", "DMA_BUF_IOCTL_SYNC END on fd %d (%s) failed: %s", fd_.get(),
                         provider_.c_str(), errno_text(errno).c_str());
        else
            ET_LOG_TRACE("dma", "fd %d: DMA_BUF_IOCTL_SYNC END|%s", fd_.get(),
                         sync_direction_name(access));
    }

    // One CUDA import per storage, made at the first cuda_map() and kept until the storage
    // dies: importing costs a driver round trip and a mapping, maps are per frame. A failed
    // import is not remembered; the next cuda_map() tries again.
    Result<void*> begin_cuda_access() override
    {
        std::lock_guard lock(cuda_mu_);
        if (!cuda_) {
            auto imp = cuda::ExternalBuffer::import(
                fd_.get(), capacity_, "CUDA import of a DMA-BUF (provider '" + provider_ + "')");
            if (!imp)
                return unexpected(std::move(imp).error());
            cuda_ = std::move(*imp);
        }
        return cuda_->device_ptr();
    }

private:
    Error mmap_failed(int err) const
    {
        std::string what =
            "mmap of DMA-BUF (" + provider_ + ", " + std::to_string(capacity_) + " bytes) failed";
        // The exporter's mmap hook refused (it has none: EINVAL; it will not: ENOTSUPP, ...).
        // Device memory behaves so: a GPU driver's DMA-BUF of its own memory.
        if (err == EINVAL || err == ENODEV || err == ENOTSUP || err == kEnotsupp)
            what += ": the exporter of this buffer does not let the CPU map it, as with device "
                    "memory (a GPU's own memory exported as a DMA-BUF); hand it to a consumer on "
                    "that device, or have the producer allocate CPU-mappable memory (dma-heap, "
                    "udmabuf)";
        return Error::io(err, what);
    }

    UniqueFd fd_;
    bool writable_;
    std::string provider_;
    std::mutex mutex_; // guards the lazy mmap
    uint8_t* base_ = nullptr;
    std::mutex cuda_mu_; // guards cuda_
    std::unique_ptr<cuda::ExternalBuffer> cuda_;
};

} // namespace

StorageResult make_dma_storage(UniqueFd fd, size_t size, CpuAccess declared, std::string provider)
{
    if (!fd)
        return make_error(ErrorCode::InvalidArgument, "DMA-BUF storage needs a valid fd");
    if (size == 0)
        return make_error(ErrorCode::InsufficientCapacity,
                          "DMA-BUF reports size 0; there is nothing to map or describe");
    const int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl < 0)
        return unexpected(Error::io(errno, "fcntl(F_GETFL) on a DMA-BUF fd failed"));
    const bool writable = (fl & O_ACCMODE) == O_RDWR;
    try {
        return std::shared_ptr<Storage>(std::make_shared<DmaBufStorage>(
            std::move(fd), size, declared, writable, std::move(provider)));
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed, "out of memory while wrapping a DMA-BUF fd");
    }
}

StorageResult import_dma(UniqueFd fd, size_t size, CpuAccess access)
{
    if (!fd)
        return make_error(ErrorCode::InvalidArgument, "import of DMA-BUF: the fd is not valid");
    // st_size of a DMA-BUF is 0 on older kernels; lseek(SEEK_END) is the size query the
    // dma-buf documentation promises.
    if (size == 0) {
        const off_t end = ::lseek(fd.get(), 0, SEEK_END);
        if (end > 0)
            size = size_t(end);
    }
    return make_dma_storage(std::move(fd), size, access, "import");
}

} // namespace edgetensor::detail
