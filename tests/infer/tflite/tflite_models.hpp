// SPDX-License-Identifier: MIT
//
// TensorFlow Lite models the tests write at run time, with the flatbuffer schema the dev package
// ships (tensorflow/lite/schema/schema_generated.h). Each writer returns "" or why it failed.
//
//   add.tflite       "x" f32 [1, 8, 8, 3] + constant [0.5, -1, 2] (per channel) -> "y" (ADD)
//   mean.tflite      "image" u8 [1, 8, 8, 3] -> CAST -> MEAN over H, W -> "mean" f32 [1, 3];
//                    * (1/255) -> "scores" f32 [1, 3]
//   conv.tflite      "x" f32 [1, 8, 8, 3] (NHWC) -> CONV_2D 3x3 SAME (2 filters, RELU) -> "y"
//                    f32 [1, 8, 8, 2]; weights and bias of reference.hpp (stored OHWI)
//   conv_batch.tflite the same with shape_signature [-1, 8, 8, 3] / [-1, 8, 8, 2]
//   quant.tflite     "q" u8 [1, 4] (scale 0.5, zero point 10) -> DEQUANTIZE -> "real" f32
//   bool.tflite      "flags" bool [2] -> LOGICAL_NOT -> "inverted" bool [2]

#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace edgetensor::test::tfl
{

inline constexpr std::array<float, 3> kAddConstant{0.5f, -1.0f, 2.0f};
inline constexpr float kQuantScale = 0.5f;
inline constexpr int kQuantZeroPoint = 10;

/// Writes every model above into `dir`.
std::string write_all(const std::string& dir);

/// mean.tflite's graph for an input of [1, height, width, 3] u8, written to `path` (tensorinfer's
/// tests: a 64x64 RGB tensor is exactly three pages, so TensorFlow Lite reads it in place only
/// with spare bytes after it).
std::string write_mean(const std::string& path, int32_t height, int32_t width);

} // namespace edgetensor::test::tfl
