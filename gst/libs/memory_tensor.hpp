// SPDX-License-Identifier: MIT
//
// The tensor behind one of our GstMemories (qdata on the memory) and how such memories map:
// through the tensor's persistent mapping, not GstFdMemory's mmap per map. Shared by the
// allocators (gstedgetensorallocator.cpp) and the mapping (memory_map.cpp). Not installed.

#pragma once

#include <gst/edgetensor/edgetensor.hpp>
#include <gst/gst.h>

#include <edgetensor/tensor_dyn.hpp>
#include <edgetensor/tensor_map.hpp>

namespace edgetensor::gst
{

/// What a memory's qdata holds: the tensor, and (heap memory) the map its pointer came from.
struct MemoryTensor {
    TensorDyn tensor;
    RawMap map;
    TensorReleaseFunc on_release;
};

/// The qdata key of a memory's MemoryTensor.
GQuark memory_tensor_quark();
/// Frees a MemoryTensor, handing its tensor to `on_release` first (the pool's recycling).
void memory_tensor_free(gpointer data);
/// The MemoryTensor of `mem` or of the memory it was shared from, borrowed; null for none.
const MemoryTensor* peek_memory_tensor(GstMemory* mem);
/// Whether `a` is the allocator of AHardwareBuffer memories (no fd, mapped by locking).
bool is_ahb_allocator(GstAllocator* a);

/// Whose map functions a tensor-less memory of an allocator falls back to.
enum class MapParent {
    DmaBuf, ///< GstDmaBufAllocator's (map + DMA_BUF_IOCTL_SYNC)
    Fd,     ///< GstFdAllocator's
    None,   ///< every memory carries a tensor (AHardwareBuffer)
};

/// Makes `alloc`'s memories map through their tensor. Call from the allocator's instance init,
/// after GStreamer's parent types set their functions.
void use_tensor_mapping(GstAllocator* alloc, MapParent parent);

} // namespace edgetensor::gst
