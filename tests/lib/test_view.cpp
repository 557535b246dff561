// SPDX-License-Identifier: MIT
//
// Views and batches: zero-copy windows that never clamp.

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

using namespace edgetensor;

namespace
{

// Fills every byte of the allocation with a position code so windows can be checked.
template <typename T> void fill_pattern(const Tensor<T>& t)
{
    auto m = t.map_write();
    ASSERT_TRUE(m);
    auto d = m->data();
    auto* bytes = reinterpret_cast<uint8_t*>(d.data());
    for (size_t i = 0; i < t.capacity_bytes(); ++i)
        bytes[i] = uint8_t(i * 7 + 3);
}

uint8_t pattern_at(size_t byte)
{
    return uint8_t(byte * 7 + 3);
}

} // namespace

TEST(View, OutOfBoundsRegionsFailNeverClamp_Negative)
{
    auto t = Tensor<uint8_t>::image(100, 50, PixelFormat::Rgb, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    for (Region r : {Region{90, 0, 11, 1}, Region{0, 40, 10, 11}, Region{100, 0, 1, 1},
                     Region{SIZE_MAX, 0, 2, 2}, Region{1, 1, SIZE_MAX, 1}}) {
        auto v = t->view(r);
        ASSERT_FALSE(v);
        EXPECT_EQ(v.error().code(), ErrorCode::RegionOutOfBounds);
    }
    auto empty = t->view({0, 0, 0, 5});
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code(), ErrorCode::InvalidArgument);
    auto full = t->view({0, 0, 100, 50});
    ASSERT_TRUE(full);
    EXPECT_EQ(full->shape(), t->shape());
    auto one_d = Tensor<uint8_t>::create({10}, TensorMemory::Mem);
    auto v1 = one_d->view({0, 0, 1, 1});
    ASSERT_FALSE(v1);
    EXPECT_EQ(v1.error().code(), ErrorCode::InvalidShape);
}

TEST(View, PackedViewSeesParentBytes)
{
    auto t = Tensor<uint8_t>::image(40, 30, PixelFormat::Rgb, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    fill_pattern(*t);
    const size_t rs = *t->row_stride();
    auto v = t->view({5, 7, 10, 4});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->shape(), (Shape{4, 10, 3}));
    EXPECT_EQ(v->width(), 10u);
    EXPECT_EQ(*v->row_stride(), rs);
    auto m = v->map_read();
    ASSERT_TRUE(m);
    const size_t base = 7 * rs + 5 * 3;
    EXPECT_EQ(m->data()[0], pattern_at(base));
    EXPECT_EQ(m->data()[rs * 3 + 9 * 3 + 2], pattern_at(base + rs * 3 + 29));
    EXPECT_EQ(m->data().size(), 3 * rs + 30); // from the first to the last addressed byte
}

