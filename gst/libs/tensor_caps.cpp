// SPDX-License-Identifier: MIT
//
// NNStreamer-style other/tensors caps (tensor_caps.hpp).

#include "tensor_caps.hpp"

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

} // namespace edgetensor::gst
