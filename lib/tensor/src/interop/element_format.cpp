// SPDX-License-Identifier: MIT
//
// Element formats for 3-D camera data and the ElementTensor wrapper.

#include "edgetensor/element_format.hpp"

#include "edgetensor/colorimetry.hpp"

#include <array>
#include <string>

namespace edgetensor
{
namespace
{

constexpr std::array<ElementFormatInfo, kElementFormatMaxCode> kInfos{{
    {ElementFormat::PointXYZ, "PointXYZ", DType::F32, 3, 12, false},
    {ElementFormat::PointXYZW, "PointXYZW", DType::F32, 4, 16, false},
    {ElementFormat::PointZ, "PointZ", DType::F32, 1, 4, false},
    {ElementFormat::SNR, "SNR", DType::F32, 1, 4, false},
    {ElementFormat::NormalXYZ, "NormalXYZ", DType::F32, 3, 12, false},
    {ElementFormat::ColorRGBA, "ColorRGBA", DType::U8, 4, 4, false},
    {ElementFormat::ColorBGRA, "ColorBGRA", DType::U8, 4, 4, false},
    {ElementFormat::ColorRGBA_SRGB, "ColorRGBA_SRGB", DType::U8, 4, 4, true},
    {ElementFormat::ColorBGRA_SRGB, "ColorBGRA_SRGB", DType::U8, 4, 4, true},
    {ElementFormat::ColorRGBAf, "ColorRGBAf", DType::F32, 4, 16, false},
    {ElementFormat::ColorRGB, "ColorRGB", DType::U8, 3, 3, false},
    {ElementFormat::ColorBGR, "ColorBGR", DType::U8, 3, 3, false},
    {ElementFormat::ColorRGB_SRGB, "ColorRGB_SRGB", DType::U8, 3, 3, true},
    {ElementFormat::ColorBGR_SRGB, "ColorBGR_SRGB", DType::U8, 3, 3, true},
}};

static_assert([] {
    for (size_t i = 0; i < kInfos.size(); ++i)
        if (uint32_t(kInfos[i].format) != i + 1 ||
            kInfos[i].bytes_per_element != kInfos[i].channels * dtype_size(kInfos[i].element_type))
            return false;
    return true;
}());

/// What the format says about colour, and only that: sRGB variants are sRGB-encoded,
/// ColorRGBAf is linear light. Every other axis stays unspecified.
Colorimetry implied_colorimetry(const ElementFormatInfo& info)
{
    Colorimetry c;
    if (info.srgb) {
        c.space = ColorSpace::Srgb;
        c.transfer = ColorTransfer::Srgb;
    } else if (info.format == ElementFormat::ColorRGBAf) {
        c.transfer = ColorTransfer::Linear;
    }
    return c;
}

Unexpected unknown_format(ElementFormat f)
{
    return make_error(ErrorCode::InvalidArgument,
                      "element format code " + std::to_string(uint32_t(f)) + " is not known");
}

} // namespace

std::optional<ElementFormatInfo> element_format_info(ElementFormat format) noexcept
{
    const uint32_t code = uint32_t(format);
    if (code == 0 || code > kElementFormatMaxCode)
        return std::nullopt;
    return kInfos[code - 1];
}

bool element_format_from_code(uint32_t code, ElementFormat* out) noexcept
{
    if (code == 0 || code > kElementFormatMaxCode)
        return false;
    if (out)
        *out = ElementFormat(code);
    return true;
}

std::string_view element_format_name(ElementFormat format) noexcept
{
    const auto info = element_format_info(format);
    return info ? info->name : std::string_view("none");
}

Shape organized_shape(ElementFormat format, size_t height, size_t width)
{
    const auto info = element_format_info(format);
    if (!info || height == 0 || width == 0)
        return {};
    if (info->channels == 1)
        return {height, width};
    return {height, width, info->channels};
}

Shape unorganized_shape(ElementFormat format, size_t count)
{
    const auto info = element_format_info(format);
    if (!info || count == 0)
        return {};
    if (info->channels == 1)
        return {count};
    return {count, info->channels};
}

Result<ElementTensor> ElementTensor::create_organized(ElementFormat format, size_t height,
                                                      size_t width,
                                                      std::optional<TensorMemory> memory,
                                                      std::string_view name)
{
    const auto info = element_format_info(format);
    if (!info)
        return unknown_format(format);
    if (height == 0 || width == 0)
        return make_error(ErrorCode::InvalidShape, "an organized " + std::string(info->name) +
                                                       " buffer needs a non-zero "
                                                       "height and width (got " +
                                                       std::to_string(height) + "x" +
                                                       std::to_string(width) + ")");
    auto t =
        TensorDyn::create(info->element_type, organized_shape(format, height, width), memory, name);
    if (!t)
        return unexpected(std::move(t).error());
    t->set_colorimetry(implied_colorimetry(*info));
    return ElementTensor(format, Organization::Organized, std::move(*t));
}

Result<ElementTensor> ElementTensor::create_unorganized(ElementFormat format, size_t count,
                                                        std::optional<TensorMemory> memory,
                                                        std::string_view name)
{
    const auto info = element_format_info(format);
    if (!info)
        return unknown_format(format);
    if (count == 0)
        return make_error(ErrorCode::InvalidShape, "an unorganized " + std::string(info->name) +
                                                       " buffer needs at least one point");
    auto t = TensorDyn::create(info->element_type, unorganized_shape(format, count), memory, name);
    if (!t)
        return unexpected(std::move(t).error());
    t->set_colorimetry(implied_colorimetry(*info));
    return ElementTensor(format, Organization::Unorganized, std::move(*t));
}

Result<ElementTensor> ElementTensor::from_dyn(ElementFormat format, TensorDyn tensor)
{
    const auto info = element_format_info(format);
    if (!info)
        return unknown_format(format);
    if (!tensor.is_valid())
        return make_error(ErrorCode::InvalidArgument, "cannot wrap an empty tensor");
    if (tensor.dtype() != info->element_type)
        return make_error(
            ErrorCode::DTypeMismatch,
            std::string(info->name) + " holds " + std::string(dtype_name(info->element_type)) +
                " channels, the tensor holds " + std::string(dtype_name(tensor.dtype())));
    const Shape& s = tensor.shape();
    const auto& st = tensor.strides();
    const size_t elem = dtype_size(info->element_type);
    Organization org;
    if (info->channels == 1) {
        if (s.size() == 2)
            org = Organization::Organized;
        else if (s.size() == 1)
            org = Organization::Unorganized;
        else
            return make_error(ErrorCode::InvalidShape,
                              std::string(info->name) +
                                  " tensors are [H, W] or [N]; this one has " +
                                  std::to_string(s.size()) + " dimensions");
        if (st.back() != ptrdiff_t(elem) && s.back() > 1)
            return make_error(ErrorCode::InvalidShape,
                              std::string(info->name) + " points must be adjacent along the last "
                                                        "dimension");
    } else {
        if (s.size() == 3)
            org = Organization::Organized;
        else if (s.size() == 2)
            org = Organization::Unorganized;
        else
            return make_error(ErrorCode::InvalidShape,
                              std::string(info->name) +
                                  " tensors are [H, W, C] or [N, C]; this one has " +
                                  std::to_string(s.size()) + " dimensions");
        if (s.back() != info->channels)
            return make_error(ErrorCode::InvalidShape,
                              std::string(info->name) + " has " + std::to_string(info->channels) +
                                  " channels; the tensor's last dimension is " +
                                  std::to_string(s.back()));
        // Interleaved channels, points packed: the layout the format promises.
        if (st.back() != ptrdiff_t(elem) ||
            (s[s.size() - 2] > 1 && st[s.size() - 2] != ptrdiff_t(info->bytes_per_element)))
            return make_error(ErrorCode::InvalidShape,
                              std::string(info->name) +
                                  " channels must be interleaved and points packed (" +
                                  std::to_string(info->bytes_per_element) + " bytes apart)");
    }
    for (ptrdiff_t v : st)
        if (v % ptrdiff_t(elem) != 0)
            return make_error(ErrorCode::InvalidShape,
                              "a stride is not a whole number of " +
                                  std::string(dtype_name(info->element_type)) + " elements");
    return ElementTensor(format, org, std::move(tensor));
}

ElementFormatInfo ElementTensor::info() const noexcept
{
    const auto i = element_format_info(format_);
    return i ? *i : ElementFormatInfo{ElementFormat::None, "none", DType::U8, 0, 0, false};
}

size_t ElementTensor::height() const noexcept
{
    if (!is_valid())
        return 0;
    return is_organized() ? tensor_.shape()[0] : 1;
}

size_t ElementTensor::width() const noexcept
{
    if (!is_valid())
        return 0;
    return is_organized() ? tensor_.shape()[1] : tensor_.shape()[0];
}

size_t ElementTensor::size() const noexcept
{
    return height() * width();
}

size_t ElementTensor::size_in_bytes() const noexcept
{
    return size() * info().bytes_per_element;
}

std::vector<ptrdiff_t> ElementTensor::strides() const
{
    std::vector<ptrdiff_t> out;
    if (!is_valid())
        return out;
    const auto elem = ptrdiff_t(dtype_size(info().element_type));
    out.reserve(tensor_.strides().size());
    for (ptrdiff_t s : tensor_.strides())
        out.push_back(s / elem); // from_dyn/create guarantee whole elements
    return out;
}

Result<ElementTensor> ElementTensor::view(const Region& region) const
{
    if (!is_valid())
        return make_error(ErrorCode::InvalidArgument, "cannot view an empty element tensor");
    if (!is_organized())
        return make_error(ErrorCode::NotSupported,
                          "an unorganized point list has no 2-D grid to take a region of");
    auto v = tensor_.view(region);
    if (!v)
        return unexpected(std::move(v).error());
    return ElementTensor(format_, organization_, std::move(*v));
}

Result<EdgeTensorDesc> ElementTensor::describe() const
{
    return tensor_.describe();
}

Result<DLManagedTensor*> ElementTensor::to_dlpack(CpuAccess access) const
{
    return tensor_.to_dlpack(access);
}

} // namespace edgetensor
