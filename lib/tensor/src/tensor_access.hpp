// SPDX-License-Identifier: MIT
//
// Library-internal access to a TensorDyn's storage, for subsystems (interop, dma tests)
// that build tensors over storage they made or reach the storage behind one.

#pragma once

#include "edgetensor/tensor_dyn.hpp"
#include "storage.hpp"

#include <memory>
#include <string_view>
#include <vector>

namespace edgetensor::detail
{

struct TensorAccess {
    static const std::shared_ptr<Storage>& storage(const TensorDyn& t) noexcept
    {
        return t.storage_;
    }

    /// The storage of a semi-planar image's chroma plane (the same object as storage() when
    /// both planes share one buffer); null for other tensors.
    static std::shared_ptr<Storage> chroma_storage(const TensorDyn& t) noexcept
    {
        return t.chroma_ ? t.chroma_->storage : nullptr;
    }

    /// A tensor over `storage` with a fresh BufferIdentity (an allocation or an import).
    /// `strides` empty means contiguous. The caller has validated that the window
    /// [offset, offset + extent) lies inside the storage.
    static TensorDyn wrap(std::shared_ptr<Storage> storage, DType dtype, Shape shape,
                          std::vector<ptrdiff_t> strides, size_t offset, std::string_view name);

    /// Gives `t` a fresh BufferIdentity (a new import composed from existing storage).
    static void renew_identity(TensorDyn& t);
    /// The identity token `t` carries, and a way to give it another (platform interning).
    static const std::shared_ptr<const IdentityToken>& identity(const TensorDyn& t) noexcept
    {
        return t.identity_;
    }
    static void adopt_identity(TensorDyn& t, std::shared_ptr<const IdentityToken> token);

    /// Marks `t` as an image. Plane 0 stride is strides()[row dim]; a semi-planar image's chroma
    /// plane lives in the same storage at `chroma_offset` with pitch `chroma_stride`.
    static void set_image(TensorDyn& t, PixelFormat format, size_t width, size_t height,
                          CpuAccess access, size_t chroma_offset = 0, size_t chroma_stride = 0);
};

/// Byte extent addressed by (shape, strides) for elements of `elem` bytes: 0 for an empty
/// shape, else sum((dim - 1) * stride) + elem. Strides must be non-negative.
size_t strided_extent(const Shape& shape, const std::vector<ptrdiff_t>& strides, size_t elem);
/// Row-major contiguous byte strides.
std::vector<ptrdiff_t> contiguous_strides(const Shape& shape, size_t elem);
/// Product of `shape`, or nullopt on overflow / empty shape / zero dimension.
std::optional<size_t> checked_len(const Shape& shape);

} // namespace edgetensor::detail
