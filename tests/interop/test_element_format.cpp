// SPDX-License-Identifier: MIT
//
// Element formats for 3-D camera data: the DeviceArray reference's layout examples,
// reproduced exactly (shapes, element strides, byte strides, flat memory order).

#include <edgetensor/element_format.hpp>
#include <edgetensor/tensor.hpp>

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

namespace
{

using namespace edgetensor;
using Strides = std::vector<ptrdiff_t>;

TEST(ElementFormat, CatalogueMatchesTheReference)
{
    struct Row {
        ElementFormat f;
        const char* name;
        DType type;
        uint32_t channels;
        uint32_t bytes;
    };
    const Row rows[] = {
        {ElementFormat::PointXYZ, "PointXYZ", DType::F32, 3, 12},
        {ElementFormat::PointXYZW, "PointXYZW", DType::F32, 4, 16},
        {ElementFormat::PointZ, "PointZ", DType::F32, 1, 4},
        {ElementFormat::SNR, "SNR", DType::F32, 1, 4},
        {ElementFormat::NormalXYZ, "NormalXYZ", DType::F32, 3, 12},
        {ElementFormat::ColorRGBA, "ColorRGBA", DType::U8, 4, 4},
        {ElementFormat::ColorBGRA, "ColorBGRA", DType::U8, 4, 4},
        {ElementFormat::ColorRGBA_SRGB, "ColorRGBA_SRGB", DType::U8, 4, 4},
        {ElementFormat::ColorBGRA_SRGB, "ColorBGRA_SRGB", DType::U8, 4, 4},
        {ElementFormat::ColorRGBAf, "ColorRGBAf", DType::F32, 4, 16},
        {ElementFormat::ColorRGB, "ColorRGB", DType::U8, 3, 3},
        {ElementFormat::ColorBGR, "ColorBGR", DType::U8, 3, 3},
        {ElementFormat::ColorRGB_SRGB, "ColorRGB_SRGB", DType::U8, 3, 3},
        {ElementFormat::ColorBGR_SRGB, "ColorBGR_SRGB", DType::U8, 3, 3},
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(r.name);
        const auto info = element_format_info(r.f);
        ASSERT_TRUE(info);
        EXPECT_EQ(info->name, r.name);
        EXPECT_EQ(element_format_name(r.f), r.name);
        EXPECT_EQ(info->element_type, r.type);
        EXPECT_EQ(info->channels, r.channels);
        EXPECT_EQ(info->bytes_per_element, r.bytes);
        ElementFormat back{};
        EXPECT_TRUE(element_format_from_code(uint32_t(r.f), &back));
        EXPECT_EQ(back, r.f);
    }
    EXPECT_FALSE(element_format_info(ElementFormat::None));
    EXPECT_FALSE(element_format_info(ElementFormat(15)));
    EXPECT_FALSE(element_format_from_code(0, nullptr));
    EXPECT_FALSE(element_format_from_code(15, nullptr));
}

TEST(ElementFormat, ShapeRules)
{
    EXPECT_EQ(organized_shape(ElementFormat::PointXYZ, 2, 3), (Shape{2, 3, 3}));
    EXPECT_EQ(organized_shape(ElementFormat::PointZ, 2, 3), (Shape{2, 3}));
    EXPECT_EQ(unorganized_shape(ElementFormat::PointXYZ, 5), (Shape{5, 3}));
    EXPECT_EQ(unorganized_shape(ElementFormat::SNR, 5), (Shape{5}));
    EXPECT_TRUE(organized_shape(ElementFormat::None, 2, 3).empty());
    EXPECT_TRUE(organized_shape(ElementFormat::PointZ, 0, 3).empty());
    EXPECT_TRUE(unorganized_shape(ElementFormat::PointXYZ, 0).empty());
}

TEST(ElementFormat, Organized2x3PointXYZ)
{
    auto pc = ElementTensor::create_organized(ElementFormat::PointXYZ, 2, 3, TensorMemory::Mem);
    ASSERT_TRUE(pc) << pc.error().message();
    EXPECT_TRUE(pc->is_organized());
    EXPECT_EQ(pc->shape(), (Shape{2, 3, 3}));
    EXPECT_EQ(pc->strides(), (Strides{9, 3, 1}));
    EXPECT_EQ(pc->strides_in_bytes(), (Strides{36, 12, 4}));
    EXPECT_EQ(pc->height(), 2u);
    EXPECT_EQ(pc->width(), 3u);
    EXPECT_EQ(pc->size(), 6u) << "size() counts points, not channels";
    EXPECT_EQ(pc->size_in_bytes(), 72u);

    // Flat memory: X00 Y00 Z00 X01 Y01 Z01 X02 Y02 Z02 X10 ...
    {
        auto m = pc->map_as<float>(CpuAccess::Write);
        ASSERT_TRUE(m) << m.error().message();
        auto f = m->data();
        for (size_t r = 0; r < 2; ++r)
            for (size_t c = 0; c < 3; ++c)
                for (size_t ch = 0; ch < 3; ++ch)
                    f[r * 9 + c * 3 + ch] = float(100 * r + 10 * c + ch);
    }
    auto m = pc->map_as<const float>(CpuAccess::Read);
    ASSERT_TRUE(m);
    const float expected[] = {0, 1, 2, 10, 11, 12, 20, 21, 22, 100, 101, 102};
    for (size_t i = 0; i < 12; ++i)
        EXPECT_EQ(m->cdata()[i], expected[i]) << "float offset " << i;
}

TEST(ElementFormat, Organized2x3PointZ)
{
    auto z = ElementTensor::create_organized(ElementFormat::PointZ, 2, 3);
    ASSERT_TRUE(z) << z.error().message();
    EXPECT_EQ(z->shape(), (Shape{2, 3}));
    EXPECT_EQ(z->strides(), (Strides{3, 1}));
    EXPECT_EQ(z->strides_in_bytes(), (Strides{12, 4}));
    EXPECT_EQ(z->size(), 6u);
}

TEST(ElementFormat, UnorganizedPointXYZAndSNR)
{
    auto xyz = ElementTensor::create_unorganized(ElementFormat::PointXYZ, 4);
    ASSERT_TRUE(xyz) << xyz.error().message();
    EXPECT_FALSE(xyz->is_organized());
    EXPECT_EQ(xyz->shape(), (Shape{4, 3}));
    EXPECT_EQ(xyz->strides(), (Strides{3, 1}));
    EXPECT_EQ(xyz->strides_in_bytes(), (Strides{12, 4}));
    EXPECT_EQ(xyz->size(), 4u);
    EXPECT_EQ(xyz->height(), 1u);
    EXPECT_EQ(xyz->width(), 4u);

    auto snr = ElementTensor::create_unorganized(ElementFormat::SNR, 4);
    ASSERT_TRUE(snr);
    EXPECT_EQ(snr->shape(), (Shape{4}));
    EXPECT_EQ(snr->strides(), (Strides{1}));
    EXPECT_EQ(snr->strides_in_bytes(), (Strides{4}));
    EXPECT_EQ(snr->size(), 4u);
}

TEST(ElementFormat, ColourAndAlignedFormats)
{
    auto rgba = ElementTensor::create_organized(ElementFormat::ColorRGBA_SRGB, 2, 5);
    ASSERT_TRUE(rgba);
    EXPECT_EQ(rgba->dyn().dtype(), DType::U8);
    EXPECT_EQ(rgba->strides(), (Strides{20, 4, 1}));
    EXPECT_EQ(rgba->strides_in_bytes(), (Strides{20, 4, 1}));
    EXPECT_EQ(rgba->dyn().colorimetry().transfer, ColorTransfer::Srgb);
    EXPECT_EQ(rgba->dyn().colorimetry().space, ColorSpace::Srgb);
    EXPECT_EQ(rgba->dyn().colorimetry().range, ColorRange::Unspecified) << "never auto-filled";

    auto rgb = ElementTensor::create_organized(ElementFormat::ColorRGB, 2, 5);
    ASSERT_TRUE(rgb);
    EXPECT_EQ(rgb->strides(), (Strides{15, 3, 1}));
    EXPECT_TRUE(rgb->dyn().colorimetry().is_unspecified());

    auto xyzw = ElementTensor::create_organized(ElementFormat::PointXYZW, 2, 3);
    ASSERT_TRUE(xyzw);
    EXPECT_EQ(xyzw->strides_in_bytes(), (Strides{48, 16, 4}));

    auto lin = ElementTensor::create_unorganized(ElementFormat::ColorRGBAf, 3);
    ASSERT_TRUE(lin);
    EXPECT_EQ(lin->dyn().colorimetry().transfer, ColorTransfer::Linear);
}

TEST(ElementFormat, DescribeAndDlpackExport)
{
    auto pc = ElementTensor::create_organized(ElementFormat::PointXYZ, 2, 3, TensorMemory::Shm);
    ASSERT_TRUE(pc) << pc.error().message();
    auto d = pc->describe();
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->ndim, 3u);
    EXPECT_EQ(d->dtype, EDGETENSOR_DTYPE_F32);
    EXPECT_EQ(d->shape[0], 2u);
    EXPECT_EQ(d->shape[1], 3u);
    EXPECT_EQ(d->shape[2], 3u);
    EXPECT_EQ(d->strides[0], 36);
    EXPECT_EQ(d->strides[1], 12);
    EXPECT_EQ(d->strides[2], 4);
    EXPECT_EQ(d->format, 0u);

