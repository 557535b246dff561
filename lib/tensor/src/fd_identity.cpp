// SPDX-License-Identifier: MIT
//
// fd_identity (fd_identity.hpp).

#include "fd_identity.hpp"

#include "fault.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <string>

namespace edgetensor::detail
{

Result<FdIdentity> fd_identity(int fd)
{
    struct stat st {
    };
    if (fault_inject(FaultPoint::Fstat) || ::fstat(fd, &st) != 0)
        return unexpected(Error::io(errno, "fstat of fd " + std::to_string(fd) + " failed"));
    return FdIdentity{uint64_t(st.st_dev), uint64_t(st.st_ino)};
}

} // namespace edgetensor::detail
