// SPDX-License-Identifier: MIT
#include "fd_count.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>

namespace edgetensor::test
{

std::set<int> open_fds()
{
    std::set<int> fds;
    DIR* dir = opendir("/proc/self/fd");
    if (!dir)
        return fds;
    const int self = dirfd(dir);
    while (dirent* e = readdir(dir)) {
        if (e->d_name[0] == '.')
            continue;
        const int fd = std::atoi(e->d_name);
        if (fd != self)
            fds.insert(fd);
    }
    closedir(dir);
    return fds;
}

std::string describe_fds(const std::set<int>& fds)
{
    std::string out;
    for (int fd : fds) {
        char target[512] = {};
        const std::string link = "/proc/self/fd/" + std::to_string(fd);
        const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
        if (!out.empty())
            out += ", ";
        out += std::to_string(fd) + " -> " + (n > 0 ? std::string(target, size_t(n)) : "?");
    }
    return out;
}

} // namespace edgetensor::test
