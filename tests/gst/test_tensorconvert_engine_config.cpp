// SPDX-License-Identifier: MIT
//
// tensorconvert's settings without a pipeline (gst/elements/tensorconvert_settings.cpp, compiled
// in: the plugin's symbols are hidden): what every property value means for the engine's
// configuration, the refusal of mean/std lists that do not spread over the output channels
// (with the message the element posts), and the string properties' parsers.

#include "tensorconvert_settings.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorconvert
{
namespace
{

InputFacts nv12_1080p()
{
    return {ConvertFormat::Nv12, 1920, 1080,
            Colorimetry{ColorSpace::Bt709, ColorTransfer::Bt709, ColorEncoding::Bt709,
                        ColorRange::Limited}};
}

ConvertConfig config_of(const Settings& s, const InputFacts& in = nv12_1080p())
{
    auto cfg = engine_config(s, in);
    EXPECT_TRUE(cfg) << cfg.error().message();
    return cfg ? *cfg : ConvertConfig{};
}

TEST(TensorConvertEngineConfig, DefaultSettingsTakeTheInputAsItIs)
{
    const InputFacts in = nv12_1080p();
    const ConvertConfig c = config_of(Settings{}, in);
    EXPECT_EQ(c.src_format, ConvertFormat::Nv12);
    EXPECT_EQ(c.src_width, 1920u);
    EXPECT_EQ(c.src_height, 1080u);
    EXPECT_EQ(c.src_colorimetry.pack(), in.colorimetry.pack());
    EXPECT_FALSE(c.crop);
    EXPECT_EQ(c.dst_width, 0u); // the input's (or the crop's) size
    EXPECT_EQ(c.dst_height, 0u);
    EXPECT_EQ(c.dst_format, OutputFormat::Rgb);
    EXPECT_EQ(c.layout, TensorLayout::Hwc);
    EXPECT_EQ(c.dtype, DType::U8);
    EXPECT_EQ(c.mean, (std::array<float, 4>{0.f, 0.f, 0.f, 0.f}));
    EXPECT_EQ(c.std, (std::array<float, 4>{1.f, 1.f, 1.f, 1.f}));
    EXPECT_EQ(c.method, ResizeMethod::Bilinear);
    EXPECT_FALSE(c.letterbox);
    EXPECT_EQ(c.fill, (std::array<uint8_t, 4>{0, 0, 0, 255})); // opaque black
    EXPECT_EQ(c.threads, 1u);
    EXPECT_EQ(c.compute, ConvertCompute::Auto); // the element's default, not the library's
}

TEST(TensorConvertEngineConfig, EveryEnumValueMapsToTheEngines)
{
    const std::pair<GstTensorConvertFormat, OutputFormat> formats[] = {
        {GST_TENSOR_CONVERT_FORMAT_RGB, OutputFormat::Rgb},
        {GST_TENSOR_CONVERT_FORMAT_BGR, OutputFormat::Bgr},
        {GST_TENSOR_CONVERT_FORMAT_RGBA, OutputFormat::Rgba},
        {GST_TENSOR_CONVERT_FORMAT_BGRA, OutputFormat::Bgra},
        {GST_TENSOR_CONVERT_FORMAT_GRAY, OutputFormat::Gray}};
    for (const auto& [prop, engine] : formats) {
        Settings s;
        s.format = prop;
        EXPECT_EQ(config_of(s).dst_format, engine) << prop;
        EXPECT_EQ(channels_of(s), output_format_channels(engine));
    }
    const std::pair<GstTensorConvertDType, DType> dtypes[] = {
        {GST_TENSOR_CONVERT_DTYPE_UINT8, DType::U8},
        {GST_TENSOR_CONVERT_DTYPE_INT8, DType::I8},
        {GST_TENSOR_CONVERT_DTYPE_FLOAT16, DType::F16},
        {GST_TENSOR_CONVERT_DTYPE_FLOAT32, DType::F32}};
    for (const auto& [prop, engine] : dtypes) {
        Settings s;
        s.dtype = prop;
        EXPECT_EQ(config_of(s).dtype, engine) << prop;
    }
    Settings s;
    s.layout = GST_TENSOR_CONVERT_LAYOUT_CHW;
    s.method = GST_TENSOR_CONVERT_METHOD_NEAREST;
    EXPECT_EQ(config_of(s).layout, TensorLayout::Chw);
    EXPECT_EQ(config_of(s).method, ResizeMethod::Nearest);
    const std::pair<GstTensorConvertCompute, ConvertCompute> computes[] = {
        {GST_TENSOR_CONVERT_COMPUTE_AUTO, ConvertCompute::Auto},
        {GST_TENSOR_CONVERT_COMPUTE_CPU, ConvertCompute::Cpu},
        {GST_TENSOR_CONVERT_COMPUTE_GL, ConvertCompute::Gl}};
    for (const auto& [prop, engine] : computes) {
        s.compute = prop;
        EXPECT_EQ(config_of(s).compute, engine) << prop;
    }
}

TEST(TensorConvertEngineConfig, GeometryAndThreadsPassThrough)
{
    Settings s;
    s.width = 640;
    s.height = 480;
    s.crop = Region{420, 8, 1080, 1064};
    s.letterbox = TRUE;
    s.n_threads = 0; // one per CPU: the engine's to decide
    const ConvertConfig c = config_of(s);
    EXPECT_EQ(c.dst_width, 640u);
    EXPECT_EQ(c.dst_height, 480u);
    ASSERT_TRUE(c.crop);
    EXPECT_EQ(c.crop->x, 420u);
    EXPECT_EQ(c.crop->y, 8u);
    EXPECT_EQ(c.crop->width, 1080u);
    EXPECT_EQ(c.crop->height, 1064u);
    EXPECT_TRUE(c.letterbox);
    EXPECT_EQ(c.threads, 0u);
}

TEST(TensorConvertEngineConfig, FillColorIsArgbAndBecomesRgba)
{
    Settings s;
    s.fill_color = 0x80112233;
    EXPECT_EQ(config_of(s).fill, (std::array<uint8_t, 4>{0x11, 0x22, 0x33, 0x80}));
    s.fill_color = 0xff727272; // YOLO grey
    EXPECT_EQ(config_of(s).fill, (std::array<uint8_t, 4>{0x72, 0x72, 0x72, 0xff}));
}

TEST(TensorConvertEngineConfig, MeanAndStdSpreadOverTheOutputChannels)
{
    Settings s;
    s.dtype = GST_TENSOR_CONVERT_DTYPE_FLOAT32;
    s.mean = {127.5f};
    s.stdev = {58.f, 57.f, 57.5f};
    ConvertConfig c = config_of(s);
    EXPECT_EQ(c.mean, (std::array<float, 4>{127.5f, 127.5f, 127.5f, 0.f}));
    EXPECT_EQ(c.std, (std::array<float, 4>{58.f, 57.f, 57.5f, 1.f}));
    s.format = GST_TENSOR_CONVERT_FORMAT_RGBA;
    s.stdev = {1.f, 2.f, 3.f, 4.f};
    c = config_of(s);
    EXPECT_EQ(c.mean, (std::array<float, 4>{127.5f, 127.5f, 127.5f, 127.5f}));
    EXPECT_EQ(c.std, (std::array<float, 4>{1.f, 2.f, 3.f, 4.f}));
}

TEST(TensorConvertEngineConfig, NegativeListsThatDoNotSpreadAreRefusedWithTheElementsMessage)
{
    Settings s;
    s.dtype = GST_TENSOR_CONVERT_DTYPE_FLOAT32;
    s.mean_str = "1,2";
    s.mean = {1.f, 2.f};
    auto c = engine_config(s, nv12_1080p());
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(c.error().message(), "mean and std need one value or one per output channel (3 for "
                                   "format=RGB); got mean=\"1,2\" std=\"\".");

    Settings g;
    g.format = GST_TENSOR_CONVERT_FORMAT_GRAY;
    g.std_str = "58,57,57";
    g.stdev = {58.f, 57.f, 57.f};
    c = engine_config(g, nv12_1080p());
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message(), "mean and std need one value or one per output channel (1 for "
                                   "format=GRAY); got mean=\"\" std=\"58,57,57\".");
}

TEST(TensorConvertEngineConfig, QuantizationIsAbsentUnlessAScaleIsSet)
{
    EXPECT_FALSE(config_of(Settings{}).quant); // today's uint8: the value
    Settings s;
    s.dtype = GST_TENSOR_CONVERT_DTYPE_INT8;
    EXPECT_FALSE(config_of(s).quant); // today's int8: value - 128
    s.quant_scale_str = "0.0186584";
    s.quant_scale = 0.0186584f;
    s.quant_zero_point = -14;
    s.mean = {123.675f, 116.28f, 103.53f};
    s.stdev = {58.395f, 57.12f, 57.375f};
    const ConvertConfig c = config_of(s);
    ASSERT_TRUE(c.quant);
    EXPECT_EQ(c.quant->scale, 0.0186584f);
    EXPECT_EQ(c.quant->zero_point, -14);
    EXPECT_EQ(c.dtype, DType::I8);
    EXPECT_EQ(c.mean, (std::array<float, 4>{123.675f, 116.28f, 103.53f, 0.f}));
    // The whole configuration is one the engine takes.
    EXPECT_TRUE(Converter::create(c)) << "the engine refuses what the settings gave";

    s.dtype = GST_TENSOR_CONVERT_DTYPE_UINT8;
    s.quant_zero_point = 255;
    ASSERT_TRUE(config_of(s).quant);
    EXPECT_EQ(config_of(s).quant->zero_point, 255);
}

TEST(TensorConvertEngineConfig, NegativeQuantizationThatCannotApplyIsRefusedNamingTheProperty)
{
    Settings s;
    s.dtype = GST_TENSOR_CONVERT_DTYPE_INT8;
    s.quant_scale_str = "0.5";
    s.quant_scale = 0.5f;
    s.quant_zero_point = 200;
    auto c = engine_config(s, nv12_1080p());
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(c.error().message(), "quant-zero-point=200 is outside dtype=int8 (-128..127).");

    s.dtype = GST_TENSOR_CONVERT_DTYPE_UINT8;
    s.quant_zero_point = -1;
    c = engine_config(s, nv12_1080p());
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message(), "quant-zero-point=-1 is outside dtype=uint8 (0..255).");

    s.dtype = GST_TENSOR_CONVERT_DTYPE_FLOAT32;
    s.quant_zero_point = 0;
    c = engine_config(s, nv12_1080p());
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message().rfind("quant-scale=\"0.5\" quantizes int8 or uint8 outputs; "
                                        "dtype=float32 takes mean/std only.",
                                        0),
              0u)
        << c.error().message();

    Settings z;
    z.dtype = GST_TENSOR_CONVERT_DTYPE_INT8;
    z.quant_zero_point = 3;
    c = engine_config(z, nv12_1080p());
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message().rfind("quant-zero-point=3 needs quant-scale", 0), 0u)
        << c.error().message();
}

