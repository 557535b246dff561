// SPDX-License-Identifier: MIT
//
// The Linux DMA-BUF providers and the chain that walks them (the DMA seam of storage.hpp).
//
// Each provider is one allocate function in a table. Availability is decided once per process
// per provider by a real one-page allocation through that same function, so a probe and an
// allocation can never disagree about what works; the reason a provider is unusable is kept
// and logged (category "dma", debug level) once, and later allocations skip it at no cost.

#include "dma_internal.hpp"
#include "errno_name.hpp"
#include "fault.hpp"
#include "log.hpp"

#include "uapi/dma-heap.h"
#include "uapi/udmabuf.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U // Linux 6.3; older glibc headers lack it
#endif

namespace edgetensor::detail
{

namespace
{

void append_reason(std::string& why, const std::string& reason)
{
    if (!why.empty())
        why += "; ";
    why += reason;
}

} // namespace

StorageResult dma_heap_allocate(const AllocRequest& req)
{
    // A CMA heap gives physically contiguous memory (what IOMMU-less devices need); the system
    // heap is scattered pages, fine for anything behind an IOMMU.
    static constexpr std::array<const char*, 2> kHeaps = {"linux,cma", "system"};
    const size_t bytes = dma_round_to_pages(req.bytes);
    std::string why;
    for (const char* heap : kHeaps) {
        const std::string path = std::string("/dev/dma_heap/") + heap;
        // Read-only is all DMA_HEAP_IOCTL_ALLOC needs; the buffer's own mode is fd_flags.
        UniqueFd dev(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!dev) {
            append_reason(why, path + ": " + errno_text(errno));
            continue;
        }
        dma_heap_allocation_data data{};
        data.len = bytes;
        data.fd_flags = O_RDWR | O_CLOEXEC;
        if (fault_inject(FaultPoint::DmaHeapAlloc) ||
            dma_ioctl(dev.get(), DMA_HEAP_IOCTL_ALLOC, &data) != 0) {
            append_reason(why, path + ": DMA_HEAP_IOCTL_ALLOC of " + std::to_string(bytes) +
                                   " bytes failed: " + errno_text(errno));
            continue;
        }
        UniqueFd buf(static_cast<int>(data.fd));
        if (!why.empty()) {
            static std::once_flag logged; // the same heaps are missing on every call
            std::call_once(logged, [&] {
                ET_LOG_DEBUG("dma", "using %s; skipped %s", path.c_str(), why.c_str());
            });
        }
        dma_set_name(buf.get(), dma_buffer_label(req.name));
        return make_dma_storage(std::move(buf), bytes, req.access, std::string("dma-heap:") + heap);
    }
    return make_error(ErrorCode::Unavailable, why);
}

StorageResult udmabuf_allocate(const AllocRequest& req)
{
#if defined(MFD_CLOEXEC) && defined(F_ADD_SEALS) // glibc 2.27+ declares memfd_create with these
    const size_t bytes = dma_round_to_pages(req.bytes); // UDMABUF_CREATE wants whole pages
    UniqueFd dev(::open("/dev/udmabuf", O_RDONLY | O_CLOEXEC));
    if (!dev)
        return make_error(ErrorCode::Unavailable,
                          std::string("/dev/udmabuf: ") + errno_text(errno));
    const std::string label = dma_buffer_label(req.name);
    // MFD_NOEXEC_SEAL keeps 6.3+ kernels from logging a warning per memfd; older ones reject
    // the flag, and then plain sealing is what they support.
    UniqueFd mem(
        fault_inject(FaultPoint::MemfdCreate)
            ? -1
            : ::memfd_create(label.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL));
    if (!mem && errno == EINVAL)
        mem.reset(::memfd_create(label.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!mem)
        return make_error(ErrorCode::AllocationFailed,
                          std::string("udmabuf: memfd_create failed: ") + errno_text(errno));
    if (::ftruncate(mem.get(), off_t(bytes)) != 0)
        return make_error(ErrorCode::AllocationFailed, "udmabuf: ftruncate of the memfd to " +
                                                           std::to_string(bytes) +
                                                           " bytes failed: " + errno_text(errno));
    // udmabuf refuses a memfd that could shrink under it (F_SEAL_SHRINK) and one that is
    // write-sealed; F_SEAL_SEAL stops anyone from adding a write seal later.
    if (::fcntl(mem.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        return make_error(ErrorCode::AllocationFailed,
                          std::string("udmabuf: sealing the memfd failed: ") + errno_text(errno));
    udmabuf_create create{};
    create.memfd = static_cast<__u32>(mem.get());
    create.flags = UDMABUF_FLAGS_CLOEXEC;
    create.offset = 0;
    create.size = bytes;
    const int fd = fault_inject(FaultPoint::UdmabufCreate)
                       ? -1
                       : dma_ioctl(dev.get(), UDMABUF_CREATE, &create);
    if (fd < 0) {
        const int err = errno;
        std::string msg = "/dev/udmabuf: UDMABUF_CREATE of " + std::to_string(bytes) +
                          " bytes failed: " + errno_text(err);
        if (err == EINVAL && bytes > (size_t(64) << 20))
            msg += " (the kernel limits one udmabuf to udmabuf.size_limit_mb, 64 MiB by default)";
        return make_error(ErrorCode::AllocationFailed, msg);
    }
    // The udmabuf holds the memfd's pages; the memfd itself is no longer needed.
    UniqueFd buf(fd);
    dma_set_name(buf.get(), label);
    return make_dma_storage(std::move(buf), bytes, req.access, "udmabuf");
#else
    (void)req;
    return make_error(ErrorCode::Unavailable,
                      "udmabuf needs memfd_create and F_ADD_SEALS, which this C library lacks");
#endif
}

namespace
{

struct ProviderEntry {
    DmaProvider id;
    DmaAllocateFn allocate;
};

constexpr std::array<ProviderEntry, kDmaProviderCount> kProviders = {{
    {DmaProvider::DmaHeap, dma_heap_allocate},
    {DmaProvider::Udmabuf, udmabuf_allocate},
    {DmaProvider::DrmPrime, drm_prime_allocate},
}};

struct Probe {
    bool available = false;
    std::string reason; // why not, or which provider answered
};

const Probe& probe(DmaProvider id)
{
    static std::array<std::once_flag, kDmaProviderCount> once;
    static std::array<Probe, kDmaProviderCount> results;
    const size_t i = static_cast<size_t>(id);
    std::call_once(once[i], [&] {
        AllocRequest req;
        req.bytes = dma_page_size();
        req.name = "probe";
        auto r = kProviders[i].allocate(req);
        Probe& p = results[i];
        p.available = r.has_value();
        p.reason = p.available ? std::string((*r)->provider()) : r.error().message();
        if (p.available)
            ET_LOG_DEBUG("dma", "provider %s is available (%s)", dma_provider_name(id).data(),
                         p.reason.c_str());
        else
            ET_LOG_DEBUG("dma", "provider %s is unavailable: %s", dma_provider_name(id).data(),
                         p.reason.c_str());
    });
    return results[i];
}

} // namespace

StorageResult allocate_dma(const AllocRequest& req)
{
    auto order = dma_request_order(req);
    if (!order)
        return unexpected(std::move(order).error());

    std::string why;
    bool any_available = false;
    for (DmaProvider id : *order) {
        const std::string_view name = dma_provider_name(id);
        const Probe& p = probe(id);
        if (!p.available) {
            append_reason(why, std::string(name) + " unavailable (" + p.reason + ")");
            continue;
        }
        any_available = true;
        auto r = kProviders[static_cast<size_t>(id)].allocate(req);
        if (r) {
            ET_LOG_DEBUG("dma", "allocated %zu bytes from %s for \"%.*s\"", (*r)->capacity(),
                         std::string((*r)->provider()).c_str(), int(req.name.size()),
                         req.name.data());
            return r;
        }
        ET_LOG_DEBUG("dma", "provider %s skipped for %zu bytes: %s", name.data(), req.bytes,
                     r.error().message().c_str());
        append_reason(why, std::string(name) + ": " + r.error().message());
    }
    return make_error(any_available ? ErrorCode::AllocationFailed : ErrorCode::Unavailable,
                      "no DMA-BUF provider could allocate " + std::to_string(req.bytes) +
                          " bytes: " + why);
}

bool dma_available() noexcept
{
    try {
        auto order = active_dma_providers();
        if (!order)
            return false;
        for (DmaProvider id : *order)
            if (probe(id).available)
                return true;
    } catch (const std::exception& e) { // out of memory while probing: report "no DMA"
        ET_LOG_ERROR("dma", "probing DMA-BUF providers failed: %s", e.what());
    }
    return false;
}

} // namespace edgetensor::detail

namespace edgetensor
{

bool is_dma_provider_available(DmaProvider provider) noexcept
{
    if (static_cast<uint32_t>(provider) >= kDmaProviderCount)
        return false;
    try {
        return detail::probe(provider).available;
    } catch (const std::exception& e) {
        ET_LOG_ERROR("dma", "probing DMA-BUF provider %s failed: %s",
                     dma_provider_name(provider).data(), e.what());
        return false;
    }
}

} // namespace edgetensor
