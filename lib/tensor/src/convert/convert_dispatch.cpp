// SPDX-License-Identifier: MIT
//
// Which kernel level a converter runs: picked at create() from what the CPU has (and what the
// OS saves), overridable for tests and for comparing levels on one machine.

#include "convert_kernels.hpp"

#include "log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace edgetensor::detail::convert
{

namespace
{

#if defined(__x86_64__) && defined(__GNUC__)
bool cpu_has_avx2() noexcept
{
    // __builtin_cpu_supports checks that the OS saves the ymm state; clang 14's does not know
    // "f16c", so read CPUID leaf 1 (ECX bit 29) for it.
    static const bool yes = [] {
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
    }();
    return yes;
}

bool cpu_has_avx512() noexcept
{
    // libgcc and compiler-rt report an AVX-512 feature only when the OS saves the zmm and
    // mask registers.
    static const bool yes =
        cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vbmi");
    return yes;
}

bool cpu_has_sse41() noexcept
{
    static const bool yes = __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("ssse3");
    return yes;
}
#endif

} // namespace

const KernelSet& select_kernels() noexcept
{
    const char* portable = std::getenv("EDGETENSOR_CONVERT_PORTABLE");
    if (portable && portable[0] == '1')
        return kPortableKernels;
    const char* want = std::getenv("EDGETENSOR_CONVERT_ISA");
    if (want && *want && std::strcmp(want, "portable") == 0)
        return kPortableKernels;
#if defined(__x86_64__) && defined(__GNUC__)
    // A request caps the level: the best the CPU has at or below it.
    int cap = 3;
    if (want && *want) {
        if (std::strcmp(want, "sse4.1") == 0)
            cap = 1;
        else if (std::strcmp(want, "avx2") == 0)
            cap = 2;
        else if (std::strcmp(want, "avx512") != 0)
            ET_LOG_WARNING("convert",
                           "EDGETENSOR_CONVERT_ISA=%s is not a kernel level (portable, sse4.1, "
                           "avx2, avx512); using the best this CPU has",
                           want);
    }
    if (cap >= 3 && cpu_has_avx512())
        return kAvx512Kernels;
    if (cap >= 2 && cpu_has_avx2())
        return kAvx2Kernels;
    if (cpu_has_sse41())
        return kSse41Kernels;
#else
    if (want && *want)
        ET_LOG_WARNING("convert", "EDGETENSOR_CONVERT_ISA=%s: this build has portable kernels only",
                       want);
#endif
    return kPortableKernels;
}

void fence_streaming_stores() noexcept
{
#if defined(__x86_64__)
    _mm_sfence();
#endif
}

namespace
{

/// A number as sysfs writes cache facts: "3" (a level), "32768K", "1M", "512" (sizes, K and M
/// suffixes applied); 0 if unreadable.
size_t read_sysfs_number(const std::string& path) noexcept
{
    FILE* f = std::fopen(path.c_str(), "re");
    if (!f)
        return 0;
    unsigned long long v = 0;
    char unit = 0;
    const int got = std::fscanf(f, "%llu%c", &v, &unit);
    std::fclose(f);
    if (got < 1)
        return 0;
    if (unit == 'K')
        v <<= 10;
    else if (unit == 'M')
        v <<= 20;
    return size_t(v);
}

size_t find_last_level_cache() noexcept
{
    // sysfs first: glibc's sysconf derives L3 from CPUID, which hypervisors may report
    // per host socket (this project's AMD guest: sysconf 320 MiB, sysfs and lscpu 32 MiB).
    size_t best = 0, best_level = 0;
    for (int i = 0; i < 16; ++i) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
        const size_t level = read_sysfs_number(dir + "/level");
        if (level == 0)
            break;
        const size_t size = read_sysfs_number(dir + "/size");
        if (size && level >= best_level) {
            best_level = level;
            best = size;
        }
    }
    if (best)
        return best;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
        const long v = sysconf(name);
        if (v > 0)
            return size_t(v);
    }
#endif
    return size_t(8) << 20;
}

} // namespace

size_t last_level_cache_bytes() noexcept
{
    static const size_t bytes = find_last_level_cache();
    return bytes;
}

bool resolve_streaming(OutputStores stores, const KernelSet& k, bool planar_float,
                       size_t buffer_bytes) noexcept
{
    if (const char* env = std::getenv("EDGETENSOR_CONVERT_STORES"); env && *env) {
        if (auto s = output_stores_from_name(env))
            stores = *s;
        else
            ET_LOG_WARNING("convert",
                           "EDGETENSOR_CONVERT_STORES=%s is not auto, cached or streaming; "
                           "using the converter's setting (%s)",
                           env, std::string(output_stores_name(stores)).c_str());
    }
    if (!planar_float || !k.streams)
        return false;
    switch (stores) {
    case OutputStores::Cached:
        return false;
    case OutputStores::Streaming:
        return true;
    case OutputStores::Auto:
        break;
    }
    return buffer_bytes >= last_level_cache_bytes() / 2;
}

} // namespace edgetensor::detail::convert
