// SPDX-License-Identifier: MIT
//
// Caps -> frame layout: NNStreamer-style other/tensors parsing and the row-stride rule for
// pooled video frames.

#include "internal.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

namespace edgetensor::gst
{

namespace
{

struct TypeName {
    DType dtype;
    const char* name;
};
constexpr std::array<TypeName, 11> kTypeNames{{
    {DType::U8, "uint8"},
    {DType::I8, "int8"},
    {DType::U16, "uint16"},
    {DType::I16, "int16"},
    {DType::U32, "uint32"},
    {DType::I32, "int32"},
    {DType::U64, "uint64"},
    {DType::I64, "int64"},
    {DType::F16, "float16"},
    {DType::F32, "float32"},
    {DType::F64, "float64"},
}};

constexpr size_t kMaxTensorDims = 8;

bool is_pow2(size_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

} // namespace

const char* tensor_type_name(DType t) noexcept
{
    for (const auto& tn : kTypeNames)
        if (tn.dtype == t)
            return tn.name;
    return "unknown";
}

bool tensor_type_from_name(const char* name, DType* out) noexcept
{
    if (!name)
        return false;
    for (const auto& tn : kTypeNames) {
        if (std::strcmp(tn.name, name) == 0) {
            if (out)
                *out = tn.dtype;
            return true;
        }
    }
    return false;
}

std::string dimensions_string(const Shape& shape)
{
    std::string s;
    for (auto it = shape.rbegin(); it != shape.rend(); ++it) {
        if (!s.empty())
            s += ':';
        s += std::to_string(*it);
    }
    return s;
}

Result<TensorCaps> parse_tensor_caps(const GstStructure* s)
{
    if (!s || !gst_structure_has_name(s, kTensorsMediaType))
        return make_error(ErrorCode::InvalidArgument, "caps are not other/tensors");
    TensorCaps tc;

    if (gst_structure_has_field(s, "num_tensors")) {
        int n = 0;
        if (!gst_structure_get_int(s, "num_tensors", &n) || n != 1)
            return make_error(ErrorCode::NotSupported,
                              "other/tensors: num_tensors must be the fixed integer 1 (one "
                              "tensor per buffer)");
    }
    if (gst_structure_has_field(s, "format")) {
        const char* f = gst_structure_get_string(s, "format");
        if (!f || std::strcmp(f, "static") != 0)
            return make_error(ErrorCode::NotSupported,
                              "other/tensors: format must be \"static\" (flexible and sparse "
                              "tensors are not supported)");
    }
    const char* types = gst_structure_get_string(s, "types");
    if (!types)
        return make_error(ErrorCode::InvalidArgument,
                          "other/tensors: the \"types\" field is missing or not a fixed string");
    if (!tensor_type_from_name(types, &tc.dtype))
        return make_error(ErrorCode::InvalidArgument,
                          std::string("other/tensors: unknown type \"") + types +
                              "\" (expected uint8, int8, uint16, int16, uint32, int32, uint64, "
                              "int64, float16, float32 or float64)");

    const char* dims = gst_structure_get_string(s, "dimensions");
    if (!dims)
        return make_error(ErrorCode::InvalidArgument,
                          "other/tensors: the \"dimensions\" field is missing or not a fixed "
                          "string");
    Shape inner_first;
    const char* p = dims;
    while (true) {
        if (!g_ascii_isdigit(*p))
            return make_error(ErrorCode::InvalidShape,
                              std::string("other/tensors: dimensions \"") + dims +
                                  "\" must be positive integers separated by ':'");
        errno = 0;
        char* end = nullptr;
        const unsigned long long v = std::strtoull(p, &end, 10);
        if (errno != 0 || v == 0 || v > (1ull << 32))
            return make_error(ErrorCode::InvalidShape,
                              std::string("other/tensors: dimension in \"") + dims +
                                  "\" is zero or too large");
        inner_first.push_back(size_t(v));
        if (inner_first.size() > kMaxTensorDims)
            return make_error(ErrorCode::InvalidShape, std::string("other/tensors: \"") + dims +
                                                           "\" has more than 8 "
                                                           "dimensions");
        p = end;
        if (*p == '\0')
            break;
        if (*p != ':')
            return make_error(ErrorCode::InvalidShape,
                              std::string("other/tensors: dimensions \"") + dims +
                                  "\" must be positive integers separated by ':'");
        ++p;
    }
    tc.shape.assign(inner_first.rbegin(), inner_first.rend());

    size_t bytes = dtype_size(tc.dtype);
    for (size_t d : tc.shape) {
        if (bytes > std::numeric_limits<uint32_t>::max() / d)
            return make_error(ErrorCode::InvalidShape, std::string("other/tensors: \"") + dims +
                                                           "\" of " + types +
                                                           " exceeds 4 GiB per buffer");
        bytes *= d;
    }

    if (gst_structure_has_field(s, "framerate") &&
        !gst_structure_get_fraction(s, "framerate", &tc.fps_n, &tc.fps_d))
        return make_error(ErrorCode::InvalidArgument,
                          "other/tensors: framerate must be a fixed fraction");
    return tc;
}

bool shapes_equal_padded(const Shape& a, const Shape& b) noexcept
{
    auto first_real = [](const Shape& s) {
        size_t i = 0;
        while (i + 1 < s.size() && s[i] == 1)
            ++i;
        return i;
    };
    const size_t ia = first_real(a), ib = first_real(b);
    if (a.size() - ia != b.size() - ib)
        return false;
    return std::equal(a.begin() + std::ptrdiff_t(ia), a.end(), b.begin() + std::ptrdiff_t(ib));
}

void padded_dimensions_list(const Shape& shape, GValue* out)
{
    g_value_init(out, GST_TYPE_LIST);
    auto append = [out](const std::string& dims) {
        GValue v = G_VALUE_INIT;
        g_value_init(&v, G_TYPE_STRING);
        g_value_set_string(&v, dims.c_str());
        gst_value_list_append_and_take_value(out, &v);
    };
    const std::string canonical = dimensions_string(shape);
    append(canonical);
    Shape core = shape;
    while (core.size() > 1 && core.front() == 1)
        core.erase(core.begin());
    for (Shape padded = core; padded.size() <= kMaxTensorDims; padded.insert(padded.begin(), 1))
        if (const std::string d = dimensions_string(padded); d != canonical)
            append(d);
}

void pad_dimensions_field(GstStructure* s)
{
    const char* dims = gst_structure_get_string(s, "dimensions");
    if (!dims)
        return;
    // Parsed by the caps validator, through a scratch structure of the narrowest type (the
    // dtype does not change what the dimensions say).
    GstStructure* probe = gst_structure_new(kTensorsMediaType, "types", G_TYPE_STRING, "uint8",
                                            "dimensions", G_TYPE_STRING, dims, nullptr);
    auto tc = parse_tensor_caps(probe);
    gst_structure_free(probe);
    if (!tc)
        return;
    GValue list = G_VALUE_INIT;
    padded_dimensions_list(tc->shape, &list);
    gst_structure_take_value(s, "dimensions", &list);
}

namespace
{

// Rounds every plane's stride up to its alignment, keeping each plane's row count, and lays
// the planes out again back to back in their original memory order.
bool realign_planes(GstVideoInfo* info, const std::array<size_t, GST_VIDEO_MAX_PLANES>& align)
{
    const guint n = std::min<guint>(GST_VIDEO_INFO_N_PLANES(info), GST_VIDEO_MAX_PLANES);
    if (n == 0)
        return false;
    std::array<guint, GST_VIDEO_MAX_PLANES> order{0, 1, 2, 3};
    // Insertion sort by offset: YV12 and friends keep planes out of index order.
    for (guint i = 1; i < n; ++i)
        for (guint k = i; k > 0 && info->offset[order[k]] < info->offset[order[k - 1]]; --k)
            std::swap(order[k], order[k - 1]);

    std::array<size_t, GST_VIDEO_MAX_PLANES> rows{};
    for (guint k = 0; k < n; ++k) {
        const guint p = order[k];
        const size_t end = k + 1 < n ? info->offset[order[k + 1]] : info->size;
        const size_t stride = size_t(info->stride[p]);
        if (stride == 0 || end < info->offset[p])
            return false;
        rows[p] = (end - info->offset[p] + stride - 1) / stride;
    }
    size_t off = info->offset[order[0]];
    for (guint k = 0; k < n; ++k) {
        const guint p = order[k];
        const size_t stride = align_up(size_t(info->stride[p]), std::max<size_t>(align[p], 1));
        if (stride > size_t(std::numeric_limits<gint>::max()))
            return false;
        info->stride[p] = gint(stride);
        info->offset[p] = off;
        off += stride * rows[p];
    }
    info->size = off;
    return true;
}

} // namespace

Result<FrameLayout> layout_from_caps(const GstCaps* caps, size_t row_align,
                                     const GstVideoAlignment* align)
{
    if (!caps || gst_caps_get_size(caps) != 1 || !gst_caps_is_fixed(caps))
        return make_error(ErrorCode::InvalidArgument, "pool caps must be fixed, one structure");
    if (!is_pow2(row_align))
        return make_error(ErrorCode::InvalidArgument, "row alignment must be a power of two");
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    FrameLayout out;

    if (gst_structure_has_name(s, kTensorsMediaType)) {
        auto tc = parse_tensor_caps(s);
        if (!tc)
            return unexpected(std::move(tc).error());
        out.tensor = *tc;
        out.size = dtype_size(tc->dtype);
        for (size_t d : tc->shape)
            out.size *= d;
        return out;
    }
    if (!gst_structure_has_name(s, "video/x-raw"))
        return make_error(ErrorCode::NotSupported,
                          std::string("caps ") + gst_structure_get_name(s) +
                              " are neither video/x-raw nor other/tensors");

    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, caps))
        return make_error(ErrorCode::InvalidArgument,
                          "video/x-raw caps lack a known format, width or height");
    const GstVideoFormatInfo* finfo = info.finfo;
    if (GST_VIDEO_FORMAT_INFO_IS_TILED(finfo) ||
        GST_VIDEO_FORMAT_INFO_FORMAT(finfo) == GST_VIDEO_FORMAT_ENCODED)
        return make_error(ErrorCode::NotSupported,
                          std::string("video format ") + GST_VIDEO_FORMAT_INFO_NAME(finfo) +
                              " is tiled or opaque; edgetensor pools hold linear frames");
    if (GST_VIDEO_INFO_INTERLACE_MODE(&info) != GST_VIDEO_INTERLACE_MODE_PROGRESSIVE)
        return make_error(ErrorCode::NotSupported, "interlaced video is not supported");

