// SPDX-License-Identifier: MIT
//
// Real DMA-BUF images carry a 64-byte aligned row pitch, at allocation and after
// configure_image, in every layout; widths 321 and 322 are the classic failures (1284 and
// 1288 bytes of RGBA are not multiples of 64).

#include "dma_test_util.hpp"

#include <edgetensor/tensor.hpp>

#include <string>
#include <vector>

using namespace edgetensor;

namespace
{

struct Case {
    PixelFormat format;
    size_t width;
    size_t stride; // what the DMA stride rule must give
};

// Every byte of every row of every plane is writable and reads back: the pitch and the
// plane offsets lie inside the real buffer.
void fill_and_check(const TensorDyn& t)
{
    const size_t chroma_rows = (t.height() + 1) / 2; // plane 1 exists for Nv12 only here
    {
        auto m = t.map_write();
        ASSERT_TRUE(m) << m.error().message();
        for (size_t p = 0; p < m->plane_count(); ++p) {
            const auto& plane = m->plane(p);
            const size_t rows = p == 0 ? t.height() : chroma_rows;
            ASSERT_GE(plane.size_bytes, (rows - 1) * plane.row_stride + 1);
            for (size_t y = 0; y < rows; ++y)
                for (size_t x = 0;
                     x < plane.row_stride && y * plane.row_stride + x < plane.size_bytes; ++x)
                    plane.data[y * plane.row_stride + x] = uint8_t(p * 100 + y * 7 + x);
        }
    }
    auto m = t.map_read();
    ASSERT_TRUE(m) << m.error().message();
    size_t bad = 0;
    for (size_t p = 0; p < m->plane_count(); ++p) {
        const auto& plane = m->plane(p);
        const size_t rows = p == 0 ? t.height() : chroma_rows;
        for (size_t y = 0; y < rows; ++y)
            for (size_t x = 0; x < plane.row_stride && y * plane.row_stride + x < plane.size_bytes;
                 ++x)
                bad += plane.data[y * plane.row_stride + x] != uint8_t(p * 100 + y * 7 + x);
    }
    EXPECT_EQ(bad, 0u);
}

} // namespace

TEST(DmaImageStride, WidthsThatBreakTightPitchesGetAlignedRows)
{
    ET_REQUIRE_DMA_OR_SKIP();
    const Case cases[] = {
        {PixelFormat::Rgba, 321, 1344}, {PixelFormat::Rgba, 322, 1344},
        {PixelFormat::Rgb, 321, 1024},  {PixelFormat::Rgb, 322, 1024},
        {PixelFormat::Grey, 321, 384},  {PixelFormat::Grey, 322, 384},
        {PixelFormat::Nv12, 321, 384},  {PixelFormat::Nv12, 322, 384},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(pixel_format_name(c.format)) + " width " +
                     std::to_string(c.width));
        auto t = TensorDyn::image(c.width, 10, c.format, DType::U8, CpuAccess::ReadWrite,
                                  TensorMemory::Dma);
        ASSERT_TRUE(t) << t.error().message();
        EXPECT_EQ(t->memory(), TensorMemory::Dma);
        ASSERT_TRUE(t->row_stride());
        EXPECT_EQ(*t->row_stride(), c.stride);
        EXPECT_EQ(*t->row_stride() % 64, 0u);
        auto l0 = t->plane_layout(0);
        ASSERT_TRUE(l0) << l0.error().message();
        EXPECT_EQ(l0->stride, c.stride);
        if (c.format == PixelFormat::Nv12) {
            ASSERT_EQ(t->plane_count(), 2u);
            auto l1 = t->plane_layout(1);
            ASSERT_TRUE(l1) << l1.error().message();
            EXPECT_EQ(l1->stride % 64, 0u);
            EXPECT_GE(l1->stride, c.width + (c.width & 1));
            EXPECT_GE(l1->offset, c.stride * 10) << "chroma follows the luma rows";
            EXPECT_EQ(t->plane_fd(1), t->plane_fd(0)) << "one buffer for both planes";
            EXPECT_GE(t->capacity_bytes(), l1->offset + l1->stride * 5);
        }
        fill_and_check(*t);
    }
}

