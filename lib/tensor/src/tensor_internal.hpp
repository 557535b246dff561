// SPDX-License-Identifier: MIT
//
// Helpers shared by the TensorDyn translation units.

#pragma once

#include "storage.hpp"
#include "tensor_access.hpp"

#include <optional>
#include <string>

namespace edgetensor::detail
{

struct IdentityToken {
    uint64_t id;
};

/// A fresh identity from the process-wide counter.
std::shared_ptr<const IdentityToken> mint_identity();

/// Gives `t` the identity already recorded for its storage's platform id (AHardwareBuffer_getId)
/// while a tensor holding it lives, else records t's own (platform_api.cpp). No-op for storages
/// without a platform id.
void intern_platform_identity(TensorDyn& t);

/// True when EDGETENSOR_FORCE_MEM=1 (read on every call: tests and tools set it at run time).
bool force_mem() noexcept;

/// Walks the allocation chain: explicit `memory` only; else EDGETENSOR_FORCE_MEM=1 -> Mem;
/// else Dma -> Shm -> Mem for generic tensors, Dma -> Mem for images.
StorageResult allocate_storage(const AllocRequest& req, std::optional<TensorMemory> memory,
                               bool image);

/// Recognises `fd` by its fstatfs magic and adopts it (see TensorDyn::from_fd).
StorageResult import_storage(UniqueFd fd, CpuAccess access);

/// "[480, 640, 3]"
std::string shape_string(const Shape& shape);

/// Byte strides of an image of row pitch `row_stride` in `format`'s layout.
std::vector<ptrdiff_t> image_strides(PixelFormat format, size_t height, size_t row_stride,
                                     size_t elem);

} // namespace edgetensor::detail
