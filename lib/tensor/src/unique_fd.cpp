// SPDX-License-Identifier: MIT
#include "edgetensor/unique_fd.hpp"

#include "fault.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace edgetensor
{

void UniqueFd::reset(int fd) noexcept
{
    if (fd_ >= 0 && fd_ != fd) {
        // close() must not be retried on EINTR on Linux: the fd is gone either way.
        const int saved = errno;
        ::close(fd_);
        errno = saved;
    }
    fd_ = fd < 0 ? -1 : fd;
}

UniqueFd UniqueFd::dup(int fd) noexcept
{
    if (fd < 0) {
        errno = EBADF;
        return UniqueFd();
    }
    if (detail::fault_inject(detail::FaultPoint::Dup))
        return UniqueFd();
    return UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
}

} // namespace edgetensor
