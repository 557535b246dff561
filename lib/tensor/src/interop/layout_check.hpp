// SPDX-License-Identifier: MIT
//
// Validation of foreign (shape, byte strides) pairs, shared by the descriptor and DLPack
// importers. Everything here treats its input as untrusted: every product and sum is
// overflow-checked, and the error names the offending dimension.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/tensor_dyn.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace edgetensor::detail
{

struct LayoutFacts {
    size_t len = 0;    ///< elements in the shape
    size_t extent = 0; ///< bytes from the first element to one past the last addressed byte
};

/// Checks that `shape` (elements) and `strides` (bytes, same length) describe a layout the
/// core supports: no zero dimension, element-aligned non-negative strides, no broadcast
/// (zero stride on a dimension > 1), no two elements sharing bytes, and no overflow.
/// `what` prefixes the error message ("descriptor", "DLPack tensor"); failures use `code`.
Result<LayoutFacts> check_layout(std::span<const uint64_t> shape, std::span<const int64_t> strides,
                                 size_t elem, ErrorCode code, std::string_view what);

/// True when a semi-planar image's chroma plane sits in the same buffer right after luma, at
/// the pitch its [rows, W] shape implies (NV24: two luma pitches), so one handle and one
/// (shape, strides) pair describe both planes. Single-plane tensors: true.
bool chroma_plane_is_contiguous(const TensorDyn& t);

/// "[2, 3, 4]"
std::string format_dims(std::span<const uint64_t> dims);
std::string format_dims(std::span<const int64_t> dims);

} // namespace edgetensor::detail
