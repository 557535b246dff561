// SPDX-License-Identifier: MIT
//
// Mapping our memories through their tensor (memory_tensor.hpp): GstFdMemory would mmap and
// munmap the fd on every gst_memory_map() (and fault in every page again), although the tensor
// keeps one mapping for its storage's life. Maps go through TensorDyn::map_allocation: the
// persistent mapping, with DMA_BUF_IOCTL_SYNC START/END bracketing each CPU access of a
// DMA-BUF. Only fd memories without a tensor (made by other code with our allocators) take
// GStreamer's own path.

#include "memory_tensor.hpp"

#include "internal.hpp"
#include "vfunc_guard.hpp"

#include <string>
#include <utility>

#define GST_CAT_DEFAULT gst_edge_tensor_allocator_debug

namespace edgetensor::gst
{

namespace
{

// What GStreamer's own allocator types map with, saved before ours replace them: used for fd
// memories that carry no tensor.
struct ParentMap {
    gsize once = 0;
    GstMemoryMapFullFunction map_full = nullptr;
    GstMemoryUnmapFullFunction unmap_full = nullptr;
};
ParentMap g_dmabuf_parent_map; // GstDmaBufAllocator's (map + DMA_BUF_IOCTL_SYNC)
ParentMap g_fd_parent_map;     // GstFdAllocator's (none: it only sets mem_map)

ParentMap& parent_map_of(GstAllocator* allocator)
{
    return GST_IS_EDGE_TENSOR_ALLOCATOR(allocator) ? g_dmabuf_parent_map : g_fd_parent_map;
}

edgetensor::CpuAccess access_of(GstMapFlags flags)
{
    const bool r = flags & GST_MAP_READ;
    const bool w = flags & GST_MAP_WRITE;
    if (r && w)
        return CpuAccess::ReadWrite;
    return w ? CpuAccess::Write : CpuAccess::Read;
}

// Why the last tensor-backed map on this thread failed: gst_memory_map() can only say that it
// did, and the element that mapped wants to say why (take_map_failure()).
thread_local std::string t_map_failure;

// info->user_data[0] holds the RawMap of a tensor-backed map, nullptr for the parent's path.
gpointer tensor_mem_map_full(GstMemory* mem, GstMapInfo* info, gsize maxsize)
{
    info->user_data[0] = nullptr;
    t_map_failure.clear();
    const MemoryTensor* mt = peek_memory_tensor(mem);
    if (!mt && is_ahb_allocator(mem->allocator)) {
        GST_ERROR_OBJECT(mem->allocator, "AHardwareBuffer memory %p carries no tensor",
                         static_cast<void*>(mem));
        return nullptr;
    }
    if (!mt) {
        const ParentMap& pm = parent_map_of(mem->allocator);
        if (pm.map_full)
            return pm.map_full(mem, info, maxsize);
        return mem->allocator->mem_map(mem, maxsize, info->flags);
    }
    return guarded(mem->allocator, "map", nullptr, [&]() -> gpointer {
        auto map = mt->tensor.map_allocation(access_of(info->flags));
        if (!map) {
            GST_ERROR_OBJECT(mem->allocator, "cannot map the tensor behind memory %p: %s",
                             static_cast<void*>(mem), map.error().message().c_str());
            t_map_failure = map.error().message();
            return nullptr;
        }
        if (map->size_bytes() < maxsize) {
            GST_ERROR_OBJECT(mem->allocator,
                             "memory %p spans %zu bytes but its tensor has only %zu",
                             static_cast<void*>(mem), size_t(maxsize), map->size_bytes());
            return nullptr;
        }
        auto* held = new edgetensor::RawMap(std::move(*map));
        info->user_data[0] = held;
        return held->bytes();
    });
}

void tensor_mem_unmap_full(GstMemory* mem, GstMapInfo* info)
{
    auto* held = static_cast<edgetensor::RawMap*>(info->user_data[0]);
    if (held) {
        info->user_data[0] = nullptr;
        delete held; // ends the CPU access (DMA_BUF_IOCTL_SYNC END, AHardwareBuffer_unlock)
        return;
    }
    if (is_ahb_allocator(mem->allocator))
        return;
    const ParentMap& pm = parent_map_of(mem->allocator);
    if (pm.unmap_full)
        pm.unmap_full(mem, info);
    else
        mem->allocator->mem_unmap(mem);
}

} // namespace

void use_tensor_mapping(GstAllocator* alloc, MapParent parent)
{
    if (parent != MapParent::None) {
        ParentMap* saved = parent == MapParent::DmaBuf ? &g_dmabuf_parent_map : &g_fd_parent_map;
        // The same for every instance of a type; saved once so no two inits race on it.
        if (g_once_init_enter(&saved->once)) {
            saved->map_full = alloc->mem_map_full;
            saved->unmap_full = alloc->mem_unmap_full;
            g_once_init_leave(&saved->once, 1);
        }
    }
    alloc->mem_map_full = tensor_mem_map_full;
    alloc->mem_unmap_full = tensor_mem_unmap_full;
}

std::string take_map_failure()
{
    return t_map_failure.empty() ? std::string() : ": " + std::exchange(t_map_failure, {});
}

} // namespace edgetensor::gst
