// SPDX-License-Identifier: MIT
//
// The source format table and the names of formats, layouts and methods.

#include "convert_formats.hpp"

#include "convert_scalar.hpp"

namespace edgetensor
{

namespace detail::convert
{

namespace
{

// clang-format off
constexpr FormatSpec kFormats[kConvertFormatCount] = {
    {ConvertFormat::Nv12, "NV12", Family::Yuv, 2, false, {0, 1, 0}, {1, 2, 0}, {1, 2, 1}, 3,
     {{0, 0, 1, 0}, {1, 1, 2, 0}, {1, 1, 2, 1}, {}}},
    {ConvertFormat::Nv21, "NV21", Family::Yuv, 2, false, {0, 1, 0}, {1, 2, 0}, {1, 2, 1}, 3,
     {{0, 0, 1, 0}, {1, 1, 2, 1}, {1, 1, 2, 0}, {}}},
    {ConvertFormat::Nv16, "NV16", Family::Yuv, 2, false, {0, 0, 0}, {1, 2, 0}, {1, 2, 1}, 3,
     {{0, 0, 1, 0}, {1, 1, 2, 0}, {1, 1, 2, 1}, {}}},
    {ConvertFormat::Nv24, "NV24", Family::Yuv, 2, false, {0, 0, 0}, {1, 2, 0}, {1, 1, 1}, 3,
     {{0, 0, 1, 0}, {1, 0, 2, 0}, {1, 0, 2, 1}, {}}},
    {ConvertFormat::I420, "I420", Family::Yuv, 3, false, {0, 1, 1}, {1, 1, 1}, {1, 2, 2}, 3,
     {{0, 0, 1, 0}, {1, 1, 1, 0}, {2, 1, 1, 0}, {}}},
    {ConvertFormat::Yuy2, "YUY2", Family::Yuv, 1, false, {0, 0, 0}, {4, 0, 0}, {2, 1, 1}, 3,
     {{0, 0, 2, 0}, {0, 1, 4, 1}, {0, 1, 4, 3}, {}}},
    {ConvertFormat::Uyvy, "UYVY", Family::Yuv, 1, false, {0, 0, 0}, {4, 0, 0}, {2, 1, 1}, 3,
     {{0, 0, 2, 1}, {0, 1, 4, 0}, {0, 1, 4, 2}, {}}},
    {ConvertFormat::Vyuy, "VYUY", Family::Yuv, 1, false, {0, 0, 0}, {4, 0, 0}, {2, 1, 1}, 3,
     {{0, 0, 2, 1}, {0, 1, 4, 2}, {0, 1, 4, 0}, {}}},
    {ConvertFormat::Rgb, "RGB", Family::Rgb, 1, false, {0, 0, 0}, {3, 0, 0}, {1, 1, 1}, 3,
     {{0, 0, 3, 0}, {0, 0, 3, 1}, {0, 0, 3, 2}, {}}},
    {ConvertFormat::Bgr, "BGR", Family::Rgb, 1, false, {0, 0, 0}, {3, 0, 0}, {1, 1, 1}, 3,
     {{0, 0, 3, 2}, {0, 0, 3, 1}, {0, 0, 3, 0}, {}}},
    {ConvertFormat::Rgba, "RGBA", Family::Rgb, 1, true, {0, 0, 0}, {4, 0, 0}, {1, 1, 1}, 4,
     {{0, 0, 4, 0}, {0, 0, 4, 1}, {0, 0, 4, 2}, {0, 0, 4, 3}}},
    {ConvertFormat::Bgra, "BGRA", Family::Rgb, 1, true, {0, 0, 0}, {4, 0, 0}, {1, 1, 1}, 4,
     {{0, 0, 4, 2}, {0, 0, 4, 1}, {0, 0, 4, 0}, {0, 0, 4, 3}}},
    {ConvertFormat::Rgbx, "RGBx", Family::Rgb, 1, false, {0, 0, 0}, {4, 0, 0}, {1, 1, 1}, 3,
     {{0, 0, 4, 0}, {0, 0, 4, 1}, {0, 0, 4, 2}, {}}},
    {ConvertFormat::Bgrx, "BGRx", Family::Rgb, 1, false, {0, 0, 0}, {4, 0, 0}, {1, 1, 1}, 3,
     {{0, 0, 4, 2}, {0, 0, 4, 1}, {0, 0, 4, 0}, {}}},
    {ConvertFormat::Gray8, "GRAY8", Family::Gray, 1, false, {0, 0, 0}, {1, 0, 0}, {1, 1, 1}, 1,
     {{0, 0, 1, 0}, {}, {}, {}}},
    {ConvertFormat::PlanarRgb, "RGBP", Family::Rgb, 3, false, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 3,
     {{0, 0, 1, 0}, {1, 0, 1, 0}, {2, 0, 1, 0}, {}}},
};
// clang-format on

} // namespace

const FormatSpec* spec_of(ConvertFormat f) noexcept
{
    const auto i = static_cast<uint32_t>(f);
    return i < kConvertFormatCount ? &kFormats[i] : nullptr;
}

} // namespace detail::convert

namespace
{

using detail::convert::Family;
using detail::convert::kFormats;
using detail::convert::spec_of;

constexpr std::string_view kOutputNames[] = {"RGB", "BGR", "RGBA", "BGRA", "GRAY"};
constexpr std::string_view kLayoutNames[] = {"hwc", "chw"};
constexpr std::string_view kMethodNames[] = {"nearest", "bilinear"};
constexpr std::string_view kStoresNames[] = {"auto", "cached", "streaming"};

} // namespace

std::string_view convert_format_name(ConvertFormat f) noexcept
{
    const auto* s = spec_of(f);
    return s ? s->name : std::string_view("unknown");
}

std::optional<ConvertFormat> convert_format_from_name(std::string_view name) noexcept
{
    for (const auto& s : kFormats)
        if (s.name == name)
            return s.format;
    return std::nullopt;
}

std::optional<ConvertFormat> convert_format_from_pixel_format(PixelFormat f) noexcept
{
    switch (f) {
    case PixelFormat::Rgb:
        return ConvertFormat::Rgb;
    case PixelFormat::Rgba:
        return ConvertFormat::Rgba;
    case PixelFormat::Bgra:
        return ConvertFormat::Bgra;
    case PixelFormat::Grey:
        return ConvertFormat::Gray8;
    case PixelFormat::Yuyv:
        return ConvertFormat::Yuy2;
    case PixelFormat::Vyuy:
        return ConvertFormat::Vyuy;
    case PixelFormat::Nv12:
        return ConvertFormat::Nv12;
    case PixelFormat::Nv16:
        return ConvertFormat::Nv16;
    case PixelFormat::Nv24:
        return ConvertFormat::Nv24;
    case PixelFormat::PlanarRgb:
        return ConvertFormat::PlanarRgb;
    default:
        return std::nullopt;
    }
}

size_t convert_format_planes(ConvertFormat f) noexcept
{
    const auto* s = spec_of(f);
    return s ? s->planes : 0;
}

bool convert_format_is_yuv(ConvertFormat f) noexcept
{
    const auto* s = spec_of(f);
    return s && s->family == Family::Yuv;
}

std::string_view output_format_name(OutputFormat f) noexcept
{
    const auto i = static_cast<uint32_t>(f);
    return i < std::size(kOutputNames) ? kOutputNames[i] : std::string_view("unknown");
}

std::optional<OutputFormat> output_format_from_name(std::string_view name) noexcept
{
    for (uint32_t i = 0; i < std::size(kOutputNames); ++i)
        if (kOutputNames[i] == name)
            return static_cast<OutputFormat>(i);
    return std::nullopt;
}

size_t output_format_channels(OutputFormat f) noexcept
{
    switch (f) {
    case OutputFormat::Rgb:
    case OutputFormat::Bgr:
        return 3;
    case OutputFormat::Rgba:
    case OutputFormat::Bgra:
        return 4;
    case OutputFormat::Gray:
        return 1;
    }
    return 0;
}

std::string_view tensor_layout_name(TensorLayout l) noexcept
{
    const auto i = static_cast<uint32_t>(l);
    return i < std::size(kLayoutNames) ? kLayoutNames[i] : std::string_view("unknown");
}

std::optional<TensorLayout> tensor_layout_from_name(std::string_view name) noexcept
{
    for (uint32_t i = 0; i < std::size(kLayoutNames); ++i)
        if (kLayoutNames[i] == name)
            return static_cast<TensorLayout>(i);
    return std::nullopt;
}

std::string_view resize_method_name(ResizeMethod m) noexcept
{
    const auto i = static_cast<uint32_t>(m);
    return i < std::size(kMethodNames) ? kMethodNames[i] : std::string_view("unknown");
}

std::optional<ResizeMethod> resize_method_from_name(std::string_view name) noexcept
{
    for (uint32_t i = 0; i < std::size(kMethodNames); ++i)
        if (kMethodNames[i] == name)
            return static_cast<ResizeMethod>(i);
    return std::nullopt;
}

std::string_view output_stores_name(OutputStores m) noexcept
{
    const auto i = static_cast<uint32_t>(m);
    return i < std::size(kStoresNames) ? kStoresNames[i] : std::string_view("unknown");
}

std::optional<OutputStores> output_stores_from_name(std::string_view name) noexcept
{
    for (uint32_t i = 0; i < std::size(kStoresNames); ++i)
        if (kStoresNames[i] == name)
            return static_cast<OutputStores>(i);
    return std::nullopt;
}

uint16_t float_to_half(float f) noexcept
{
    return detail::convert::f32_to_f16(f);
}

float half_to_float(uint16_t h) noexcept
{
    return detail::convert::f16_to_f32(h);
}

} // namespace edgetensor
