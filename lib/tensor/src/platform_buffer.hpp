// SPDX-License-Identifier: MIT
//
// The platform-buffer seam: where TensorMemory::Dma is not a Linux DMA-BUF but a platform
// object (Android's AHardwareBuffer), a provider behind this table allocates and imports it.
// On Android the AHardwareBuffer shell is built in; elsewhere there is none, except in tests,
// which install the shell compiled against the simulated NDK (tests/android).

#pragma once

#include "edgetensor/compression.hpp"
#include "edgetensor/pixel_format.hpp"
#include "storage.hpp"

#include <memory>
#include <string_view>

struct AHardwareBuffer;

namespace edgetensor::detail
{

struct PlatformImageRequest {
    size_t width = 0;
    size_t height = 0;
    PixelFormat format = PixelFormat::None;
    DType dtype = DType::U8;
    CpuAccess access = CpuAccess::ReadWrite;
    Compression compression;
    std::string_view name;
};

/// A platform image: its storage and the row pitch the platform chose (bytes).
struct PlatformImage {
    std::shared_ptr<Storage> storage;
    size_t row_stride = 0;
};

struct PlatformBufferOps {
    std::string_view name;
    bool (*available)() noexcept;
    /// A generic (byte) buffer of req.bytes.
    StorageResult (*allocate_bytes)(const AllocRequest& req);
    /// An image; req.compression is resolved and recorded on the storage.
    Result<PlatformImage> (*allocate_image)(const PlatformImageRequest& req);
    /// A foreign buffer as an image (the descriptor is checked against req's geometry; the
    /// declared access comes from the buffer's usage, not req.access).
    Result<PlatformImage> (*import_image)(AHardwareBuffer* buffer, const PlatformImageRequest& req);
    /// A foreign buffer as bytes (all a CPU lock spans).
    StorageResult (*import_bytes)(AHardwareBuffer* buffer);
};

/// The installed provider: set_platform_buffer_ops()'s, else the built-in one (Android), else
/// null (TensorMemory::Dma is the Linux DMA-BUF chain).
const PlatformBufferOps* platform_buffer_ops() noexcept;
/// Installs (or, with null, removes) a provider for the whole process. For tests only: the
/// simulated-NDK build of the shell.
void set_platform_buffer_ops(const PlatformBufferOps* ops) noexcept;

/// Counts one Compression::any() that resolved linear.
void note_compression_fallback() noexcept;

} // namespace edgetensor::detail
