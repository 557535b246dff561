// SPDX-License-Identifier: MIT
//
// Pixel formats, their memory layout, and the row-stride rule for images.

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace edgetensor
{

/// Image pixel format. Values are wire codes (TensorDesc.format): 0 means "not an image";
/// new formats are appended, never renumbered.
enum class PixelFormat : uint32_t {
    None = 0,
    Rgb = 1,
    Rgba = 2,
    Bgra = 3,
    Grey = 4,
    Yuyv = 5,
    Vyuy = 6,
    Nv12 = 7,
    Nv16 = 8,
    PlanarRgb = 9,
    PlanarRgba = 10,
    Nv24 = 11,
};

inline constexpr uint32_t kPixelFormatMaxCode = 11;

/// How the planes of a format sit in memory.
///  - Packed: one plane, channels interleaved; tensor shape [H, W, C].
///  - Planar: one plane per channel, each H rows; tensor shape [C, H, W].
///  - SemiPlanar: a luma plane of H rows followed by an interleaved chroma plane, both with
///    one pitch; tensor shape [H + chroma_rows, row_bytes] where row_bytes is the wider of the
///    luma and chroma rows (NV12 even width: [H*3/2, W]; NV16: [2H, W]; NV24: [2H, 2W]).
enum class PixelLayout : uint32_t {
    Packed = 0,
    Planar = 1,
    SemiPlanar = 2,
};

struct PixelFormatInfo {
    PixelFormat format;
    std::string_view name; ///< "RGB", "NV12", ...
    PixelLayout layout;
    uint32_t channels; ///< logical channels (YUV formats count 3; YUYV packs 2 bytes/pixel)
    uint32_t bytes_per_pixel_plane0; ///< per-pixel element count in plane 0 (RGB 3, YUYV 2, NV12 1)
    uint32_t chroma_h_sub;           ///< horizontal chroma subsampling (1 = none)
    uint32_t chroma_v_sub;           ///< vertical chroma subsampling (1 = none)
    uint32_t drm_fourcc;             ///< DRM FourCC, 0 where DRM has none
};

/// Layout facts for `format`; nullopt for PixelFormat::None or an unknown code.
std::optional<PixelFormatInfo> pixel_format_info(PixelFormat format) noexcept;
/// True when `code` is a known PixelFormat wire code (0 included).
bool pixel_format_from_code(uint32_t code, PixelFormat* out) noexcept;
/// DRM FourCC of `format`, 0 when none.
uint32_t to_drm_fourcc(PixelFormat format) noexcept;
/// The PixelFormat whose DRM FourCC is `fourcc`, or PixelFormat::None.
PixelFormat from_drm_fourcc(uint32_t fourcc) noexcept;
/// "NV12", "RGB", ...; "none" for PixelFormat::None.
std::string_view pixel_format_name(PixelFormat format) noexcept;

/// Which stride policy an image gets. Dma images are imported by GPUs/NPUs that reject
/// pitches that are not 64-byte multiples (Mali: EGL_BAD_ALLOC, Vivante: EGL_BAD_ACCESS).
enum class StridePolicy : uint32_t {
    Host = 0, ///< tight pitch for packed and planar; semi-planar still aligned
    Dma = 1,  ///< 64-byte aligned pitch in every layout
};

inline constexpr size_t kDmaRowAlignment = 64;

constexpr size_t align_up(size_t v, size_t a) noexcept
{
    return (v + a - 1) / a * a;
}

/// Bytes of one row of plane 0 with no padding (for semi-planar: the wider of the luma row
/// and the interleaved chroma row, so both planes can share one pitch).
size_t natural_row_bytes(PixelFormat format, size_t width, size_t elem_size = 1) noexcept;

/// The row stride (bytes) an image of `width` pixels gets under `policy`. This single pure
/// function is what every backend uses, at allocation and at configure_image.
/// Returns 0 for PixelFormat::None or width 0.
size_t image_row_stride(PixelFormat format, size_t width, StridePolicy policy,
                        size_t elem_size = 1) noexcept;

/// Number of stride-sized rows an image of `height` occupies in one buffer (all planes).
size_t image_total_rows(PixelFormat format, size_t height) noexcept;

/// Rows of plane 0 (luma for semi-planar, one channel for planar).
size_t image_plane0_rows(PixelFormat format, size_t height) noexcept;

/// The logical tensor shape of an image (see PixelLayout).
std::vector<size_t> image_shape(PixelFormat format, size_t width, size_t height);

} // namespace edgetensor
