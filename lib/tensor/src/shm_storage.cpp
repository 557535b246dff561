// SPDX-License-Identifier: MIT
//
// Shared-memory backend: a named, sealable, CLOEXEC memfd (shm_open where memfd_create is
// missing), mapped once for the storage's life. Shm exists to hand buffers to other
// processes when no DMA-BUF provider is available.

#include "config.h"
#include "cuda/cuda_import.hpp"
#include "errno_name.hpp"
#include "fault.hpp"
#include "log.hpp"
#include "storage.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace edgetensor::detail
{
namespace
{

class ShmStorage final : public Storage
{
public:
    ShmStorage(UniqueFd fd, uint8_t* base, size_t capacity, bool writable, CpuAccess access,
               const char* provider)
        : Storage(capacity, access), fd_(std::move(fd)), base_(base), writable_(writable),
          provider_(provider)
    {
    }
    ~ShmStorage() override
    {
        cuda_.reset(); // unregistered while the pages are still mapped
        ::munmap(base_, capacity_);
    }

    TensorMemory memory() const noexcept override { return TensorMemory::Shm; }
    std::string_view provider() const noexcept override { return provider_; }
    int fd() const noexcept override { return fd_.get(); }

    Result<uint8_t*> begin_cpu_access(CpuAccess access) override
    {
        if (access_writes(access) && !writable_)
            return make_error(ErrorCode::NotSupported,
                              "shared-memory buffer was imported read-only (fd opened O_RDONLY "
                              "or write-sealed); it cannot be mapped for writing");
        return base_;
    }
    void end_cpu_access(CpuAccess) noexcept override {}

    // The mapping's pages, page-locked and mapped for the device once (read-only when the
    // buffer was imported so); the GPU then reads and writes them where they are.
    Result<void*> begin_cuda_access() override
    {
        return cuda_.begin(base_, capacity_, !writable_,
                           std::string("CUDA registration of a shared-memory buffer (provider '") +
                               provider_ + "')");
    }

private:
    UniqueFd fd_;
    uint8_t* base_;
    bool writable_;
    const char* provider_;
    cuda::HostAccess cuda_;
};

std::string buffer_label(std::string_view name)
{
    std::string label = "edgetensor:";
    label.append(name.empty() ? std::string_view("tensor") : name);
    if (label.size() > 240) // memfd names are limited to 249 bytes
        label.resize(240);
    return label;
}

UniqueFd create_memfd(const std::string& label)
{
#if HAVE_MEMFD_CREATE
    if (fault_inject(FaultPoint::MemfdCreate))
        return UniqueFd();
    return UniqueFd(::memfd_create(label.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
#else
    (void)label;
    errno = ENOSYS;
    return UniqueFd();
#endif
}

UniqueFd create_shm_open()
{
    static std::atomic<uint32_t> counter{0};
    for (int attempt = 0; attempt < 16; ++attempt) {
        char path[64];
        std::snprintf(path, sizeof(path), "/edgetensor-%d-%u", int(::getpid()),
                      counter.fetch_add(1, std::memory_order_relaxed));
        const int fd = ::shm_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            // Unlinked at once: the fd is the only name, nothing is left in /dev/shm.
            ::shm_unlink(path);
            return UniqueFd(fd);
        }
        if (errno != EEXIST)
            break;
    }
    return UniqueFd();
}

StorageResult map_fd(UniqueFd fd, size_t size, bool try_write, CpuAccess access,
                     const char* provider)
{
    int prot = PROT_READ | (try_write ? PROT_WRITE : 0);
    void* p = fault_inject(FaultPoint::Mmap) ? MAP_FAILED
                                             : ::mmap(nullptr, size, prot, MAP_SHARED, fd.get(), 0);
    bool writable = try_write;
    if (p == MAP_FAILED && try_write && (errno == EACCES || errno == EPERM)) {
        p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
        writable = false;
    }
    if (p == MAP_FAILED)
        return unexpected(Error::io(errno, "mmap of shared-memory buffer failed"));
    return std::shared_ptr<Storage>(std::make_shared<ShmStorage>(
        std::move(fd), static_cast<uint8_t*>(p), size, writable, access, provider));
}

} // namespace

StorageResult allocate_shm(const AllocRequest& req)
{
    if (req.bytes == 0)
        return make_error(ErrorCode::InvalidShape, "cannot allocate a zero-byte shm tensor");
    const std::string label = buffer_label(req.name);
    const char* provider = "memfd";
    UniqueFd fd = create_memfd(label);
    if (!fd) {
        ET_LOG_DEBUG("shm", "memfd_create(\"%s\") failed: %s; trying shm_open", label.c_str(),
                     errno_text(errno).c_str());
        fd = create_shm_open();
        provider = "shm_open";
    }
    if (!fd)
        return unexpected(Error::io(errno, "shared memory unavailable (memfd_create and shm_open "
                                           "both failed)"));
    if (::ftruncate(fd.get(), off_t(req.bytes)) != 0)
        return unexpected(Error::io(errno, "ftruncate of shared-memory buffer failed"));
#if HAVE_F_ADD_SEALS
    // Size seals let an importer trust st_size; the buffer stays writable for both sides.
    if (provider[0] == 'm')
        (void)::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
#endif
    ET_LOG_TRACE("shm", "allocated %zu bytes via %s (%s)", req.bytes, provider, label.c_str());
    return map_fd(std::move(fd), req.bytes, true, req.access, provider);
}

StorageResult import_shm(UniqueFd fd, size_t size, CpuAccess access)
{
    if (size == 0)
        return make_error(ErrorCode::InsufficientCapacity,
                          "shared-memory buffer is empty (st_size 0); nothing to import");
    const int fl = ::fcntl(fd.get(), F_GETFL);
    const bool try_write = fl >= 0 && (fl & O_ACCMODE) != O_RDONLY;
    return map_fd(std::move(fd), size, try_write, access, "shm-import");
}

} // namespace edgetensor::detail
