// SPDX-License-Identifier: MIT
//
// from_fd: recognise a foreign buffer by its filesystem magic, never guess. A DMA-BUF is
// mmap-able, so importing one as shm would "work" and silently lose zero-copy far
// downstream; a pipe would import as an empty buffer. Both are refused or classified here.

#include "edgetensor/tensor_dyn.hpp"

#include "fault.hpp"
#include "log.hpp"
#include "tensor_internal.hpp"

#include <cerrno>
#include <cstdio>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace edgetensor
{
namespace detail
{
namespace
{

constexpr uint32_t kDmaBufMagic = 0x444d4142;
constexpr uint32_t kTmpfsMagic = 0x01021994;

const char* magic_name(uint32_t magic)
{
    switch (magic) {
    case 0x50495045:
        return "pipefs";
    case 0x534f434b:
        return "sockfs";
    case 0x958458f6:
        return "hugetlbfs";
    case 0xef53:
        return "ext2/3/4";
    case 0x794c7630:
        return "overlayfs";
    case 0x9123683e:
        return "btrfs";
    case 0x58465342:
        return "xfs";
    case 0x9fa0:
        return "procfs";
    case 0x62656572:
        return "sysfs";
    case 0x09041934:
        return "anon_inodefs";
    case 0x01021997:
        return "v9fs";
    case 0x6969:
        return "nfs";
    case 0x1373:
        return "devfs";
    case 0x858458f6:
        return "ramfs";
    default:
        return "unknown filesystem";
    }
}

} // namespace

StorageResult import_storage(UniqueFd fd, CpuAccess access)
{
    struct statfs sfs {
    };
    if (fault_inject(FaultPoint::Fstatfs) || ::fstatfs(fd.get(), &sfs) != 0)
        return unexpected(Error::io(errno, "fstatfs on the imported fd failed"));
    // f_type's width and signedness vary by libc and target; truncating to u32 is lossless
    // for every magic and keeps values like hugetlbfs' 0x958458f6 from sign-extending.
    const uint32_t magic = static_cast<uint32_t>(sfs.f_type);

    struct stat st {
    };
    if (fault_inject(FaultPoint::Fstat) || ::fstat(fd.get(), &st) != 0)
        return unexpected(Error::io(errno, "fstat on the imported fd failed"));
    const size_t size = st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;

    if (magic == kDmaBufMagic) {
        ET_LOG_DEBUG("import", "fd %d is a DMA-BUF (%zu bytes, ino %llu)", fd.get(), size,
                     (unsigned long long)st.st_ino);
        return import_dma(std::move(fd), size, access);
    }
    if (magic == kTmpfsMagic) {
        if (!S_ISREG(st.st_mode))
            return make_error(ErrorCode::InvalidArgument,
                              "fd is on tmpfs but is not a regular file (a directory or a "
                              "device?); only memfd and shm buffers can be imported");
        ET_LOG_DEBUG("import", "fd %d is shared memory (%zu bytes)", fd.get(), size);
        return import_shm(std::move(fd), size, access);
    }
    char msg[256];
    std::snprintf(msg, sizeof(msg),
                  "fd is on %s (fstatfs magic 0x%08x), neither dma_buf (0x444d4142) nor tmpfs "
                  "(0x01021994): its buffer type cannot be recognised, so it is not imported",
                  magic_name(magic), magic);
    return Error::unknown_buffer_type(magic, msg);
}

} // namespace detail

Result<TensorDyn> TensorDyn::from_fd(UniqueFd fd, DType dtype, const Shape& shape,
                                     std::string_view name)
{
    if (!fd)
        return make_error(ErrorCode::InvalidArgument, "from_fd: the fd is not valid (-1)");
    const auto n = detail::checked_len(shape);
    if (!n || *n > std::numeric_limits<size_t>::max() / dtype_size(dtype))
        return make_error(ErrorCode::InvalidShape,
                          "from_fd: shape " + detail::shape_string(shape) +
                              " is invalid: it must be non-empty, without zero dimensions");
    const size_t bytes = *n * dtype_size(dtype);
    auto storage = detail::import_storage(std::move(fd), CpuAccess::ReadWrite);
    if (!storage)
        return unexpected(std::move(storage).error());
    if ((*storage)->capacity() < bytes)
        return make_error(ErrorCode::InsufficientCapacity,
                          "from_fd: shape " + detail::shape_string(shape) + " of " +
                              std::string(dtype_name(dtype)) + " needs " + std::to_string(bytes) +
                              " bytes but the buffer holds " +
                              std::to_string((*storage)->capacity()));
    return detail::TensorAccess::wrap(std::move(*storage), dtype, shape, {}, 0, name);
}

bool is_shm_available() noexcept
{
    static const bool available = [] {
        auto s = detail::allocate_shm({4096, "probe", CpuAccess::ReadWrite});
        return s.has_value();
    }();
    return available;
}

} // namespace edgetensor
