// SPDX-License-Identifier: MIT
//
// The direct YUV import's decisions, free of GL so they are unit-tested on any host
// (tests/gl/test_gl_direct_check.cpp): whether a converter may try direct imports at all, and
// the pixel check that judges a driver's YUV -> RGB against the engine's function
// (convert::yuv_to_rgb), with the table of driver models that says why a check failed. The GL
// side (the probe shader's readback, the import) is DirectImport (direct_import.hpp).

#pragma once

#include "edgetensor/gl.hpp"
#include "edgetensor/tensor_map.hpp"
#include "gl/convert_shader.hpp"
#include "gl/egl_import.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace edgetensor::detail::gl
{

// ---- may direct imports be tried ------------------------------------------------------------

/// What the display says about a FourCC (query_dma_buf_format on the GL thread; a fake in tests).
using FormatQuery = std::function<DmaBufFormatSupport(uint32_t fourcc)>;

struct DirectPlan {
    /// The source's DRM format when direct imports may be tried.
    std::optional<uint32_t> fourcc;
    /// Otherwise why not.
    std::string off;
    /// The reason is the driver's or the user's (logged as INFO), not the configuration's.
    bool driver = false;
    /// When tried: the display samples the format only as GL_TEXTURE_EXTERNAL_OES.
    bool external_only = false;
};

/// Whether the converter of `p` may import its YUV DMA-BUF sources directly on a GL described by
/// `info`. `env_direct` is EDGETENSOR_GL_DIRECT (null when unset: "0" turns the path off, "1"
/// allows it on a software renderer); `query` is asked only when everything else allows it.
DirectPlan plan_direct(const ShaderParams& p, const GlInfo& info, const char* env_direct,
                       const FormatQuery& query);

// ---- the pixel check --------------------------------------------------------------------------

/// The driver's RGB at the probe pixels may differ from the CPU engine's (0..255, unclamped;
/// both clamped where the output does not blend source pixels) by at most this much, and on
/// average (over probes and channels) by kDirectMeanTolerance. With the final rounding that
/// keeps u8 output within the engine's tolerances (max 2 levels, mean 0.5); float outputs scale
/// both by min(std) / 100 (their tolerance is 1e-2 after normalisation).
inline constexpr float kDirectMaxTolerance = 1.5f;
inline constexpr float kDirectMeanTolerance = 0.5f;
inline constexpr size_t kProbeGrid = 32; ///< probe pixels per axis

/// One probe pixel: where it is, its Y, U, V bytes as the CPU reads them, and the driver's RGB
/// there in levels (its 0..1 output times 255, unclamped as the driver gives it).
struct ProbeSample {
    size_t x = 0;
    size_t y = 0;
    std::array<float, 3> yuv{};
    std::array<float, 3> rgb{};
};

/// The probe pixels, px x py, row-major.
struct ProbeGrid {
    size_t px = 0;
    size_t py = 0;
    std::vector<ProbeSample> samples;
};

/// The probe grid of a `width` x `height` frame of layout `src` from `planes` (the CPU's map of
/// the frame) and `bits`, the probe shader's readback: per probe pixel four uint32, the float
/// bits of the driver's R, G, B (0..1) and an unused fourth.
ProbeGrid probe_grid(const SourceLayout& src, const std::array<MappedPlane, 3>& planes,
                     size_t width, size_t height, size_t px, size_t py,
                     std::span<const uint32_t> bits);

struct ProbeTolerance {
    double max = 0; ///< at any probe pixel and channel, in levels
    double mean = 0;
};

/// The tolerance of a converter configured by `c` with `channels` output channels:
/// kDirectMaxTolerance / kDirectMeanTolerance, scaled by min(std) / 100 for float
/// outputs; `override_max` (EDGETENSOR_GL_DIRECT_TOLERANCE) replaces the maximum and caps the mean.
ProbeTolerance probe_tolerance(const ConvertConfig& c, size_t channels,
                               std::optional<float> override_max);

/// Whether the output blends source pixels (bilinear, not 1:1). Then the driver must not clamp:
/// blending clamped RGB is not the engine's clamp of blended YUV. Without blending each output
/// pixel is one source pixel, clamped by the shader anyway, and both sides are compared clamped.
bool output_blends(const ConvertConfig& c, const ConvertGeometry& g) noexcept;

/// A simple model of a driver's YUV -> RGB, to say which fits a failed check best.
struct DriverModel {
    const char* name;
    bool bt601_limited; ///< the hints ignored: BT.601 limited whatever the colorimetry
    bool clamp;         ///< clamped to 0..255
    bool swap_uv;       ///< U and V swapped
    bool no_chroma;     ///< the chroma read as zeros
    bool zeros;         ///< nothing read at all
};

/// The driver models, the engine's own function first (the best fit on a tie).
inline constexpr DriverModel kDriverModels[] = {
    {"the engine's function clamped to 0..255", false, true, false, false, false},
    {"BT.601 limited clamped (the hints ignored)", true, true, false, false, false},
    {"BT.601 limited unclamped (the hints ignored)", true, false, false, false, false},
    {"the engine's function with U and V swapped, clamped", false, true, true, false, false},
    {"BT.601 limited clamped with the chroma read as zeros", true, true, false, true, false},
    {"zeros", false, false, false, false, true},
};

/// What `m` makes of the bytes `yuv` of a source of colorimetry `applied`.
std::array<float, 3> model_rgb(const DriverModel& m, const Colorimetry& applied,
                               const std::array<float, 3>& yuv) noexcept;

struct ModelFit {
    const DriverModel* model = nullptr;
    double mean = 0; ///< mean |driver - model| over probes and channels, in levels
};

/// The model in kDriverModels closest to the driver's RGB of `g` (clamped to 0..255 where the
/// output does not blend, as the check compares it).
ModelFit closest_driver_model(const ProbeGrid& g, const Colorimetry& applied, bool blends);

struct ProbeJudgement {
    bool pass = false;
    /// Passed: the measured max and mean. Failed: those, the worst pixel, the closest driver
    /// model and two sample pixels, for the decline's warning.
    std::string text;
};

/// The driver's RGB in `g` against the engine's function (convert::yuv_to_rgb) of the same
/// pixels' bytes, both clamped to 0..255 unless the output blends (`blends`).
ProbeJudgement judge_probe(const ProbeGrid& g, const Colorimetry& applied, bool blends,
                           ProbeTolerance tol);

} // namespace edgetensor::detail::gl
