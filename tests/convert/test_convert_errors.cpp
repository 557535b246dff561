// SPDX-License-Identifier: MIT
//
// Bad configurations and bad frames get clear errors, never a crash or a silent result.

#include "reference.hpp"

#include <gtest/gtest.h>

namespace edgetensor::test
{
namespace
{

ConvertConfig nv12(size_t w = 64, size_t h = 48)
{
    ConvertConfig c;
    c.src_format = ConvertFormat::Nv12;
    c.src_width = w;
    c.src_height = h;
    return c;
}

void expect_create_error(const ConvertConfig& c, ErrorCode code, const std::string& needle)
{
    auto r = Converter::create(c);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), code) << r.error().message();
    EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
}

TEST(ConvertErrors, NegativeZeroSizes)
{
    expect_create_error(nv12(0, 48), ErrorCode::InvalidArgument, "zero");
    expect_create_error(nv12(64, 0), ErrorCode::InvalidArgument, "zero");
}

TEST(ConvertErrors, NegativeCropOutsideFrame)
{
    ConvertConfig c = nv12();
    c.crop = Region{60, 0, 8, 8};
    expect_create_error(c, ErrorCode::RegionOutOfBounds, "outside");
    c.crop = Region{0, 48, 1, 1};
    expect_create_error(c, ErrorCode::RegionOutOfBounds, "outside");
    c.crop = Region{0, 0, 0, 4};
    expect_create_error(c, ErrorCode::InvalidArgument, "zero");
    // Overflowing sums must not wrap around into "inside".
    c.crop = Region{8, 8, SIZE_MAX - 4, 4};
    expect_create_error(c, ErrorCode::RegionOutOfBounds, "outside");
}

TEST(ConvertErrors, NegativeNormalisationOnIntegerDtype)
{
    ConvertConfig c = nv12();
    c.mean = {1, 2, 3, 0};
    expect_create_error(c, ErrorCode::NotSupported, "float dtype");
    c.dtype = DType::I8;
    expect_create_error(c, ErrorCode::NotSupported, "float dtype");
}

TEST(ConvertErrors, NormalisationWithQuantizationIsAccepted)
{
    ConvertConfig c = nv12();
    c.mean = {1, 2, 3, 0};
    c.std = {50, 60, 70, 1};
    c.quant = Quantization{0.02f, 0};
    for (const DType d : {DType::U8, DType::I8}) {
        c.dtype = d;
        auto r = Converter::create(c);
        EXPECT_TRUE(r) << dtype_name(d) << ": " << r.error().message();
    }
}

TEST(ConvertErrors, NegativeQuantizationScale)
{
    ConvertConfig c = nv12();
    c.dtype = DType::I8;
    for (const float scale : {0.f, -0.f, -0.5f}) {
        c.quant = Quantization{scale, 0};
        expect_create_error(c, ErrorCode::InvalidArgument, "not positive");
    }
    for (const float scale : {NAN, INFINITY, -INFINITY}) {
        c.quant = Quantization{scale, 0};
        expect_create_error(c, ErrorCode::InvalidArgument, "not finite");
    }
    c.quant = Quantization{-0.5f, 0};
    expect_create_error(c, ErrorCode::InvalidArgument, "scale -0.5");
}

TEST(ConvertErrors, NegativeQuantizationZeroPointOutsideTheDtype)
{
    ConvertConfig c = nv12();
    c.dtype = DType::I8;
    c.quant = Quantization{0.5f, 128};
    expect_create_error(c, ErrorCode::InvalidArgument,
                        "zero point 128 is outside i8's range -128..127");
    c.quant = Quantization{0.5f, -129};
    expect_create_error(c, ErrorCode::InvalidArgument, "zero point -129");
    c.dtype = DType::U8;
    c.quant = Quantization{0.5f, -1};
    expect_create_error(c, ErrorCode::InvalidArgument,
                        "zero point -1 is outside u8's range 0..255");
    c.quant = Quantization{0.5f, 256};
    expect_create_error(c, ErrorCode::InvalidArgument, "zero point 256");
    // Both ends of each range are fine.
    for (const int32_t zp : {0, 255}) {
        c.quant = Quantization{0.5f, zp};
        EXPECT_TRUE(Converter::create(c)) << zp;
    }
    c.dtype = DType::I8;
    for (const int32_t zp : {-128, 127}) {
        c.quant = Quantization{0.5f, zp};
        EXPECT_TRUE(Converter::create(c)) << zp;
    }
}

TEST(ConvertErrors, NegativeQuantizationWithAFloatDtype)
{
    ConvertConfig c = nv12();
    c.quant = Quantization{0.5f, 0};
    c.dtype = DType::F32;
    expect_create_error(c, ErrorCode::InvalidArgument, "needs a u8 or i8 output, not f32");
    c.dtype = DType::F16;
    expect_create_error(c, ErrorCode::InvalidArgument, "not f16");
}

TEST(ConvertErrors, NegativeZeroOrNonFiniteStd)
{
    ConvertConfig c = nv12();
    c.dtype = DType::F32;
    c.std = {1, 0, 1, 1};
    expect_create_error(c, ErrorCode::InvalidArgument, "std");
    c.std = {1, 1, 1, 1};
    c.mean = {NAN, 0, 0, 0};
    expect_create_error(c, ErrorCode::InvalidArgument, "finite");
}

