// SPDX-License-Identifier: MIT
//
// Each pattern is a function of (x, y, frame) that repeats along y: every 256 rows for the
// gradient, every 16 for the checkers, every row (or chroma row pair) for solid colours. So a frame
// is rendered as:
//  1. the unpacked (AYUV or ARGB) rows of one period, taken from a table of encoded colours
//     (the gradient's 256 x 256 colours are encoded once per colorimetry, not per pixel);
//  2. GStreamer's pack function for those rows only;
//  3. row copies of the packed period for the rest of the frame.
// The bytes are exactly those of packing every row with its own colour conversion.

#include "testsrc_patterns.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <vector>

namespace edgetensor::gst
{
namespace
{

using Pixel = std::array<guint8, 4>; // A, then R G B or Y U V: GStreamer's unpacked layout

struct Encoding {
    bool yuv = false;
    double kr = 0.299, kb = 0.114;
    bool full = false;
    auto key() const { return std::make_tuple(yuv, kr, kb, full); }
};

Encoding encoding_of(const GstVideoFrame* frame)
{
    Encoding e;
    e.yuv = GST_VIDEO_FORMAT_INFO_IS_YUV(frame->info.finfo);
    if (!gst_video_color_matrix_get_Kr_Kb(frame->info.colorimetry.matrix, &e.kr, &e.kb)) {
        e.kr = 0.299;
        e.kb = 0.114;
    }
    e.full = frame->info.colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
    return e;
}

Pixel encode(const Encoding& e, guint8 r, guint8 g, guint8 b)
{
    if (!e.yuv)
        return {255, r, g, b};
    const double y_scale = e.full ? 1.0 : 219.0 / 255.0, y_off = e.full ? 0.0 : 16.0;
    const double c_scale = e.full ? 1.0 : 224.0 / 255.0;
    auto to_u8 = [](double v) { return guint8(std::clamp(v + 0.5, 0.0, 255.0)); };
    const double luma = e.kr * r + (1.0 - e.kr - e.kb) * g + e.kb * b;
    const double pb = (b - luma) / (2.0 * (1.0 - e.kb));
    const double pr = (r - luma) / (2.0 * (1.0 - e.kr));
    return {255, to_u8(y_off + y_scale * luma), to_u8(128.0 + c_scale * pb),
            to_u8(128.0 + c_scale * pr)};
}

// The gradient's colours, (r = (x + n) & 255, g = y & 255, b = 128), at [g * 256 + r].
using GradientTable = std::vector<Pixel>;

std::shared_ptr<const GradientTable> gradient_table(const Encoding& e)
{
    static std::mutex mu;
    static std::map<decltype(e.key()), std::shared_ptr<const GradientTable>> tables;
    std::lock_guard<std::mutex> lock(mu);
    auto& slot = tables[e.key()];
    if (!slot) {
        auto t = std::make_shared<GradientTable>(256 * 256);
        for (int g = 0; g < 256; ++g)
            for (int r = 0; r < 256; ++r)
                (*t)[size_t(g) * 256 + size_t(r)] = encode(e, guint8(r), guint8(g), 128);
        slot = std::move(t);
    }
    return slot;
}

// Rows after which the pattern repeats and the packed rows may be copied: a multiple of the
// format's pack_lines (1, 2 or 4) and of its vertical subsampling, so a copied group of rows
// starts on the same chroma phase as its source. All three are powers of two.
gint period_rows(GstTensorTestSrcPattern p, const GstVideoFormatInfo* finfo, gint lines)
{
    gint step = lines;
    for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS(finfo); ++c)
        step = std::max(step, 1 << GST_VIDEO_FORMAT_INFO_H_SUB(finfo, c));
    switch (p) {
    case GST_TENSOR_TEST_SRC_GRADIENT:
        return std::max(256, step);
    case GST_TENSOR_TEST_SRC_CHECKERS:
        return std::max(16, step);
    default:
        return step;
    }
}

// Bytes of one row of plane `p`: up to the last byte of the last sample of any component in
// it (for odd-width 4:2:2 that is the last macropixel's V, past width * pstride) and to the
// end of its last whole pixel, or 0 when
// the format's layout is not a plain row of samples (then every row is packed, none copied).
gsize plane_row_bytes(const GstVideoFrame* frame, guint p, gint* first_comp)
{
    const GstVideoFormatInfo* finfo = frame->info.finfo;
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component(finfo, p, comp);
    if (comp[0] < 0)
        return 0;
    *first_comp = comp[0];
    gsize bytes = 0;
    for (gint i = 0; i < GST_VIDEO_MAX_COMPONENTS && comp[i] >= 0; ++i) {
        const gint c = comp[i];
        const gint pstride = GST_VIDEO_FRAME_COMP_PSTRIDE(frame, c);
        const gint width = GST_VIDEO_FRAME_COMP_WIDTH(frame, c);
        const gint depth = GST_VIDEO_FORMAT_INFO_DEPTH(finfo, c);
        if (pstride <= 0 || width <= 0 || depth % 8 != 0)
            return 0;
        // Whole pixels too: a padding byte (the x of BGRx) is no component but is written.
        bytes = std::max({bytes, gsize(width) * gsize(pstride),
                          gsize(GST_VIDEO_FORMAT_INFO_POFFSET(finfo, c)) +
                              gsize(width - 1) * gsize(pstride) + gsize(depth / 8)});
    }
    if (bytes > gsize(std::abs(GST_VIDEO_FRAME_PLANE_STRIDE(frame, p))))
        return 0;
    return bytes;
}

// Copies the packed rows [from, from + lines) of every plane to [to, to + lines).
bool copy_packed_rows(GstVideoFrame* frame, gint from, gint to, gint lines)
{
    const GstVideoFormatInfo* finfo = frame->info.finfo;
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(frame); ++p) {
        gint c = 0;
        const gsize bytes = plane_row_bytes(frame, p, &c);
        if (bytes == 0)
            return false;
        const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(frame, p);
        auto* base = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(frame, p));
        const gint r0 = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(finfo, c, from);
        const gint r1 = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(finfo, c, from + lines);
        const gint d0 = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(finfo, c, to);
        for (gint r = r0; r < r1; ++r)
            std::memcpy(base + gssize(d0 + (r - r0)) * stride, base + gssize(r) * stride, bytes);
    }
    return true;
}

} // namespace

