// SPDX-License-Identifier: MIT
//
// memory_identity (memory_identity.hpp): the one place the GStreamer layer asks which kernel
// object a memory is: fstat() of its fd, through the core's fd_identity().

#include "memory_identity.hpp"

#include "fd_identity.hpp"

#include <gst/allocators/allocators.h>

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

} // namespace

Result<MemoryIdentity> memory_identity(GstMemory* mem)
{
    if (!mem || !gst_is_fd_memory(mem))
        return make_error(ErrorCode::NotSupported, std::string("memory of type \"") +
                                                       memory_type_name(mem) + "\" has no fd");
    const int fd = gst_fd_memory_get_fd(mem);
    if (fd < 0)
        return make_error(ErrorCode::NotSupported, "the memory's fd is closed");
    auto* known = static_cast<const Known*>(
        gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(mem), identity_quark()));
    if (known && known->fd == fd)
        return known->id;
    auto id = detail::fd_identity(fd);
    if (!id)
        return unexpected(std::move(id).error());
    const Known fresh{fd, MemoryIdentity{id->dev, id->ino}};
    gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), identity_quark(),
                              g_memdup2(&fresh, sizeof(fresh)), g_free);
    return fresh.id;
}

const char* memory_type_name(GstMemory* mem) noexcept
{
    return mem && mem->allocator && mem->allocator->mem_type ? mem->allocator->mem_type
                                                             : "(no allocator)";
}

} // namespace edgetensor::gst