TEST(ConvertErrors, NegativeUnsupportedDtype)
{
    ConvertConfig c = nv12();
    c.dtype = DType::U16;
    expect_create_error(c, ErrorCode::NotSupported, "u16");
    c.dtype = DType::F64;
    expect_create_error(c, ErrorCode::NotSupported, "f64");
}

TEST(ConvertErrors, NegativeUnknownEnumCodes)
{
    ConvertConfig c = nv12();
    c.src_format = static_cast<ConvertFormat>(99);
    expect_create_error(c, ErrorCode::InvalidArgument, "source format");
    c = nv12();
    c.dst_format = static_cast<OutputFormat>(42);
    expect_create_error(c, ErrorCode::InvalidArgument, "output format");
    c = nv12();
    c.layout = static_cast<TensorLayout>(7);
    expect_create_error(c, ErrorCode::InvalidArgument, "layout");
    c = nv12();
    c.method = static_cast<ResizeMethod>(7);
    expect_create_error(c, ErrorCode::InvalidArgument, "method");
}

TEST(ConvertErrors, NegativeHugeDimensions)
{
    ConvertConfig c = nv12();
    c.dst_width = size_t(1) << 20;
    expect_create_error(c, ErrorCode::InvalidArgument, "32768");
}

class ConvertRunErrors : public ::testing::Test
{
protected:
    void SetUp() override
    {
        frame_ = make_frame(ConvertFormat::Nv12, 64, 48);
        auto c = Converter::create(config_for(frame_));
        ASSERT_TRUE(c);
        conv_.emplace(std::move(*c));
        out_.assign(64 * 48 * 3, 0);
    }
    Frame frame_;
    std::optional<Converter> conv_;
    std::vector<uint8_t> out_;
};

TEST_F(ConvertRunErrors, NegativeNullPlane)
{
    SourceFrame s = frame_.source();
    s.planes[1].data = nullptr;
    auto r = conv_->run(s, DestFrame{out_.data(), 64 * 3, 0});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(r.error().message().find("plane 1"), std::string::npos) << r.error().message();
}

TEST_F(ConvertRunErrors, NegativeShortSourceStride)
{
    SourceFrame s = frame_.source();
    s.planes[0].stride = 63;
    auto r = conv_->run(s, DestFrame{out_.data(), 64 * 3, 0});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(r.error().message().find("stride 63"), std::string::npos) << r.error().message();
}

TEST_F(ConvertRunErrors, NegativeDestinationProblems)
{
    auto r = conv_->run(frame_.source(), DestFrame{nullptr, 64 * 3, 0});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    r = conv_->run(frame_.source(), DestFrame{out_.data(), 64 * 3 - 1, 0});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("row stride"), std::string::npos) << r.error().message();
    // The destination was not touched by the failed calls.
    EXPECT_EQ(out_, std::vector<uint8_t>(64 * 48 * 3, 0));
}

TEST(ConvertErrors, NegativeChwPlaneStrideTooSmall)
{
    const Frame fr = make_frame(ConvertFormat::Rgb, 8, 8);
    ConvertConfig c = config_for(fr);
    c.layout = TensorLayout::Chw;
    auto conv = Converter::create(c);
    ASSERT_TRUE(conv);
    std::vector<uint8_t> out(8 * 8 * 3);
    auto r = conv->run(fr.source(), DestFrame{out.data(), 8, 8 * 7});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("plane stride"), std::string::npos) << r.error().message();
}

TEST(ConvertErrors, NegativeMisalignedFloatDestination)
{
    const Frame fr = make_frame(ConvertFormat::Rgb, 8, 8);
    ConvertConfig c = config_for(fr);
    c.dtype = DType::F32;
    auto conv = Converter::create(c);
    ASSERT_TRUE(conv);
    std::vector<float> out(8 * 8 * 3 + 1);
    auto r =
        conv->run(fr.source(), DestFrame{reinterpret_cast<uint8_t*>(out.data()) + 1, 8 * 3 * 4, 0});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("element size"), std::string::npos) << r.error().message();
}

TEST(ConvertNames, RoundTrip)
{
    for (uint32_t i = 0; i < kConvertFormatCount; ++i) {
        const auto f = static_cast<ConvertFormat>(i);
        EXPECT_EQ(convert_format_from_name(convert_format_name(f)), f);
        EXPECT_GE(convert_format_planes(f), 1u);
    }
    EXPECT_EQ(convert_format_from_name("NV12"), ConvertFormat::Nv12);
    EXPECT_EQ(convert_format_from_name("RGBx"), ConvertFormat::Rgbx);
    EXPECT_FALSE(convert_format_from_name("nv12")); // GStreamer spelling only
    EXPECT_EQ(output_format_from_name("GRAY"), OutputFormat::Gray);
    EXPECT_EQ(tensor_layout_from_name("chw"), TensorLayout::Chw);
    EXPECT_EQ(resize_method_from_name("bilinear"), ResizeMethod::Bilinear);
    EXPECT_FALSE(resize_method_from_name("bicubic"));
    EXPECT_EQ(convert_format_from_pixel_format(PixelFormat::Nv12), ConvertFormat::Nv12);
    EXPECT_EQ(convert_format_from_pixel_format(PixelFormat::Yuyv), ConvertFormat::Yuy2);
    EXPECT_FALSE(convert_format_from_pixel_format(PixelFormat::PlanarRgba));
    EXPECT_FALSE(convert_format_from_pixel_format(PixelFormat::None));
}

} // namespace
} // namespace edgetensor::test