TEST(TensorConvertEngineConfig, OutputConfigIsTheCpuEngineWithoutACrop)
{
    Settings s;
    s.crop = Region{2, 2, 10, 10};
    s.compute = GST_TENSOR_CONVERT_COMPUTE_GL;
    const auto c = output_config(s, nv12_1080p());
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_FALSE(c->crop);
    EXPECT_EQ(c->compute, ConvertCompute::Cpu);
    const auto e = engine_config(s, nv12_1080p());
    ASSERT_TRUE(e);
    EXPECT_TRUE(e->crop);
    EXPECT_EQ(e->compute, ConvertCompute::Gl);
}

TEST(TensorConvertSettingsParsing, QuantScale)
{
    std::optional<float> q;
    std::string why;
    EXPECT_TRUE(parse_quant_scale("", &q, &why));
    EXPECT_FALSE(q);
    EXPECT_TRUE(parse_quant_scale(" 0.00392157 ", &q, &why));
    ASSERT_TRUE(q);
    EXPECT_EQ(*q, 0.00392157f);
    for (const char* bad : {"0", "-0.5", "0.0"}) {
        EXPECT_FALSE(parse_quant_scale(bad, &q, &why)) << bad;
        EXPECT_EQ(why.rfind("the scale must be greater than 0", 0), 0u) << why;
    }
    for (const char* bad : {"nan", "inf", "-inf", "x", "1,2", "1e400"}) {
        EXPECT_FALSE(parse_quant_scale(bad, &q, &why)) << bad;
        EXPECT_NE(why.find("is not a finite number"), std::string::npos) << bad << ": " << why;
    }
    EXPECT_FALSE(parse_quant_scale("1e-45", &q, &why));
    EXPECT_NE(why.find("not a normal float"), std::string::npos) << why;
    EXPECT_FALSE(parse_quant_scale("1e39", &q, &why));
    EXPECT_NE(why.find("not a normal float"), std::string::npos) << why;
}

