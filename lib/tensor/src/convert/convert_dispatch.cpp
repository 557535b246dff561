// SPDX-License-Identifier: MIT
//
// Which kernel level a converter runs: picked at create() from what the CPU has (and what the
// OS saves), overridable for tests and for comparing levels on one machine.

#include "convert_kernels.hpp"

#include "log.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
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

} // namespace edgetensor::detail::convert
