// SPDX-License-Identifier: MIT
#include "dma_test_util.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <sys/vfs.h>

namespace edgetensor::test
{

bool dma_provider_required(DmaProvider p)
{
    const char* env = std::getenv("EDGETENSOR_TEST_REQUIRE_DMA_PROVIDERS");
    if (!env || !*env)
        return false;
    auto list = parse_dma_provider_list(env);
    // A typo in the lane's own setting must not turn into silent skips.
    if (!list)
        return true;
    for (DmaProvider q : *list)
        if (q == p)
            return true;
    return false;
}

std::string provider_prefix(DmaProvider p)
{
    switch (p) {
    case DmaProvider::DmaHeap:
        return "dma-heap:";
    case DmaProvider::Udmabuf:
        return "udmabuf";
    case DmaProvider::DrmPrime:
        return "drm-prime:";
    }
    return "?";
}

std::string expected_default_provider()
{
    const char* env = std::getenv("EDGETENSOR_TEST_EXPECT_DMA_PROVIDER");
    return env ? std::string(env) : std::string();
}

uint32_t fs_magic(int fd)
{
    struct statfs s {
    };
    if (::fstatfs(fd, &s) != 0)
        return 0;
    return static_cast<uint32_t>(s.f_type);
}

std::pair<uint64_t, uint64_t> stat_identity_of(int fd)
{
    struct stat st {
    };
    if (::fstat(fd, &st) != 0)
        return {0, 0};
    return {uint64_t(st.st_dev), uint64_t(st.st_ino)};
}

std::string fdinfo_field(int fd, const std::string& key)
{
    std::ifstream in("/proc/self/fdinfo/" + std::to_string(fd));
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, key.size() + 1, key + ":") != 0)
            continue;
        const size_t v = line.find_first_not_of(" \t", key.size() + 1);
        return v == std::string::npos ? std::string() : line.substr(v);
    }
    return {};
}

bool is_cloexec(int fd)
{
    const int flags = ::fcntl(fd, F_GETFD);
    return flags >= 0 && (flags & FD_CLOEXEC) != 0;
}

ScopedDmaProviders::ScopedDmaProviders(std::initializer_list<DmaProvider> providers)
{
    const std::vector<DmaProvider> list(providers);
    auto r = set_dma_providers(list);
    EXPECT_TRUE(r) << r.error().message();
}

} // namespace edgetensor::test
