// SPDX-License-Identifier: MIT
//
// The TensorDyn entry point: image tensors (and views of them) in, tensors out.

#include "reference.hpp"

#include <edgetensor/tensor_dyn.hpp>
#include <gtest/gtest.h>

namespace edgetensor::test
{
namespace
{

/// Copies a reference frame into a host image tensor of the matching PixelFormat.
TensorDyn image_from(const Frame& fr, PixelFormat pf)
{
    auto t = TensorDyn::image(fr.width, fr.height, pf, DType::U8, CpuAccess::ReadWrite,
                              TensorMemory::Mem, "convert-test-src");
    EXPECT_TRUE(t) << t.error().message();
    if (!t)
        return {};
    auto m = t->map_raw(CpuAccess::Write);
    EXPECT_TRUE(m) << m.error().message();
    if (!m)
        return {};
    const bool v420 = fr.format == ConvertFormat::Nv12;
    auto copy_rows = [](uint8_t* dst, size_t dst_stride, const std::vector<uint8_t>& src,
                        size_t src_stride, size_t rows, size_t bytes) {
        for (size_t r = 0; r < rows; ++r)
            std::memcpy(dst + r * dst_stride, src.data() + r * src_stride, bytes);
    };
    if (pf == PixelFormat::PlanarRgb) {
        const auto& st = t->strides();
        for (size_t p = 0; p < 3; ++p)
            copy_rows(m->bytes() + p * size_t(st[0]), size_t(st[1]), fr.planes[p], fr.strides[p],
                      fr.height, fr.width);
    } else {
        const size_t b0 = fr.strides[0]; // make_frame() pads nothing here
        copy_rows(m->plane(0).data, m->plane(0).row_stride, fr.planes[0], fr.strides[0], fr.height,
                  b0);
        if (m->plane_count() > 1)
            copy_rows(m->plane(1).data, m->plane(1).row_stride, fr.planes[1], fr.strides[1],
                      v420 ? (fr.height + 1) / 2 : fr.height, fr.strides[1]);
    }
    return *t;
}

/// Reads a converter output tensor into a tight buffer (for compare()).
std::vector<uint8_t> tight_bytes(const TensorDyn& t)
{
    auto m = t.map_read();
    EXPECT_TRUE(m);
    std::vector<uint8_t> out;
    if (!m)
        return out;
    const auto& sh = t.shape();
    const auto& st = t.strides();
    const size_t es = dtype_size(t.dtype());
    // Rank 3 (any leading 1s ignored): rows of the last dimension.
    const size_t n = sh.size();
    for (size_t a = 0; a < sh[n - 3]; ++a)
        for (size_t b = 0; b < sh[n - 2]; ++b) {
            const uint8_t* row = m->cdata().data() + a * size_t(st[n - 3]) + b * size_t(st[n - 2]);
            out.insert(out.end(), row, row + sh[n - 1] * es);
        }
    return out;
}

TEST(ConvertTensor, Nv12ImageToFloatChwTensor)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 320, 240, 0, 5);
    const TensorDyn src = image_from(fr, PixelFormat::Nv12);
    ASSERT_TRUE(src.is_valid());
    ConvertConfig cfg = config_for(fr, ColorEncoding::Bt601, ColorRange::Limited);
    cfg.dst_width = 160;
    cfg.dst_height = 160;
    cfg.letterbox = true;
    cfg.dtype = DType::F32;
    cfg.layout = TensorLayout::Chw;
    cfg.mean = {127.5f, 127.5f, 127.5f, 0.f};
    cfg.std = {127.5f, 127.5f, 127.5f, 1.f};
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    auto dst = conv->allocate_output(TensorMemory::Mem);
    ASSERT_TRUE(dst) << dst.error().message();
    EXPECT_EQ(dst->shape(), (Shape{3, 160, 160}));
    EXPECT_EQ(dst->dtype(), DType::F32);
    auto r = conv->run(src, *dst);
    ASSERT_TRUE(r) << r.error().message();
    const Errors e = compare(tight_bytes(*dst), cfg, reference(fr, cfg));
    EXPECT_LE(e.max, 1e-2) << e.describe();
}

TEST(ConvertTensor, ViewEqualsCrop)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 320, 240, 0, 6);
    const TensorDyn src = image_from(fr, PixelFormat::Nv12);
    ASSERT_TRUE(src.is_valid());
    const Region roi{64, 32, 200, 120};
    auto view = src.view(roi);
    ASSERT_TRUE(view) << view.error().message();

    ConvertConfig on_view = config_for(fr);
    on_view.src_width = roi.width;
    on_view.src_height = roi.height;
    on_view.dst_width = 96;
    on_view.dst_height = 64;
    ConvertConfig on_full = config_for(fr);
    on_full.crop = roi;
    on_full.dst_width = 96;
    on_full.dst_height = 64;

    auto cv = Converter::create(on_view);
    auto cf = Converter::create(on_full);
    ASSERT_TRUE(cv && cf);
    auto a = cv->allocate_output(TensorMemory::Mem);
    auto b = cf->allocate_output(TensorMemory::Mem);
    ASSERT_TRUE(a && b);
    ASSERT_TRUE(cv->run(*view, *a));
    ASSERT_TRUE(cf->run(src, *b));
    EXPECT_EQ(tight_bytes(*a), tight_bytes(*b));
    const Errors e = compare(tight_bytes(*b), on_full, reference(fr, on_full));
    EXPECT_LE(e.max, 2.0) << e.describe();
}

