// SPDX-License-Identifier: MIT
//
// Element formats for 3-D camera data (point clouds, normals, SNR, colour), laid out as the
// DeviceArray reference does: row-major, channel-interleaved. Organized data (from an image
// sensor) is [H, W, C], or [H, W] for one channel; unorganized data (a flat list of points)
// is [N, C], or [N]. size() counts points, never channels.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/tensor_desc.h"
#include "edgetensor/tensor_dyn.hpp"
#include "edgetensor/types.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

struct DLManagedTensor;

namespace edgetensor
{

/// What one point/pixel of a buffer holds. Values are stable codes (0 = none).
enum class ElementFormat : uint32_t {
    None = 0,
    PointXYZ = 1,  ///< f32 x3, 12 bytes
    PointXYZW = 2, ///< f32 x4, 16 bytes (16-byte aligned points for vector loads)
    PointZ = 3,    ///< f32 x1, depth map
    SNR = 4,       ///< f32 x1
    NormalXYZ = 5, ///< f32 x3
    ColorRGBA = 6, ///< u8 x4
    ColorBGRA = 7, ///< u8 x4
    ColorRGBA_SRGB = 8,
    ColorBGRA_SRGB = 9,
    ColorRGBAf = 10, ///< f32 x4, linear
    ColorRGB = 11,   ///< u8 x3 (not naturally aligned; prefer a 4-channel variant)
    ColorBGR = 12,
    ColorRGB_SRGB = 13,
    ColorBGR_SRGB = 14,
};

inline constexpr uint32_t kElementFormatMaxCode = 14;

struct ElementFormatInfo {
    ElementFormat format;
    std::string_view name;      ///< "PointXYZ", "ColorRGBA_SRGB", ...
    DType element_type;         ///< the scalar type of one channel
    uint32_t channels;          ///< scalars per point
    uint32_t bytes_per_element; ///< bytes per point (channels * scalar size)
    bool srgb;                  ///< colour values are sRGB-encoded
};

/// Facts about `format`; nullopt for ElementFormat::None or an unknown code.
std::optional<ElementFormatInfo> element_format_info(ElementFormat format) noexcept;
/// True when `code` names an ElementFormat other than None.
bool element_format_from_code(uint32_t code, ElementFormat* out) noexcept;
/// "PointXYZ", ...; "none" for None or an unknown code.
std::string_view element_format_name(ElementFormat format) noexcept;

enum class Organization : uint32_t {
    Organized = 0,   ///< H x W grid from an image sensor
    Unorganized = 1, ///< a flat list of N points
};

/// [H, W, C] or [H, W] (one channel). Empty for an unknown format or a zero dimension.
Shape organized_shape(ElementFormat format, size_t height, size_t width);
/// [N, C] or [N] (one channel). Empty for an unknown format or N = 0.
Shape unorganized_shape(ElementFormat format, size_t count);

/// A tensor whose elements are points/pixels of one ElementFormat. Cheap to copy; shares the
/// TensorDyn's storage. Its shape follows the organized/unorganized rule exactly.
class ElementTensor
{
public:
    ElementTensor() = default;

    /// Allocates an organized H x W buffer (see TensorDyn::create for `memory`).
    static Result<ElementTensor> create_organized(ElementFormat format, size_t height, size_t width,
                                                  std::optional<TensorMemory> memory = {},
                                                  std::string_view name = {});
    /// Allocates an unorganized buffer of `count` points.
    static Result<ElementTensor> create_unorganized(ElementFormat format, size_t count,
                                                    std::optional<TensorMemory> memory = {},
                                                    std::string_view name = {});
    /// Adopts a tensor that already has this format's layout: dtype == element type, shape one
    /// of the four cases for this format, channels tight. The organization is read from the
    /// rank (a one-channel [H, W] is organized, a multi-channel [N, C] unorganized).
    static Result<ElementTensor> from_dyn(ElementFormat format, TensorDyn tensor);

    bool is_valid() const noexcept { return tensor_.is_valid(); }
    ElementFormat format() const noexcept { return format_; }
    /// Element type, channels and bytes per point of format().
    ElementFormatInfo info() const noexcept;
    Organization organization() const noexcept { return organization_; }
    bool is_organized() const noexcept { return organization_ == Organization::Organized; }
    /// Rows of an organized buffer; 1 for an unorganized one.
    size_t height() const noexcept;
    /// Columns of an organized buffer; the point count of an unorganized one.
    size_t width() const noexcept;
    /// Number of points (pixels), not channels.
    size_t size() const noexcept;
    /// Bytes the points occupy (size() * bytes per element; padding excluded).
    size_t size_in_bytes() const noexcept;
    const Shape& shape() const noexcept { return tensor_.shape(); }
    /// Strides in elements of the scalar type (PointXYZ 2x3: [9, 3, 1]).
    std::vector<ptrdiff_t> strides() const;
    /// Strides in bytes (PointXYZ 2x3: [36, 12, 4]).
    const std::vector<ptrdiff_t>& strides_in_bytes() const noexcept { return tensor_.strides(); }

    /// Zero-copy sub-rectangle of an organized buffer (x along width, y along height).
    /// NotSupported for unorganized buffers, which have no 2-D grid.
    Result<ElementTensor> view(const Region& region) const;

    /// The tensor underneath (shares storage and identity).
    const TensorDyn& dyn() const noexcept { return tensor_; }

    /// Scalar map; T must be the element type (float or uint8_t), DTypeMismatch otherwise.
    template <typename T> Result<TensorMap<T>> map_as(CpuAccess access) const
    {
        return tensor_.map_as<T>(access);
    }
    Result<TensorMap<uint8_t>> map_with(CpuAccess access) const { return tensor_.map_with(access); }
    Result<TensorMap<const uint8_t>> map_read() const { return tensor_.map_read(); }

    /// See TensorDyn::describe. Element formats are not pixel formats: `format` stays 0.
    Result<EdgeTensorDesc> describe() const;
    /// See TensorDyn::to_dlpack (dtype = the element type, channels as the last dimension).
    Result<DLManagedTensor*> to_dlpack(CpuAccess access = CpuAccess::ReadWrite) const;

private:
    ElementTensor(ElementFormat format, Organization organization, TensorDyn tensor)
        : format_(format), organization_(organization), tensor_(std::move(tensor))
    {
    }

    ElementFormat format_ = ElementFormat::None;
    Organization organization_ = Organization::Organized;
    TensorDyn tensor_;
};

} // namespace edgetensor
