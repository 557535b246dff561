// SPDX-License-Identifier: MIT
//
// Fault injection: a test hook, compiled in and off by default, that makes chosen system calls
// fail so the error paths behind them run in tests (docs/testing.md, "Fault injection").
//
// EDGETENSOR_FAULT is read once, at the first call site reached:
//
//   EDGETENSOR_FAULT=<point>=<errno>[@<skip>][*<times>][,<point>=...]
//
// <point> is one of the names below, <errno> a name (ENOMEM, EINTR, EIO, EMFILE, ...) or a
// number; the first <skip> calls at that point (default 0) go through, the next <times>
// (default: all of them) fail with that errno. "dma-buf-sync=EINTR*1" fails one
// DMA_BUF_IOCTL_SYNC with EINTR, so the retry is what succeeds. A spec that does not parse is
// reported on stderr once and nothing is injected.
//
// A call site reads `if (fault_inject(FaultPoint::Mmap)) <fail as the call would>;`: unset, that
// costs one relaxed atomic load.

#pragma once

#include <cstdint>
#include <string>

namespace edgetensor::detail
{

enum class FaultPoint : unsigned {
    DmaHeapAlloc,  ///< "dma-heap-alloc": DMA_HEAP_IOCTL_ALLOC
    UdmabufCreate, ///< "udmabuf-create": UDMABUF_CREATE
    MemfdCreate,   ///< "memfd-create": memfd_create (shm storage and udmabuf's memfd)
    Mmap,          ///< "mmap": CPU mappings of shm and DMA-BUF storage
    DmaBufSync,    ///< "dma-buf-sync": DMA_BUF_IOCTL_SYNC (each attempt, retries included)
    Fstat,         ///< "fstat": fd classification and import-cache keys
    Fstatfs,       ///< "fstatfs": fd classification (from_fd)
    Dup,           ///< "dup": UniqueFd::dup, so clone_fd and every import's duplicate
    /// "throw": no system call. The GStreamer layer's boundary guard (gst/libs/vfunc_guard.hpp)
    /// throws there (ENOMEM: std::bad_alloc, else std::system_error), so tests see an exception
    /// inside a vfunc become an element error.
    Throw,
};
inline constexpr unsigned kFaultPointCount = 9;

/// True when this call at `point` must fail; errno is then set to the configured value.
bool fault_inject(FaultPoint point) noexcept;

/// Calls at `point` made to fail so far in this process.
uint64_t fault_injected(FaultPoint point) noexcept;
/// Calls that reached `point` so far while a fault was configured for it (0 otherwise).
uint64_t fault_calls(FaultPoint point) noexcept;

/// The EDGETENSOR_FAULT value in effect: "" when unset or refused.
const std::string& fault_spec() noexcept;

/// "dma-heap-alloc", "mmap", ...
const char* fault_point_name(FaultPoint point) noexcept;

/// Storages (the bytes behind tensors) alive in this process and their capacity. Fault and soak
/// tests compare snapshots: an error path that leaves a storage behind shows up here.
struct LiveStorage {
    uint64_t count = 0;
    uint64_t bytes = 0;
};
LiveStorage live_storage() noexcept;
/// Kept by Storage's constructor and destructor.
void count_storage(int delta, uint64_t bytes) noexcept;

/// Parses one spec as EDGETENSOR_FAULT would be parsed; `why` says what is wrong. For tests of
/// the grammar: it arms nothing.
bool fault_spec_valid(const std::string& spec, std::string* why);

} // namespace edgetensor::detail
