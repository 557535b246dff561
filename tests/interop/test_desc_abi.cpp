// SPDX-License-Identifier: MIT
//
// Pins the EdgeTensorDesc layout as a C++ compiler sees it, and the wire codes it shares
// with the core's enums.

#include <edgetensor/colorimetry.hpp>
#include <edgetensor/pixel_format.hpp>
#include <edgetensor/tensor_desc.h>
#include <edgetensor/types.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

namespace
{

using namespace edgetensor;

static_assert(sizeof(EdgeTensorDesc) == 192);
static_assert(alignof(EdgeTensorDesc) == 8);
static_assert(std::is_standard_layout_v<EdgeTensorDesc>);
static_assert(std::is_trivially_copyable_v<EdgeTensorDesc>);

TEST(DescAbi, SizeAndAlignment)
{
    EXPECT_EQ(sizeof(EdgeTensorDesc), 192u);
    EXPECT_EQ(alignof(EdgeTensorDesc), 8u);
    EXPECT_EQ(EDGETENSOR_DESC_SIZE, 192);
    EXPECT_EQ(EDGETENSOR_DESC_MAX_NDIM, 8);
}

TEST(DescAbi, EveryFieldOffset)
{
    EXPECT_EQ(offsetof(EdgeTensorDesc, version), 0u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, kind), 4u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, handle), 8u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, ptr), 16u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, ndim), 24u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, dtype), 28u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, shape), 32u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, strides), 96u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, fourcc), 160u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, format), 164u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, colorimetry), 168u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, flags), 172u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, capacity), 176u);
    EXPECT_EQ(offsetof(EdgeTensorDesc, sync), 184u);
}

TEST(DescAbi, FieldTypes)
{
    EdgeTensorDesc d{};
    static_assert(std::is_same_v<decltype(d.version), uint32_t>);
    static_assert(std::is_same_v<decltype(d.kind), uint32_t>);
    static_assert(std::is_same_v<decltype(d.handle), int64_t>);
    static_assert(std::is_same_v<decltype(d.ptr), void*>);
    static_assert(std::is_same_v<decltype(d.ndim), uint32_t>);
    static_assert(std::is_same_v<decltype(d.dtype), uint32_t>);
    static_assert(std::is_same_v<decltype(d.shape), uint64_t[8]>);
    static_assert(std::is_same_v<decltype(d.strides), int64_t[8]>);
    static_assert(std::is_same_v<decltype(d.fourcc), uint32_t>);
    static_assert(std::is_same_v<decltype(d.format), uint32_t>);
    static_assert(std::is_same_v<decltype(d.colorimetry), uint32_t>);
    static_assert(std::is_same_v<decltype(d.flags), uint32_t>);
    static_assert(std::is_same_v<decltype(d.capacity), uint64_t>);
    static_assert(std::is_same_v<decltype(d.sync), uint64_t>);
    SUCCEED();
}

TEST(DescAbi, KindAndFlagConstants)
{
    EXPECT_EQ(EDGETENSOR_DESC_VERSION, 1u);
    EXPECT_EQ(EDGETENSOR_KIND_HOST, 0u);
    EXPECT_EQ(EDGETENSOR_KIND_DMABUF, 1u);
    EXPECT_EQ(EDGETENSOR_KIND_IOSURFACE, 2u);
    EXPECT_EQ(EDGETENSOR_KIND_PBO, 3u);
    EXPECT_EQ(EDGETENSOR_KIND_CUDA_DEVICE, 4u);
    EXPECT_EQ(EDGETENSOR_FLAG_SYNC_PRESENT, 1u);
}

TEST(DescAbi, DtypeCodesAreTheDTypeWireCodes)
{
    EXPECT_EQ(EDGETENSOR_DTYPE_U8, uint32_t(DType::U8));
    EXPECT_EQ(EDGETENSOR_DTYPE_I8, uint32_t(DType::I8));
    EXPECT_EQ(EDGETENSOR_DTYPE_U16, uint32_t(DType::U16));
    EXPECT_EQ(EDGETENSOR_DTYPE_I16, uint32_t(DType::I16));
    EXPECT_EQ(EDGETENSOR_DTYPE_U32, uint32_t(DType::U32));
    EXPECT_EQ(EDGETENSOR_DTYPE_I32, uint32_t(DType::I32));
    EXPECT_EQ(EDGETENSOR_DTYPE_U64, uint32_t(DType::U64));
    EXPECT_EQ(EDGETENSOR_DTYPE_I64, uint32_t(DType::I64));
    EXPECT_EQ(EDGETENSOR_DTYPE_F16, uint32_t(DType::F16));
    EXPECT_EQ(EDGETENSOR_DTYPE_F32, uint32_t(DType::F32));
    EXPECT_EQ(EDGETENSOR_DTYPE_F64, uint32_t(DType::F64));
}

TEST(DescAbi, FormatCodesAreThePixelFormatWireCodes)
{
    EXPECT_EQ(EDGETENSOR_FORMAT_NONE, uint32_t(PixelFormat::None));
    EXPECT_EQ(EDGETENSOR_FORMAT_RGB, uint32_t(PixelFormat::Rgb));
    EXPECT_EQ(EDGETENSOR_FORMAT_RGBA, uint32_t(PixelFormat::Rgba));
    EXPECT_EQ(EDGETENSOR_FORMAT_BGRA, uint32_t(PixelFormat::Bgra));
    EXPECT_EQ(EDGETENSOR_FORMAT_GREY, uint32_t(PixelFormat::Grey));
    EXPECT_EQ(EDGETENSOR_FORMAT_YUYV, uint32_t(PixelFormat::Yuyv));
    EXPECT_EQ(EDGETENSOR_FORMAT_VYUY, uint32_t(PixelFormat::Vyuy));
    EXPECT_EQ(EDGETENSOR_FORMAT_NV12, uint32_t(PixelFormat::Nv12));
    EXPECT_EQ(EDGETENSOR_FORMAT_NV16, uint32_t(PixelFormat::Nv16));
    EXPECT_EQ(EDGETENSOR_FORMAT_PLANAR_RGB, uint32_t(PixelFormat::PlanarRgb));
    EXPECT_EQ(EDGETENSOR_FORMAT_PLANAR_RGBA, uint32_t(PixelFormat::PlanarRgba));
    EXPECT_EQ(EDGETENSOR_FORMAT_NV24, uint32_t(PixelFormat::Nv24));
}

TEST(DescAbi, ColorimetryPackMatchesTheCore)
{
    const Colorimetry c{ColorSpace::Bt709, ColorTransfer::Pq, ColorEncoding::Bt2020,
                        ColorRange::Limited};
    EXPECT_EQ(EDGETENSOR_COLORIMETRY_PACK(1, 3, 3, 2), c.pack());
}

TEST(DescAbi, InitSetsVersionAndNoHandle)
{
    const EdgeTensorDesc d = edgetensor_desc_init();
    EXPECT_EQ(d.version, EDGETENSOR_DESC_VERSION);
    EXPECT_EQ(d.handle, -1);
    EXPECT_EQ(d.ptr, nullptr);
    EXPECT_EQ(d.ndim, 0u);
    EXPECT_EQ(d.flags, 0u);
    EXPECT_EQ(d.sync, 0u);
    EXPECT_EQ(d.capacity, 0u);
}

} // namespace