    auto r = pc->to_dlpack(CpuAccess::Read);
    ASSERT_TRUE(r) << r.error().message();
    const DLTensor& dl = (*r)->dl_tensor;
    EXPECT_EQ(dl.dtype.code, kDLFloat);
    EXPECT_EQ(dl.dtype.bits, 32);
    ASSERT_EQ(dl.ndim, 3);
    EXPECT_EQ(dl.shape[0], 2);
    EXPECT_EQ(dl.shape[1], 3);
    EXPECT_EQ(dl.shape[2], 3);
    EXPECT_EQ(dl.strides[0], 9);
    EXPECT_EQ(dl.strides[1], 3);
    EXPECT_EQ(dl.strides[2], 1);
    (*r)->deleter(*r);

    // The descriptor imports back into the same element format.
    auto fd = pc->dyn().clone_fd();
    ASSERT_TRUE(fd);
    auto back = TensorDyn::from_desc(*d, std::move(*fd));
    ASSERT_TRUE(back) << back.error().message();
    auto typed = ElementTensor::from_dyn(ElementFormat::PointXYZ, std::move(*back));
    ASSERT_TRUE(typed) << typed.error().message();
    EXPECT_TRUE(typed->is_organized());
    EXPECT_EQ(typed->strides(), (Strides{9, 3, 1}));
}