TEST(ConvertTensor, IntoRgbImageTensorAndBatchedShape)
{
    const Frame fr = make_frame(ConvertFormat::Yuy2, 130, 66, 0, 7);
    const TensorDyn src = image_from(fr, PixelFormat::Yuyv);
    ASSERT_TRUE(src.is_valid());
    ConvertConfig cfg = config_for(fr);
    cfg.dst_width = 99; // 297-byte rows: the image may pad them
    cfg.dst_height = 41;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv);
    auto img = TensorDyn::image(99, 41, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem);
    ASSERT_TRUE(img) << img.error().message();
    auto r = conv->run(src, *img);
    ASSERT_TRUE(r) << r.error().message();
    const Errors e = compare(tight_bytes(*img), cfg, reference(fr, cfg));
    EXPECT_LE(e.max, 2.0) << e.describe();

    // [1, C, H, W] is accepted for CHW.
    cfg.layout = TensorLayout::Chw;
    auto chw = Converter::create(cfg);
    ASSERT_TRUE(chw);
    auto batched = TensorDyn::create(DType::U8, {1, 3, 41, 99}, TensorMemory::Mem);
    ASSERT_TRUE(batched);
    r = chw->run(src, *batched);
    ASSERT_TRUE(r) << r.error().message();
    const Errors e2 = compare(tight_bytes(*batched), cfg, reference(fr, cfg));
    EXPECT_LE(e2.max, 2.0) << e2.describe();
}

TEST(ConvertTensor, PlanarRgbAndGreySources)
{
    for (const auto& [cf, pf] : {std::pair{ConvertFormat::PlanarRgb, PixelFormat::PlanarRgb},
                                 std::pair{ConvertFormat::Gray8, PixelFormat::Grey},
                                 std::pair{ConvertFormat::Bgra, PixelFormat::Bgra}}) {
        const Frame fr = make_frame(cf, 37, 23, 0, 8);
        const TensorDyn src = image_from(fr, pf);
        ASSERT_TRUE(src.is_valid());
        ConvertConfig cfg = config_for(fr);
        cfg.dst_format = OutputFormat::Bgr;
        cfg.dst_width = 20;
        cfg.dst_height = 30;
        auto conv = Converter::create(cfg);
        ASSERT_TRUE(conv);
        auto dst = conv->allocate_output(TensorMemory::Mem);
        ASSERT_TRUE(dst);
        auto r = conv->run(src, *dst);
        ASSERT_TRUE(r) << convert_format_name(cf) << ": " << r.error().message();
        const Errors e = compare(tight_bytes(*dst), cfg, reference(fr, cfg));
        EXPECT_LE(e.max, 2.0) << convert_format_name(cf) << ": " << e.describe();
    }
}

TEST(ConvertTensor, NegativeMismatchedSourceAndDestination)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 64, 48);
    const TensorDyn src = image_from(fr, PixelFormat::Nv12);
    ASSERT_TRUE(src.is_valid());
    auto conv = Converter::create(config_for(fr));
    ASSERT_TRUE(conv);
    auto dst = conv->allocate_output(TensorMemory::Mem);
    ASSERT_TRUE(dst);

    // Wrong source size.
    const TensorDyn small = image_from(make_frame(ConvertFormat::Nv12, 32, 48), PixelFormat::Nv12);
    auto r = conv->run(small, *dst);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(r.error().message().find("does not match"), std::string::npos);

    // Wrong source format.
    const TensorDyn rgb = image_from(make_frame(ConvertFormat::Rgb, 64, 48), PixelFormat::Rgb);
    r = conv->run(rgb, *dst);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);

    // Not an image.
    auto plain = TensorDyn::create(DType::U8, {48, 64}, TensorMemory::Mem);
    ASSERT_TRUE(plain);
    r = conv->run(*plain, *dst);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("not an image"), std::string::npos);

    // Destination shape and dtype.
    auto wrong_shape = TensorDyn::create(DType::U8, {48, 64, 4}, TensorMemory::Mem);
    ASSERT_TRUE(wrong_shape);
    r = conv->run(src, *wrong_shape);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidShape);
    auto wrong_dtype = TensorDyn::create(DType::F32, {48, 64, 3}, TensorMemory::Mem);
    ASSERT_TRUE(wrong_dtype);
    r = conv->run(src, *wrong_dtype);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::DTypeMismatch);
    r = conv->run(src, TensorDyn());
    ASSERT_FALSE(r);
}

} // namespace
} // namespace edgetensor::test
