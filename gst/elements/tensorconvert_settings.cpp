// SPDX-License-Identifier: MIT
//
// tensorconvert's settings: the string properties' parsing and validation, and the engine
// configuration the settings stand for (tensorconvert_settings.hpp).

#include "tensorconvert_settings.hpp"

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>

namespace edgetensor::gst::tensorconvert
{

namespace
{

std::string quoted(const char* s)
{
    return std::string("\"") + s + "\"";
}

std::string number(double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_ascii_formatd(buf, sizeof(buf), "%g", v);
}

enum class Kind { Mean, Std };

// Parses "a,b,c" into floats, checking each value for what `kind` needs. Empty = empty list.
bool parse_list(const char* str, Kind kind, std::vector<float>* out, std::string* why)
{
    out->clear();
    bool ok = true;
    const std::vector<std::string> items = split_list(str);
    for (auto item = items.begin(); item != items.end() && ok; ++item) {
        const char* text = item->c_str();
        char* end = nullptr;
        errno = 0;
        const double v = g_ascii_strtod(text, &end);
        const float f = float(v);
        if (!*text || !end || *end != '\0' || !std::isfinite(v) ||
            (errno == ERANGE && std::fabs(v) > 1.0)) {
            *why = quoted(text) + " is not a finite number";
            ok = false;
        } else if (!std::isfinite(f)) {
            *why = quoted(text) + " is outside the float range (magnitude at most " +
                   number(FLT_MAX) + ")";
            ok = false;
        } else if (kind == Kind::Std && f == 0.f) {
            *why = "std values must not be zero";
            if (v != 0.0)
                *why += " (" + quoted(text) + " is 0 as a float)";
            ok = false;
        } else if (kind == Kind::Std && !std::isnormal(f)) {
            *why = quoted(text) +
                   " is too small a std: as a float it is denormal (magnitude below " +
                   number(FLT_MIN) + "), and (value - mean) / std overflows to infinity";
            ok = false;
        } else {
            out->push_back(f);
        }
    }
    if (ok && out->size() > 4) {
        *why = "at most 4 values (one per output channel)";
        ok = false;
    }
    return ok;
}

} // namespace

std::vector<std::string> split_list(const char* str)
{
    std::vector<std::string> items;
    if (!str || !*str)
        return items;
    gchar** parts = g_strsplit(str, ",", -1);
    for (gchar** p = parts; *p; ++p)
        items.emplace_back(g_strstrip(*p));
    g_strfreev(parts);
    return items;
}

bool parse_mean(const char* str, std::vector<float>* out, std::string* why)
{
    return parse_list(str, Kind::Mean, out, why);
}

bool parse_std(const char* str, std::vector<float>* out, std::string* why)
{
    return parse_list(str, Kind::Std, out, why);
}

bool parse_quant_scale(const char* str, std::optional<float>* out, std::string* why)
{
    out->reset();
    if (!str || !*str)
        return true;
    std::string v = str;
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t") + 1);
    char* end = nullptr;
    errno = 0;
    const double d = g_ascii_strtod(v.c_str(), &end);
    const float f = float(d);
    if (v.empty() || !end || *end != '\0' || !std::isfinite(d)) {
        *why = quoted(v.c_str()) + " is not a finite number";
        return false;
    }
    if (!(d > 0.0)) {
        *why = "the scale must be greater than 0; leave quant-scale empty for no quantization";
        return false;
    }
    // A model stores the scale as a float: one that is not a normal float divides to infinity.
    if (!std::isfinite(f) || !std::isnormal(f)) {
        *why = quoted(v.c_str()) + " is not a normal float (magnitude " + number(FLT_MIN) + " to " +
               number(FLT_MAX) + ")";
        return false;
    }
    *out = f;
    return true;
}

bool parse_crop(const char* str, std::optional<Region>* out, std::string* why)
{
    out->reset();
    if (!str || !*str)
        return true;
    std::vector<guint64> v;
    bool ok = true;
    for (const std::string& item : split_list(str)) {
        guint64 n = 0;
        GError* err = nullptr;
        if (!g_ascii_string_to_unsigned(item.c_str(), 10, 0, kMaxSize, &n, &err)) {
            *why = quoted(item.c_str()) + " is not an integer from 0 to 16384";
            g_clear_error(&err);
            ok = false;
            break;
        }
        v.push_back(n);
    }
    if (ok && v.size() != 4) {
        *why = "expected four integers x,y,width,height";
        ok = false;
    }
    if (ok && (v[2] == 0 || v[3] == 0)) {
        *why = "width and height must be at least 1";
        ok = false;
    }
    if (ok)
        *out = Region{size_t(v[0]), size_t(v[1]), size_t(v[2]), size_t(v[3])};
    return ok;
}

bool per_channel(const std::vector<float>& v, size_t channels, float def, std::array<float, 4>* out)
{
    out->fill(def);
    if (v.empty())
        return true;
    if (v.size() == 1) {
        for (size_t c = 0; c < channels; ++c)
            (*out)[c] = v[0];
        return true;
    }
    if (v.size() != channels)
        return false;
    for (size_t c = 0; c < channels; ++c)
        (*out)[c] = v[c];
    return true;
}

bool normalisation_is_finite(const std::vector<float>& mean_list,
                             const std::vector<float>& std_list, size_t channels, std::string* why)
{
    std::array<float, 4> mean{}, stdev{};
    if (!per_channel(mean_list, channels, 0.f, &mean) ||
        !per_channel(std_list, channels, 1.f, &stdev))
        return true; // a count mismatch: set_caps names it
    for (size_t c = 0; c < channels && c < mean.size(); ++c) {
        // |value - mean| is largest at one end of 0..255.
        const double reach = std::max(std::fabs(0.0 - mean[c]), std::fabs(255.0 - mean[c]));
        const double out = reach / std::fabs(double(stdev[c]));
        if (!(out <= double(FLT_MAX))) {
            *why = "channel " + std::to_string(c) + ": (value - " + number(mean[c]) + ") / " +
                   number(stdev[c]) + " reaches " + number(out) +
                   ", beyond the float range: every output would be infinite";
            return false;
        }
    }
    return true;
}

void Refusals::refuse(const std::string& prop, const std::string& value, const std::string& why)
{
    refused_[prop] = "\"" + value + "\" (" + why + ")";
}

std::string Refusals::describe() const
{
    std::string d;
    for (const auto& [prop, what] : refused_) {
        if (!d.empty())
            d += "; ";
        d += prop + " " + what;
    }
    return d;
}

OutputFormat output_format(GstTensorConvertFormat f) noexcept
{
    switch (f) {
    case GST_TENSOR_CONVERT_FORMAT_BGR:
        return OutputFormat::Bgr;
    case GST_TENSOR_CONVERT_FORMAT_RGBA:
        return OutputFormat::Rgba;
    case GST_TENSOR_CONVERT_FORMAT_BGRA:
        return OutputFormat::Bgra;
    case GST_TENSOR_CONVERT_FORMAT_GRAY:
        return OutputFormat::Gray;
    case GST_TENSOR_CONVERT_FORMAT_RGB:
        break;
    }
    return OutputFormat::Rgb;
}

DType output_dtype(GstTensorConvertDType d) noexcept
{
    switch (d) {
    case GST_TENSOR_CONVERT_DTYPE_INT8:
        return DType::I8;
    case GST_TENSOR_CONVERT_DTYPE_FLOAT16:
        return DType::F16;
    case GST_TENSOR_CONVERT_DTYPE_FLOAT32:
        return DType::F32;
    case GST_TENSOR_CONVERT_DTYPE_UINT8:
        break;
    }
    return DType::U8;
}

TensorLayout output_layout(GstTensorConvertLayout l) noexcept
{
    return l == GST_TENSOR_CONVERT_LAYOUT_CHW ? TensorLayout::Chw : TensorLayout::Hwc;
}

ResizeMethod resize_method(GstTensorConvertMethod m) noexcept
{
    return m == GST_TENSOR_CONVERT_METHOD_NEAREST ? ResizeMethod::Nearest : ResizeMethod::Bilinear;
}

ConvertCompute convert_compute(GstTensorConvertCompute c) noexcept
{
    switch (c) {
    case GST_TENSOR_CONVERT_COMPUTE_CPU:
        return ConvertCompute::Cpu;
    case GST_TENSOR_CONVERT_COMPUTE_GL:
        return ConvertCompute::Gl;
    case GST_TENSOR_CONVERT_COMPUTE_AUTO:
        break;
    }
    return ConvertCompute::Auto;
}

size_t channels_of(const OutputSettings& s)
{
    return output_format_channels(output_format(s.format));
}

namespace
{

// The dtype property's value as its nick says it.
const char* dtype_nick(GstTensorConvertDType d) noexcept
{
    switch (d) {
    case GST_TENSOR_CONVERT_DTYPE_INT8:
        return "int8";
    case GST_TENSOR_CONVERT_DTYPE_FLOAT16:
        return "float16";
    case GST_TENSOR_CONVERT_DTYPE_FLOAT32:
        return "float32";
    case GST_TENSOR_CONVERT_DTYPE_UINT8:
        break;
    }
    return "uint8";
}

// quant-scale / quant-zero-point for the dtype of `s`: the engine's Quantization, none, or why
// they cannot apply (the message the element posts).
Result<std::optional<Quantization>> quantization_of(const OutputSettings& s)
{
    const DType dtype = output_dtype(s.dtype);
    const std::string dtype_name = dtype_nick(s.dtype);
    if (!s.quant_scale) {
        if (s.quant_zero_point != 0)
            return make_error(ErrorCode::InvalidArgument,
                              "quant-zero-point=" + std::to_string(s.quant_zero_point) +
                                  " needs quant-scale: set the model's input scale too, or "
                                  "leave both unset for no quantization.");
        return std::optional<Quantization>();
    }
    if (dtype != DType::U8 && dtype != DType::I8)
        return make_error(ErrorCode::InvalidArgument,
                          "quant-scale=\"" + s.quant_scale_str +
                              "\" quantizes int8 or uint8 outputs; dtype=" + dtype_name +
                              " takes mean/std only. Set dtype=int8 or dtype=uint8, or leave "
                              "quant-scale empty.");
    const int lo = dtype == DType::I8 ? -128 : 0;
    const int hi = dtype == DType::I8 ? 127 : 255;
    if (s.quant_zero_point < lo || s.quant_zero_point > hi)
        return make_error(ErrorCode::InvalidArgument,
                          "quant-zero-point=" + std::to_string(s.quant_zero_point) +
                              " is outside dtype=" + dtype_name + " (" + std::to_string(lo) + ".." +
                              std::to_string(hi) + ").");
    return std::optional<Quantization>(Quantization{*s.quant_scale, s.quant_zero_point});
}

} // namespace

Result<ConvertConfig> output_config(const OutputSettings& s, const InputFacts& in)
{
    ConvertConfig cfg;
    cfg.src_format = in.format;
    cfg.src_width = in.width;
    cfg.src_height = in.height;
    cfg.src_colorimetry = in.colorimetry;
    cfg.dst_width = s.width;
    cfg.dst_height = s.height;
    cfg.dst_format = output_format(s.format);
    cfg.layout = output_layout(s.layout);
    cfg.dtype = output_dtype(s.dtype);
    const size_t channels = channels_of(s);
    if (!per_channel(s.mean, channels, 0.f, &cfg.mean) ||
        !per_channel(s.stdev, channels, 1.f, &cfg.std))
        return make_error(ErrorCode::InvalidArgument,
                          "mean and std need one value or one per output channel (" +
                              std::to_string(channels) +
                              " for format=" + std::string(output_format_name(cfg.dst_format)) +
                              "); got mean=\"" + s.mean_str + "\" std=\"" + s.std_str + "\".");
    cfg.method = resize_method(s.method);
    cfg.letterbox = s.letterbox;
    // 0xAARRGGBB; the engine writes alpha only into 4-channel outputs.
    cfg.fill = {uint8_t((s.fill_color >> 16) & 0xff), uint8_t((s.fill_color >> 8) & 0xff),
                uint8_t(s.fill_color & 0xff), uint8_t((s.fill_color >> 24) & 0xff)};
    cfg.threads = s.n_threads;
    auto quant = quantization_of(s);
    if (!quant)
        return unexpected(std::move(quant).error());
    cfg.quant = *quant;
    cfg.compute = ConvertCompute::Cpu;
    return cfg;
}

Result<ConvertConfig> engine_config(const Settings& s, const InputFacts& in)
{
    auto cfg = output_config(s, in);
    if (!cfg)
        return cfg;
    cfg->crop = s.crop;
    cfg->compute = convert_compute(s.compute);
    return cfg;
}

} // namespace edgetensor::gst::tensorconvert
