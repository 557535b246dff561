// SPDX-License-Identifier: MIT
//
// How far libyuv's YUV -> RGB kernels are from the exact matrices: the table in
// docs/performance.md ("Why libyuv does not do the colour conversion"). Every YUV triplet whose
// exact RGB lies in [0, 255] on all three channels (in gamut) goes through
// I444ToRGB24Matrix with each of libyuv's constant sets; the error of a channel is
// |libyuv's byte - the exact value before rounding|, in 8-bit levels.
//
//   build/bench/yuv_accuracy        (deterministic: the same table on every run)

#include <libyuv.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace
{

struct Matrix {
    const char* name;
    const char* constants;
    const libyuv::YuvConstants* yuv;
    double kr, kb;
    bool full;
};

} // namespace

int main()
{
    const Matrix matrices[] = {
        {"BT.601 limited", "kYuvI601Constants", &libyuv::kYuvI601Constants, 0.299, 0.114, false},
        {"BT.601 full", "kYuvJPEGConstants", &libyuv::kYuvJPEGConstants, 0.299, 0.114, true},
        {"BT.709 limited", "kYuvH709Constants", &libyuv::kYuvH709Constants, 0.2126, 0.0722, false},
        {"BT.709 full", "kYuvF709Constants", &libyuv::kYuvF709Constants, 0.2126, 0.0722, true},
        {"BT.2020 limited", "kYuv2020Constants", &libyuv::kYuv2020Constants, 0.2627, 0.0593, false},
        {"BT.2020 full", "kYuvV2020Constants", &libyuv::kYuvV2020Constants, 0.2627, 0.0593, true},
    };
    std::printf("| matrix | max error (levels) | mean | in-gamut triplets |\n|---|---|---|---|\n");
    std::vector<uint8_t> y(256), u(256), v(256), rgb(256 * 3);
    for (const Matrix& m : matrices) {
        double worst = 0, sum = 0;
        uint64_t n = 0;
        for (int vv = 0; vv < 256; ++vv)
            for (int uu = 0; uu < 256; ++uu) {
                for (int i = 0; i < 256; ++i) {
                    y[size_t(i)] = uint8_t(i);
                    u[size_t(i)] = uint8_t(uu);
                    v[size_t(i)] = uint8_t(vv);
                }
                libyuv::I444ToRGB24Matrix(y.data(), 256, u.data(), 256, v.data(), 256, rgb.data(),
                                          256 * 3, m.yuv, 256, 1);
                for (int yy = 0; yy < 256; ++yy) {
                    const double luma = m.full ? yy / 255.0 : (yy - 16) / 219.0;
                    const double pb = m.full ? (uu - 128) / 255.0 : (uu - 128) / 224.0;
                    const double pr = m.full ? (vv - 128) / 255.0 : (vv - 128) / 224.0;
                    const double r = luma + 2.0 * (1.0 - m.kr) * pr;
                    const double b = luma + 2.0 * (1.0 - m.kb) * pb;
                    const double g = (luma - m.kr * r - m.kb * b) / (1.0 - m.kr - m.kb);
                    const double exact[3] = {r * 255.0, g * 255.0, b * 255.0};
                    if (std::any_of(exact, exact + 3, [](double c) { return c < 0 || c > 255; }))
                        continue; // out of gamut: every converter clamps
                    // RGB24 is B, G, R in memory (libyuv names formats by a little-endian word).
                    const uint8_t* px = rgb.data() + size_t(yy) * 3;
                    const double got[3] = {double(px[2]), double(px[1]), double(px[0])};
                    for (int c = 0; c < 3; ++c) {
                        const double e = std::fabs(got[c] - exact[c]);
                        worst = std::max(worst, e);
                        sum += e;
                    }
                    ++n;
                }
            }
        std::printf("| %s (`%s`) | %.2f | %.2f | %llu |\n", m.name, m.constants, worst,
                    sum / double(3 * n), static_cast<unsigned long long>(n));
    }
    return 0;
}
