// SPDX-License-Identifier: MIT
//
// What the test models compute, recomputed here: the models are generated at test time
// (make_onnx_models.py, tflite_models.cpp) from the same formulas.

#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgetensor::test
{

/// The conv models' weights: weight(o, i, y, x) for 2 filters over 3 channels, 3x3.
inline float conv_weight(int o, int i, int y, int x)
{
    return float((o * 27 + i * 9 + y * 3 + x) % 7 - 3) / 10.0f;
}
inline constexpr std::array<float, 2> kConvBias{0.1f, -0.2f};

/// Conv 3x3, pad 1, stride 1, 3 -> 2 channels, then Relu, of one HxW image. `at(c, y, x)` reads
/// the input; the result is indexed [o][y][x].
template <typename In> std::vector<float> conv_reference(size_t h, size_t w, In at)
{
    std::vector<float> out(2 * h * w);
    for (int o = 0; o < 2; ++o)
        for (int y = 0; y < int(h); ++y)
            for (int x = 0; x < int(w); ++x) {
                float acc = kConvBias[size_t(o)];
                for (int i = 0; i < 3; ++i)
                    for (int ky = 0; ky < 3; ++ky)
                        for (int kx = 0; kx < 3; ++kx) {
                            const int sy = y + ky - 1, sx = x + kx - 1;
                            if (sy < 0 || sx < 0 || sy >= int(h) || sx >= int(w))
                                continue;
                            acc += conv_weight(o, i, ky, kx) * at(i, sy, sx);
                        }
                out[(size_t(o) * h + size_t(y)) * w + size_t(x)] = std::max(acc, 0.0f);
            }
    return out;
}

/// An input value that differs per element and batch: small, signed, exact in f32.
inline float pattern(size_t n, size_t c, size_t y, size_t x)
{
    return float(int((n * 131 + c * 31 + y * 7 + x * 3) % 17) - 8) / 4.0f;
}

} // namespace edgetensor::test
