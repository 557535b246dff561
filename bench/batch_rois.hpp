// SPDX-License-Identifier: MIT
//
// The regions of the batching benchmarks' ROI job (bench_batch.cpp in process, batch_pipeline
// for whole processes): the same 16 rectangles of a 1920x1080 frame on both.
#pragma once

#include <cstddef>

namespace edgetensor::bench
{

inline constexpr size_t kRoiCount = 16;

struct RoiRect {
    size_t x, y, width, height;
};

/// Region i: one per cell of a 4 x 4 grid over 1920x1080, of different sizes and aspect ratios,
/// at even offsets (videocrop crops NV12 at even pixels).
constexpr RoiRect roi_rect(size_t i)
{
    const size_t col = i % 4, row = i / 4;
    return {col * 480 + 32 * (i % 3), row * 270 + 20 * (i % 2), 200 + 40 * (i % 4),
            180 + 20 * (i % 3)};
}

} // namespace edgetensor::bench
