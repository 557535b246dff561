// SPDX-License-Identifier: MIT
//
// Wire codes are ABI: TensorDesc, the C API and other processes depend on them.

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <set>

#include <fcntl.h>
#include <unistd.h>

using namespace edgetensor;

TEST(WireCodes, DTypeCodesArePinned)
{
    EXPECT_EQ(uint32_t(DType::U8), 0u);
    EXPECT_EQ(uint32_t(DType::I8), 1u);
    EXPECT_EQ(uint32_t(DType::U16), 2u);
    EXPECT_EQ(uint32_t(DType::I16), 3u);
    EXPECT_EQ(uint32_t(DType::U32), 4u);
    EXPECT_EQ(uint32_t(DType::I32), 5u);
    EXPECT_EQ(uint32_t(DType::U64), 6u);
    EXPECT_EQ(uint32_t(DType::I64), 7u);
    EXPECT_EQ(uint32_t(DType::F16), 8u);
    EXPECT_EQ(uint32_t(DType::F32), 9u);
    EXPECT_EQ(uint32_t(DType::F64), 10u);
    DType d;
    EXPECT_TRUE(dtype_from_code(10, &d));
    EXPECT_EQ(d, DType::F64);
    EXPECT_FALSE(dtype_from_code(11, &d));
}

TEST(WireCodes, DTypeSizes)
{
    EXPECT_EQ(dtype_size(DType::U8), 1u);
    EXPECT_EQ(dtype_size(DType::F16), 2u);
    EXPECT_EQ(dtype_size(DType::I32), 4u);
    EXPECT_EQ(dtype_size(DType::F64), 8u);
    EXPECT_EQ(dtype_of_v<float>, DType::F32);
    EXPECT_EQ(dtype_of_v<Float16>, DType::F16);
}

TEST(WireCodes, PixelFormatCodesArePinned)
{
    EXPECT_EQ(uint32_t(PixelFormat::None), 0u);
    EXPECT_EQ(uint32_t(PixelFormat::Rgb), 1u);
    EXPECT_EQ(uint32_t(PixelFormat::Rgba), 2u);
    EXPECT_EQ(uint32_t(PixelFormat::Bgra), 3u);
    EXPECT_EQ(uint32_t(PixelFormat::Grey), 4u);
    EXPECT_EQ(uint32_t(PixelFormat::Yuyv), 5u);
    EXPECT_EQ(uint32_t(PixelFormat::Vyuy), 6u);
    EXPECT_EQ(uint32_t(PixelFormat::Nv12), 7u);
    EXPECT_EQ(uint32_t(PixelFormat::Nv16), 8u);
    EXPECT_EQ(uint32_t(PixelFormat::PlanarRgb), 9u);
    EXPECT_EQ(uint32_t(PixelFormat::PlanarRgba), 10u);
    EXPECT_EQ(uint32_t(PixelFormat::Nv24), 11u);
    PixelFormat f;
    EXPECT_TRUE(pixel_format_from_code(11, &f));
    EXPECT_FALSE(pixel_format_from_code(12, &f));
}

TEST(WireCodes, MemoryAndAccessCodes)
{
    EXPECT_EQ(uint32_t(CpuAccess::None), 0u);
    EXPECT_EQ(uint32_t(CpuAccess::Read), 1u);
    EXPECT_EQ(uint32_t(CpuAccess::Write), 2u);
    EXPECT_EQ(uint32_t(CpuAccess::ReadWrite), 3u);
    EXPECT_TRUE(access_covers(CpuAccess::ReadWrite, CpuAccess::Write));
    EXPECT_FALSE(access_covers(CpuAccess::Read, CpuAccess::Write));
    EXPECT_FALSE(access_covers(CpuAccess::None, CpuAccess::Read));
}

TEST(PixelFormatInfoTest, LayoutsAndFourcc)
{
    auto nv12 = pixel_format_info(PixelFormat::Nv12);
    ASSERT_TRUE(nv12);
    EXPECT_EQ(nv12->layout, PixelLayout::SemiPlanar);
    EXPECT_EQ(nv12->chroma_h_sub, 2u);
    EXPECT_EQ(nv12->chroma_v_sub, 2u);
    EXPECT_EQ(to_drm_fourcc(PixelFormat::Nv12), 0x3231564eu); // 'NV12'
    EXPECT_EQ(to_drm_fourcc(PixelFormat::Yuyv), 0x56595559u); // 'YUYV'
    EXPECT_EQ(to_drm_fourcc(PixelFormat::Rgb), 0x34324742u);  // 'BG24' = DRM_FORMAT_BGR888
    EXPECT_EQ(to_drm_fourcc(PixelFormat::PlanarRgb), 0u);
    EXPECT_EQ(from_drm_fourcc(0x3231564eu), PixelFormat::Nv12);
    EXPECT_EQ(from_drm_fourcc(0x12345678u), PixelFormat::None);
    EXPECT_EQ(pixel_format_info(PixelFormat::PlanarRgba)->layout, PixelLayout::Planar);
    EXPECT_EQ(pixel_format_info(PixelFormat::PlanarRgba)->channels, 4u);
    EXPECT_EQ(pixel_format_info(PixelFormat::Yuyv)->bytes_per_pixel_plane0, 2u);
    EXPECT_FALSE(pixel_format_info(PixelFormat::None));
    EXPECT_FALSE(pixel_format_info(static_cast<PixelFormat>(99)));
    for (uint32_t c = 1; c <= kPixelFormatMaxCode; ++c) {
        auto i = pixel_format_info(static_cast<PixelFormat>(c));
        ASSERT_TRUE(i);
        EXPECT_EQ(uint32_t(i->format), c);
        if (i->drm_fourcc) {
            EXPECT_EQ(from_drm_fourcc(i->drm_fourcc), i->format);
        }
    }
}

