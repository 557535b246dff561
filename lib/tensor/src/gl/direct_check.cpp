// SPDX-License-Identifier: MIT
//
// The direct YUV import's decisions (direct_check.hpp).

#include "gl/direct_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace edgetensor::detail::gl
{
namespace
{

DirectPlan off(std::string why, bool driver)
{
    DirectPlan p;
    p.off = std::move(why);
    p.driver = driver;
    return p;
}

bool is_float(DType t) noexcept
{
    return t == DType::F16 || t == DType::F32;
}

float min_std(const ConvertConfig& c, size_t channels) noexcept
{
    return *std::min_element(c.std.begin(), c.std.begin() + channels);
}

// The driver's chroma plane is width / 2 (height / 2) texels: with an odd size its nearest
// sample is not the engine's block.
bool odd_subsampled(const SourceLayout& sl, const ConvertConfig& c) noexcept
{
    bool hsub = false, vsub = false;
    for (size_t k = 0; k < sl.ncomp; ++k) {
        hsub = hsub || sl.comp[k].hshift > 0;
        vsub = vsub || sl.vshift[sl.comp[k].plane] > 0;
    }
    return (hsub && c.src_width % 2) || (vsub && c.src_height % 2);
}

// What the configuration allows, before anything is asked of the display.
DirectPlan plan_configuration(const ShaderParams& p, const GlInfo& info)
{
    const ConvertConfig& c = p.cfg;
    if (c.dst_format == OutputFormat::Gray)
        return off("a GRAY output reads the luma plane only", false);
    if (!info.dma_buf_import)
        return off("the EGL display lacks EGL_EXT_image_dma_buf_import", false);
    if (is_float(c.dtype) && min_std(c, p.channels) * 1e-2f < 0.25f)
        return off("float output normalised by std < 25 is held to 1e-2, tighter than a "
                   "driver's colour conversion can be checked to",
                   false);
    if (!info.yuv_external)
        return off("the GL lacks GL_OES_EGL_image_external_essl3", true);
    if (odd_subsampled(*p.src, c))
        return off("an odd size with subsampled chroma", false);
    const size_t max = size_t(info.max_texture_size);
    if (c.src_width > max || c.src_height > max)
        return off("the frame exceeds the texture size limit", true);
    if (p.applied.encoding == ColorEncoding::Unspecified ||
        p.applied.range == ColorRange::Unspecified)
        return off("the colorimetry is unresolved", false);
    return {};
}

DirectPlan plan_format(uint32_t fourcc, const DmaBufFormatSupport& fs)
{
    if (!fs.queried)
        return off("the display does not list its DMA-BUF formats "
                   "(EGL_EXT_image_dma_buf_import_modifiers)",
                   true);
    if (!fs.listed)
        return off("the driver does not list " + fourcc_string(fourcc) +
                       " among its DMA-BUF import formats",
                   true);
    if (fs.modifiers_listed && !fs.linear)
        return off("the driver offers no linear " + fourcc_string(fourcc) + " modifier", true);
    DirectPlan plan;
    plan.fourcc = fourcc;
    plan.external_only = fs.external_only;
    return plan;
}

// printf into a buffer of N bytes (longer text is cut, as the messages always were).
template <size_t N> std::string format(const char* fmt, auto... args)
{
    char b[N];
    std::snprintf(b, sizeof b, fmt, args...);
    return b;
}

// The driver's value as the check compares it: clamped where the output does not blend.
float as_compared(float got, bool blends) noexcept
{
    return !blends && std::isfinite(got) ? std::clamp(got, 0.f, 255.f) : got;
}

std::array<float, 3> engine_rgb(const Colorimetry& applied, const std::array<float, 3>& yuv,
                                bool clamp) noexcept
{
    auto rgb = convert::yuv_to_rgb(convert::yuv_gains(applied), yuv[0], yuv[1], yuv[2]);
    if (clamp)
        for (float& v : rgb)
            v = std::clamp(v, 0.f, 255.f);
    return rgb;
}

} // namespace

DirectPlan plan_direct(const ShaderParams& p, const GlInfo& info, const char* env_direct,
                       const FormatQuery& query)
{
    // Not applicable (an RGB source, a GRAY output) stays quiet; a driver that cannot is said.
    const auto fc = drm_fourcc_of(p.cfg.src_format);
    if (!fc)
        return off("the source is not YUV", false);
    if (env_direct && std::strcmp(env_direct, "0") == 0)
        return off("EDGETENSOR_GL_DIRECT=0", true);
    // A software renderer gains nothing from it (it reads the buffer through the CPU either
    // way) and Mesa 22.3's llvmpipe crashes inside its shader sampling a YUYV external image of
    // a vivid camera buffer; a fault in the driver cannot be declined after the fact.
    if (info.software && !(env_direct && std::strcmp(env_direct, "1") == 0))
        return off("a software renderer (" + info.renderer +
                       "); EDGETENSOR_GL_DIRECT=1 tries it there",
                   true);
    if (DirectPlan plan = plan_configuration(p, info); !plan.off.empty())
        return plan;
    return plan_format(*fc, query(*fc));
}

ProbeGrid probe_grid(const SourceLayout& src, const std::array<MappedPlane, 3>& planes,
                     size_t width, size_t height, size_t px, size_t py,
                     std::span<const uint32_t> bits)
{
    ProbeGrid g{px, py, {}};
    g.samples.resize(px * py);
    for (size_t j = 0; j < py; ++j)
        for (size_t i = 0; i < px; ++i) {
            ProbeSample& s = g.samples[j * px + i];
            s.x = probe_coord(i, px, width);
            s.y = probe_coord(j, py, height);
            for (size_t q = 0; q < 3; ++q) {
                const CompSpec& cs = src.comp[q];
                const MappedPlane& pl = planes[cs.plane];
                const size_t row = s.y >> src.vshift[cs.plane];
                s.yuv[q] = pl.data[row * pl.row_stride + convert::comp_offset(cs, s.x)];
                std::memcpy(&s.rgb[q], &bits[(j * px + i) * 4 + q], sizeof s.rgb[q]);
                s.rgb[q] *= 255.f;
            }
        }
    return g;
}

ProbeTolerance probe_tolerance(const ConvertConfig& c, size_t channels,
                               std::optional<float> override_max)
{
    float scale = 1.f;
    if (is_float(c.dtype))
        scale = std::min(1.f, min_std(c, channels) / 100.f);
    ProbeTolerance t{kDirectMaxTolerance * scale, kDirectMeanTolerance * scale};
    if (override_max) {
        t.max = *override_max;
        t.mean = std::min(t.mean, t.max);
    }
    return t;
}

bool output_blends(const ConvertConfig& c, const ConvertGeometry& g) noexcept
{
    return c.method != ResizeMethod::Nearest &&
           !(g.content.width == g.source.width && g.content.height == g.source.height);
}

std::array<float, 3> model_rgb(const DriverModel& m, const Colorimetry& applied,
                               const std::array<float, 3>& yuv) noexcept
{
    if (m.zeros)
        return {0.f, 0.f, 0.f};
    const Colorimetry bt601_limited{ColorSpace::Unspecified, ColorTransfer::Unspecified,
                                    ColorEncoding::Bt601, ColorRange::Limited};
    std::array<float, 3> in = yuv;
    if (m.no_chroma)
        in[1] = in[2] = 0.f;
    if (m.swap_uv)
        std::swap(in[1], in[2]);
    return engine_rgb(m.bt601_limited ? bt601_limited : applied, in, m.clamp);
}

ModelFit closest_driver_model(const ProbeGrid& g, const Colorimetry& applied, bool blends)
{
    double sums[std::size(kDriverModels)] = {};
    for (const ProbeSample& s : g.samples)
        for (size_t m = 0; m < std::size(kDriverModels); ++m) {
            const auto alt = model_rgb(kDriverModels[m], applied, s.yuv);
            for (size_t q = 0; q < 3; ++q)
                sums[m] += std::fabs(double(as_compared(s.rgb[q], blends)) - double(alt[q]));
        }
    size_t best = 0;
    for (size_t m = 1; m < std::size(kDriverModels); ++m)
        if (sums[m] < sums[best])
            best = m;
    return {&kDriverModels[best], sums[best] / double(g.px * g.py * 3)};
}

ProbeJudgement judge_probe(const ProbeGrid& g, const Colorimetry& applied, bool blends,
                           ProbeTolerance tol)
{
    double worst = 0, sum = 0;
    std::string where, samples;
    for (size_t k = 0; k < g.samples.size(); ++k) {
        const ProbeSample& s = g.samples[k];
        const auto want = engine_rgb(applied, s.yuv, !blends);
        std::array<float, 3> got;
        for (size_t q = 0; q < 3; ++q)
            got[q] = as_compared(s.rgb[q], blends);
        if (k / g.px == g.py / 2 && k % g.px < 2)
            samples += format<160>("; pixel (%zu, %zu) Y %d U %d V %d reads %.1f %.1f %.1f", s.x,
                                   s.y, int(s.yuv[0]), int(s.yuv[1]), int(s.yuv[2]), double(got[0]),
                                   double(got[1]), double(got[2]));
        for (size_t q = 0; q < 3; ++q) {
            double d = std::fabs(double(got[q]) - double(want[q]));
            if (!std::isfinite(d))
                d = 1e9;
            sum += d;
            if (d > worst) {
                worst = d;
                where = format<200>("pixel (%zu, %zu) channel %zu reads %.2f where the CPU engine "
                                    "computes %.2f from Y %d U %d V %d",
                                    s.x, s.y, q, double(got[q]), double(want[q]), int(s.yuv[0]),
                                    int(s.yuv[1]), int(s.yuv[2]));
            }
        }
    }
    const double mean = sum / double(g.px * g.py * 3);
    ProbeJudgement j;
    j.text = format<160>("driver RGB vs the CPU engine over %zu probe pixels: max %.3f, "
                         "mean %.3f levels (tolerance %.3f, mean %.3f)",
                         g.px * g.py, worst, mean, tol.max, tol.mean);
    j.pass = !(worst > tol.max || mean > tol.mean);
    if (!j.pass) {
        const ModelFit fit = closest_driver_model(g, applied, blends);
        j.text += "; worst: " + where +
                  format<200>("; closest model of the driver: %s (mean %.3f levels)",
                              fit.model->name, fit.mean) +
                  samples;
    }
    return j;
}

} // namespace edgetensor::detail::gl
