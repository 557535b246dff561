// SPDX-License-Identifier: MIT
//
// The memory-bandwidth floor of a job: the time this host needs just to read its inputs once
// and write its outputs once, at the bandwidth a plain memcpy reaches here. A conversion
// cannot be faster than that, so "our time as a multiple of the floor" says how much is left
// to gain, independently of the machine (issue 23 item 7). Header-only, for the benchmarks.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <vector>

namespace edgetensor::bench
{

/// Bytes moved per second by memcpy on this host (bytes read + bytes written), measured once
/// per process: 64 MiB buffers, far past any cache, first touched before timing; best of 7
/// copies, so a neighbour's burst on a shared machine lowers it less than a mean would.
inline double copy_bandwidth_bytes_per_s()
{
    static const double kBandwidth = [] {
        constexpr size_t kBytes = size_t(64) << 20;
        std::vector<unsigned char> src(kBytes, 1), dst(kBytes, 0);
        double best = 1e30;
        for (int i = 0; i < 7; ++i) {
            src[size_t(i)] = static_cast<unsigned char>(i); // not a copy of an unchanged buffer
            const auto t0 = std::chrono::steady_clock::now();
            std::memcpy(dst.data(), src.data(), kBytes);
            const auto t1 = std::chrono::steady_clock::now();
            best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
        }
        // Keep the copy observable so it is not elided.
        volatile unsigned char sink = dst[kBytes / 2];
        (void)sink;
        return 2.0 * double(kBytes) / best;
    }();
    return kBandwidth;
}

/// Milliseconds a job that must read `bytes_read` and write `bytes_written` takes at
/// copy_bandwidth_bytes_per_s(): the floor no implementation on this host goes under.
inline double floor_ms(double bytes_read, double bytes_written)
{
    return (bytes_read + bytes_written) / copy_bandwidth_bytes_per_s() * 1e3;
}

} // namespace edgetensor::bench
