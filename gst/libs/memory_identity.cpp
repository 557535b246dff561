// SPDX-License-Identifier: MIT
//
// memory_identity (memory_identity.hpp): the one place the GStreamer layer asks which kernel
// object a memory is: fstat() of its fd, through the core's fd_identity().

#include "memory_identity.hpp"

#include "fd_identity.hpp"

#include <gst/allocators/allocators.h>

#include <mutex>
#include <string>

namespace edgetensor::gst
{

namespace
{

struct Known {
    int fd = -1;
    MemoryIdentity id;
};

GQuark identity_quark()
{
    static const GQuark quark = g_quark_from_static_string("GstEdgeTensorMemory.identity");
    return quark;
}

// The memory that holds `mem`'s fd longest: its share ancestors with the same fd. They outlive
// every share of theirs (a share refs its parent), so what is kept there serves every share.
GstMemory* holder_of(GstMemory* mem, int fd)
{
    while (mem->parent && gst_is_fd_memory(mem->parent) && gst_fd_memory_get_fd(mem->parent) == fd)
        mem = mem->parent;
    return mem;
}

// Serialises the writes only: a kept answer is never replaced (an fd memory's fd never
// changes), so a reader that found one can use it while another thread looks at the same
// memory, and two threads asking at once keep the first answer.
std::mutex remember_mu;

void remember(GstMemory* holder, int fd, MemoryIdentity id)
{
    std::lock_guard<std::mutex> lock(remember_mu);
    if (gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(holder), identity_quark()))
        return;
    const Known fresh{fd, id};
    gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(holder), identity_quark(),
                              g_memdup2(&fresh, sizeof(fresh)), g_free);
}

} // namespace

Result<MemoryIdentity> memory_identity(GstMemory* mem)
{
    if (!mem || !gst_is_fd_memory(mem))
        return make_error(ErrorCode::NotSupported, std::string("memory of type \"") +
                                                       memory_type_name(mem) + "\" has no fd");
    const int fd = gst_fd_memory_get_fd(mem);
    if (fd < 0)
        return make_error(ErrorCode::NotSupported, "the memory's fd is closed");
    GstMemory* holder = holder_of(mem, fd);
    auto* known = static_cast<const Known*>(
        gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(holder), identity_quark()));
    if (known && known->fd == fd)
        return known->id;
    auto fresh = fd_file_identity(fd);
    if (fresh)
        remember(holder, fd, *fresh);
    return fresh;
}

Result<MemoryIdentity> fd_file_identity(int fd)
{
    auto id = detail::fd_identity(fd);
    if (!id)
        return unexpected(std::move(id).error());
    return MemoryIdentity{id->dev, id->ino};
}

void remember_memory_identity(GstMemory* mem, MemoryIdentity id)
{
    if (!mem || !gst_is_fd_memory(mem))
        return;
    const int fd = gst_fd_memory_get_fd(mem);
    if (fd >= 0)
        remember(holder_of(mem, fd), fd, id);
}

const char* memory_type_name(GstMemory* mem) noexcept
{
    return mem && mem->allocator && mem->allocator->mem_type ? mem->allocator->mem_type
                                                             : "(no allocator)";
}

} // namespace edgetensor::gst
