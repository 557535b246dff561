// SPDX-License-Identifier: MIT
//
// import_fd_planes: a tensor over planes in borrowed fds (what the GStreamer import cache builds
// per upstream buffer), tested on memfds without GStreamer.

#include "fd_count.hpp"
#include "text_match.hpp"

#include <edgetensor/fd_planes.hpp>
#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

using namespace edgetensor;
using edgetensor::test::open_fds;

namespace
{

UniqueFd make_memfd(size_t size)
{
    UniqueFd fd(memfd_create("fd-planes-test", MFD_CLOEXEC));
    if (fd && ftruncate(fd.get(), off_t(size)) != 0)
        return UniqueFd();
    return fd;
}

uint64_t ino_of(int fd)
{
    struct stat st {
    };
    fstat(fd, &st);
    return uint64_t(st.st_ino);
}

using edgetensor::test::contains;

// A 64x48 NV12 frame in one buffer: luma rows of 128 bytes, chroma after 48 of them.
FdPlanes nv12_one_buffer(int fd)
{
    FdPlanes p;
    p.n_planes = 2;
    p.planes[0] = {fd, 0, 128};
    p.planes[1] = {fd, 128 * 48, 128};
    p.format = PixelFormat::Nv12;
    p.width = 64;
    p.height = 48;
    p.shape = {128 * 48 * 3 / 2};
    return p;
}

} // namespace

TEST(FdPlanes, ATensorIsImportedFromByteZeroThroughADuplicate)
{
    UniqueFd fd = make_memfd(3 * 4 * 5 * sizeof(float));
    ASSERT_TRUE(fd);
    FdPlanes p;
    p.planes[0] = {fd.get(), 0, 0};
    p.dtype = DType::F32;
    p.shape = {3, 4, 5};
    auto t = import_fd_planes(p, "tensor");
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->dtype(), DType::F32);
    EXPECT_EQ(t->shape(), (Shape{3, 4, 5}));
    EXPECT_FALSE(t->is_image());
    EXPECT_EQ(t->name(), "tensor");
    EXPECT_NE(t->fd(), fd.get()) << "the caller's fd is borrowed, never adopted";
    ASSERT_TRUE(t->stat_identity(0));
    EXPECT_EQ(t->stat_identity(0)->second, ino_of(fd.get()));
}

TEST(FdPlanes, ATensorThatDoesNotStartAtByteZeroIsRefused_Negative)
{
    UniqueFd fd = make_memfd(8192);
    ASSERT_TRUE(fd);
    FdPlanes p;
    p.planes[0] = {fd.get(), 4096, 0};
    p.shape = {4096};
    auto t = import_fd_planes(p);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::NotSupported);
    EXPECT_TRUE(contains(t.error().message(), "4096 bytes into its fd")) << t.error().message();
}

TEST(FdPlanes, SemiPlanarInOneBufferIsAnImageWithTheGivenOffsetsAndPitches)
{
    UniqueFd fd = make_memfd(128 * 48 * 3 / 2);
    ASSERT_TRUE(fd);
    auto t = import_fd_planes(nv12_one_buffer(fd.get()), "nv12");
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->format(), PixelFormat::Nv12);
    EXPECT_EQ(t->width(), 64u);
    EXPECT_EQ(t->height(), 48u);
    ASSERT_EQ(t->plane_count(), 2u);
    EXPECT_EQ(t->plane_layout(0)->offset, 0u);
    EXPECT_EQ(t->plane_layout(0)->stride, 128u);
    EXPECT_EQ(t->plane_layout(1)->offset, 128u * 48);
    EXPECT_EQ(t->plane_layout(1)->stride, 128u);
}

TEST(FdPlanes, SemiPlanarInTwoBuffersKeepsEachBuffersFd)
{
    UniqueFd luma = make_memfd(64 * 48);
    UniqueFd chroma = make_memfd(64 * 24);
    ASSERT_TRUE(luma && chroma);
    FdPlanes p;
    p.n_planes = 2;
    p.separate_buffers = true;
    p.planes[0] = {luma.get(), 0, 64};
    p.planes[1] = {chroma.get(), 0, 64};
    p.format = PixelFormat::Nv12;
    p.width = 64;
    p.height = 48;
    auto t = import_fd_planes(p, "two");
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->format(), PixelFormat::Nv12);
    ASSERT_EQ(t->plane_count(), 2u);
    ASSERT_TRUE(t->stat_identity(0) && t->stat_identity(1));
    EXPECT_EQ(t->stat_identity(0)->second, ino_of(luma.get()));
    EXPECT_EQ(t->stat_identity(1)->second, ino_of(chroma.get()));
}

TEST(FdPlanes, OddSizedNv12InTwoBuffersRoundsTheChromaUp)
{
    // 65x49: the chroma plane has 33 pairs in 25 rows.
    UniqueFd luma = make_memfd(128 * 49);
    UniqueFd chroma = make_memfd(128 * 25);
    ASSERT_TRUE(luma && chroma);
    FdPlanes p;
    p.n_planes = 2;
    p.separate_buffers = true;
    p.planes[0] = {luma.get(), 0, 128};
    p.planes[1] = {chroma.get(), 0, 128};
    p.format = PixelFormat::Nv12;
    p.width = 65;
    p.height = 49;
    auto t = import_fd_planes(p);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->width(), 65u);
    EXPECT_EQ(t->height(), 49u);
}

