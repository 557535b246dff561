// SPDX-License-Identifier: MIT
//
// Runs examples/npu-consumer as a separate process: this test is the producer. It hands the
// consumer a descriptor plus an fd over a Unix socket (SCM_RIGHTS) and checks the checksum the
// consumer computed by walking the buffer with the descriptor's strides.

#include "fd_count.hpp"

#include <edgetensor/tensor.hpp>
#include <edgetensor/tensor_desc.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace
{

using namespace edgetensor;

const char* consumer_path()
{
    return std::getenv("EDGETENSOR_NPU_CONSUMER");
}

/// The same FNV-1a walk the consumer does, over (shape, byte strides) from `base`.
uint64_t expected_checksum(const uint8_t* base, const EdgeTensorDesc& d, size_t elem)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t idx[8] = {};
    for (;;) {
        int64_t off = 0;
        for (uint32_t k = 0; k < d.ndim; ++k)
            off += int64_t(idx[k]) * d.strides[k];
        for (size_t b = 0; b < elem; ++b) {
            h ^= base[off + int64_t(b)];
            h *= 1099511628211ull;
        }
        int k = int(d.ndim) - 1;
        for (; k >= 0; --k) {
            if (++idx[k] < d.shape[k])
                break;
            idx[k] = 0;
        }
        if (k < 0)
            return h;
    }
}

struct Outcome {
    int exit_code = -1;
    bool replied = false;
    uint64_t checksum = 0;
    std::string err;
};

/// Spawns the consumer, sends `desc` with `fd` (-1: none), collects its reply and stderr.
Outcome run_consumer(const EdgeTensorDesc& desc, int fd)
{
    Outcome out;
    int sv[2];
    int errp[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
        ::pipe2(errp, O_CLOEXEC) != 0) {
        ADD_FAILURE() << "socketpair/pipe: " << std::strerror(errno);
        return out;
    }
    const char* path = consumer_path();
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Only async-signal-safe calls until exec. dup2 clears CLOEXEC on the target.
        ::dup2(sv[1], 100);
        ::dup2(errp[1], 2);
        char* argv[] = {const_cast<char*>("npu-consumer"), const_cast<char*>("--socket"),
                        const_cast<char*>("100"), nullptr};
        ::execv(path, argv);
        ::_exit(127);
    }
    ::close(sv[1]);
    ::close(errp[1]);

    struct iovec iov = {const_cast<EdgeTensorDesc*>(&desc), sizeof(desc)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctrl{};
    struct msghdr msg {
    };
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        msg.msg_control = ctrl.buf;
        msg.msg_controllen = sizeof(ctrl.buf);
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    EXPECT_EQ(::sendmsg(sv[0], &msg, MSG_NOSIGNAL), ssize_t(sizeof(desc)));
    uint64_t sum = 0;
    const ssize_t n = ::read(sv[0], &sum, sizeof(sum));
    out.replied = n == ssize_t(sizeof(sum));
    out.checksum = sum;
    char buf[512];
    ssize_t k;
    while ((k = ::read(errp[0], buf, sizeof(buf))) > 0)
        out.err.append(buf, size_t(k));
    int status = 0;
    ::waitpid(pid, &status, 0);
    out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    ::close(sv[0]);
    ::close(errp[0]);
    return out;
}

class NpuConsumer : public ::testing::Test
{
protected:
    void SetUp() override
    {
        if (!consumer_path())
            GTEST_FAIL() << "EDGETENSOR_NPU_CONSUMER is not set (meson sets it to the example)";
    }
};

TEST_F(NpuConsumer, ChecksumOfAStridedTensorMatches)
{
    // 17 rows of 99 u16 inside a 128-element pitch: the consumer must skip the padding.
    auto t = TensorDyn::create(DType::U16, {17, 128}, TensorMemory::Shm, "npu-test");
    ASSERT_TRUE(t) << t.error().message();
    {
        auto w = t->map_write();
        ASSERT_TRUE(w);
        for (size_t i = 0; i < w->len(); ++i)
            w->data()[i] = uint8_t(i * 13 + 1);
    }
    auto d = t->describe();
    ASSERT_TRUE(d) << d.error().message();
    d->shape[1] = 99;
    auto r = t->map_read();
    ASSERT_TRUE(r);
    const uint64_t want = expected_checksum(r->cdata().data(), *d, 2);
    r->reset();

    const auto before = edgetensor::test::open_fds();
    auto fd = t->clone_fd();
    ASSERT_TRUE(fd);
    const Outcome o = run_consumer(*d, fd->get());
    fd->reset();
    EXPECT_EQ(o.exit_code, 0) << o.err;
    ASSERT_TRUE(o.replied) << o.err;
    EXPECT_EQ(o.checksum, want);
    EXPECT_EQ(edgetensor::test::open_fds(), before);
}

TEST_F(NpuConsumer, ChecksumOfAnImageMatches)
{
    auto img = TensorDyn::image(322, 5, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Shm);
    ASSERT_TRUE(img) << img.error().message();
    {
        auto w = img->map_write();
        ASSERT_TRUE(w);
        for (size_t i = 0; i < w->len(); ++i)
            w->data()[i] = uint8_t(i ^ (i >> 7));
    }
    auto d = img->describe();
    ASSERT_TRUE(d);
    auto r = img->map_read();
    ASSERT_TRUE(r);
    const uint64_t want = expected_checksum(r->cdata().data(), *d, 1);
    r->reset();
    auto fd = img->clone_fd();
    ASSERT_TRUE(fd);
    const Outcome o = run_consumer(*d, fd->get());
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_TRUE(o.replied);
    EXPECT_EQ(o.checksum, want);
}

TEST_F(NpuConsumer, CorruptDescriptorIsRefusedByTheConsumer_Negative)
{
    auto t = TensorDyn::create(DType::F32, {4, 4}, TensorMemory::Shm);
    ASSERT_TRUE(t);
    auto d = t->describe();
    ASSERT_TRUE(d);
    auto fd = t->clone_fd();
    ASSERT_TRUE(fd);

    EdgeTensorDesc bad = *d;
    bad.strides[0] = 1 << 20; // rows far beyond the buffer
    Outcome o = run_consumer(bad, fd->get());
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_FALSE(o.replied);
    EXPECT_NE(o.err.find("addresses 3145744 bytes"), std::string::npos) << o.err;

    bad = *d;
    bad.version = 2;
    o = run_consumer(bad, fd->get());
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("version 2"), std::string::npos) << o.err;

    // A descriptor that names a handle but arrives without an fd.
    o = run_consumer(*d, -1);
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("no fd was passed"), std::string::npos) << o.err;
}

} // namespace