void fill_video_pattern(GstVideoFrame* frame, GstTensorTestSrcPattern pattern, guint64 n)
{
    const GstVideoFormatInfo* finfo = frame->info.finfo;
    const gint w = GST_VIDEO_FRAME_WIDTH(frame);
    const gint h = GST_VIDEO_FRAME_HEIGHT(frame);
    const gint lines = std::max<gint>(finfo->pack_lines, 1);
    const Encoding enc = encoding_of(frame);
    const gint period = period_rows(pattern, finfo, lines);

    std::shared_ptr<const GradientTable> gradient;
    std::array<Pixel, 2> two{}; // checkers: black, white; solid: the colour
    switch (pattern) {
    case GST_TENSOR_TEST_SRC_GRADIENT:
        gradient = gradient_table(enc);
        break;
    case GST_TENSOR_TEST_SRC_CHECKERS:
        two = {encode(enc, 0, 0, 0), encode(enc, 255, 255, 255)};
        break;
    case GST_TENSOR_TEST_SRC_WHITE:
        two[0] = encode(enc, 255, 255, 255);
        break;
    default:
        two[0] = encode(enc, 0, 0, 0);
        break;
    }

    std::vector<Pixel> line(gsize(lines) * gsize(w));
    bool copies = true;
    for (gint y = 0; y + lines <= h; y += lines) {
        if (copies && y >= period) {
            if (copy_packed_rows(frame, y - period, y, lines))
                continue;
            copies = false; // a plane that is not a plain row of pixels: pack every row
        }
        for (gint l = 0; l < lines; ++l) {
            Pixel* px = line.data() + gsize(l) * gsize(w);
            const gint row = y + l;
            if (gradient) {
                const Pixel* colours = gradient->data() + gsize(row & 0xff) * 256;
                for (gint x = 0; x < w; ++x)
                    px[x] = colours[(guint64(x) + n) & 0xff];
            } else if (pattern == GST_TENSOR_TEST_SRC_CHECKERS) {
                for (gint x = 0; x < w; ++x)
                    px[x] = two[((x / 8 + row / 8) & 1) ? 1 : 0];
            } else {
                std::fill(px, px + w, two[0]);
            }
        }
        finfo->pack_func(finfo, GST_VIDEO_PACK_FLAG_NONE, line.data(), w * 4, frame->data,
                         frame->info.stride, frame->info.chroma_site, y, w);
    }
}

