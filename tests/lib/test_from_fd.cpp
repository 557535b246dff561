// SPDX-License-Identifier: MIT
//
// from_fd recognises buffers by fstatfs magic and refuses everything else with the magic.

#include "config.h"
#include "fd_count.hpp"

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>

using namespace edgetensor;
using edgetensor::test::open_fds;

namespace
{

UniqueFd make_memfd(size_t size, unsigned flags = MFD_CLOEXEC)
{
    UniqueFd fd(memfd_create("from-fd-test", flags));
    if (fd && ftruncate(fd.get(), off_t(size)) != 0)
        return UniqueFd();
    return fd;
}

uint32_t fs_magic_of(int fd)
{
    struct statfs s {
    };
    fstatfs(fd, &s);
    return static_cast<uint32_t>(s.f_type);
}

} // namespace

TEST(FromFd, MemfdIsShmAndZeroCopy)
{
    UniqueFd owner = make_memfd(4 * 6);
    ASSERT_TRUE(owner);
    auto* p = static_cast<uint8_t*>(
        mmap(nullptr, 24, PROT_READ | PROT_WRITE, MAP_SHARED, owner.get(), 0));
    ASSERT_NE(p, MAP_FAILED);
    for (int i = 0; i < 24; ++i)
        p[i] = uint8_t(i * 3);

    auto t = Tensor<uint8_t>::from_fd(UniqueFd::dup(owner.get()), {4, 6}, "imported");
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->memory(), TensorMemory::Shm);
    EXPECT_EQ(t->name(), "imported");
    EXPECT_EQ(t->capacity_bytes(), 24u);
    {
        auto m = t->map_read();
        ASSERT_TRUE(m);
        for (int i = 0; i < 24; ++i)
            ASSERT_EQ(m->data()[i], uint8_t(i * 3));
    }
    {
        auto w = t->map_write();
        ASSERT_TRUE(w);
        w->data()[5] = 200;
    }
    EXPECT_EQ(p[5], 200); // the same pages, no copy
    munmap(p, 24);
}

TEST(FromFd, ShmOpenFdIsShm)
{
    const std::string name = "/edgetensor-test-" + std::to_string(getpid());
    UniqueFd fd(shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd) << std::strerror(errno);
    shm_unlink(name.c_str());
    ASSERT_EQ(ftruncate(fd.get(), 4096), 0);
    auto t = Tensor<float>::from_fd(std::move(fd), {1024});
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->memory(), TensorMemory::Shm);
}

TEST(FromFd, PipeIsUnknownBufferType_Negative)
{
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    const auto before = open_fds();
    auto t = Tensor<uint8_t>::from_fd(UniqueFd(dup(p[0])), {16});
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::UnknownBufferType);
    EXPECT_EQ(t.error().fs_magic(), 0x50495045u);
    EXPECT_NE(t.error().message().find("0x50495045"), std::string::npos) << t.error().message();
    // The dup we handed over is closed; the caller's own ends are untouched.
    EXPECT_EQ(open_fds(), before);
    EXPECT_NE(fcntl(p[0], F_GETFD), -1);
    EXPECT_NE(fcntl(p[1], F_GETFD), -1);
    close(p[0]);
    close(p[1]);
}

TEST(FromFd, SocketIsUnknownBufferType_Negative)
{
    int s[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
    auto t = Tensor<uint8_t>::from_fd(UniqueFd(s[0]), {16});
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::UnknownBufferType);
    EXPECT_EQ(t.error().fs_magic(), 0x534f434bu); // SOCKFS_MAGIC
    close(s[1]);
}

TEST(FromFd, RegularFileIsUnknownBufferTypeWithItsMagic_Negative)
{
    // The test binary lives on the build tree's filesystem (not tmpfs).
    UniqueFd fd(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd);
    const uint32_t magic = fs_magic_of(fd.get());
    if (magic == 0x01021994u)
        GTEST_SKIP() << "the build tree is on tmpfs; a regular file there is shm by design";
    auto t = Tensor<uint8_t>::from_fd(std::move(fd), {16});
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::UnknownBufferType);
    EXPECT_EQ(t.error().fs_magic(), magic);
}

TEST(FromFd, HugetlbMemfdIsUnknownBufferType_Negative)
{
#if HAVE_MFD_HUGETLB
    UniqueFd fd(memfd_create("huge", MFD_CLOEXEC | MFD_HUGETLB));
    if (!fd)
        GTEST_SKIP() << "this host cannot create an MFD_HUGETLB memfd: " << std::strerror(errno);
    auto t = Tensor<uint8_t>::from_fd(std::move(fd), {16});
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::UnknownBufferType);
    EXPECT_EQ(t.error().fs_magic(), 0x958458f6u); // normalised to u32, not sign-extended
