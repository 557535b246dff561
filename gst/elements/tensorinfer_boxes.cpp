// SPDX-License-Identifier: MIT
//
// Boxes from the tensor's picture onto the frame (tensorinfer_boxes.hpp).

#include "tensorinfer_boxes.hpp"

#include <algorithm>
#include <string>

namespace edgetensor::gst::tensorinfer
{

namespace
{

std::string shape_text(const Shape& s)
{
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i)
        out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

float clamp01(double v)
{
    return float(std::clamp(v, 0.0, 1.0));
}

} // namespace

Result<void> map_boxes(BoxFormat format, TensorDyn& output, const Shape& shape,
                       const FrameTransform& t)
{
    if (format == BoxFormat::None || !t.valid() || t.identity() || !output.is_valid())
        return {};
    if (output.dtype() != DType::F32)
        return make_error(ErrorCode::InvalidShape, "box output is " +
                                                       std::string(dtype_name(output.dtype())) +
                                                       "; the decoders read float32 boxes");
    auto map = output.map_as<float>(CpuAccess::ReadWrite);
    if (!map)
        return map.error();
    std::span<float> v = map->data();

    if (format == BoxFormat::SsdNormalizedYxyx) {
        if (shape.empty() || shape.back() != 4 || v.size() % 4 != 0)
            return make_error(ErrorCode::InvalidShape,
                              "SSD boxes are [..., N, 4]; this output is " + shape_text(shape));
        for (size_t i = 0; i + 3 < v.size(); i += 4) {
            v[i + 0] = clamp01(t.frame_ny(v[i + 0]));
            v[i + 1] = clamp01(t.frame_nx(v[i + 1]));
            v[i + 2] = clamp01(t.frame_ny(v[i + 2]));
            v[i + 3] = clamp01(t.frame_nx(v[i + 3]));
        }
        return {};
    }

    // YOLO: [1, 4 + classes, N], the first four rows cx, cy, w, h.
    if (shape.size() != 3 || shape[1] < 4 || v.size() < 4 * shape[2])
        return make_error(ErrorCode::InvalidShape,
                          "YOLO output is [1, 4 + classes, N]; this output is " +
                              shape_text(shape));
    const size_t n = shape[2];
    for (size_t c = 0; c < n; ++c) {
        v[c] = float(t.frame_x(v[c]));
        v[n + c] = float(t.frame_y(v[n + c]));
        v[2 * n + c] = float(t.frame_w(v[2 * n + c]));
        v[3 * n + c] = float(t.frame_h(v[3 * n + c]));
    }
    return {};
}

} // namespace edgetensor::gst::tensorinfer