TEST(View, ViewsCompose)
{
    auto t = Tensor<uint8_t>::image(64, 64, PixelFormat::Grey, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    fill_pattern(*t);
    auto a = t->view({10, 20, 30, 30});
    ASSERT_TRUE(a);
    auto b = a->view({5, 6, 10, 10});
    ASSERT_TRUE(b);
    auto direct = t->view({15, 26, 10, 10});
    ASSERT_TRUE(direct);
    EXPECT_EQ(b->dyn().offset(), direct->dyn().offset());
    auto m = b->map_read();
    EXPECT_EQ(m->data()[0], pattern_at(26 * 64 + 15));
    // The composed view is bounded by its parent view, not the whole image.
    auto past = a->view({25, 0, 10, 1});
    ASSERT_FALSE(past);
    EXPECT_EQ(past.error().code(), ErrorCode::RegionOutOfBounds);
}

TEST(View, PlanarViewSeesEveryChannel)
{
    auto t = Tensor<uint8_t>::image(20, 10, PixelFormat::PlanarRgb, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    fill_pattern(*t);
    auto v = t->view({4, 2, 8, 5});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->shape(), (Shape{3, 5, 8}));
    const auto& s = v->strides();
    auto m = v->map_read();
    ASSERT_TRUE(m);
    // Parent strides, so this holds for the tight host pitch and the aligned DMA pitch alike.
    const size_t rs = size_t(s[1]);
    for (size_t c = 0; c < 3; ++c)
        EXPECT_EQ(m->data()[c * size_t(s[0]) + 1 * rs + 3],
                  pattern_at(c * 10 * rs + (2 + 1) * rs + 4 + 3));
}

TEST(View, Nv12ViewSeesLumaAndChroma)
{
    auto t = Tensor<uint8_t>::image(64, 32, PixelFormat::Nv12, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    fill_pattern(*t);
    const size_t rs = *t->row_stride();
    EXPECT_EQ(t->shape(), (Shape{48, 64}));
    auto v = t->view({8, 4, 16, 8});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->shape(), (Shape{12, 16}));
    auto m = v->map_read();
    ASSERT_TRUE(m);
    ASSERT_EQ(m->plane_count(), 2u);
    EXPECT_EQ(m->plane(0).data[0], pattern_at(4 * rs + 8));
    EXPECT_EQ(m->plane(0).data[rs + 1], pattern_at(5 * rs + 9));
    const size_t chroma_base = 32 * rs; // chroma plane follows the 32 luma rows
    EXPECT_EQ(m->plane(1).data[0], pattern_at(chroma_base + 2 * rs + 8));
    EXPECT_EQ(m->plane(1).row_stride, rs);
    EXPECT_EQ(m->plane(1).data[rs + 3], pattern_at(chroma_base + 3 * rs + 11));
    auto odd = t->view({3, 4, 8, 8});
    ASSERT_FALSE(odd);
    EXPECT_EQ(odd.error().code(), ErrorCode::InvalidArgument);
}

TEST(View, NonImageViewUsesLeadingDims)
{
    auto t = Tensor<float>::create({6, 5, 2}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    {
        auto m = t->map_write();
        for (size_t i = 0; i < 60; ++i)
            m->data()[i] = float(i);
    }
    auto v = t->view({1, 2, 3, 2});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->shape(), (Shape{2, 3, 2}));
    auto m = v->map_read();
    EXPECT_EQ(m->data()[0], float(2 * 10 + 1 * 2));
    EXPECT_FALSE(v->dyn().is_contiguous());
}

TEST(Batch, SelectsAlongLeadingN)
{
    auto t = Tensor<uint16_t>::create({3, 4, 5}, TensorMemory::Shm);
    ASSERT_TRUE(t);
    {
        auto m = t->map_write();
        for (size_t i = 0; i < 60; ++i)
            m->data()[i] = uint16_t(i);
    }
    auto b = t->batch(2);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->shape(), (Shape{4, 5}));
    EXPECT_EQ(b->size(), 40u);
    EXPECT_EQ(b->map_read()->data()[0], 40);
    auto bad = t->batch(3);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), ErrorCode::BatchIndexOutOfBounds);
    auto one = Tensor<uint8_t>::create({1, 8, 8}, TensorMemory::Mem);
    auto b0 = one->batch(0);
    ASSERT_TRUE(b0);
    EXPECT_EQ(b0->dyn().offset(), 0u);
    EXPECT_EQ(b0->size(), one->size());
    auto rank1 = Tensor<uint8_t>::create({8}, TensorMemory::Mem);
    EXPECT_EQ(rank1->batch(0).error().code(), ErrorCode::InvalidShape);
}

TEST(Reshape, KeepsElementCount)
{
    auto t = Tensor<uint8_t>::create({4, 6}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->reshape({2, 12}));
    EXPECT_EQ(t->shape(), (Shape{2, 12}));
    auto bad = t->reshape({5, 5});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), ErrorCode::InvalidShape);
    // A padded (strided) image cannot be reshaped.
    auto img = Tensor<uint8_t>::image(10, 4, PixelFormat::Nv12, CpuAccess::Read);
    ASSERT_TRUE(img);
    auto r = img->reshape({60});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::NotSupported);
}

TEST(SetLogicalShape, AnyShapeThatFitsCapacity)
{
    auto t = Tensor<float>::create({100}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->set_logical_shape({5, 5}));
    EXPECT_EQ(t->len(), 25u);
    EXPECT_EQ(t->capacity_bytes(), 400u);
    ASSERT_TRUE(t->set_logical_shape({10, 10}));
    auto big = t->set_logical_shape({101});
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().code(), ErrorCode::InsufficientCapacity);
    auto view = t->view({0, 2, 10, 8});
    ASSERT_TRUE(view);
    EXPECT_EQ(view->capacity_bytes(), 400u - 2 * 10 * 4);
}