TEST(ElementFormat, ViewOfAnOrganizedCloud)
{
    auto pc = ElementTensor::create_organized(ElementFormat::NormalXYZ, 4, 6, TensorMemory::Mem);
    ASSERT_TRUE(pc);
    auto v = pc->view(Region{1, 2, 3, 2});
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_EQ(v->shape(), (Shape{2, 3, 3}));
    EXPECT_EQ(v->strides(), (Strides{18, 3, 1}));
    EXPECT_EQ(v->size(), 6u);
    EXPECT_EQ(v->dyn().offset(), (2 * 18 + 1 * 3) * sizeof(float));

    auto list = ElementTensor::create_unorganized(ElementFormat::PointXYZ, 8);
    ASSERT_TRUE(list);
    auto bad = list->view(Region{0, 0, 1, 1});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), ErrorCode::NotSupported);
}

TEST(ElementFormat, FromDynAdoptsMatchingLayouts)
{
    auto t = TensorDyn::create(DType::F32, {7, 3}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto xyz = ElementTensor::from_dyn(ElementFormat::PointXYZ, *t);
    ASSERT_TRUE(xyz) << xyz.error().message();
    EXPECT_FALSE(xyz->is_organized());
    EXPECT_EQ(xyz->size(), 7u);
    EXPECT_EQ(xyz->dyn().buffer_identity(), t->buffer_identity()) << "adoption shares storage";

    auto z = ElementTensor::from_dyn(ElementFormat::PointZ, *t);
    ASSERT_TRUE(z) << "a [H, W] f32 tensor is an organized depth map";
    EXPECT_TRUE(z->is_organized());
    EXPECT_EQ(z->size(), 21u);
}

TEST(ElementFormat, FromDynRefusesMismatches_Negative)
{
    auto u8 = TensorDyn::create(DType::U8, {4, 3}, TensorMemory::Mem);
    auto f3 = TensorDyn::create(DType::F32, {2, 2, 4}, TensorMemory::Mem);
    auto f4d = TensorDyn::create(DType::F32, {1, 2, 2, 3}, TensorMemory::Mem);
    ASSERT_TRUE(u8 && f3 && f4d);
    auto a = ElementTensor::from_dyn(ElementFormat::PointXYZ, *u8);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code(), ErrorCode::DTypeMismatch);
    auto b = ElementTensor::from_dyn(ElementFormat::PointXYZ, *f3);
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().code(), ErrorCode::InvalidShape);
    EXPECT_NE(b.error().message().find("3 channels"), std::string::npos);
    auto c = ElementTensor::from_dyn(ElementFormat::PointXYZ, *f4d);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), ErrorCode::InvalidShape);
    auto d = ElementTensor::from_dyn(ElementFormat::None, *f3);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), ErrorCode::InvalidArgument);
    // Points 16 bytes apart are not the packed PointXYZ layout the format promises.
    float data[8] = {};
    int64_t shape[2] = {2, 3};
    int64_t strides[2] = {4, 1};
    DLManagedTensor m{};
    m.dl_tensor = {data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, strides, 0};
    auto padded = TensorDyn::from_dlpack(&m);
    ASSERT_TRUE(padded) << padded.error().message();
    auto e = ElementTensor::from_dyn(ElementFormat::PointXYZ, *padded);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().code(), ErrorCode::InvalidShape);
    EXPECT_NE(e.error().message().find("12 bytes apart"), std::string::npos);
}

TEST(ElementFormat, ZeroSizesAreRefused_Negative)
{
    auto a = ElementTensor::create_organized(ElementFormat::PointXYZ, 0, 3);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code(), ErrorCode::InvalidShape);
    auto b = ElementTensor::create_unorganized(ElementFormat::SNR, 0);
    ASSERT_FALSE(b);
    EXPECT_EQ(b.error().code(), ErrorCode::InvalidShape);
    auto c = ElementTensor::create_unorganized(ElementFormat(99), 3);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code(), ErrorCode::InvalidArgument);
}

} // namespace
