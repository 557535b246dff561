// SPDX-License-Identifier: MIT
//
// Android: TensorMemory::Dma is an NDK AHardwareBuffer there. These calls exist on every
// platform (so portable code compiles unchanged) and report NotSupported / false / null where
// edgetensor has no AHardwareBuffer backend. No NDK header is needed to include this one.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/pixel_format.hpp"
#include "edgetensor/tensor_dyn.hpp"
#include "edgetensor/types.hpp"

#include <cstddef>
#include <string_view>

/// The NDK's opaque buffer type (<android/hardware_buffer.h>).
struct AHardwareBuffer;

namespace edgetensor
{

/// True when an AHardwareBuffer can be allocated here (Android with a working gralloc).
bool is_ahardwarebuffer_available() noexcept;

/// The AHardwareBuffer behind `tensor` (borrowed: valid while any tensor sharing the storage
/// lives; AHardwareBuffer_acquire() it to keep it), for NNAPI / LiteRT / QNN registration or
/// EGL_ANDROID_get_native_client_buffer. Null for tensors that are not AHardwareBuffer-backed.
AHardwareBuffer* hardware_buffer_ptr(const TensorDyn& tensor) noexcept;

/// Wraps a foreign AHardwareBuffer as an image without copying: the tensor takes a reference
/// of its own (AHardwareBuffer_acquire; the caller keeps its own). The buffer's descriptor must
/// be exactly what edgetensor allocates for (format, dtype, width, height) (see
/// docs/android.md), else InvalidDescriptor. The declared CPU access is derived from the
/// buffer's usage bits. Re-wrapping the same buffer while a tensor of it lives returns that
/// tensor's BufferIdentity (interned on AHardwareBuffer_getId, API 31+).
Result<TensorDyn> from_hardware_buffer(AHardwareBuffer* buffer, size_t width, size_t height,
                                       PixelFormat format, DType dtype = DType::U8,
                                       std::string_view name = {});

/// Wraps a foreign AHardwareBuffer as a generic tensor of `shape`, which must fit the bytes a
/// CPU lock of the buffer spans (a BLOB's width, else pitch * rows). Identity as above.
Result<TensorDyn> from_hardware_buffer(AHardwareBuffer* buffer, DType dtype, const Shape& shape,
                                       std::string_view name = {});

} // namespace edgetensor