TEST(FromPlanes, ComposesTwoBuffers)
{
    auto luma = Tensor<uint8_t>::create({8, 16}, TensorMemory::Shm);
    auto chroma = Tensor<uint8_t>::create({4, 16}, TensorMemory::Shm);
    ASSERT_TRUE(luma && chroma);
    {
        auto ml = luma->map_write();
        std::fill(ml->data().begin(), ml->data().end(), 0x11);
        auto mc = chroma->map_write();
        std::fill(mc->data().begin(), mc->data().end(), 0x22);
    }
    auto nv12 = Tensor<uint8_t>::from_planes(*luma, *chroma, PixelFormat::Nv12);
    ASSERT_TRUE(nv12) << nv12.error().message();
    EXPECT_EQ(nv12->width(), 16u);
    EXPECT_EQ(nv12->height(), 8u);
    EXPECT_EQ(nv12->dyn().plane_fd(0), luma->fd());
    EXPECT_EQ(nv12->dyn().plane_fd(1), chroma->fd());
    EXPECT_NE(nv12->buffer_identity().id(), luma->buffer_identity().id());
    auto m = nv12->map_read();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->plane(0).data[0], 0x11);
    EXPECT_EQ(m->plane(1).data[0], 0x22);
    auto v = nv12->view({4, 2, 8, 4});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->map_read()->plane(1).data[0], 0x22);

    auto wrong = Tensor<uint8_t>::create({8, 16}, TensorMemory::Mem);
    auto bad = Tensor<uint8_t>::from_planes(*luma, *wrong, PixelFormat::Nv12);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), ErrorCode::InvalidShape);
    auto not_semi = Tensor<uint8_t>::from_planes(*luma, *chroma, PixelFormat::Rgb);
    ASSERT_FALSE(not_semi);
    EXPECT_EQ(not_semi.error().code(), ErrorCode::InvalidArgument);
}

TEST(AsImage, ReinterpretsFlatBytesWithTheGivenLayout)
{
    // A pool-style flat allocation laid out as NV12 16x4, pitch 64, chroma at 320.
    auto flat = Tensor<uint8_t>::create({512}, TensorMemory::Mem);
    ASSERT_TRUE(flat);
    fill_pattern(*flat);
    const PlaneLayout planes[2] = {{0, 64}, {320, 64}};
    auto img = flat->dyn().as_image(16, 4, PixelFormat::Nv12, planes, CpuAccess::Write);
    ASSERT_TRUE(img) << img.error().message();
    EXPECT_EQ(img->buffer_identity(), flat->buffer_identity()); // same bytes, same buffer
    EXPECT_EQ(img->cpu_access(), CpuAccess::Write);
    EXPECT_EQ(*img->row_stride(), 64u);
    EXPECT_EQ(img->plane_layout(1)->offset, 320u);
    auto m = img->map_write();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->plane(0).data[64 + 3], pattern_at(67));
    EXPECT_EQ(m->plane(1).data[64 + 1], pattern_at(320 + 65));
}

TEST(AsImage, LayoutsOutsideTheBufferAreRefused_Negative)
{
    auto flat = Tensor<uint8_t>::create({512}, TensorMemory::Mem);
    ASSERT_TRUE(flat);
    const PlaneLayout past_end[2] = {{0, 64}, {480, 64}};
    auto a = flat->dyn().as_image(16, 4, PixelFormat::Nv12, past_end);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code(), ErrorCode::InsufficientCapacity);
    // Strides and offsets whose products overflow size_t are refused, not wrapped around.
    const PlaneLayout huge[1] = {{SIZE_MAX - 8, SIZE_MAX / 2}};
    auto b = flat->dyn().as_image(16, 4, PixelFormat::Grey, huge);
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().code(), ErrorCode::InsufficientCapacity);
    const PlaneLayout three[3] = {{0, 16}, {64, 16}, {128, 16}};
    auto c = flat->dyn().as_image(16, 4, PixelFormat::Nv12, three);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), ErrorCode::InvalidArgument);
    auto d = flat->dyn().as_image(16, 4, PixelFormat::Rgb, {});
    ASSERT_TRUE(d) << "default layout: tight rows from the window start";
    EXPECT_EQ(*d->row_stride(), 48u);
}
