// SPDX-License-Identifier: MIT
//
// tensorconvert's settings: the writable properties' values, the parsing and validation of its
// string properties (mean, std, crop, quant-scale) with the record of refused values that keeps
// the element from starting with settings nobody asked for, and the one pure function from
// settings (and what the input caps say) to the engine's configuration. The output part
// (OutputSettings) is tensorbatch's too: both elements take the same output properties. No
// pipeline, no element: unit-tested on its own (tests/gst/test_tensorconvert_engine_config.cpp).

#pragma once

#include "gsttensorconvert.h"

#include <edgetensor/colorimetry.hpp>
#include <edgetensor/convert.hpp>
#include <edgetensor/error.hpp>
#include <edgetensor/types.hpp>

#include <glib.h>

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorconvert
{

/// Largest width, height or crop coordinate.
inline constexpr unsigned kMaxSize = 16384;

inline constexpr guint DEFAULT_WIDTH = 0;
inline constexpr guint DEFAULT_HEIGHT = 0;
inline constexpr GstTensorConvertFormat DEFAULT_FORMAT = GST_TENSOR_CONVERT_FORMAT_RGB;
inline constexpr GstTensorConvertLayout DEFAULT_LAYOUT = GST_TENSOR_CONVERT_LAYOUT_HWC;
inline constexpr GstTensorConvertDType DEFAULT_DTYPE = GST_TENSOR_CONVERT_DTYPE_UINT8;
inline constexpr GstTensorConvertMethod DEFAULT_METHOD = GST_TENSOR_CONVERT_METHOD_BILINEAR;
inline constexpr gboolean DEFAULT_LETTERBOX = FALSE;
// ARGB, as GStreamer's video converter takes its border colour (GstVideoConverter.border-argb).
inline constexpr guint DEFAULT_FILL_COLOR = 0xff000000;
inline constexpr guint DEFAULT_N_THREADS = 1;
inline constexpr GstTensorConvertCompute DEFAULT_COMPUTE = GST_TENSOR_CONVERT_COMPUTE_AUTO;
// quant-zero-point's range: int8's and uint8's together; set_caps checks it against the dtype.
inline constexpr gint kMinZeroPoint = -128;
inline constexpr gint kMaxZeroPoint = 255;
inline constexpr gint DEFAULT_QUANT_ZERO_POINT = 0;

/// Property values that were refused and not replaced since: gst-launch sets properties before
/// the element has a bus, so a warning can go unseen; start() refuses to run while any is here.
class Refusals
{
public:
    void refuse(const std::string& prop, const std::string& value, const std::string& why);
    /// A value of `prop` was accepted: its earlier refusal no longer stands.
    void accept(const std::string& prop) { refused_.erase(prop); }
    bool empty() const noexcept { return refused_.empty(); }
    /// "std \"0\" (std values must not be zero); crop \"a\" (...)".
    std::string describe() const;

private:
    std::map<std::string, std::string> refused_; // prop -> "\"value\" (why)"
};

/// The output properties' values, tensorconvert's and tensorbatch's (under the element's object
/// lock), and the values refused since.
struct OutputSettings {
    guint width = DEFAULT_WIDTH;
    guint height = DEFAULT_HEIGHT;
    GstTensorConvertFormat format = DEFAULT_FORMAT;
    GstTensorConvertLayout layout = DEFAULT_LAYOUT;
    GstTensorConvertDType dtype = DEFAULT_DTYPE;
    GstTensorConvertMethod method = DEFAULT_METHOD;
    std::string mean_str;
    std::vector<float> mean;
    std::string std_str;
    std::vector<float> stdev;
    gboolean letterbox = DEFAULT_LETTERBOX;
    guint fill_color = DEFAULT_FILL_COLOR;
    guint n_threads = DEFAULT_N_THREADS;
    // quant-scale: empty (no quantization: today's uint8/int8) or a finite scale > 0.
    std::string quant_scale_str;
    std::optional<float> quant_scale;
    gint quant_zero_point = DEFAULT_QUANT_ZERO_POINT;
    // Values set but refused (and not replaced since): start() will not run with them.
    Refusals refused;
};

/// tensorconvert's writable properties: the output ones and its own.
struct Settings : OutputSettings {
    std::string crop_str;
    std::optional<Region> crop;
    GstTensorConvertCompute compute = DEFAULT_COMPUTE;
    GstTensorConvertOutputMode output_mode = GST_TENSOR_CONVERT_OUTPUT_MODE_TENSOR;
};

/// "a, b,c" split at the commas, each item stripped of spaces; none for null or "". Empty items
/// are kept, for the caller to refuse by name.
std::vector<std::string> split_list(const char* str);

/// "a,b,c" (at most 4 values, one per output channel) as floats; empty = no values. Every value
/// must be a finite number whose magnitude fits a float (a mean of 1e39 would become inf).
bool parse_mean(const char* str, std::vector<float>* out, std::string* why);

/// As parse_mean, and every value must be a normal float: not zero, not denormal (1e-40 is,
/// and (value - mean) / std would overflow to inf), not infinite.
bool parse_std(const char* str, std::vector<float>* out, std::string* why);

/// A quantization scale: empty = none; else one finite number greater than 0 whose float is
/// normal (models store the scale as a float; 0, a negative, inf or nan is refused).
bool parse_quant_scale(const char* str, std::optional<float>* out, std::string* why);

/// "x,y,width,height" (integers 0..16384, width and height >= 1). Empty = no crop.
bool parse_crop(const char* str, std::optional<Region>* out, std::string* why);

/// Spreads a mean/std list over `channels`: one value for all, or exactly one per channel.
bool per_channel(const std::vector<float>& v, size_t channels, float def,
                 std::array<float, 4>* out);

/// True when (value - mean) / std stays finite in float for every value 0..255 of every one of
/// `channels` channels (lists as per_channel() spreads them; lists that do not spread are left
/// to the caller); otherwise `why` names the channel and its mean and std.
bool normalisation_is_finite(const std::vector<float>& mean, const std::vector<float>& stdev,
                             size_t channels, std::string* why);

// ---- settings -> engine configuration -------------------------------------------------------

OutputFormat output_format(GstTensorConvertFormat f) noexcept;
DType output_dtype(GstTensorConvertDType d) noexcept;
TensorLayout output_layout(GstTensorConvertLayout l) noexcept;
ResizeMethod resize_method(GstTensorConvertMethod m) noexcept;
/// The `compute` property: the engine decides where auto runs, the element only maps its enum.
ConvertCompute convert_compute(GstTensorConvertCompute c) noexcept;
size_t channels_of(const OutputSettings& s);

/// What the negotiated input caps say that the engine's configuration depends on.
struct InputFacts {
    ConvertFormat format = ConvertFormat::Nv12;
    size_t width = 0;
    size_t height = 0;
    /// The source colorimetry the conversion applies: the caps', unspecified axes already
    /// resolved (tensorconvert_colorimetry.hpp), so the engine guesses nothing.
    Colorimetry colorimetry;
};

/// The engine's configuration for the input `in` under the output settings `s` (no crop, the
/// CPU engine: what tensorbatch runs per slot). InvalidArgument, with the message the element
/// posts as its negotiation error, when mean or std does not spread over the output channels
/// (one value, or one per channel), when quantization is asked of a float dtype, or when the
/// zero point lies outside the dtype or comes without a scale.
Result<ConvertConfig> output_config(const OutputSettings& s, const InputFacts& in);

/// output_config() with tensorconvert's crop and compute.
Result<ConvertConfig> engine_config(const Settings& s, const InputFacts& in);

} // namespace edgetensor::gst::tensorconvert
