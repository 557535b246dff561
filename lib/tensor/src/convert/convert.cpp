// SPDX-License-Identifier: MIT
//
// The conversion engine. Per output row: blend the two source rows of every plane vertically
// (in float, over the source columns the crop needs), pick the horizontal taps of each
// component from tables built at create(), convert the output-sized Y/U/V (or R/G/B) rows to
// the output channels, then round or normalise into the destination. Resampling runs on the
// YUV planes, before colour conversion, so only output pixels are colour-converted.
//
// libyuv's YUV->RGB kernels are not used: their SIMD constants hold the chroma gains as 6-bit
// fixed point in int8, which caps the U->B gain at 2.0, while BT.709 limited range needs 2.11
// (and BT.2020 2.16). Measured against the exact matrix that is up to 13 (BT.709) and 16
// (BT.2020) levels off on in-gamut colours. libyuv interleaves the rounded u8 channels
// (MergeRGBPlane / MergeARGBPlane), where it is exact and fast.

#include "edgetensor/convert.hpp"

#include "convert_kernels.hpp"
#include "log.hpp"
#include "thread_pool.hpp"

#include <libyuv/planar_functions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace edgetensor
{

namespace
{

constexpr const char* kLogCat = "convert";

enum class Family : uint8_t { Yuv, Rgb, Gray };

/// Where component `c` of luma column `a` lives: byte mul * (a >> hshift) + add of `plane`.
struct CompSpec {
    uint8_t plane;
    uint8_t hshift;
    uint8_t mul;
    uint8_t add;
};

struct FormatSpec {
    ConvertFormat format;
    std::string_view name;
    Family family;
    uint8_t planes;
    bool has_alpha;
    /// Per plane: vertical chroma shift, and bytes per `unit_px` pixels of a row.
    uint8_t vshift[3];
    uint8_t unit_bytes[3];
    uint8_t unit_px[3];
    /// YUV: Y, U, V. RGB: R, G, B (, A). Gray: Y.
    uint8_t ncomp;
    CompSpec comp[4];
};

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

const FormatSpec* spec_of(ConvertFormat f) noexcept
{
    const auto i = static_cast<uint32_t>(f);
    return i < kConvertFormatCount ? &kFormats[i] : nullptr;
}

constexpr std::string_view kOutputNames[] = {"RGB", "BGR", "RGBA", "BGRA", "GRAY"};
constexpr std::string_view kLayoutNames[] = {"hwc", "chw"};
constexpr std::string_view kMethodNames[] = {"nearest", "bilinear"};

size_t plane_rows(const FormatSpec& s, size_t p, size_t height) noexcept
{
    return (height + (size_t{1} << s.vshift[p]) - 1) >> s.vshift[p];
}

size_t plane_row_bytes(const FormatSpec& s, size_t p, size_t width) noexcept
{
    return (width + s.unit_px[p] - 1) / s.unit_px[p] * s.unit_bytes[p];
}

size_t comp_offset(const CompSpec& c, size_t a) noexcept
{
    return size_t{c.mul} * (a >> c.hshift) + c.add;
}

std::string region_str(const Region& r)
{
    return std::to_string(r.width) + "x" + std::to_string(r.height) + "+" + std::to_string(r.x) +
           "+" + std::to_string(r.y);
}

/// One axis of the resampling map: for each output index, the two source indices (absolute,
/// clamped to [origin, origin + src_len)) and the weight of the second.
void build_axis(size_t origin, size_t src_len, size_t dst_len, bool nearest,
                std::vector<int32_t>& i0, std::vector<int32_t>& i1, std::vector<float>& w)
{
    i0.resize(dst_len);
    i1.resize(dst_len);
    w.resize(dst_len);
    const double ratio = double(src_len) / double(dst_len);
    const double last = double(src_len - 1);
    for (size_t x = 0; x < dst_len; ++x) {
        double s0, frac = 0.0;
        if (nearest) {
            s0 = std::min(std::floor((double(x) + 0.5) * ratio), last);
        } else {
            const double s = std::clamp((double(x) + 0.5) * ratio - 0.5, 0.0, last);
            s0 = std::floor(s);
            frac = s - s0;
        }
        const size_t j0 = size_t(s0);
        const size_t j1 = frac > 0.0 ? std::min(j0 + 1, src_len - 1) : j0;
        i0[x] = int32_t(origin + j0);
        i1[x] = int32_t(origin + j1);
        w[x] = j1 == j0 ? 0.f : float(frac);
    }
}

struct Scratch {
    std::vector<float> vrow[3];
    // The (row0, row1, weight) a vrow was last built for, to skip rebuilding it.
    int64_t vkey0[3] = {-1, -1, -1};
    int64_t vkey1[3] = {-1, -1, -1};
    float vkeyw[3] = {0.f, 0.f, 0.f};
    std::vector<float> comp[4];
    std::vector<float> chan[4];
    std::vector<uint8_t> bytes[4];
    std::vector<float> f32; // one interleaved output row, for f16
};

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

uint16_t float_to_half(float f) noexcept
{
    return detail::kernels::f32_to_f16(f);
}

float half_to_float(uint16_t h) noexcept
{
    return detail::kernels::f16_to_f32(h);
}

ConvertGeometry compute_convert_geometry(const Region& source, size_t dst_width, size_t dst_height,
                                         bool letterbox) noexcept
{
    ConvertGeometry g;
    g.source = source;
    const size_t sw = source.width, sh = source.height;
    if (sw == 0 || sh == 0 || dst_width == 0 || dst_height == 0)
        return g;
    size_t cw = dst_width, ch = dst_height;
    if (letterbox) {
        // Integer arithmetic so the limiting axis fills the output exactly and the other is
        // round(src * scale), never off by one through floating point.
        if (dst_width * sh <= dst_height * sw) {
            ch = std::clamp<size_t>((2 * sh * dst_width + sw) / (2 * sw), 1, dst_height);
            g.scale = double(dst_width) / double(sw);
        } else {
            cw = std::clamp<size_t>((2 * sw * dst_height + sh) / (2 * sh), 1, dst_width);
            g.scale = double(dst_height) / double(sh);
        }
    }
    g.pad_left = (dst_width - cw) / 2;
    g.pad_right = dst_width - cw - g.pad_left;
    g.pad_top = (dst_height - ch) / 2;
    g.pad_bottom = dst_height - ch - g.pad_top;
    g.content = Region{g.pad_left, g.pad_top, cw, ch};
    g.scale_x = double(cw) / double(sw);
    g.scale_y = double(ch) / double(sh);
    return g;
}

Colorimetry resolve_yuv_colorimetry(const Colorimetry& c, size_t /*width*/, size_t height,
                                    bool* guessed) noexcept
{
    Colorimetry r = c;
    bool filled = false;
    if (r.encoding == ColorEncoding::Unspecified) {
        filled = true;
        switch (r.space) {
        case ColorSpace::Bt709:
            r.encoding = ColorEncoding::Bt709;
            break;
        case ColorSpace::Bt2020:
            r.encoding = ColorEncoding::Bt2020;
            break;
        case ColorSpace::Smpte170m:
            r.encoding = ColorEncoding::Bt601;
            break;
        default:
            // gst_video_info_set_format(): SD (<= 576 lines) is BT.601, anything taller BT.709.
            r.encoding = height > 576 ? ColorEncoding::Bt709 : ColorEncoding::Bt601;
            break;
        }
    }
    if (r.range == ColorRange::Unspecified) {
        filled = true;
        r.range = ColorRange::Limited;
    }
    if (guessed)
        *guessed = filled;
    return r;
}

struct Converter::Impl {
    ConvertConfig cfg;
    ConvertGeometry geo;
    Colorimetry applied;
    const FormatSpec* spec = nullptr;
    size_t dw = 0, dh = 0;
    size_t channels = 0;
    size_t elem = 1;
    bool nearest = false;
    bool gray_out = false;
    // Which source components and planes this configuration reads.
    bool comp_used[4] = {false, false, false, false};
    bool plane_used[3] = {false, false, false};
    size_t plane_lo[3] = {0, 0, 0};
    size_t plane_len[3] = {0, 0, 0};
    // Vertical map per content row (absolute luma rows) and horizontal taps per component
    // (byte offsets relative to plane_lo) sharing one weight table.
    std::vector<int32_t> vy0, vy1;
    std::vector<float> vw;
    struct Group {
        size_t plane = 0;
        size_t count = 0;
        uint8_t comps[4] = {0, 0, 0, 0};
        int32_t rel[4] = {0, 0, 0, 0};
        std::vector<int32_t> o0, o1;
        size_t dword_safe = 0;
    };
    std::vector<Group> groups;
    std::vector<float> hw;
    /// Every horizontal weight is 0 (nearest, or an integer downscale ratio such as 1920 ->
    /// 640 whose sample points land on pixel centres): one tap per output pixel suffices.
    bool h_pick = false;
    /// YUV to u8/i8 RGB: colour conversion rounds straight to bytes.
    bool u8_fast = false;
    detail::kernels::YuvCoeffs yuv{};
    float mean[4] = {0, 0, 0, 0};
    float inv_std[4] = {1, 1, 1, 1};
    /// Output channel k takes colour row order_[k] (0..2 = R, G, B; 3 = alpha).
    uint8_t order[4] = {0, 1, 2, 3};
    std::vector<float> alpha255;
    /// One output row of padding, already in the output dtype (CHW: channel rows back to back).
    std::vector<uint8_t> fill_row;
    std::vector<Scratch> scratch;
    std::unique_ptr<detail::ThreadPool> pool;

    size_t row_bytes() const noexcept
    {
        return cfg.layout == TensorLayout::Hwc ? dw * channels * elem : dw * elem;
    }

    Result<void> init(const ConvertConfig& c);
    void build_fill();
    void process_rows(const SourceFrame& src, const DestFrame& dst, size_t y_begin, size_t y_end,
                      Scratch& s) const noexcept;
    void content_row(const SourceFrame& src, size_t cy, Scratch& s,
                     const float** out) const noexcept;
    void emit(const float* const* ch, uint8_t* row, size_t plane_stride, size_t n,
              Scratch& s) const noexcept;
    void emit_bytes(const uint8_t* const* b, uint8_t* row, size_t plane_stride,
                    size_t n) const noexcept;
};

Result<void> Converter::Impl::init(const ConvertConfig& c)
{
    cfg = c;
    spec = spec_of(c.src_format);
    if (!spec)
        return make_error(ErrorCode::InvalidArgument,
                          "unknown source format code " +
                              std::to_string(static_cast<uint32_t>(c.src_format)));
    if (c.src_width == 0 || c.src_height == 0)
        return make_error(ErrorCode::InvalidArgument, "source size " + std::to_string(c.src_width) +
                                                          "x" + std::to_string(c.src_height) +
                                                          " has a zero dimension");
    constexpr size_t kMaxDim = size_t{1} << 15;
    if (c.src_width > kMaxDim || c.src_height > kMaxDim || c.dst_width > kMaxDim ||
        c.dst_height > kMaxDim)
        return make_error(ErrorCode::InvalidArgument,
                          "frame dimensions above 32768 pixels are not supported");
    channels = output_format_channels(c.dst_format);
    if (channels == 0)
        return make_error(ErrorCode::InvalidArgument,
                          "unknown output format code " +
                              std::to_string(static_cast<uint32_t>(c.dst_format)));
    if (c.layout != TensorLayout::Hwc && c.layout != TensorLayout::Chw)
        return make_error(ErrorCode::InvalidArgument, "unknown tensor layout code");
    if (c.method != ResizeMethod::Nearest && c.method != ResizeMethod::Bilinear)
        return make_error(ErrorCode::InvalidArgument, "unknown resize method code");
    switch (c.dtype) {
    case DType::U8:
    case DType::I8:
    case DType::F16:
    case DType::F32:
        break;
    default:
        return make_error(ErrorCode::NotSupported,
                          "output dtype " + std::string(dtype_name(c.dtype)) +
                              " is not supported (use u8, i8, f16 or f32)");
    }
    elem = dtype_size(c.dtype);

    const Region full{0, 0, c.src_width, c.src_height};
    const Region crop = c.crop.value_or(full);
    if (crop.width == 0 || crop.height == 0)
        return make_error(ErrorCode::InvalidArgument,
                          "crop " + region_str(crop) + " has a zero dimension");
    if (crop.x >= c.src_width || crop.y >= c.src_height || crop.width > c.src_width - crop.x ||
        crop.height > c.src_height - crop.y)
        return make_error(ErrorCode::RegionOutOfBounds,
                          "crop " + region_str(crop) + " is outside the " +
                              std::to_string(c.src_width) + "x" + std::to_string(c.src_height) +
                              " source");
    dw = c.dst_width ? c.dst_width : crop.width;
    dh = c.dst_height ? c.dst_height : crop.height;
    geo = compute_convert_geometry(crop, dw, dh, c.letterbox);

    const bool is_float = c.dtype == DType::F16 || c.dtype == DType::F32;
    for (size_t k = 0; k < channels; ++k) {
        if (!std::isfinite(c.mean[k]) || !std::isfinite(c.std[k]) || c.std[k] == 0.f)
            return make_error(ErrorCode::InvalidArgument,
                              "mean/std of channel " + std::to_string(k) +
                                  " must be finite with a non-zero std");
        if (!is_float && (c.mean[k] != 0.f || c.std[k] != 1.f))
            return make_error(ErrorCode::NotSupported,
                              "mean/std normalisation needs a float dtype (f16 or f32), not " +
                                  std::string(dtype_name(c.dtype)));
        mean[k] = c.mean[k];
        inv_std[k] = 1.f / c.std[k];
    }

    nearest = c.method == ResizeMethod::Nearest;
    gray_out = c.dst_format == OutputFormat::Gray;
    switch (c.dst_format) {
    case OutputFormat::Bgr:
    case OutputFormat::Bgra:
        order[0] = 2;
        order[2] = 0;
        break;
    default:
        break;
    }

    // Colour: the matrix for YUV sources, logged once per converter when guessed.
    if (spec->family == Family::Yuv) {
        bool guessed = false;
        applied = resolve_yuv_colorimetry(c.src_colorimetry, c.src_width, c.src_height, &guessed);
        if (guessed)
            ET_LOG_INFO(kLogCat,
                        "%s %zux%zu: colorimetry '%s' is incomplete; using %s (GStreamer's "
                        "default for this frame size)",
                        std::string(spec->name).c_str(), c.src_width, c.src_height,
                        c.src_colorimetry.to_string().c_str(), applied.to_string().c_str());
        double kr = 0.299, kb = 0.114;
        if (applied.encoding == ColorEncoding::Bt709) {
            kr = 0.2126;
            kb = 0.0722;
        } else if (applied.encoding == ColorEncoding::Bt2020) {
            kr = 0.2627;
            kb = 0.0593;
        }
        const bool full_range = applied.range == ColorRange::Full;
        const double ys = full_range ? 1.0 : 255.0 / 219.0;
        const double cs = full_range ? 1.0 : 255.0 / 224.0;
        const double kg = 1.0 - kr - kb;
        yuv.y_scale = float(ys);
        yuv.y_offset = full_range ? 0.f : 16.f;
        yuv.v_to_r = float(cs * 2.0 * (1.0 - kr));
        yuv.u_to_b = float(cs * 2.0 * (1.0 - kb));
        yuv.u_to_g = float(-cs * 2.0 * kb * (1.0 - kb) / kg);
        yuv.v_to_g = float(-cs * 2.0 * kr * (1.0 - kr) / kg);
    }

    // Components read: gray output from YUV needs luma only.
    for (size_t k = 0; k < spec->ncomp; ++k)
        comp_used[k] = !(gray_out && spec->family == Family::Yuv && k > 0);
    if (gray_out && spec->has_alpha)
        comp_used[3] = false;
    if (!gray_out && channels == 3 && spec->has_alpha)
        comp_used[3] = false;

    // Resampling tables over the content rectangle.
    const size_t cw = geo.content.width, chh = geo.content.height;
    std::vector<int32_t> hx0, hx1;
    try {
        build_axis(crop.x, crop.width, cw, nearest, hx0, hx1, hw);
        build_axis(crop.y, crop.height, chh, nearest, vy0, vy1, vw);
        for (size_t p = 0; p < spec->planes; ++p) {
            size_t lo = std::numeric_limits<size_t>::max(), hi = 0;
            for (size_t k = 0; k < spec->ncomp; ++k) {
                if (!comp_used[k] || spec->comp[k].plane != p)
                    continue;
                plane_used[p] = true;
                lo = std::min(lo, comp_offset(spec->comp[k], crop.x));
                hi = std::max(hi, comp_offset(spec->comp[k], crop.x + crop.width - 1));
            }
            if (plane_used[p]) {
                plane_lo[p] = lo;
                plane_len[p] = hi - lo + 1;
            }
        }
        // Components interleaved in one plane at fixed distances share their taps.
        for (size_t k = 0; k < spec->ncomp; ++k) {
            if (!comp_used[k])
                continue;
            const CompSpec& cs = spec->comp[k];
            Group* g = nullptr;
            for (auto& cand : groups) {
                const CompSpec& first = spec->comp[cand.comps[0]];
                if (first.plane == cs.plane && first.hshift == cs.hshift && first.mul == cs.mul)
                    g = &cand;
            }
            if (!g) {
                g = &groups.emplace_back();
                g->plane = cs.plane;
                g->o0.resize(cw);
                g->o1.resize(cw);
                for (size_t x = 0; x < cw; ++x) {
                    g->o0[x] = int32_t(comp_offset(cs, size_t(hx0[x])) - plane_lo[cs.plane]);
                    g->o1[x] = int32_t(comp_offset(cs, size_t(hx1[x])) - plane_lo[cs.plane]);
                }
            }
            g->comps[g->count] = uint8_t(k);
            g->rel[g->count] = int32_t(cs.add) - int32_t(spec->comp[g->comps[0]].add);
            ++g->count;
        }
        for (auto& g : groups) {
            // Taps only grow with x, so the outputs whose 4-byte loads stay inside the plane's
            // needed bytes are a prefix.
            int32_t max_rel = 0;
            for (size_t i = 0; i < g.count; ++i)
                max_rel = std::max(max_rel, g.rel[i]);
            const int64_t limit = int64_t(plane_len[g.plane]) - 4 - max_rel;
            size_t n = 0;
            while (n < cw && int64_t(std::max(g.o0[n], g.o1[n])) <= limit)
                ++n;
            g.dword_safe = n;
        }
        h_pick = std::all_of(hw.begin(), hw.end(), [](float w) { return w == 0.f; });
        u8_fast = spec->family == Family::Yuv && !gray_out &&
                  (c.dtype == DType::U8 || c.dtype == DType::I8);
        alpha255.assign(std::max(cw, dw), 255.f);

        size_t threads = c.threads;
        if (threads == 0)
            threads = std::max<unsigned>(1, std::thread::hardware_concurrency());
        threads = std::min(threads, dh);
        scratch.resize(threads);
        for (auto& s : scratch) {
            for (size_t p = 0; p < 3; ++p)
                if (plane_used[p])
                    s.vrow[p].resize(plane_len[p]);
            for (size_t k = 0; k < 4; ++k) {
                s.comp[k].resize(cw);
                s.chan[k].resize(std::max(cw, dw));
                s.bytes[k].resize(std::max(cw, dw) * 4);
            }
            if (c.dtype == DType::F16)
                s.f32.resize(std::max(cw, dw) * channels);
        }
        fill_row.resize(c.layout == TensorLayout::Hwc ? row_bytes() : row_bytes() * channels);
        auto pool_r = detail::ThreadPool::create(threads);
        if (!pool_r)
            return unexpected(std::move(pool_r).error());
        pool = std::move(*pool_r);
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed,
                          "out of memory preparing the converter's tables");
    }
    build_fill();
    if (u8_fast) {
        // Opaque alpha for RGBA/BGRA output (build_fill used these rows, so set it after).
        const uint8_t opaque = c.dtype == DType::I8 ? 0x7f : 0xff;
        for (auto& sc : scratch)
            std::fill(sc.bytes[3].begin(), sc.bytes[3].end(), opaque);
    }
    ET_LOG_DEBUG(kLogCat,
                 "converter %s %zux%zu crop %s -> %s %s %s %zux%zu content %s, %s, %zu thread(s)",
                 std::string(spec->name).c_str(), c.src_width, c.src_height,
                 region_str(crop).c_str(), std::string(output_format_name(c.dst_format)).c_str(),
                 std::string(tensor_layout_name(c.layout)).c_str(),
                 std::string(dtype_name(c.dtype)).c_str(), dw, dh, region_str(geo.content).c_str(),
                 std::string(resize_method_name(c.method)).c_str(), pool->size());
    return {};
}

void Converter::Impl::build_fill()
{
    const auto& f = cfg.fill;
    Scratch& s = scratch[0];
    const float* ch[4];
    if (gray_out) {
        const float luma = 0.299f * f[0] + 0.587f * f[1] + 0.114f * f[2];
        std::fill_n(s.chan[0].begin(), dw, std::round(std::clamp(luma, 0.f, 255.f)));
        ch[0] = s.chan[0].data();
    } else {
        for (size_t k = 0; k < channels; ++k) {
            std::fill_n(s.chan[k].begin(), dw, float(f[order[k]]));
            ch[k] = s.chan[k].data();
        }
    }
    emit(ch, fill_row.data(), row_bytes(), dw, s);
}

void Converter::Impl::content_row(const SourceFrame& src, size_t cy, Scratch& s,
                                  const float** out) const noexcept
{
    namespace K = detail::kernels;
    const size_t cw = geo.content.width;
    const uint8_t* direct[3] = {nullptr, nullptr, nullptr};
    for (size_t p = 0; p < spec->planes; ++p) {
        if (!plane_used[p])
            continue;
        const size_t r0 = size_t(vy0[cy]) >> spec->vshift[p];
        const size_t r1 = size_t(vy1[cy]) >> spec->vshift[p];
        const SourcePlane& sp = src.planes[p];
        const uint8_t* a = sp.data + r0 * sp.stride + plane_lo[p];
        const float w = r0 == r1 ? 0.f : vw[cy];
        if (w == 0.f) {
            direct[p] = a;
            continue;
        }
        if (s.vkey0[p] == int64_t(r0) && s.vkey1[p] == int64_t(r1) && s.vkeyw[p] == w)
            continue;
        K::blend_rows(a, sp.data + r1 * sp.stride + plane_lo[p], w, s.vrow[p].data(), plane_len[p]);
        s.vkey0[p] = int64_t(r0);
        s.vkey1[p] = int64_t(r1);
        s.vkeyw[p] = w;
    }
    for (const auto& g : groups) {
        K::TapGroup tg{g.o0.data(), g.o1.data(), hw.data(), {}, {}, g.count, g.dword_safe};
        for (size_t i = 0; i < g.count; ++i) {
            tg.rel[i] = g.rel[i];
            tg.dst[i] = s.comp[g.comps[i]].data();
        }
        if (direct[g.plane]) {
            if (h_pick)
                K::hpick_u8(direct[g.plane], tg, cw);
            else
                K::hlerp_u8(direct[g.plane], tg, cw);
        } else {
            if (h_pick)
                K::hpick_f32(s.vrow[g.plane].data(), tg, cw);
            else
                K::hlerp_f32(s.vrow[g.plane].data(), tg, cw);
        }
    }

    if (u8_fast) {
        // R, G, B bytes into bytes[0..2]; the caller emits them (bytes[3] holds opaque alpha).
        K::yuv_to_rgb_u8(s.comp[0].data(), s.comp[1].data(), s.comp[2].data(), yuv,
                         s.bytes[0].data(), s.bytes[1].data(), s.bytes[2].data(), cw,
                         cfg.dtype == DType::I8 ? 0x80 : 0x00);
        return;
    }

    // Colour rows in R, G, B, A order (or the single gray row), then the output order.
    const float* rgba[4] = {nullptr, nullptr, nullptr, alpha255.data()};
    switch (spec->family) {
    case Family::Yuv:
        if (gray_out) {
            K::luma_expand(s.comp[0].data(), yuv, s.chan[0].data(), cw);
            out[0] = s.chan[0].data();
            return;
        }
        K::yuv_to_rgb(s.comp[0].data(), s.comp[1].data(), s.comp[2].data(), yuv, s.chan[0].data(),
                      s.chan[1].data(), s.chan[2].data(), cw);
        rgba[0] = s.chan[0].data();
        rgba[1] = s.chan[1].data();
        rgba[2] = s.chan[2].data();
        break;
    case Family::Rgb:
        if (gray_out) {
            K::rgb_to_gray(s.comp[0].data(), s.comp[1].data(), s.comp[2].data(), s.chan[0].data(),
                           cw);
            out[0] = s.chan[0].data();
            return;
        }
        rgba[0] = s.comp[0].data();
        rgba[1] = s.comp[1].data();
        rgba[2] = s.comp[2].data();
        if (comp_used[3])
            rgba[3] = s.comp[3].data();
        break;
    case Family::Gray:
        rgba[0] = rgba[1] = rgba[2] = s.comp[0].data();
        if (gray_out) {
            out[0] = s.comp[0].data();
            return;
        }
        break;
    }
    for (size_t k = 0; k < channels; ++k)
        out[k] = rgba[order[k]];
}

void Converter::Impl::emit(const float* const* ch, uint8_t* row, size_t plane_stride, size_t n,
                           Scratch& s) const noexcept
{
    namespace K = detail::kernels;
    const bool hwc = cfg.layout == TensorLayout::Hwc;
    switch (cfg.dtype) {
    case DType::U8:
    case DType::I8: {
        const uint8_t mask = cfg.dtype == DType::I8 ? 0x80 : 0x00;
        if (!hwc || channels == 1) {
            for (size_t k = 0; k < channels; ++k)
                K::to_u8(ch[k], row + k * plane_stride, n, mask);
            return;
        }
        const uint8_t* b[4];
        for (size_t k = 0; k < channels; ++k) {
            K::to_u8(ch[k], s.bytes[k].data(), n, mask);
            b[k] = s.bytes[k].data();
        }
        emit_bytes(b, row, plane_stride, n);
        return;
    }
    case DType::F32:
        if (hwc) {
            K::normalize_hwc_f32(ch, channels, mean, inv_std, reinterpret_cast<float*>(row), n);
        } else {
            for (size_t k = 0; k < channels; ++k)
                K::normalize_f32(ch[k], mean[k], inv_std[k],
                                 reinterpret_cast<float*>(row + k * plane_stride), n);
        }
        return;
    case DType::F16:
        // Normalise in f32, then narrow the row in one pass (F16C where available).
        if (hwc) {
            K::normalize_hwc_f32(ch, channels, mean, inv_std, s.f32.data(), n);
            K::f32_to_f16_row(s.f32.data(), reinterpret_cast<uint16_t*>(row), n * channels);
        } else {
            for (size_t k = 0; k < channels; ++k) {
                K::normalize_f32(ch[k], mean[k], inv_std[k], s.f32.data(), n);
                K::f32_to_f16_row(s.f32.data(), reinterpret_cast<uint16_t*>(row + k * plane_stride),
                                  n);
            }
        }
        return;
    default:
        return;
    }
}

void Converter::Impl::emit_bytes(const uint8_t* const* b, uint8_t* row, size_t plane_stride,
                                 size_t n) const noexcept
{
    if (cfg.layout == TensorLayout::Chw || channels == 1) {
        for (size_t k = 0; k < channels; ++k)
            std::memcpy(row + k * plane_stride, b[k], n);
        return;
    }
    // libyuv writes R,G,B for MergeRGBPlane and B,G,R,A ("ARGB" little-endian) for
    // MergeARGBPlane; feeding the planes in that order gives any byte order we want.
    const int w = int(n);
    if (channels == 3)
        libyuv::MergeRGBPlane(b[0], w, b[1], w, b[2], w, row, w * 3, w, 1);
    else
        libyuv::MergeARGBPlane(b[2], w, b[1], w, b[0], w, b[3], w, row, w * 4, w, 1);
}

void Converter::Impl::process_rows(const SourceFrame& src, const DestFrame& dst, size_t y_begin,
                                   size_t y_end, Scratch& s) const noexcept
{
    const bool hwc = cfg.layout == TensorLayout::Hwc;
    const size_t px = hwc ? channels * elem : elem;
    const size_t rb = row_bytes();
    const size_t planes = hwc ? 1 : channels;
    const size_t top = geo.content.y, bottom = top + geo.content.height;
    const size_t left = geo.content.x, cw = geo.content.width;
    const size_t right_bytes = (dw - left - cw) * px;
    // The row cache holds the previous frame's pixels: never serve it to this one.
    for (size_t p = 0; p < 3; ++p)
        s.vkey0[p] = s.vkey1[p] = -1;
    for (size_t y = y_begin; y < y_end; ++y) {
        uint8_t* row = dst.data + y * dst.row_stride;
        if (y < top || y >= bottom) {
            for (size_t k = 0; k < planes; ++k)
                std::memcpy(row + k * dst.plane_stride, fill_row.data() + k * rb, rb);
            continue;
        }
        const float* ch[4];
        content_row(src, y - top, s, ch);
        if (u8_fast) {
            const uint8_t* b[4];
            for (size_t k = 0; k < channels; ++k)
                b[k] = s.bytes[order[k]].data();
            emit_bytes(b, row + left * px, dst.plane_stride, cw);
        } else {
            emit(ch, row + left * px, dst.plane_stride, cw, s);
        }
        for (size_t k = 0; k < planes; ++k) {
            uint8_t* r = row + k * dst.plane_stride;
            const uint8_t* f = fill_row.data() + k * rb;
            if (left)
                std::memcpy(r, f, left * px);
            if (right_bytes)
                std::memcpy(r + (left + cw) * px, f + (left + cw) * px, right_bytes);
        }
    }
}

Converter::Converter(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Converter::Converter(Converter&&) noexcept = default;
Converter& Converter::operator=(Converter&&) noexcept = default;
Converter::~Converter() = default;

Result<Converter> Converter::create(const ConvertConfig& config)
{
    std::unique_ptr<Impl> impl;
    try {
        impl = std::make_unique<Impl>();
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed, "out of memory creating a converter");
    }
    auto r = impl->init(config);
    if (!r)
        return unexpected(std::move(r).error());
    return Converter(std::move(impl));
}

const ConvertConfig& Converter::config() const noexcept
{
    return impl_->cfg;
}
const ConvertGeometry& Converter::geometry() const noexcept
{
    return impl_->geo;
}
const Colorimetry& Converter::applied_colorimetry() const noexcept
{
    return impl_->applied;
}
size_t Converter::threads() const noexcept
{
    return impl_->pool->size();
}
size_t Converter::dst_width() const noexcept
{
    return impl_->dw;
}
size_t Converter::dst_height() const noexcept
{
    return impl_->dh;
}

Shape Converter::output_shape() const
{
    if (impl_->cfg.layout == TensorLayout::Hwc)
        return {impl_->dh, impl_->dw, impl_->channels};
    return {impl_->channels, impl_->dh, impl_->dw};
}

size_t Converter::min_row_stride() const noexcept
{
    return impl_->row_bytes();
}

size_t Converter::min_plane_stride() const noexcept
{
    return impl_->cfg.layout == TensorLayout::Chw ? impl_->row_bytes() * impl_->dh : 0;
}

Result<void> Converter::run(const SourceFrame& src, const DestFrame& dst)
{
    if (!impl_)
        return make_error(ErrorCode::InvalidArgument, "run() on a moved-from Converter");
    Impl& m = *impl_;
    const auto& c = m.cfg;
    for (size_t p = 0; p < m.spec->planes; ++p) {
        const auto& sp = src.planes[p];
        if (!sp.data)
            return make_error(ErrorCode::InvalidArgument,
                              "source plane " + std::to_string(p) + " of the " +
                                  std::string(m.spec->name) + " frame is null");
        const size_t need = plane_row_bytes(*m.spec, p, c.src_width);
        if (plane_rows(*m.spec, p, c.src_height) > 1 && sp.stride < need)
            return make_error(ErrorCode::InvalidArgument,
                              "source plane " + std::to_string(p) + " stride " +
                                  std::to_string(sp.stride) + " is shorter than its " +
                                  std::to_string(need) + "-byte rows");
    }
    if (!dst.data)
        return make_error(ErrorCode::InvalidArgument, "destination is null");
    if (reinterpret_cast<uintptr_t>(dst.data) % m.elem || dst.row_stride % m.elem ||
        dst.plane_stride % m.elem)
        return make_error(ErrorCode::InvalidArgument,
                          "destination pointer and pitches must be multiples of the " +
                              std::to_string(m.elem) + "-byte element size");
    const size_t rb = m.row_bytes();
    if (m.dh > 1 && dst.row_stride < rb)
        return make_error(ErrorCode::InvalidArgument,
                          "destination row stride " + std::to_string(dst.row_stride) +
                              " is shorter than a " + std::to_string(rb) + "-byte output row");
    if (c.layout == TensorLayout::Chw && m.channels > 1) {
        const size_t plane_extent = (m.dh - 1) * dst.row_stride + rb;
        if (dst.plane_stride < plane_extent)
            return make_error(ErrorCode::InvalidArgument,
                              "destination plane stride " + std::to_string(dst.plane_stride) +
                                  " is shorter than a " + std::to_string(plane_extent) +
                                  "-byte channel plane");
    }

    struct Ctx {
        Impl* impl;
        const SourceFrame* src;
        const DestFrame* dst;
        size_t tasks;
    } ctx{&m, &src, &dst, m.pool->size()};
    m.pool->run(
        [](void* p, size_t t) {
            auto* x = static_cast<Ctx*>(p);
            const size_t h = x->impl->dh;
            x->impl->process_rows(*x->src, *x->dst, h * t / x->tasks, h * (t + 1) / x->tasks,
                                  x->impl->scratch[t]);
        },
        &ctx);
    return {};
}

Result<void> Converter::run(const TensorDyn& src, const TensorDyn& dst)
{
    if (!impl_)
        return make_error(ErrorCode::InvalidArgument, "run() on a moved-from Converter");
    Impl& m = *impl_;
    const auto& c = m.cfg;
    if (!src.is_valid() || !src.is_image())
        return make_error(ErrorCode::InvalidArgument, "the conversion source is not an image");
    const auto sf = convert_format_from_pixel_format(src.format());
    if (!sf)
        return make_error(ErrorCode::NotSupported,
                          "the converter cannot read " +
                              std::string(pixel_format_name(src.format())) + " images");
    if (*sf != c.src_format || src.width() != c.src_width || src.height() != c.src_height)
        return make_error(ErrorCode::InvalidArgument,
                          "source " + std::string(pixel_format_name(src.format())) + " " +
                              std::to_string(src.width()) + "x" + std::to_string(src.height()) +
                              " does not match the converter's " + std::string(m.spec->name) + " " +
                              std::to_string(c.src_width) + "x" + std::to_string(c.src_height));
    if (src.dtype() != DType::U8)
        return make_error(ErrorCode::NotSupported, "the converter reads u8 images only");

    if (!dst.is_valid())
        return make_error(ErrorCode::InvalidArgument, "the conversion destination is empty");
    if (dst.dtype() != c.dtype)
        return make_error(ErrorCode::DTypeMismatch,
                          "destination dtype " + std::string(dtype_name(dst.dtype())) +
                              " differs from the converter's " + std::string(dtype_name(c.dtype)));
    // Drop leading 1s (batch) and accept [H, W] for one channel.
    Shape shape = dst.shape();
    std::vector<ptrdiff_t> strides = dst.strides();
    while (shape.size() > 3 && shape.front() == 1) {
        shape.erase(shape.begin());
        strides.erase(strides.begin());
    }
    const Shape want = output_shape();
    if (shape.size() == 2 && m.channels == 1) {
        shape.insert(c.layout == TensorLayout::Hwc ? shape.end() : shape.begin(), 1);
        strides.insert(c.layout == TensorLayout::Hwc ? strides.end() : strides.begin(),
                       ptrdiff_t(m.elem));
    }
    auto shape_str = [](const Shape& s) {
        std::string out = "[";
        for (size_t i = 0; i < s.size(); ++i)
            out += (i ? ", " : "") + std::to_string(s[i]);
        return out + "]";
    };
    if (shape != want)
        return make_error(ErrorCode::InvalidShape, "destination shape " + shape_str(dst.shape()) +
                                                       " differs from the converter's output " +
                                                       shape_str(want));
    DestFrame df;
    const auto es = ptrdiff_t(m.elem);
    if (c.layout == TensorLayout::Hwc) {
        if (strides[2] != es || strides[1] != es * ptrdiff_t(m.channels) || strides[0] < 0)
            return make_error(ErrorCode::InvalidShape,
                              "destination pixels must be contiguous (HWC with padded rows only)");
        df.row_stride = size_t(strides[0]);
    } else {
        if (strides[2] != es || strides[1] < 0 || strides[0] < 0)
            return make_error(ErrorCode::InvalidShape,
                              "destination rows must be contiguous (CHW with padded rows only)");
        df.row_stride = size_t(strides[1]);
        df.plane_stride = size_t(strides[0]);
    }

    auto smap = src.map_raw(CpuAccess::Read);
    if (!smap)
        return unexpected(std::move(smap).error());
    auto dmap = dst.map_raw(CpuAccess::Write);
    if (!dmap)
        return unexpected(std::move(dmap).error());
    df.data = dmap->bytes();

    SourceFrame sf_frame;
    const auto& st = src.strides();
    if (c.src_format == ConvertFormat::PlanarRgb) {
        // One buffer, [C, H, W]: channel planes one plane stride apart.
        if (st.size() != 3 || st[0] <= 0 || st[1] <= 0)
            return make_error(ErrorCode::InvalidShape, "planar RGB source must be [3, H, W]");
        for (size_t p = 0; p < 3; ++p)
            sf_frame.planes[p] = {smap->bytes() + p * size_t(st[0]), size_t(st[1])};
    } else {
        for (size_t p = 0; p < m.spec->planes && p < smap->plane_count(); ++p) {
            const MappedPlane& mp = smap->plane(p);
            size_t stride = mp.row_stride;
            if (stride == 0 && p == 0 && !st.empty() && st[0] > 0)
                stride = size_t(st[0]);
            sf_frame.planes[p] = {mp.data, stride};
        }
    }
    return run(sf_frame, df);
}

Result<TensorDyn> Converter::allocate_output(std::optional<TensorMemory> memory) const
{
    return TensorDyn::create(impl_->cfg.dtype, output_shape(), memory, "convert-output");
}

} // namespace edgetensor
