// SPDX-License-Identifier: MIT
//
// The platform-buffer seam (platform_buffer.hpp) and the Android calls of the public API that
// sit on it (android.hpp, compression.hpp): built on every platform. The AHardwareBuffer shell
// behind the seam is ahb_shell.cpp.

#include "edgetensor/android.hpp"
#include "edgetensor/compression.hpp"

#include "ahb_layout.hpp"
#include "platform_buffer.hpp"
#include "tensor_internal.hpp"

#include <atomic>

#if defined(EDGETENSOR_AHB_BUILTIN)
#include "ahb_shell.hpp"
#endif

namespace edgetensor
{
namespace detail
{
namespace
{

std::atomic<const PlatformBufferOps*> g_ops_override{nullptr};
std::atomic<uint64_t> g_compression_fallbacks{0};

ahb::IdentityInternTable& intern_table()
{
    static ahb::IdentityInternTable* table = new ahb::IdentityInternTable(); // never destroyed:
    return *table; // tensors may outlive static destruction order
}

Unexpected not_built()
{
    return make_error(ErrorCode::NotSupported,
                      "AHardwareBuffer support is not built into this edgetensor (it is an "
                      "Android backend)");
}

} // namespace

const PlatformBufferOps* platform_buffer_ops() noexcept
{
    if (const PlatformBufferOps* ops = g_ops_override.load(std::memory_order_acquire))
        return ops;
#if defined(EDGETENSOR_AHB_BUILTIN)
    return &ahb::platform_ops();
#else
    return nullptr;
#endif
}

void set_platform_buffer_ops(const PlatformBufferOps* ops) noexcept
{
    g_ops_override.store(ops, std::memory_order_release);
}

void note_compression_fallback() noexcept
{
    g_compression_fallbacks.fetch_add(1, std::memory_order_relaxed);
}

void intern_platform_identity(TensorDyn& t)
{
    const auto& storage = TensorAccess::storage(t);
    if (!storage)
        return;
    const std::optional<uint64_t> key = storage->platform_id();
    if (!key)
        return;
    const std::shared_ptr<const IdentityToken> own = TensorAccess::identity(t);
    std::shared_ptr<const void> guard = intern_table().find_or_insert(*key, [&] { return own; });
    if (guard != own)
        TensorAccess::adopt_identity(t, std::static_pointer_cast<const IdentityToken>(guard));
}

} // namespace detail

std::string_view compression_scheme_name(CompressionScheme scheme) noexcept
{
    switch (scheme) {
    case CompressionScheme::Ubwc:
        return "ubwc";
    case CompressionScheme::Afbc:
        return "afbc";
    case CompressionScheme::Pvric:
        return "pvric";
    case CompressionScheme::Dcc:
        return "dcc";
    }
    return "unknown";
}

uint64_t compression_fallback_count() noexcept
{
    return detail::g_compression_fallbacks.load(std::memory_order_relaxed);
}

std::optional<CompressionScheme> TensorDyn::compression() const noexcept
{
    return storage_ ? storage_->compression() : std::nullopt;
}

bool is_ahardwarebuffer_available() noexcept
{
    const detail::PlatformBufferOps* ops = detail::platform_buffer_ops();
    return ops && ops->available();
}

AHardwareBuffer* hardware_buffer_ptr(const TensorDyn& tensor) noexcept
{
    const auto& storage = detail::TensorAccess::storage(tensor);
    return storage ? storage->hardware_buffer() : nullptr;
}

Result<TensorDyn> from_hardware_buffer(AHardwareBuffer* buffer, size_t width, size_t height,
                                       PixelFormat format, DType dtype, std::string_view name)
{
    const detail::PlatformBufferOps* ops = detail::platform_buffer_ops();
    if (!ops)
        return detail::not_built();
    if (!buffer)
        return make_error(ErrorCode::InvalidArgument, "from_hardware_buffer: the buffer is null");
    auto img = ops->import_image(
        buffer, {width, height, format, dtype, CpuAccess::None, Compression::none(), name});
    if (!img)
        return unexpected(std::move(img).error());
    const CpuAccess access = img->storage->declared_access();
    TensorDyn t = detail::TensorAccess::wrap(
        std::move(img->storage), dtype, image_shape(format, width, height),
        detail::image_strides(format, height, img->row_stride, dtype_size(dtype)), 0, name);
    detail::TensorAccess::set_image(t, format, width, height, access);
    detail::intern_platform_identity(t);
    return t;
}

Result<TensorDyn> from_hardware_buffer(AHardwareBuffer* buffer, DType dtype, const Shape& shape,
                                       std::string_view name)
{
    const detail::PlatformBufferOps* ops = detail::platform_buffer_ops();
    if (!ops)
        return detail::not_built();
    if (!buffer)
        return make_error(ErrorCode::InvalidArgument, "from_hardware_buffer: the buffer is null");
    const auto n = detail::checked_len(shape);
    if (!n || *n > SIZE_MAX / dtype_size(dtype))
        return make_error(ErrorCode::InvalidShape, "from_hardware_buffer: shape " +
                                                       detail::shape_string(shape) + " is invalid");
    auto storage = ops->import_bytes(buffer);
    if (!storage)
        return unexpected(std::move(storage).error());
    const size_t bytes = *n * dtype_size(dtype);
    if (bytes > (*storage)->capacity())
        return make_error(ErrorCode::InsufficientCapacity,
                          "from_hardware_buffer: shape " + detail::shape_string(shape) + " needs " +
                              std::to_string(bytes) + " bytes but the AHardwareBuffer spans " +
                              std::to_string((*storage)->capacity()));
    TensorDyn t = detail::TensorAccess::wrap(std::move(*storage), dtype, shape, {}, 0, name);
    detail::intern_platform_identity(t);
    return t;
}

} // namespace edgetensor
