// SPDX-License-Identifier: MIT
//
// The 64-byte row-stride rule: one pure function, used at allocation and at configure_image.

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

using namespace edgetensor;

namespace
{

struct StrideCase {
    PixelFormat format;
    size_t width;
    size_t host;
    size_t dma;
};

} // namespace

TEST(StrideRule, HostAndDmaPolicies)
{
    const StrideCase cases[] = {
        // packed: tight on the host, aligned for DMA (321*4 = 1284, 322*4 = 1288)
        {PixelFormat::Rgba, 1, 4, 64},
        {PixelFormat::Rgba, 321, 1284, 1344},
        {PixelFormat::Rgba, 322, 1288, 1344},
        {PixelFormat::Rgba, 640, 2560, 2560},
        {PixelFormat::Rgb, 1, 3, 64},
        {PixelFormat::Rgb, 321, 963, 1024},
        {PixelFormat::Rgb, 322, 966, 1024},
        {PixelFormat::Rgb, 640, 1920, 1920},
        {PixelFormat::Yuyv, 321, 642, 704},
        {PixelFormat::Grey, 322, 322, 384},
        // planar: one channel row
        {PixelFormat::PlanarRgb, 1, 1, 64},
        {PixelFormat::PlanarRgb, 321, 321, 384},
        {PixelFormat::PlanarRgb, 322, 322, 384},
        {PixelFormat::PlanarRgb, 640, 640, 640},
        // semi-planar: aligned everywhere (chroma offset arithmetic assumes it); odd widths
        // carry one extra chroma byte
        {PixelFormat::Nv12, 1, 64, 64},
        {PixelFormat::Nv12, 321, 384, 384},
        {PixelFormat::Nv12, 322, 384, 384},
        {PixelFormat::Nv12, 640, 640, 640},
        {PixelFormat::Nv16, 321, 384, 384},
        {PixelFormat::Nv24, 322, 704, 704}, // chroma row: 644 bytes
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(std::string(pixel_format_name(c.format)) + " width " +
                     std::to_string(c.width));
        EXPECT_EQ(image_row_stride(c.format, c.width, StridePolicy::Host), c.host);
        EXPECT_EQ(image_row_stride(c.format, c.width, StridePolicy::Dma), c.dma);
        EXPECT_EQ(c.dma % 64, 0u);
    }
}

TEST(StrideRule, ElementSizeScalesThePitch)
{
    EXPECT_EQ(image_row_stride(PixelFormat::PlanarRgb, 321, StridePolicy::Host, 4), 1284u);
    EXPECT_EQ(image_row_stride(PixelFormat::PlanarRgb, 321, StridePolicy::Dma, 4), 1344u);
    EXPECT_EQ(image_row_stride(PixelFormat::Rgb, 322, StridePolicy::Dma, 4), 3904u);
}

TEST(StrideRule, DegenerateInputsGiveZero_Negative)
{
    EXPECT_EQ(image_row_stride(PixelFormat::None, 100, StridePolicy::Dma), 0u);
    EXPECT_EQ(image_row_stride(PixelFormat::Rgb, 0, StridePolicy::Dma), 0u);
    EXPECT_EQ(image_row_stride(static_cast<PixelFormat>(77), 10, StridePolicy::Host), 0u);
}

TEST(StrideRule, HostImagesUseThePolicy)
{
    for (size_t w : {size_t(1), size_t(321), size_t(322), size_t(640)}) {
        for (PixelFormat f : {PixelFormat::Rgb, PixelFormat::PlanarRgba, PixelFormat::Nv12}) {
            auto t = Tensor<uint8_t>::image(w, 6, f, CpuAccess::ReadWrite, TensorMemory::Mem);
            ASSERT_TRUE(t) << t.error().message();
            EXPECT_EQ(*t->row_stride(), image_row_stride(f, w, StridePolicy::Host));
            EXPECT_GE(t->capacity_bytes(), *t->row_stride() * image_total_rows(f, 6));
        }
    }
}

TEST(ConfigureImage, LargerGeometryRecomputesOrFails)
{
    auto t = Tensor<uint8_t>::image(640, 480, PixelFormat::Nv12, CpuAccess::ReadWrite,
                                    TensorMemory::Mem);
    ASSERT_TRUE(t);
    const size_t cap = t->capacity_bytes();
    ASSERT_TRUE(t->configure_image(320, 240, PixelFormat::Rgb));
    EXPECT_EQ(*t->row_stride(), 960u); // host packed: tight
    EXPECT_EQ(t->shape(), (Shape{240, 320, 3}));
    EXPECT_EQ(t->capacity_bytes(), cap); // same allocation
    ASSERT_TRUE(t->configure_image(321, 100, PixelFormat::Nv12));
    EXPECT_EQ(*t->row_stride() % 64, 0u);
    auto too_big = t->configure_image(1920, 1080, PixelFormat::Rgba);
    ASSERT_FALSE(too_big);
    EXPECT_EQ(too_big.error().code(), ErrorCode::InsufficientCapacity);
    // The failed call left the tensor as it was.
    EXPECT_EQ(t->width(), 321u);
    EXPECT_EQ(t->format(), PixelFormat::Nv12);
}

TEST(ConfigureImage, SmallerSemiPlanarReusesAlignedPitch)
{
    auto t = Tensor<uint8_t>::image(640, 480, PixelFormat::Nv12, CpuAccess::ReadWrite,
                                    TensorMemory::Mem);
    ASSERT_TRUE(t);
    ASSERT_EQ(*t->row_stride(), 640u);
    ASSERT_TRUE(t->configure_image(321, 240, PixelFormat::Nv12));
    // 640 is aligned, wide enough and fits: the pitch is kept.
    EXPECT_EQ(*t->row_stride(), 640u);
    EXPECT_EQ(t->dyn().plane_layout(1)->offset, 640u * 240);
    // Too tall for the kept pitch: recomputed to the rule's pitch instead.
    auto small =
        Tensor<uint8_t>::image(64, 64, PixelFormat::Nv12, CpuAccess::ReadWrite, TensorMemory::Mem);
    ASSERT_TRUE(small);
    ASSERT_TRUE(small->configure_image(64, 64, PixelFormat::Nv12));
    EXPECT_EQ(*small->row_stride(), 64u);
}

TEST(ConfigureImage, ViewsCannotBeReconfigured_Negative)
{
    auto t = Tensor<uint8_t>::image(64, 64, PixelFormat::Rgb, CpuAccess::ReadWrite);
    auto v = t->view({0, 0, 32, 32});
    ASSERT_TRUE(v);
    auto r = v->configure_image(16, 16, PixelFormat::Rgb);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::NotSupported);
}

TEST(ConfigureImage, ShmImageAlsoFollowsTheRule)
{
    auto t =
        Tensor<uint8_t>::image(322, 10, PixelFormat::Rgba, CpuAccess::ReadWrite, TensorMemory::Shm);
    ASSERT_TRUE(t);
    EXPECT_EQ(*t->row_stride(), 1288u);
    ASSERT_TRUE(t->configure_image(321, 10, PixelFormat::Rgba));
    EXPECT_EQ(*t->row_stride(), 1284u);
}
