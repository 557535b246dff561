// SPDX-License-Identifier: MIT
#include "edgetensor/pixel_format.hpp"

#include <algorithm>
#include <array>

namespace edgetensor
{
namespace
{

constexpr uint32_t fourcc(char a, char b, char c, char d)
{
    return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 |
           uint32_t(uint8_t(d)) << 24;
}

// DRM names formats by the little-endian word, so byte order R,G,B is DRM_FORMAT_BGR888.
constexpr std::array<PixelFormatInfo, kPixelFormatMaxCode> kFormats = {{
    {PixelFormat::Rgb, "RGB", PixelLayout::Packed, 3, 3, 1, 1, fourcc('B', 'G', '2', '4')},
    {PixelFormat::Rgba, "RGBA", PixelLayout::Packed, 4, 4, 1, 1, fourcc('A', 'B', '2', '4')},
    {PixelFormat::Bgra, "BGRA", PixelLayout::Packed, 4, 4, 1, 1, fourcc('A', 'R', '2', '4')},
    {PixelFormat::Grey, "GREY", PixelLayout::Packed, 1, 1, 1, 1, fourcc('R', '8', ' ', ' ')},
    {PixelFormat::Yuyv, "YUYV", PixelLayout::Packed, 3, 2, 2, 1, fourcc('Y', 'U', 'Y', 'V')},
    {PixelFormat::Vyuy, "VYUY", PixelLayout::Packed, 3, 2, 2, 1, fourcc('V', 'Y', 'U', 'Y')},
    {PixelFormat::Nv12, "NV12", PixelLayout::SemiPlanar, 3, 1, 2, 2, fourcc('N', 'V', '1', '2')},
    {PixelFormat::Nv16, "NV16", PixelLayout::SemiPlanar, 3, 1, 2, 1, fourcc('N', 'V', '1', '6')},
    {PixelFormat::PlanarRgb, "RGB_PLANAR", PixelLayout::Planar, 3, 1, 1, 1, 0},
    {PixelFormat::PlanarRgba, "RGBA_PLANAR", PixelLayout::Planar, 4, 1, 1, 1, 0},
    {PixelFormat::Nv24, "NV24", PixelLayout::SemiPlanar, 3, 1, 1, 1, fourcc('N', 'V', '2', '4')},
}};

const PixelFormatInfo* lookup(PixelFormat f) noexcept
{
    const uint32_t code = static_cast<uint32_t>(f);
    if (code == 0 || code > kPixelFormatMaxCode)
        return nullptr;
    return &kFormats[code - 1];
}

} // namespace

std::optional<PixelFormatInfo> pixel_format_info(PixelFormat format) noexcept
{
    if (const PixelFormatInfo* i = lookup(format))
        return *i;
    return std::nullopt;
}

bool pixel_format_from_code(uint32_t code, PixelFormat* out) noexcept
{
    if (code > kPixelFormatMaxCode)
        return false;
    if (out)
        *out = static_cast<PixelFormat>(code);
    return true;
}

uint32_t to_drm_fourcc(PixelFormat format) noexcept
{
    const PixelFormatInfo* i = lookup(format);
    return i ? i->drm_fourcc : 0;
}

PixelFormat from_drm_fourcc(uint32_t code) noexcept
{
    if (code == 0)
        return PixelFormat::None;
    for (const PixelFormatInfo& i : kFormats)
        if (i.drm_fourcc == code)
            return i.format;
    return PixelFormat::None;
}

std::string_view pixel_format_name(PixelFormat format) noexcept
{
    const PixelFormatInfo* i = lookup(format);
    return i ? i->name : std::string_view("none");
}

size_t natural_row_bytes(PixelFormat format, size_t width, size_t elem_size) noexcept
{
    const PixelFormatInfo* i = lookup(format);
    if (!i || width == 0)
        return 0;
    switch (i->layout) {
    case PixelLayout::Packed:
        return width * i->bytes_per_pixel_plane0 * elem_size;
    case PixelLayout::Planar:
        return width * elem_size;
    case PixelLayout::SemiPlanar: {
        // Both planes share one pitch, so a row must hold the wider of the luma row and the
        // interleaved chroma row: ceil(W/2) UV pairs for NV12/NV16 (one byte more than the
        // luma row at odd widths), W pairs for NV24.
        const size_t chroma = 2 * ((width + i->chroma_h_sub - 1) / i->chroma_h_sub);
        return std::max(width, chroma) * elem_size;
    }
    }
    return 0;
}

size_t image_row_stride(PixelFormat format, size_t width, StridePolicy policy,
                        size_t elem_size) noexcept
{
    const PixelFormatInfo* i = lookup(format);
    const size_t natural = natural_row_bytes(format, width, elem_size);
    if (!i || natural == 0)
        return 0;
    // Semi-planar chroma offset arithmetic assumes the aligned pitch on every backend.
    if (policy == StridePolicy::Dma || i->layout == PixelLayout::SemiPlanar)
        return align_up(natural, kDmaRowAlignment);
    return natural;
}

size_t image_plane0_rows(PixelFormat format, size_t height) noexcept
{
    return lookup(format) ? height : 0;
}

size_t image_total_rows(PixelFormat format, size_t height) noexcept
{
    const PixelFormatInfo* i = lookup(format);
    if (!i)
        return 0;
    switch (i->layout) {
    case PixelLayout::Packed:
        return height;
    case PixelLayout::Planar:
        return height * i->channels;
    case PixelLayout::SemiPlanar:
        if (i->chroma_v_sub == 2)
            return height + (height + 1) / 2;
        return 2 * height; // NV16 and NV24: full-height chroma
    }
    return 0;
}

std::vector<size_t> image_shape(PixelFormat format, size_t width, size_t height)
{
    const PixelFormatInfo* i = lookup(format);
    if (!i)
        return {};
    switch (i->layout) {
    case PixelLayout::Packed:
        return {height, width, i->bytes_per_pixel_plane0};
    case PixelLayout::Planar:
        return {i->channels, height, width};
    case PixelLayout::SemiPlanar:
        // A byte view of both planes: every row is one pitch that holds a luma or a chroma row.
        return {image_total_rows(format, height), natural_row_bytes(format, width)};
    }
    return {};
}

} // namespace edgetensor
