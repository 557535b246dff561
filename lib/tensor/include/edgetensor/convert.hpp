// SPDX-License-Identifier: MIT
//
// The conversion engine: a camera frame (YUV or RGB family, any stride, optionally cropped)
// to an NPU-ready tensor in one pass: colour conversion with the frame's colorimetry, resize,
// letterbox, layout (HWC/CHW), dtype and per-channel normalisation.
//
// A Converter is configured once (per caps) and run per frame. It owns its worker threads and
// its scratch memory, so run() allocates nothing. One Converter must not run() from two threads
// at once; distinct Converters are independent.
//
// Sampling convention (what the tests compare against):
//  - Output pixel (x, y) of the content rectangle samples the source (crop) at
//    sx = (x + 0.5) * crop_w / content_w - 0.5 (half-pixel centres), same for y; bilinear
//    interpolates the two neighbours, nearest takes floor(sx + 0.5) of that position (i.e.
//    floor((x + 0.5) * crop_w / content_w)). Samples are clamped to the crop rectangle.
//  - Subsampled chroma is first expanded to full resolution by replication (each chroma sample
//    covers its 2x1 or 2x2 luma block, as libyuv and most hardware do), then resampled like luma.
//    Resampling happens on the YUV planes, before colour conversion, so only output pixels are
//    converted.
//  - YUV -> RGB uses the exact matrix (BT.601/709/2020 Kr/Kb; limited range Y 16..235,
//    C 16..240; full range Y 0..255, C (x - 128) / 255), clamped to [0, 255], then rounded for
//    integer outputs. GRAY output is full-range luma (Y expanded for YUV sources,
//    0.299 R + 0.587 G + 0.114 B for RGB sources).
//  - Arithmetic: 16-bit fixed point (samples in 1/32 of a level, weights in 1/32768, matrix
//    coefficients in 1/8192), within 0.15 of a level of the double-precision result before the
//    final rounding, for every matrix. Each kernel level (simd_level()) computes the same
//    function: integer outputs are identical on every CPU, floats equal up to float rounding.
//  - Integer outputs round half up. Normalisation is (v - mean[c]) / std[c] with v in [0, 255]
//    (unrounded), mean/std in output channel order; float dtypes, or an integer dtype with
//    quantization. Without quantization u8 is v and int8 is v - 128.
//  - Quantization (ConvertConfig::quant, u8 or i8 only; TFLite's and ONNX's per-tensor affine
//    convention): q = saturate(round_half_even(x / scale) + zero_point), x = (v - mean[c]) /
//    std[c] with v the unrounded sample (1/32 of a level, as the float path reads it), x and
//    x / scale evaluated in double precision, saturated to the dtype's range. Every kernel
//    level gives the same bytes: a float multiply-add whose constants create() proved to
//    reproduce that reference for every sample value a channel can take, or else a table of
//    the reference.
//  - Alpha: RGBA/BGRA sources keep theirs (resampled); every other source gives 255. Letterbox
//    padding is `fill`, put through the same dtype/normalisation/quantization as the picture.

#pragma once

