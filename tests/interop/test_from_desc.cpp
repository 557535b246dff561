// SPDX-License-Identifier: MIT
//
// TensorDyn::describe() / from_desc(): round trips keep shape, strides, format and
// colorimetry; every malformed descriptor is refused with a clear error and no fd leaks.

#include "fd_count.hpp"
#include "require.hpp"

#include <edgetensor/tensor.hpp>
#include <edgetensor/tensor_desc.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <limits>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace
{

using namespace edgetensor;
using edgetensor::test::describe_fds;
using edgetensor::test::open_fds;

void fill_pattern(const TensorDyn& t, uint8_t seed)
{
    auto m = t.map_write();
    ASSERT_TRUE(m) << m.error().message();
    auto bytes = m->data();
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = uint8_t(seed + i * 7);
}

TensorDyn shm_tensor(DType dtype, const Shape& shape)
{
    auto t = TensorDyn::create(dtype, shape, TensorMemory::Shm, "desc-test");
    EXPECT_TRUE(t) << t.error().message();
    return t ? *t : TensorDyn();
}

UniqueFd clone(const TensorDyn& t)
{
    auto fd = t.clone_fd();
    EXPECT_TRUE(fd) << fd.error().message();
    return fd ? std::move(*fd) : UniqueFd();
}

/// A valid descriptor of a fresh [2, 3, 4] f32 shm tensor, plus the tensor.
struct Valid {
    TensorDyn tensor;
    EdgeTensorDesc desc{};
};

Valid valid_f32()
{
    Valid v;
    v.tensor = shm_tensor(DType::F32, {2, 3, 4});
    auto d = v.tensor.describe();
    EXPECT_TRUE(d) << d.error().message();
    if (d)
        v.desc = *d;
    return v;
}

/// Imports `desc` with `fd`, expects `code` and a message containing `needle`, and checks
/// that the fd was closed (no fd left behind).
void expect_rejected(const EdgeTensorDesc& desc, UniqueFd fd, ErrorCode code,
                     const std::string& needle)
{
    const auto before = open_fds();
    const int raw = fd.get();
    auto r = TensorDyn::from_desc(desc, std::move(fd));
    ASSERT_FALSE(r) << "descriptor was accepted";
    EXPECT_EQ(r.error().code(), code)
        << error_code_name(r.error().code()) << ": " << r.error().message();
    EXPECT_NE(r.error().message().find(needle), std::string::npos)
        << "message '" << r.error().message() << "' does not mention '" << needle << "'";
    auto after = open_fds();
    if (raw >= 0) {
        EXPECT_EQ(after.count(raw), 0u) << "the passed fd " << raw << " was not closed";
        after.insert(raw);
    }
    EXPECT_EQ(before, after) << "fds now: " << describe_fds(after);
}

TEST(FromDesc, DescribeShmTensorFillsEveryField)
{
    auto v = valid_f32();
    const EdgeTensorDesc& d = v.desc;
    EXPECT_EQ(d.version, EDGETENSOR_DESC_VERSION);
    EXPECT_EQ(d.kind, EDGETENSOR_KIND_HOST);
    EXPECT_EQ(d.handle, v.tensor.fd());
    EXPECT_NE(d.ptr, nullptr) << "shm stays mapped for its life, so it is host-addressable";
    EXPECT_EQ(d.ndim, 3u);
    EXPECT_EQ(d.dtype, EDGETENSOR_DTYPE_F32);
    EXPECT_EQ(d.shape[0], 2u);
    EXPECT_EQ(d.shape[1], 3u);
    EXPECT_EQ(d.shape[2], 4u);
    EXPECT_EQ(d.strides[0], 48);
    EXPECT_EQ(d.strides[1], 16);
    EXPECT_EQ(d.strides[2], 4);
    for (int i = 3; i < 8; ++i) {
        EXPECT_EQ(d.shape[i], 0u);
        EXPECT_EQ(d.strides[i], 0);
    }
    EXPECT_EQ(d.fourcc, 0u);
    EXPECT_EQ(d.format, 0u);
    EXPECT_EQ(d.colorimetry, 0u);
    EXPECT_EQ(d.flags, 0u);
    EXPECT_EQ(d.capacity, v.tensor.capacity_bytes());
    EXPECT_GE(d.capacity, 96u);
    EXPECT_EQ(d.sync, 0u);
}

TEST(FromDesc, DescribeOfEmptyTensorIsAnError_Negative)
{
    auto r = TensorDyn().describe();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
}

TEST(FromDesc, RoundTripKeepsShapeStridesAndSharesBytes)
{
    auto v = valid_f32();
    fill_pattern(v.tensor, 3);
    auto back = TensorDyn::from_desc(v.desc, clone(v.tensor));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->memory(), TensorMemory::Shm);
    EXPECT_EQ(back->dtype(), DType::F32);
    EXPECT_EQ(back->shape(), v.tensor.shape());
    EXPECT_EQ(back->strides(), v.tensor.strides());
    EXPECT_FALSE(back->is_image());
    EXPECT_EQ(back->capacity_bytes(), v.desc.capacity);

    auto a = v.tensor.map_read();
    auto b = back->map_read();
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->len(), b->len());
    EXPECT_EQ(std::memcmp(a->cdata().data(), b->cdata().data(), a->len()), 0);
    a->reset();
    b->reset();

    // The same pages, not a copy: a write through the import shows in the original.
    {
        auto w = back->map_write();
        ASSERT_TRUE(w);
        w->data()[5] = 0xAB;
    }
    auto r = v.tensor.map_read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->cdata()[5], 0xAB);
}

