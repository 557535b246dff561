// SPDX-License-Identifier: MIT
//
// Where every plane of an upstream buffer lies: which GstMemory, its fd, the byte offset in
// that fd, and which kernel object the fd is. The import cache keys on this and imports from
// it; nothing here imports, duplicates or counts. Not installed.

#pragma once

#include "internal.hpp"
#include "memory_identity.hpp"
#include "stream_layout.hpp"

#include <gst/edgetensor/gstedgetensormeta.h>
#include <gst/video/video.h>

#include <edgetensor/error.hpp>
#include <edgetensor/fd_planes.hpp>

#include <array>
#include <string>

namespace edgetensor::gst
{

inline constexpr guint kMaxBufferPlanes = GST_EDGE_TENSOR_META_MAX_PLANES;

/// One plane of a buffer.
struct PlanePlace {
    GstMemory* mem = nullptr; ///< borrowed from the buffer
    int fd = -1;              ///< borrowed from the memory
    guint64 fd_offset = 0;    ///< bytes from the start of the fd's buffer
    gint stride = 0;          ///< video: the row pitch; 0 for a tensor
    MemoryIdentity object;    ///< the kernel object behind `fd`
};

/// Every plane of one buffer, as classify_planes() found them.
struct BufferPlanes {
    guint n_planes = 0;
    std::array<PlanePlace, kMaxBufferPlanes> places{};
    bool video = false;
    GstVideoInfo vinfo{};           ///< video: the buffer's real layout (GstVideoMeta, else caps)
    bool single_object = true;      ///< every plane in one kernel object
    bool edgetensor_memory = false; ///< every plane in one edgetensor memory: reuse its tensor
};

/// Whether a buffer can be imported.
enum class PlanesVerdict {
    Ok,            ///< `planes` say where everything is
    NotImportable, ///< not fd memory, or a layout one tensor cannot describe (`why`)
    Failed,        ///< the kernel refused to say what a memory is (`why`, `code`)
};

struct Classified {
    PlanesVerdict verdict = PlanesVerdict::Ok;
    std::string why;
    ErrorCode code = ErrorCode::InvalidArgument;
};

/// Works out where every plane of `buffer` lies under `layout`, into `planes`. Only reads: the
/// memories' identities (memory_identity(), remembered on each memory).
Classified classify_planes(const StreamLayout& layout, GstBuffer* buffer, BufferPlanes* planes);

/// What the core's import_fd_planes() needs to build the tensor over `planes` (a buffer of
/// `layout` that is not an edgetensor memory).
FdPlanes fd_planes_of(const BufferPlanes& planes, const StreamLayout& layout);

/// The plane offsets (in plane 0's fd) and strides a GstEdgeTensorMeta records for `planes`;
/// a tensor's row stride is the tensor's own.
MetaPlanes meta_planes_of(const BufferPlanes& planes, const TensorDyn& tensor);

} // namespace edgetensor::gst