    const GstVideoInfo def = info;
    std::array<size_t, GST_VIDEO_MAX_PLANES> plane_align{};
    plane_align.fill(row_align);
    bool padded = false;
    if (align) {
        padded = align->padding_top || align->padding_bottom || align->padding_left ||
                 align->padding_right;
        for (guint i = 0; i < GST_VIDEO_MAX_PLANES; ++i)
            plane_align[i] = std::max<size_t>(plane_align[i], size_t(align->stride_align[i]) + 1);
    }
    if (padded) {
        // Padding moves the first pixel inside each plane; GStreamer's own aligner knows how.
        GstVideoAlignment a = *align;
        for (guint i = 0; i < GST_VIDEO_MAX_PLANES; ++i)
            a.stride_align[i] = guint(plane_align[i] - 1);
        if (!gst_video_info_align(&info, &a))
            return make_error(ErrorCode::InvalidArgument, "the video alignment cannot be applied");
    } else if (!realign_planes(&info, plane_align)) {
        return make_error(ErrorCode::InvalidArgument, "cannot align the planes of this format");
    }

    out.is_video = true;
    out.vinfo = info;
    out.size = info.size;
    out.pixel_format = pixel_format_from_gst(GST_VIDEO_INFO_FORMAT(&info));
    out.colorimetry_from_caps = gst_structure_has_field(s, "colorimetry");
    if (out.colorimetry_from_caps)
        out.colorimetry = colorimetry_from_gst(info.colorimetry);
    for (guint i = 0; i < GST_VIDEO_INFO_N_PLANES(&info); ++i)
        out.differs_from_default = out.differs_from_default || info.stride[i] != def.stride[i] ||
                                   info.offset[i] != def.offset[i];
    return out;
}

} // namespace edgetensor::gst