TEST(TensorConvertSettingsParsing, MeanAndStdLists)
{
    std::vector<float> v;
    std::string why;
    EXPECT_TRUE(parse_mean("123.675, 116.28,103.53", &v, &why));
    EXPECT_EQ(v, (std::vector<float>{123.675f, 116.28f, 103.53f}));
    EXPECT_TRUE(parse_mean("", &v, &why));
    EXPECT_TRUE(v.empty());
    EXPECT_TRUE(parse_std("255", &v, &why));
    EXPECT_EQ(v, (std::vector<float>{255.f}));

    EXPECT_FALSE(parse_mean("1,x", &v, &why));
    EXPECT_EQ(why, "\"x\" is not a finite number");
    EXPECT_FALSE(parse_mean("1e39", &v, &why));
    EXPECT_NE(why.find("outside the float range"), std::string::npos) << why;
    EXPECT_FALSE(parse_mean("1,2,3,4,5", &v, &why));
    EXPECT_EQ(why, "at most 4 values (one per output channel)");
    EXPECT_FALSE(parse_std("0", &v, &why));
    EXPECT_EQ(why, "std values must not be zero");
    EXPECT_FALSE(parse_std("1e-40", &v, &why));
    EXPECT_NE(why.find("denormal"), std::string::npos) << why;
}