TEST(FromDesc, RoundTripKeepsImageFormatAndColorimetry)
{
    const Colorimetry c{ColorSpace::Bt709, ColorTransfer::Bt709, ColorEncoding::Bt709,
                        ColorRange::Limited};
    for (PixelFormat f :
         {PixelFormat::Rgb, PixelFormat::Rgba, PixelFormat::Grey, PixelFormat::Yuyv,
          PixelFormat::Nv12, PixelFormat::Nv16, PixelFormat::Nv24, PixelFormat::PlanarRgb}) {
        SCOPED_TRACE(std::string(pixel_format_name(f)));
        auto img = TensorDyn::image(322, 7, f, DType::U8, CpuAccess::ReadWrite, TensorMemory::Shm,
                                    "desc-image");
        ASSERT_TRUE(img) << img.error().message();
        img->set_colorimetry(c);
        fill_pattern(*img, 11);
        auto d = img->describe();
        ASSERT_TRUE(d) << d.error().message();
        EXPECT_EQ(d->format, uint32_t(f));
        EXPECT_EQ(d->fourcc, to_drm_fourcc(f));
        EXPECT_EQ(d->colorimetry, c.pack());

        auto back = TensorDyn::from_desc(*d, clone(*img));
        ASSERT_TRUE(back) << back.error().message();
        EXPECT_EQ(back->format(), f);
        EXPECT_EQ(back->width(), 322u);
        EXPECT_EQ(back->height(), 7u);
        EXPECT_EQ(back->shape(), img->shape());
        EXPECT_EQ(back->strides(), img->strides());
        EXPECT_EQ(back->row_stride(), img->row_stride());
        EXPECT_EQ(back->plane_count(), img->plane_count());
        EXPECT_EQ(back->colorimetry(), c);
        if (img->plane_count() == 2) {
            EXPECT_EQ(back->plane_layout(1)->offset, img->plane_layout(1)->offset);
            EXPECT_EQ(back->plane_layout(1)->stride, img->plane_layout(1)->stride);
        }
        auto a = img->map_read();
        auto b = back->map_read();
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->len(), b->len());
        EXPECT_EQ(std::memcmp(a->cdata().data(), b->cdata().data(), a->len()), 0);
    }
}

TEST(FromDesc, FourccAloneIdentifiesTheFormat)
{
    auto img = TensorDyn::image(16, 4, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Shm);
    ASSERT_TRUE(img) << img.error().message();
    auto d = img->describe();
    ASSERT_TRUE(d);
    d->format = 0; // a DRM-only producer
    auto back = TensorDyn::from_desc(*d, clone(*img));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->format(), PixelFormat::Nv12);
}

TEST(FromDesc, CapacityBoundsTheImport)
{
    auto t = shm_tensor(DType::U8, {4096});
    auto d = t.describe();
    ASSERT_TRUE(d);
    d->shape[0] = 100;
    d->capacity = 1000;
    auto back = TensorDyn::from_desc(*d, clone(t));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->capacity_bytes(), 1000u);
    EXPECT_EQ(back->shape(), Shape{100});
    // The producer lent 1000 bytes, so growing beyond them is refused.
    EXPECT_FALSE(back->set_logical_shape({1001}));
    EXPECT_TRUE(back->set_logical_shape({1000}));
}