#else
    GTEST_SKIP() << "MFD_HUGETLB not defined by this libc";
#endif
}

TEST(FromFd, ShapeLargerThanBufferIsRefused_Negative)
{
    auto t = Tensor<uint32_t>::from_fd(make_memfd(64), {17}); // 68 bytes > 64
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::InsufficientCapacity);
    EXPECT_NE(t.error().message().find("64"), std::string::npos);
    auto exact = Tensor<uint32_t>::from_fd(make_memfd(64), {16});
    EXPECT_TRUE(exact);
}

TEST(FromFd, EmptyShapeIsRefused_Negative)
{
    auto t = Tensor<uint8_t>::from_fd(make_memfd(64), {});
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::InvalidShape);
    auto z = Tensor<uint8_t>::from_fd(make_memfd(64), {0});
    ASSERT_FALSE(z);
    EXPECT_EQ(z.error().code(), ErrorCode::InvalidShape);
}

TEST(FromFd, EmptyAndClosedFdsAreRefused_Negative)
{
    auto none = Tensor<uint8_t>::from_fd(UniqueFd(), {4});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code(), ErrorCode::InvalidArgument);
    auto zero_size = Tensor<uint8_t>::from_fd(make_memfd(0), {1});
    ASSERT_FALSE(zero_size);
    // A closed fd number: fstatfs fails with EBADF.
    int raw = memfd_create("closed", MFD_CLOEXEC);
    close(raw);
    auto closed = Tensor<uint8_t>::from_fd(UniqueFd(raw), {1});
    ASSERT_FALSE(closed);
    EXPECT_EQ(closed.error().code(), ErrorCode::Io);
    EXPECT_EQ(closed.error().sys_errno(), EBADF);
}

TEST(FromFd, ReadOnlyFdImportsForReadingOnly)
{
    UniqueFd rw = make_memfd(32);
    const std::string path = "/proc/self/fd/" + std::to_string(rw.get());
    UniqueFd ro(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(ro);
    auto t = Tensor<uint8_t>::from_fd(std::move(ro), {32});
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_TRUE(t->map_read());
    auto w = t->map_write();
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code(), ErrorCode::NotSupported);
}

TEST(FromFd, FailedImportsLeakNothing_Negative)
{
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    const auto before = open_fds();
    for (int i = 0; i < 200; ++i) {
        EXPECT_FALSE(Tensor<uint8_t>::from_fd(UniqueFd(dup(p[0])), {4}));
        EXPECT_FALSE(Tensor<uint8_t>::from_fd(make_memfd(8), {9}));
        EXPECT_FALSE(Tensor<uint8_t>::from_fd(make_memfd(8), {}));
    }
    EXPECT_EQ(open_fds(), before) << edgetensor::test::describe_fds(open_fds());
    close(p[0]);
    close(p[1]);
}

TEST(FromFd, FromFdImageWithPlaneOffsets)
{
    // A foreign NV12 buffer: 16x4 luma at offset 64 with pitch 32, chroma at 256 with pitch 32.
    UniqueFd fd = make_memfd(512);
    auto* p =
        static_cast<uint8_t*>(mmap(nullptr, 512, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0));
    for (int i = 0; i < 512; ++i)
        p[i] = uint8_t(i);
    const PlaneLayout planes[2] = {{64, 32}, {256, 32}};
    auto t = TensorDyn::from_fd_image(UniqueFd::dup(fd.get()), 16, 4, PixelFormat::Nv12, planes);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->plane_count(), 2u);
    EXPECT_EQ(t->plane_layout(0)->offset, 64u);
    EXPECT_EQ(t->plane_layout(1)->offset, 256u);
    EXPECT_EQ(*t->row_stride(), 32u);
    auto m = t->map_read();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->plane(0).data[0], uint8_t(64));
    EXPECT_EQ(m->plane(0).data[32], uint8_t(96));
    EXPECT_EQ(m->plane(1).data[0], uint8_t(256 & 0xff));
    EXPECT_EQ(m->plane(1).data[33], uint8_t((256 + 33) & 0xff));

    const PlaneLayout too_far[2] = {{64, 32}, {500, 32}};
    auto bad = TensorDyn::from_fd_image(UniqueFd::dup(fd.get()), 16, 4, PixelFormat::Nv12, too_far);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), ErrorCode::InsufficientCapacity);
    const PlaneLayout narrow[1] = {{0, 8}};
    auto nar = TensorDyn::from_fd_image(UniqueFd::dup(fd.get()), 16, 4, PixelFormat::Grey, narrow);
    ASSERT_FALSE(nar);
    EXPECT_EQ(nar.error().code(), ErrorCode::InvalidArgument);
    munmap(p, 512);
}
