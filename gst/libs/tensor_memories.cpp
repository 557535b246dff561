// SPDX-License-Identifier: MIT
//
// Finding the one tensor of an other/tensors buffer made of several memories
// (tensor_memories.hpp).

#include "tensor_memories.hpp"

#include "internal.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <gst/allocators/allocators.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

namespace edgetensor::gst
{

namespace
{

// Allocators for joined memories, one each for the process: GstFdMemory keeps a reference to
// its allocator, so they outlive every memory made from them.
GstAllocator* join_allocator(bool dmabuf)
{
    static GstAllocator* dmabuf_alloc = nullptr;
    static GstAllocator* fd_alloc = nullptr;
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        dmabuf_alloc = gst_dmabuf_allocator_new();
        fd_alloc = gst_fd_allocator_new();
        g_once_init_leave(&once, 1);
    }
    return dmabuf ? dmabuf_alloc : fd_alloc;
}

} // namespace

TensorMemories locate_tensor(GstBuffer* buffer, size_t tensor_bytes)
{
    TensorMemories r;
    const guint n = gst_buffer_n_memory(buffer);
    std::vector<gsize> sizes(n);
    gsize total = 0;
    std::string list;
    for (guint i = 0; i < n; ++i) {
        sizes[i] = gst_buffer_peek_memory(buffer, i)->size;
        total += sizes[i];
        list += (i ? " + " : "") + std::to_string(sizes[i]);
    }
    r.memories = std::to_string(n) + (n == 1 ? " memory (" : " memories (") + list + " bytes)";
    r.count = n;
    if (n <= 1)
        return r;

    const std::string tensor = "the tensor's " + std::to_string(tensor_bytes) + " bytes";
    if (total == tensor_bytes) {
        r.layout = TensorMemories::Layout::Split;
        return r;
    }
    if (total < tensor_bytes) {
        r.layout = TensorMemories::Layout::Unusable;
        r.why = r.memories + " add up to " + std::to_string(total) + " bytes, less than " + tensor;
        return r;
    }
    // More than one tensor: only a pool buffer explains the rest (its own memory, which the
    // upstream element appended after instead of writing into).
    if (!buffer->pool) {
        r.layout = TensorMemories::Layout::Unusable;
        r.why = r.memories + " add up to " + std::to_string(total) + " bytes, more than " + tensor +
                ", and the buffer is from no buffer pool whose own memory would explain the rest";
        return r;
    }
    gsize tail = 0;
    for (guint k = 1; k < n; ++k) {
        tail += sizes[n - k];
        if (tail == tensor_bytes) {
            r.layout = TensorMemories::Layout::Appended;
            r.first = n - k;
            r.count = k;
            return r;
        }
        if (tail > tensor_bytes)
            break;
    }
    r.layout = TensorMemories::Layout::Unusable;
    r.why = r.memories + " of a pool buffer: no memories after the pool's own add up to exactly " +
            tensor;
    return r;
}

bool make_single_memory(GstBuffer* buffer, const TensorMemories& where, std::string* why)
{
    switch (where.layout) {
    case TensorMemories::Layout::Single:
        return true;
    case TensorMemories::Layout::Unusable:
        *why = where.why;
        return false;
    case TensorMemories::Layout::Split:
    case TensorMemories::Layout::Appended:
        break;
    }
    if (where.count == 1) {
        gst_buffer_remove_memory_range(buffer, 0, gint(where.first));
        return true;
    }

    // Several parts: one tensor needs them to be one contiguous range of one fd object.
    GstMemory* head = gst_buffer_peek_memory(buffer, where.first);
    MemoryIdentity object;
    gsize next = 0, bytes = 0;
    for (guint i = where.first; i < where.first + where.count; ++i) {
        GstMemory* m = gst_buffer_peek_memory(buffer, i);
        const auto id = memory_identity(m);
        if (!id) {
            *why = "part " + std::to_string(i - where.first + 1) +
                   " of the tensor is memory of type \"" + memory_type_name(m) +
                   "\", which has no fd to import";
            return false;
        }
        if (i > where.first && (*id != object || m->offset != next)) {
            *why = "the tensor's " + std::to_string(where.count) +
                   " parts are not one contiguous range of one buffer, so no single tensor "
                   "describes them";
            return false;
        }
        object = *id;
        next = m->offset + m->size;
        bytes += m->size;
    }
    if (head->offset != 0) {
        *why = "the tensor starts " + std::to_string(head->offset) +
               " bytes into its fd; other/tensors are imported from byte 0 only";
        return false;
    }
    const int fd = fcntl(gst_fd_memory_get_fd(head), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        *why = std::string("duplicating the tensor's fd failed: ") + g_strerror(errno);
        return false;
    }
    GstMemory* joined =
        gst_is_dmabuf_memory(head)
            ? gst_dmabuf_allocator_alloc(join_allocator(true), fd, bytes)
            : gst_fd_allocator_alloc(join_allocator(false), fd, bytes, GST_FD_MEMORY_FLAG_NONE);
    if (!joined) {
        close(fd);
        *why = "wrapping the tensor's fd in one memory failed";
        return false;
    }
    gst_buffer_replace_all_memory(buffer, joined);
    return true;
}

bool copy_tensor_bytes(GstBuffer* src, size_t tensor_bytes, guint8* dst, size_t dst_size)
{
    const TensorMemories where = locate_tensor(src, tensor_bytes);
    if (where.layout == TensorMemories::Layout::Unusable)
        return false;
    if (where.layout == TensorMemories::Layout::Single) {
        const gsize size = gst_buffer_get_size(src);
        return size <= dst_size && gst_buffer_extract(src, 0, dst, size) == size;
    }
    gsize offset = 0;
    for (guint i = 0; i < where.first; ++i)
        offset += gst_buffer_peek_memory(src, i)->size;
    return tensor_bytes <= dst_size &&
           gst_buffer_extract(src, offset, dst, tensor_bytes) == tensor_bytes;
}

std::string describe_sent_memory(GstBuffer* buffer, const TensorMemories& where)
{
    const guint n = gst_buffer_n_memory(buffer);
    if (n == 0)
        return "buffers without memory";
    std::set<std::string> types;
    for (guint i = where.first; i < std::min(n, where.first + where.count); ++i)
        types.insert(memory_type_name(gst_buffer_peek_memory(buffer, i)));
    std::string type_list;
    for (const std::string& t : types)
        type_list += (type_list.empty() ? "\"" : ", \"") + t + "\"";
    const char* of_type = types.size() == 1 ? "memory of type " : "memories of types ";
    switch (where.layout) {
    case TensorMemories::Layout::Single:
        return of_type + type_list;
    case TensorMemories::Layout::Split:
        return "buffers of " + where.memories + " holding one tensor split across them, in " +
               of_type + type_list;
    case TensorMemories::Layout::Appended:
        return "buffers of " + where.memories + " (a pool buffer with the tensor appended after " +
               "the pool's own memory), the tensor in " + of_type + type_list;
    case TensorMemories::Layout::Unusable:
        break;
    }
    return "buffers of " + where.memories;
}

} // namespace edgetensor::gst