TEST(FromDesc, PaddedRowsRoundTrip)
{
    auto t = shm_tensor(DType::U16, {8, 64});
    auto d = t.describe();
    ASSERT_TRUE(d);
    // Reinterpret as 8 rows of 50 u16 with a 128-byte pitch (the hardware-pitch case).
    d->shape[1] = 50;
    auto back = TensorDyn::from_desc(*d, clone(t));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->shape(), (Shape{8, 50}));
    EXPECT_EQ(back->strides(), (std::vector<ptrdiff_t>{128, 2}));
    EXPECT_FALSE(back->is_contiguous());
}

TEST(FromDesc, UnitDimensionStrideIsIgnored)
{
    auto t = shm_tensor(DType::F32, {4, 16});
    auto d = t.describe();
    ASSERT_TRUE(d);
    // [1, 4, 16]: the leading unit dimension never moves the address, whatever it says.
    d->ndim = 3;
    d->shape[0] = 1;
    d->shape[1] = 4;
    d->shape[2] = 16;
    d->strides[0] = -7;
    d->strides[1] = 64;
    d->strides[2] = 4;
    auto back = TensorDyn::from_desc(*d, clone(t));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->shape(), (Shape{1, 4, 16}));
    EXPECT_GE(back->strides()[0], 0);
    EXPECT_EQ(back->strides()[1], 64);
}

TEST(FromDesc, MoreThanEightDimensionsCannotBeDescribed_Negative)
{
    auto t = TensorDyn::create(DType::U8, {1, 1, 1, 1, 1, 1, 1, 1, 2}, TensorMemory::Mem);
    ASSERT_TRUE(t) << t.error().message();
    auto d = t->describe();
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), ErrorCode::NotSupported);
    EXPECT_NE(d.error().message().find("1 to 8"), std::string::npos);
}

TEST(FromDesc, MemTensorDescribesAHostPointer)
{
    auto t = TensorDyn::create(DType::U8, {4, 16}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto d = t->describe();
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->kind, EDGETENSOR_KIND_HOST);
    EXPECT_EQ(d->handle, -1);
    auto m = t->map_read();
    ASSERT_TRUE(m);
    EXPECT_EQ(d->ptr, m->cdata().data());

    auto v = t->view(Region{2, 1, 8, 2});
    ASSERT_TRUE(v) << v.error().message();
    auto dv = v->describe();
    ASSERT_TRUE(dv) << dv.error().message();
    EXPECT_EQ(dv->ptr, m->cdata().data() + 16 + 2);
    EXPECT_EQ(dv->shape[0], 2u);
    EXPECT_EQ(dv->shape[1], 8u);
    EXPECT_EQ(dv->strides[0], 16);
}

TEST(FromDesc, PointerOnlyHostDescriptorIsRefused_Negative)
{
    auto t = TensorDyn::create(DType::U8, {64}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto d = t->describe();
    ASSERT_TRUE(d);
    expect_rejected(*d, UniqueFd(), ErrorCode::NotSupported, "pointer");
}

TEST(FromDesc, ViewOfFdBackedTensorCannotBeDescribed_Negative)
{
    auto t = shm_tensor(DType::U8, {8, 8});
    auto v = t.view(Region{1, 1, 4, 4});
    ASSERT_TRUE(v) << v.error().message();
    auto d = v->describe();
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), ErrorCode::NotSupported);
    EXPECT_NE(d.error().message().find("bytes into its buffer"), std::string::npos);
}

TEST(FromDesc, SeparateChromaPlaneCannotBeDescribed_Negative)
{
    auto luma = TensorDyn::create(DType::U8, {4, 8}, TensorMemory::Shm);
    auto chroma = TensorDyn::create(DType::U8, {2, 8}, TensorMemory::Shm);
    ASSERT_TRUE(luma && chroma);
    auto nv12 = TensorDyn::from_planes(*luma, *chroma, PixelFormat::Nv12);
    ASSERT_TRUE(nv12) << nv12.error().message();
    auto d = nv12->describe();
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), ErrorCode::NotSupported);
    EXPECT_NE(d.error().message().find("separate buffer"), std::string::npos);
}

TEST(FromDesc, DmaRoundTrip)
{
    ET_REQUIRE_DMA_OR_SKIP();
    auto t = TensorDyn::image(321, 5, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite,
                              TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    fill_pattern(*t, 5);
    auto d = t->describe();
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->kind, EDGETENSOR_KIND_DMABUF);
    EXPECT_EQ(d->handle, t->fd());
    EXPECT_EQ(d->ptr, nullptr);
    EXPECT_EQ(d->strides[0] % 64, 0);
    auto back = TensorDyn::from_desc(*d, clone(*t));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->memory(), TensorMemory::Dma);
    EXPECT_EQ(back->strides(), t->strides());
    auto a = t->map_read();
    auto b = back->map_read();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(std::memcmp(a->cdata().data(), b->cdata().data(), a->len()), 0);

    // A DMA-BUF fd under a HOST descriptor is a mismatch.
    d->kind = EDGETENSOR_KIND_HOST;
    expect_rejected(*d, clone(*t), ErrorCode::InvalidDescriptor, "is a DMA-BUF");
}