namespace
{

// Every byte of every row of frame n holds n modulo 256.
void fill_frame_counter(GstVideoFrame* frame, guint64 n)
{
    const GstVideoFormatInfo* finfo = frame->info.finfo;
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(frame); ++p) {
        gint comp[GST_VIDEO_MAX_COMPONENTS];
        gst_video_format_info_component(finfo, p, comp);
        const gint c = comp[0] >= 0 ? comp[0] : 0;
        const gint rows = GST_VIDEO_FRAME_COMP_HEIGHT(frame, c);
        const gint row_bytes =
            GST_VIDEO_FRAME_PLANE_STRIDE(frame, p) <
                    GST_VIDEO_FRAME_COMP_WIDTH(frame, c) * GST_VIDEO_FRAME_COMP_PSTRIDE(frame, c)
                ? GST_VIDEO_FRAME_PLANE_STRIDE(frame, p)
                : GST_VIDEO_FRAME_COMP_WIDTH(frame, c) * GST_VIDEO_FRAME_COMP_PSTRIDE(frame, c);
        auto* data = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(frame, p));
        for (gint y = 0; y < rows; ++y)
            std::memset(data + gsize(y) * GST_VIDEO_FRAME_PLANE_STRIDE(frame, p), int(n & 0xff),
                        gsize(row_bytes));
    }
}

guint16 half_from_float(float f)
{
    // Patterns only produce 0..1, so the normal range is all that is needed.
    if (f <= 0.0f)
        return 0;
    guint32 bits;
    std::memcpy(&bits, &f, sizeof(bits));
    const gint exp = gint((bits >> 23) & 0xff) - 127 + 15;
    if (exp <= 0)
        return 0;
    return guint16((exp << 10) | ((bits >> 13) & 0x3ff));
}

template <typename T>
void fill_elems(guint8* data, gsize count, GstTensorTestSrcPattern p, guint64 n)
{
    auto* out = reinterpret_cast<T*>(data);
    for (gsize i = 0; i < count; ++i) {
        guint v = 0;
        switch (p) {
        case GST_TENSOR_TEST_SRC_GRADIENT:
            v = guint((i + n) & 0xff);
            break;
        case GST_TENSOR_TEST_SRC_CHECKERS:
            v = ((i / 8) & 1) ? 255 : 0;
            break;
        case GST_TENSOR_TEST_SRC_WHITE:
            v = 255;
            break;
        default:
            break;
        }
        if constexpr (std::is_floating_point_v<T>)
            out[i] = T(v) / T(255);
        else
            out[i] = T(v);
    }
}

} // namespace

void fill_video(GstVideoFrame* frame, GstTensorTestSrcPattern pattern, guint64 n)
{
    if (pattern == GST_TENSOR_TEST_SRC_FRAME_COUNTER)
        fill_frame_counter(frame, n);
    else
        fill_video_pattern(frame, pattern, n);
}

void fill_tensor(guint8* data, gsize bytes, DType dtype, GstTensorTestSrcPattern p, guint64 n)
{
    if (p == GST_TENSOR_TEST_SRC_FRAME_COUNTER) {
        std::memset(data, int(n & 0xff), bytes);
        return;
    }
    const size_t width = edgetensor::dtype_size(dtype);
    const gsize count = bytes / width;
    if (dtype == DType::F16) {
        std::vector<float> tmp(count);
        fill_elems<float>(reinterpret_cast<guint8*>(tmp.data()), count, p, n);
        auto* out = reinterpret_cast<guint16*>(data);
        for (gsize i = 0; i < count; ++i)
            out[i] = half_from_float(tmp[i]);
    } else if (dtype == DType::F32) {
        fill_elems<float>(data, count, p, n);
    } else if (dtype == DType::F64) {
        fill_elems<double>(data, count, p, n);
    } else if (width == 1) {
        // Integers hold 0..255, whose bytes are the same signed or unsigned: one store per
        // width.
        fill_elems<guint8>(data, count, p, n);
    } else if (width == 2) {
        fill_elems<guint16>(data, count, p, n);
    } else if (width == 4) {
        fill_elems<guint32>(data, count, p, n);
    } else {
        fill_elems<guint64>(data, count, p, n);
    }
}

} // namespace edgetensor::gst