#include "edgetensor/colorimetry.hpp"
#include "edgetensor/error.hpp"
#include "edgetensor/gl.hpp"
#include "edgetensor/tensor_dyn.hpp"
#include "edgetensor/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace edgetensor
{

namespace detail::gl
{
class ConvertBackend;
struct ConverterHook;
} // namespace detail::gl

/// Source frame formats the engine reads. Names follow GStreamer's video format names.
enum class ConvertFormat : uint32_t {
    Nv12 = 0,  ///< Y plane + interleaved UV plane, 4:2:0
    Nv21,      ///< Y plane + interleaved VU plane, 4:2:0
    Nv16,      ///< Y plane + interleaved UV plane, 4:2:2
    Nv24,      ///< Y plane + interleaved UV plane, 4:4:4
    I420,      ///< Y, U, V planes, 4:2:0
    Yuy2,      ///< packed Y0 U Y1 V
    Uyvy,      ///< packed U Y0 V Y1
    Vyuy,      ///< packed V Y0 U Y1
    Rgb,       ///< packed R G B
    Bgr,       ///< packed B G R
    Rgba,      ///< packed R G B A
    Bgra,      ///< packed B G R A
    Rgbx,      ///< packed R G B, padding byte
    Bgrx,      ///< packed B G R, padding byte
    Gray8,     ///< one luma plane (full range)
    PlanarRgb, ///< R, G, B planes (GStreamer RGBP)
};
inline constexpr uint32_t kConvertFormatCount = 16;

/// What the output tensor holds per pixel.
enum class OutputFormat : uint32_t { Rgb = 0, Bgr, Rgba, Bgra, Gray };

/// HWC: [H, W, C] (channels interleaved). CHW: [C, H, W] (one plane per channel).
enum class TensorLayout : uint32_t { Hwc = 0, Chw };

enum class ResizeMethod : uint32_t { Nearest = 0, Bilinear };

/// Where a Converter runs. Cpu: the CPU engine. Gl: OpenGL ES 3 shaders on the shared
/// GlContext (same matrices, ranges and sampling convention); create() fails when no GL context
/// can be had; quantized outputs (ConvertConfig::quant) are the CPU's only. Auto: GL when the
/// shared context runs on a hardware renderer and can take the configuration, else the CPU
/// (Converter::compute_reason() says why).
enum class ConvertCompute : uint32_t { Auto = 0, Cpu, Gl };

/// How the CPU kernels write the output. Non-temporal ("streaming") stores go around the caches:
/// the line is not read for ownership first and does not evict what the caches hold, which
/// saves memory traffic when nothing will read the output from the caches anyway, and costs a
/// CPU reader that would have found it there (docs/convert-engine.md, "Output stores").
/// Streaming applies to planar float outputs (CHW or GRAY; f32, f16) on the AVX2 and AVX-512
/// levels, rows starting on a 64-byte line; everything else is stored through the caches.
enum class OutputStores : uint32_t {
    /// Streaming when the buffer the output lands in (ConvertConfig::dest_buffer_bytes, and at
    /// least one output) is half the last-level cache or more: written whole before anything
    /// reads it, it cannot still be in the caches for its reader.
    Auto = 0,
    /// Through the caches.
    Cached,
    /// Streaming whenever the output can be (a device reading the tensor next, for instance).
    Streaming,
};

/// "NV12", "I420", "YUY2", "RGBx", "GRAY8", "RGBP", ... (GStreamer's names).
std::string_view convert_format_name(ConvertFormat f) noexcept;
/// Inverse of convert_format_name (case-sensitive, GStreamer spelling).
std::optional<ConvertFormat> convert_format_from_name(std::string_view name) noexcept;
/// The engine format of a tensor image format; nullopt when the engine cannot read it.
std::optional<ConvertFormat> convert_format_from_pixel_format(PixelFormat f) noexcept;
/// Number of memory planes a frame of `f` has (1, 2 or 3).
size_t convert_format_planes(ConvertFormat f) noexcept;
/// True for the YUV family (the ones whose colour conversion uses a matrix).
bool convert_format_is_yuv(ConvertFormat f) noexcept;

/// "RGB", "BGR", "RGBA", "BGRA", "GRAY".
std::string_view output_format_name(OutputFormat f) noexcept;
std::optional<OutputFormat> output_format_from_name(std::string_view name) noexcept;
/// 3, 3, 4, 4, 1.
size_t output_format_channels(OutputFormat f) noexcept;
/// "hwc", "chw".
std::string_view tensor_layout_name(TensorLayout l) noexcept;
std::optional<TensorLayout> tensor_layout_from_name(std::string_view name) noexcept;
/// "nearest", "bilinear".
std::string_view resize_method_name(ResizeMethod m) noexcept;
std::optional<ResizeMethod> resize_method_from_name(std::string_view name) noexcept;
/// "auto", "cached", "streaming".
std::string_view output_stores_name(OutputStores s) noexcept;
std::optional<OutputStores> output_stores_from_name(std::string_view name) noexcept;
/// "auto", "cpu", "gl".
std::string_view convert_compute_name(ConvertCompute c) noexcept;
std::optional<ConvertCompute> convert_compute_from_name(std::string_view name) noexcept;

/// One memory plane of a source frame: its first byte (top-left pixel of the frame) and its
/// row pitch in bytes. Borrowed for the duration of Converter::run().
struct SourcePlane {
    const uint8_t* data = nullptr;
    size_t stride = 0;
};

/// A source frame as raw planes (what a GstVideoFrame gives). Format and size are the
/// Converter's configuration; planes beyond convert_format_planes() are ignored.
struct SourceFrame {
    std::array<SourcePlane, 3> planes{};
};

/// The output as raw memory: first byte of the first element, the pitch of one row in bytes,
/// and for CHW the distance between channel planes in bytes (ignored for HWC).
struct DestFrame {
    uint8_t* data = nullptr;
    size_t row_stride = 0;
    size_t plane_stride = 0;
};

/// Per-tensor affine quantization of a u8 or i8 output: q = saturate(round_half_even(x / scale) +
/// zero_point), x the normalised value (see the sampling convention above). A model's input
/// quantization (TFLite, ONNX QuantizeLinear) is exactly these two numbers.
struct Quantization {
    /// Finite and > 0 (a float, as models store it).
    float scale = 1.f;
    /// Inside the dtype: -128..127 for i8, 0..255 for u8.
    int32_t zero_point = 0;
};

struct ConvertConfig {
    ConvertFormat src_format = ConvertFormat::Nv12;
    size_t src_width = 0;
    size_t src_height = 0;
    /// Matrix and range come from here; unspecified axes are resolved the way GStreamer 1.22's
    /// video-info defaults do (see resolve_yuv_colorimetry) and the resolution is logged once
    /// per Converter. Ignored for RGB-family and GRAY8 sources.
    Colorimetry src_colorimetry{};
    /// The part of the source to convert; nullopt = the whole frame. Any pixel offset.
    std::optional<Region> crop;

    /// Output size; 0 = the crop's size in that dimension.
    size_t dst_width = 0;
    size_t dst_height = 0;
    OutputFormat dst_format = OutputFormat::Rgb;
    TensorLayout layout = TensorLayout::Hwc;
    /// U8, I8, F16 or F32.
    DType dtype = DType::U8;
    /// Per output channel (output order, e.g. B G R for Bgr), in the 0..255 domain. Float
    /// dtypes, or u8/i8 with `quant`, may normalise; std must be non-zero and finite.
    std::array<float, 4> mean{0.f, 0.f, 0.f, 0.f};
    std::array<float, 4> std{1.f, 1.f, 1.f, 1.f};

    /// u8/i8 only: quantize the normalised value instead of writing v (u8) or v - 128 (i8).
    /// Absent (the default) keeps those.
    std::optional<Quantization> quant;

    ResizeMethod method = ResizeMethod::Bilinear;
    /// Keep the aspect ratio: scale to fit, centre, fill the rest with `fill`.
    bool letterbox = false;
    /// Padding colour as R, G, B, A in 0..255 (before normalisation), whatever the output order.
    std::array<uint8_t, 4> fill{0, 0, 0, 255};

    /// Worker threads including the caller; 0 = one per hardware thread.
    size_t threads = 1;

    /// Which backend runs the conversion (see ConvertCompute).
    ConvertCompute compute = ConvertCompute::Cpu;

    /// How the CPU kernels write the output (see OutputStores). EDGETENSOR_CONVERT_STORES
    /// (auto, cached, streaming), read at create(), overrides it, to compare on one machine.
    OutputStores stores = OutputStores::Auto;
    /// The bytes of the buffer this converter's outputs are written into, when it holds more
    /// than one output (a batch tensor: all its slots, each written by its own converter);
    /// 0 = one output. Only OutputStores::Auto reads it.
    size_t dest_buffer_bytes = 0;
};

/// Where the picture lands in the output (reported for letterbox; also set without it).
struct ConvertGeometry {
    /// The source rectangle read (the crop, or the whole frame).
    Region source;
    /// The output rectangle the picture fills; the rest is padding.
    Region content;
    /// content size / source size per axis: what the resampler applies.
    double scale_x = 1.0;
    double scale_y = 1.0;
    /// With letterbox, min(dst_w / src_w, dst_h / src_h) (scale_x and scale_y equal it up to
    /// the rounding of the content size); without letterbox 1.
    double scale = 1.0;
    size_t pad_left = 0;
    size_t pad_top = 0;
    size_t pad_right = 0;
    size_t pad_bottom = 0;
};

/// Computes the output geometry for a source rectangle and an output size. Pure function,
/// shared with the element (which reports it as properties). Letterbox: scale = min of the
/// axis ratios, content size = round(src * scale) (at least 1), padding split with the odd
/// pixel on the right/bottom.
ConvertGeometry compute_convert_geometry(const Region& source, size_t dst_width, size_t dst_height,
                                         bool letterbox) noexcept;

/// Resolves unspecified colorimetry axes of a YUV frame the way GStreamer 1.22's video-info
/// defaults do: a missing matrix comes from the primaries when they name a standard
/// (bt709, bt2020, smpte170m), else from the frame height (> 576 lines: BT.709, else BT.601);
/// a missing range is limited. Sets `*guessed` when anything was filled in.
Colorimetry resolve_yuv_colorimetry(const Colorimetry& c, size_t width, size_t height,
                                    bool* guessed = nullptr) noexcept;

class Converter
{
public:
    /// Validates `config` and prepares tables, scratch memory and threads. Errors:
    /// InvalidArgument (zero sizes, crop outside the frame, bad mean/std, a quantization scale
    /// that is not finite and > 0, a zero point outside the dtype, quantization with a dtype
    /// other than u8/i8), NotSupported (dtype other than U8/I8/F16/F32, normalisation with an
    /// integer dtype and no quantization, quantization with compute=gl), AllocationFailed.
    static Result<Converter> create(const ConvertConfig& config);

    /// A moved-from Converter is inert: run() on it returns InvalidArgument; other accessors
    /// must not be called.
    Converter(Converter&&) noexcept;
    Converter& operator=(Converter&&) noexcept;
    Converter(const Converter&) = delete;
    Converter& operator=(const Converter&) = delete;
    ~Converter();

    const ConvertConfig& config() const noexcept;
    const ConvertGeometry& geometry() const noexcept;
    /// The colorimetry actually applied (resolved); unspecified for RGB-family sources.
    const Colorimetry& applied_colorimetry() const noexcept;
    /// Threads actually used (>= 1).
    size_t threads() const noexcept;
    /// The kernel level this converter runs: "avx2", "sse4.1" or "portable", the best the CPU
    /// has unless EDGETENSOR_CONVERT_ISA (portable, sse4.1, avx2) asks for a lower one at
    /// create(). Every level gives the same integer outputs.
    std::string_view simd_level() const noexcept;
    /// Whether run() writes the output with non-temporal stores (ConvertConfig::stores resolved
    /// for this output, level and cache; rows not on a 64-byte line are still stored cached).
    /// Always false on the GL backend.
    bool streaming_stores() const noexcept;
    size_t dst_width() const noexcept;
    size_t dst_height() const noexcept;
    /// [H, W, C] for HWC, [C, H, W] for CHW (C = 1 for GRAY).
    Shape output_shape() const;
    /// Minimal row pitch / plane pitch in bytes of a tight output.
    size_t min_row_stride() const noexcept;
    size_t min_plane_stride() const noexcept;

    /// Converts one frame. Errors: InvalidArgument (null plane, stride shorter than a row,
    /// destination pitch too small).
    Result<void> run(const SourceFrame& src, const DestFrame& dst);

    /// Converts a tensor image (a view is fine) into a tensor. `src` must be an image whose
    /// format maps to the configured one and whose size equals the configured size (its
    /// colorimetry is not consulted: the configured one wins). `dst` must have output_shape()
    /// (a leading batch dimension of 1 is accepted) and the configured dtype, with a contiguous
    /// innermost dimension (HWC: pixels may be padded per row).
    Result<void> run(const TensorDyn& src, const TensorDyn& dst);

    /// Allocates a tight output tensor for this converter (generic tensor chain, or `memory`).
    Result<TensorDyn> allocate_output(std::optional<TensorMemory> memory = {}) const;

    /// The backend create() chose: Cpu or Gl, never Auto.
    ConvertCompute compute() const noexcept { return compute_; }
    /// Why that backend: "requested", or for Auto the renderer used or why the CPU was kept.
    const std::string& compute_reason() const noexcept { return compute_reason_; }
    /// The GL backend's import cache and copy counters (all zero on the CPU).
    GlImportStats gl_stats() const noexcept;

    struct Impl;

private:
    friend struct detail::gl::ConverterHook;
    struct GlDeleter {
        void operator()(detail::gl::ConvertBackend* b) const noexcept;
    };
    explicit Converter(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
    std::unique_ptr<detail::gl::ConvertBackend, GlDeleter> gl_;
    ConvertCompute compute_ = ConvertCompute::Cpu;
    std::string compute_reason_;
};

/// IEEE binary16 <-> binary32 (round to nearest even), as the engine writes F16 outputs.
uint16_t float_to_half(float f) noexcept;
float half_to_float(uint16_t h) noexcept;

} // namespace edgetensor