TEST(ColorimetryTest, PackLayout)
{
    Colorimetry c{ColorSpace::Bt709, ColorTransfer::Srgb, ColorEncoding::Bt601,
                  ColorRange::Limited};
    EXPECT_EQ(c.pack(), 1u | 2u << 8 | 1u << 16 | 2u << 24);
    Colorimetry u;
    ASSERT_TRUE(Colorimetry::unpack(c.pack(), &u));
    EXPECT_EQ(u, c);
    EXPECT_EQ(Colorimetry{}.pack(), 0u);
    EXPECT_TRUE(Colorimetry{}.is_unspecified());
}

TEST(ColorimetryTest, EveryAxisValueRoundTrips)
{
    for (int s = 0; s <= 4; ++s)
        for (int t = 0; t <= 5; ++t)
            for (int e = 0; e <= 3; ++e)
                for (int r = 0; r <= 2; ++r) {
                    Colorimetry c{ColorSpace(s), ColorTransfer(t), ColorEncoding(e), ColorRange(r)};
                    Colorimetry back;
                    ASSERT_TRUE(Colorimetry::unpack(c.pack(), &back));
                    EXPECT_EQ(back, c);
                }
}

TEST(ColorimetryTest, UnpackRejectsUnknownCodes_Negative)
{
    Colorimetry c{ColorSpace::Bt2020, {}, {}, {}};
    const Colorimetry before = c;
    EXPECT_FALSE(Colorimetry::unpack(5u, &c));       // space 5
    EXPECT_FALSE(Colorimetry::unpack(6u << 8, &c));  // transfer 6
    EXPECT_FALSE(Colorimetry::unpack(4u << 16, &c)); // encoding 4
    EXPECT_FALSE(Colorimetry::unpack(3u << 24, &c)); // range 3
    EXPECT_EQ(c, before);
    EXPECT_EQ(Colorimetry{}.to_string(), "unspecified");
}

TEST(ErrorTest, ResultBehavesLikeExpected)
{
    Result<int> ok = 5;
    EXPECT_TRUE(ok.has_value());
    EXPECT_TRUE(static_cast<bool>(ok));
    EXPECT_EQ(*ok, 5);
    EXPECT_EQ(ok.value(), 5);
    Result<int> bad = make_error(ErrorCode::InvalidShape, "nope");
    EXPECT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), ErrorCode::InvalidShape);
    EXPECT_EQ(bad.error().message(), "nope");
    EXPECT_EQ(bad.value_or(7), 7);
    Result<void> v;
    EXPECT_TRUE(v);
    Result<void> vbad = make_error(ErrorCode::Io, "x");
    EXPECT_FALSE(vbad.has_value());
    EXPECT_EQ(vbad.error().code(), ErrorCode::Io);
    Result<std::string> s = std::string("abc");
    EXPECT_EQ(s->size(), 3u);
    EXPECT_EQ(error_code_name(ErrorCode::UnknownBufferType), "UnknownBufferType");
}

TEST(ErrorTest, CodesAreStableAndNamed)
{
    // edgetensor_last_error_code() hands these values to C callers: they never move.
    EXPECT_EQ(int(ErrorCode::InvalidArgument), 1);
    EXPECT_EQ(int(ErrorCode::Io), 9);
    EXPECT_EQ(int(ErrorCode::Disconnected), 13);
    EXPECT_EQ(int(ErrorCode::Device), 14);
    std::set<std::string_view> names;
    for (int c = 1; c <= int(ErrorCode::Device); ++c) {
        const auto name = error_code_name(ErrorCode(c));
        EXPECT_FALSE(name.empty()) << c;
        EXPECT_NE(name, "Unknown") << c;
        EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
    }
    EXPECT_EQ(error_code_name(ErrorCode::Device), "Device");
}

TEST(UniqueFdTest, OwnsAndReleases)
{
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    {
        UniqueFd a(p[0]);
        UniqueFd b(std::move(a));
        EXPECT_FALSE(a.is_valid());
        EXPECT_EQ(b.get(), p[0]);
    }
    EXPECT_EQ(fcntl(p[0], F_GETFD), -1); // closed by b
    UniqueFd c(p[1]);
    const int raw = c.release();
    EXPECT_FALSE(c);
    EXPECT_NE(fcntl(raw, F_GETFD), -1);
    UniqueFd d = UniqueFd::dup(raw);
    ASSERT_TRUE(d);
    EXPECT_NE(d.get(), raw);
    EXPECT_TRUE(fcntl(d.get(), F_GETFD) & FD_CLOEXEC);
    close(raw);
    EXPECT_FALSE(UniqueFd::dup(-1));
    EXPECT_FALSE(UniqueFd(-5).is_valid());
}