// --- malformed descriptors ---------------------------------------------------------------

TEST(FromDescNegative, WrongVersion)
{
    auto v = valid_f32();
    for (uint32_t ver : {0u, 2u, 0xffffffffu}) {
        v.desc.version = ver;
        expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "version");
    }
}

TEST(FromDescNegative, UnknownKind)
{
    auto v = valid_f32();
    v.desc.kind = 5;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "kind 5");
}

TEST(FromDescNegative, ForeignKindsAreNotSupported)
{
    auto v = valid_f32();
    for (uint32_t k :
         {EDGETENSOR_KIND_IOSURFACE, EDGETENSOR_KIND_PBO, EDGETENSOR_KIND_CUDA_DEVICE}) {
        v.desc.kind = k;
        expect_rejected(v.desc, clone(v.tensor), ErrorCode::NotSupported, "cannot be imported");
    }
}

TEST(FromDescNegative, UnknownFlagBits)
{
    auto v = valid_f32();
    v.desc.flags = 0x4;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "unknown bits");
}

TEST(FromDescNegative, SyncPresentOnHost)
{
    auto v = valid_f32();
    v.desc.flags = EDGETENSOR_FLAG_SYNC_PRESENT;
    v.desc.sync = 7;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "SYNC_PRESENT");
}

TEST(FromDescNegative, SyncPresentOnDmabufIsNotSupported)
{
    auto v = valid_f32();
    v.desc.kind = EDGETENSOR_KIND_DMABUF;
    v.desc.flags = EDGETENSOR_FLAG_SYNC_PRESENT;
    v.desc.sync = 7;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::NotSupported, "fence");
}

TEST(FromDescNegative, SyncWithoutFlag)
{
    auto v = valid_f32();
    v.desc.sync = 3;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "SYNC_PRESENT is clear");
}

TEST(FromDescNegative, NdimOutOfRange)
{
    auto v = valid_f32();
    for (uint32_t n : {0u, 9u, 0x80000000u}) {
        v.desc.ndim = n;
        expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "ndim");
    }
}

TEST(FromDescNegative, UnknownDtype)
{
    auto v = valid_f32();
    v.desc.dtype = 11;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "dtype code 11");
}

TEST(FromDescNegative, UnknownFormat)
{
    auto v = valid_f32();
    v.desc.format = 12;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "format code 12");
}

TEST(FromDescNegative, FourccContradictsFormat)
{
    auto img = TensorDyn::image(8, 4, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Shm);
    ASSERT_TRUE(img);
    auto d = img->describe();
    ASSERT_TRUE(d);
    d->fourcc = to_drm_fourcc(PixelFormat::Nv12);
    expect_rejected(*d, clone(*img), ErrorCode::InvalidDescriptor, "contradicts");
}

TEST(FromDescNegative, UnknownFourccWithoutFormat)
{
    auto v = valid_f32();
    v.desc.fourcc = 0x20202020;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::NotSupported, "fourcc");
}

TEST(FromDescNegative, UnknownColorimetryAxis)
{
    auto v = valid_f32();
    v.desc.colorimetry = 0x00000009; // space 9 does not exist
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "colorimetry");
}

TEST(FromDescNegative, ZeroDimension)
{
    auto v = valid_f32();
    v.desc.shape[1] = 0;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "is 0");
}

TEST(FromDescNegative, ShapeOverflow)
{
    auto v = valid_f32();
    v.desc.shape[0] = uint64_t(1) << 62;
    v.desc.shape[1] = uint64_t(1) << 62;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "overflow");
}

TEST(FromDescNegative, HugeStrideOverflows)
{
    auto v = valid_f32();
    v.desc.shape[0] = 4;
    v.desc.strides[0] = std::numeric_limits<int64_t>::max() - 3;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "fit in size_t");
}

TEST(FromDescNegative, NegativeStride)
{
    auto v = valid_f32();
    v.desc.strides[0] = -48;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "negative");
}

TEST(FromDescNegative, MisalignedStride)
{
    auto v = valid_f32();
    v.desc.strides[0] = 50;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor,
                    "not a multiple of the element size");
}