TEST(DmaImageStride, AutoSelectedImagesAreDmaAndAligned)
{
    ET_REQUIRE_DMA_OR_SKIP();
    // Images walk Dma -> Mem: with a provider present they are DMA-BUFs, so aligned.
    for (size_t w : {size_t(321), size_t(322)}) {
        auto t = TensorDyn::image(w, 4, PixelFormat::Rgba, DType::U8, CpuAccess::Write);
        ASSERT_TRUE(t) << t.error().message();
        EXPECT_EQ(t->memory(), TensorMemory::Dma);
        EXPECT_EQ(*t->row_stride(), 1344u);
    }
}

TEST(DmaImageStride, ConfigureImageAppliesTheRuleToAPooledDmaTensor)
{
    ET_REQUIRE_DMA_OR_SKIP();
    const Case cases[] = {
        {PixelFormat::Rgba, 321, 1344}, {PixelFormat::Rgba, 322, 1344},
        {PixelFormat::Rgb, 321, 1024},  {PixelFormat::Rgb, 322, 1024},
        {PixelFormat::Nv12, 321, 384},  {PixelFormat::Nv12, 322, 384},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(pixel_format_name(c.format)) + " width " +
                     std::to_string(c.width));
        // A pooled buffer whose current pitch (64) is too narrow for the new geometry, so the
        // stride rule alone decides the new one.
        auto t = TensorDyn::image(16, 1200, PixelFormat::Grey, DType::U8, CpuAccess::ReadWrite,
                                  TensorMemory::Dma);
        ASSERT_TRUE(t) << t.error().message();
        ASSERT_EQ(*t->row_stride(), 64u);
        const int fd = t->fd();
        auto r = t->configure_image(c.width, 20, c.format);
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(t->fd(), fd) << "configure_image reuses the allocation";
        EXPECT_EQ(t->memory(), TensorMemory::Dma);
        EXPECT_EQ(*t->row_stride(), c.stride);
        if (c.format == PixelFormat::Nv12) {
            auto l1 = t->plane_layout(1);
            ASSERT_TRUE(l1) << l1.error().message();
            EXPECT_EQ(l1->stride % 64, 0u);
        }
        fill_and_check(*t);
    }
}

TEST(DmaImageStride, ConfigureImageKeepsAWideAlignedPitch)
{
    ET_REQUIRE_DMA_OR_SKIP();
    auto t = TensorDyn::image(640, 48, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite,
                              TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    for (const Case& c : {Case{PixelFormat::Rgba, 321, 0}, Case{PixelFormat::Rgb, 322, 0},
                          Case{PixelFormat::Nv12, 321, 0}}) {
        SCOPED_TRACE(std::string(pixel_format_name(c.format)) + " width " +
                     std::to_string(c.width));
        auto r = t->configure_image(c.width, 20, c.format);
        ASSERT_TRUE(r) << r.error().message();
        // Whatever pitch is kept or chosen, it is 64-aligned, wide enough and inside the buffer.
        const size_t stride = *t->row_stride();
        EXPECT_EQ(stride % 64, 0u);
        EXPECT_GE(stride, image_row_stride(c.format, c.width, StridePolicy::Host));
        fill_and_check(*t);
    }
}

TEST(DmaImageStride, ConfigureBeyondTheAllocationIsRefused_Negative)
{
    ET_REQUIRE_DMA_OR_SKIP();
    auto t = TensorDyn::image(64, 4, PixelFormat::Grey, DType::U8, CpuAccess::ReadWrite,
                              TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    // Far more rows than the (page-rounded) buffer holds.
    auto r = t->configure_image(1920, 1080, PixelFormat::Rgba);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InsufficientCapacity) << r.error().message();
}