TEST(FdPlanes, PackedPlanesInTwoBuffersAreRefused_Negative)
{
    UniqueFd a = make_memfd(4096);
    UniqueFd b = make_memfd(4096);
    ASSERT_TRUE(a && b);
    FdPlanes p;
    p.n_planes = 2;
    p.separate_buffers = true;
    p.planes[0] = {a.get(), 0, 64};
    p.planes[1] = {b.get(), 0, 64};
    p.format = PixelFormat::Rgba;
    p.width = 16;
    p.height = 16;
    auto t = import_fd_planes(p);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::NotSupported);
    EXPECT_TRUE(contains(t.error().message(), "separate buffers")) << t.error().message();
}

TEST(FdPlanes, StackedPlanarRgbIsAnImageAndOtherPlanarLayoutsAreFlat)
{
    const size_t stride = 64, w = 60, h = 10, plane = stride * h;
    UniqueFd fd = make_memfd(4 * plane);
    ASSERT_TRUE(fd);
    FdPlanes p;
    p.n_planes = 3;
    for (size_t i = 0; i < 3; ++i)
        p.planes[i] = {fd.get(), i * plane, stride};
    p.format = PixelFormat::PlanarRgb;
    p.width = w;
    p.height = h;
    p.shape = {4 * plane};
    auto image = import_fd_planes(p);
    ASSERT_TRUE(image) << image.error().message();
    EXPECT_EQ(image->format(), PixelFormat::PlanarRgb);

    p.planes[2].offset += stride; // a gap: the core's planar images have none
    auto flat = import_fd_planes(p);
    ASSERT_TRUE(flat) << flat.error().message();
    EXPECT_FALSE(flat->is_image());
    EXPECT_EQ(flat->shape(), (Shape{4 * plane}));
}

TEST(FdPlanes, AFormatWithoutACoreImageIsFlatFromByteZero)
{
    UniqueFd fd = make_memfd(8192);
    ASSERT_TRUE(fd);
    FdPlanes p;
    p.n_planes = 3; // I420, say
    p.planes[0] = {fd.get(), 512, 64};
    p.planes[1] = {fd.get(), 512 + 64 * 48, 32};
    p.planes[2] = {fd.get(), 512 + 64 * 48 + 32 * 24, 32};
    p.format = PixelFormat::None;
    p.width = 64;
    p.height = 48;
    p.shape = {8192};
    auto t = import_fd_planes(p);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_FALSE(t->is_image());
    EXPECT_EQ(t->dtype(), DType::U8);
    EXPECT_EQ(t->shape(), (Shape{8192}));
}

TEST(FdPlanes, AFrameLargerThanItsBufferIsRefused_Negative)
{
    UniqueFd fd = make_memfd(1024); // far less than 64x48 NV12
    ASSERT_TRUE(fd);
    auto t = import_fd_planes(nv12_one_buffer(fd.get()));
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::InsufficientCapacity) << t.error().message();
}

TEST(FdPlanes, ABadFdIsAnIoErrorNamingDupAndTheErrno_Negative)
{
    FdPlanes p;
    p.planes[0] = {-1, 0, 0};
    p.shape = {16};
    auto t = import_fd_planes(p);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::Io);
    EXPECT_EQ(t.error().sys_errno(), EBADF);
    EXPECT_TRUE(contains(t.error().message(), "dup of plane 0")) << t.error().message();
    EXPECT_TRUE(contains(t.error().message(), "(EBADF)")) << t.error().message();
}

TEST(FdPlanes, NoPlanesOrTooManyAreRefused_Negative)
{
    FdPlanes p;
    p.n_planes = 0;
    EXPECT_EQ(import_fd_planes(p).error().code(), ErrorCode::InvalidArgument);
    p.n_planes = 5;
    EXPECT_EQ(import_fd_planes(p).error().code(), ErrorCode::InvalidArgument);
}

TEST(FdPlanes, EveryImportLeavesTheFdCountAsItWas)
{
    UniqueFd luma = make_memfd(64 * 48);
    UniqueFd chroma = make_memfd(64 * 24);
    UniqueFd one = make_memfd(128 * 48 * 3 / 2);
    ASSERT_TRUE(luma && chroma && one);
    const auto before = open_fds();
    for (int i = 0; i < 100; ++i) {
        FdPlanes p;
        p.n_planes = 2;
        p.separate_buffers = true;
        p.planes[0] = {luma.get(), 0, 64};
        p.planes[1] = {chroma.get(), 0, 64};
        p.format = PixelFormat::Nv12;
        p.width = 64;
        p.height = 48;
        ASSERT_TRUE(import_fd_planes(p));
        ASSERT_TRUE(import_fd_planes(nv12_one_buffer(one.get())));
        FdPlanes bad = nv12_one_buffer(luma.get()); // too small: refused after the dup
        ASSERT_FALSE(import_fd_planes(bad));
    }
    EXPECT_EQ(open_fds(), before);
}