TEST(FromDescNegative, BroadcastStride)
{
    auto v = valid_f32();
    v.desc.strides[0] = 0;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "broadcast");
}

TEST(FromDescNegative, OverlappingStrides)
{
    auto v = valid_f32();
    v.desc.strides[1] = 8; // rows of 4 floats (16 bytes) 8 bytes apart
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "overlap");
}

TEST(FromDescNegative, ExtentBeyondCapacity)
{
    auto v = valid_f32();
    v.desc.capacity = 95;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "capacity is 95");
}

TEST(FromDescNegative, CapacityBeyondTheRealBuffer)
{
    auto v = valid_f32();
    v.desc.capacity = v.tensor.capacity_bytes() + 4096;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "buffer holds");
}

TEST(FromDescNegative, StridesAddressBeyondTheRealBuffer)
{
    auto v = valid_f32();
    v.desc.capacity = 0; // "ask the handle"
    v.desc.strides[0] = 1 << 20;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "buffer holds");
}

TEST(FromDescNegative, HandleMinusOneButFdPassed)
{
    auto v = valid_f32();
    v.desc.handle = -1;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "handle is -1");
}

TEST(FromDescNegative, HandleBelowMinusOne)
{
    auto v = valid_f32();
    v.desc.handle = -2;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "handle -2");
}

TEST(FromDescNegative, HandleButNoFd)
{
    auto v = valid_f32();
    expect_rejected(v.desc, UniqueFd(), ErrorCode::InvalidArgument, "no fd was passed");
}

TEST(FromDescNegative, NoHandleAndNoFd)
{
    auto v = valid_f32();
    v.desc.handle = -1;
    v.desc.ptr = nullptr;
    expect_rejected(v.desc, UniqueFd(), ErrorCode::InvalidDescriptor, "needs a buffer fd");
}

TEST(FromDescNegative, DmabufKindWithTmpfsFd)
{
    auto v = valid_f32();
    v.desc.kind = EDGETENSOR_KIND_DMABUF;
    expect_rejected(v.desc, clone(v.tensor), ErrorCode::InvalidDescriptor, "tmpfs");
}

TEST(FromDescNegative, PipeFdIsUnknownBufferType)
{
    auto v = valid_f32();
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    UniqueFd keep(p[1]);
    const auto before = open_fds();
    auto r = TensorDyn::from_desc(v.desc, UniqueFd(p[0]));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::UnknownBufferType);
    EXPECT_EQ(r.error().fs_magic(), 0x50495045u);
    auto after = open_fds();
    after.insert(p[0]);
    EXPECT_EQ(before, after) << describe_fds(after);
}

TEST(FromDescNegative, ShapeThatIsNoImageOfItsFormat)
{
    auto img = TensorDyn::image(8, 4, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Shm);
    ASSERT_TRUE(img);
    auto d = img->describe();
    ASSERT_TRUE(d);
    // 4 channels under an RGB format (a valid layout inside the buffer otherwise).
    d->shape[0] = 3;
    d->shape[2] = 4;
    d->strides[0] = 32;
    d->strides[1] = 4;
    expect_rejected(*d, clone(*img), ErrorCode::InvalidDescriptor, "RGB");
}

TEST(FromDescNegative, ImageStridesThatAreNoImageLayout)
{
    auto img = TensorDyn::image(8, 4, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Shm);
    ASSERT_TRUE(img);
    auto d = img->describe();
    ASSERT_TRUE(d);
    // Pixels 4 bytes apart: a valid strided tensor, but not an RGB image.
    d->strides[0] = 32;
    d->strides[1] = 4;
    d->shape[0] = 3;
    expect_rejected(*d, clone(*img), ErrorCode::InvalidDescriptor, "image layout");
}

TEST(FromDescNegative, NothingLeaksAcrossTheWholeNegativeSuite)
{
    // Each negative test checks its own fds; this one repeats a mixed batch to catch a slow
    // leak that a single call would hide.
    const auto before = open_fds();
    {
        auto v = valid_f32();
        for (int i = 0; i < 200; ++i) {
            EdgeTensorDesc d = v.desc;
            switch (i % 4) {
            case 0:
                d.version = 9;
                break;
            case 1:
                d.kind = EDGETENSOR_KIND_DMABUF;
                break;
            case 2:
                d.capacity = 1u << 30;
                break;
            default:
                break; // valid: the import is dropped at once
            }
            (void)TensorDyn::from_desc(d, clone(v.tensor));
        }
    }
    const auto after = open_fds();
    EXPECT_EQ(before, after) << describe_fds(after);
}

} // namespace
