// SPDX-License-Identifier: MIT
//
// NNStreamer-style other/tensors caps: the one parser of the other/tensors structure, and the
// spellings of its dimensions. Not installed.

#pragma once

#include "internal_api.hpp"

#include <gst/gst.h>

#include <edgetensor/error.hpp>
#include <edgetensor/tensor_dyn.hpp>

#include <string>

namespace edgetensor::gst
{

/// The media type of NNStreamer-style tensor caps.
inline constexpr const char* kTensorsMediaType = "other/tensors";

/// other/tensors caps, parsed: one static tensor.
struct TensorCaps {
    DType dtype = DType::U8;
    Shape shape; ///< outermost first (the caps' dimensions string is innermost first)
    int fps_n = 0;
    int fps_d = 1;
};

/// NNStreamer type name of a dtype ("uint8", "float32", ...).
EDGETENSOR_GST_INTERNAL const char* tensor_type_name(DType t) noexcept;
/// Parses NNStreamer's type name; false when unknown.
EDGETENSOR_GST_INTERNAL bool tensor_type_from_name(const char* name, DType* out) noexcept;
/// "3:640:480:1" for shape [1, 480, 640, 3].
EDGETENSOR_GST_INTERNAL std::string dimensions_string(const Shape& shape);

/// Validates and parses an other/tensors structure (num_tensors=1, format=static, a fixed
/// types and dimensions). The error names the offending field.
EDGETENSOR_GST_INTERNAL Result<TensorCaps> parse_tensor_caps(const GstStructure* s);

/// Whether two shapes (outermost first) are the same tensor up to rank padding: leading 1s
/// aside, as NNStreamer compares dimensions ("3:224:224" == "3:224:224:1").
EDGETENSOR_GST_INTERNAL bool shapes_equal_padded(const Shape& a, const Shape& b) noexcept;

/// Every spelling of `shape`'s dimensions string from its shortest rank (trailing 1s dropped)
/// up to 8 dimensions, `dimensions_string(shape)` first, as a GST_TYPE_LIST in `out`
/// (uninitialised on entry), so caps with either spelling intersect.
EDGETENSOR_GST_INTERNAL void padded_dimensions_list(const Shape& shape, GValue* out);

/// `s` (writable) with a fixed `dimensions` string replaced by padded_dimensions_list() of it;
/// unchanged when the field is missing, not a string or not parseable.
EDGETENSOR_GST_INTERNAL void pad_dimensions_field(GstStructure* s);

} // namespace edgetensor::gst