TEST(TensorConvertSettingsParsing, Crop)
{
    std::optional<Region> r;
    std::string why;
    EXPECT_TRUE(parse_crop("420,0,1080,1080", &r, &why));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->x, 420u);
    EXPECT_EQ(r->width, 1080u);
    EXPECT_TRUE(parse_crop("", &r, &why));
    EXPECT_FALSE(r);
    EXPECT_FALSE(parse_crop("1,2,3", &r, &why));
    EXPECT_EQ(why, "expected four integers x,y,width,height");
    EXPECT_FALSE(parse_crop("0,0,0,5", &r, &why));
    EXPECT_EQ(why, "width and height must be at least 1");
    EXPECT_FALSE(parse_crop("0,0,16385,5", &r, &why));
    EXPECT_EQ(why, "\"16385\" is not an integer from 0 to 16384");
}

TEST(TensorConvertSettingsParsing, NormalisationThatOverflowsFloatIsNamedByChannel)
{
    std::string why;
    EXPECT_TRUE(normalisation_is_finite({127.5f}, {1e-30f}, 3, &why));
    EXPECT_FALSE(normalisation_is_finite({0.f, 0.f, -3e38f}, {1.f, 1.f, 0.5f}, 3, &why));
    EXPECT_EQ(why.rfind("channel 2: ", 0), 0u) << why;
    // A count mismatch is left to engine_config().
    EXPECT_TRUE(normalisation_is_finite({1.f, 2.f}, {}, 3, &why));
}

TEST(TensorConvertSettingsParsing, RefusalsStandUntilAValueIsAccepted)
{
    Refusals r;
    EXPECT_TRUE(r.empty());
    r.refuse("std", "0", "std values must not be zero");
    r.refuse("crop", "a", "\"a\" is not an integer from 0 to 16384");
    EXPECT_EQ(r.describe(), "crop \"a\" (\"a\" is not an integer from 0 to 16384); std \"0\" (std "
                            "values must not be zero)");
    r.accept("crop");
    EXPECT_EQ(r.describe(), "std \"0\" (std values must not be zero)");
    r.accept("std");
    EXPECT_TRUE(r.empty());
}

} // namespace
} // namespace edgetensor::gst::tensorconvert
