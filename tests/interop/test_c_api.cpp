// SPDX-License-Identifier: MIT
//
// The C API: refcounted handles, errno-style returns with a per-thread message, fd ownership
// (every fd passed in is consumed, also on failure), DLPack through C.

#include "fd_count.hpp"

#include <edgetensor/edgetensor.h>
#include <edgetensor/error.hpp>

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <thread>
#include <unistd.h>

namespace
{

using edgetensor::ErrorCode;
using edgetensor::test::describe_fds;
using edgetensor::test::open_fds;

std::string last_error()
{
    return edgetensor_last_error();
}

TEST(CApi, CreateDescribeMapRelease)
{
    const uint64_t shape[] = {3, 5};
    edgetensor_tensor* t = nullptr;
    ASSERT_EQ(edgetensor_create(EDGETENSOR_DTYPE_U16, 2, shape, EDGETENSOR_MEMORY_SHM, "c-api", &t),
              0)
        << last_error();
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(edgetensor_ndim(t), 2u);
    EXPECT_EQ(edgetensor_dtype(t), EDGETENSOR_DTYPE_U16);
    EXPECT_EQ(edgetensor_memory(t), EDGETENSOR_MEMORY_SHM);
    uint64_t s[2] = {};
    int64_t st[2] = {};
    ASSERT_EQ(edgetensor_shape(t, s, st, 2), 0);
    EXPECT_EQ(s[0], 3u);
    EXPECT_EQ(s[1], 5u);
    EXPECT_EQ(st[0], 10);
    EXPECT_EQ(st[1], 2);

    edgetensor_mapping* m = nullptr;
    ASSERT_EQ(edgetensor_map(t, EDGETENSOR_ACCESS_WRITE, &m), 0) << last_error();
    ASSERT_NE(edgetensor_map_data(m), nullptr);
    EXPECT_EQ(edgetensor_map_size(m), 30u);
    std::memset(edgetensor_map_data(m), 0x5A, 30);
    edgetensor_unmap(m);

    EdgeTensorDesc d{};
    ASSERT_EQ(edgetensor_describe(t, &d), 0) << last_error();
    EXPECT_EQ(d.version, EDGETENSOR_DESC_VERSION);
    EXPECT_EQ(d.kind, EDGETENSOR_KIND_HOST);
    EXPECT_GE(d.handle, 0);
    EXPECT_EQ(d.shape[1], 5u);

    // Hand the tensor across "processes": descriptor + an owned fd.
    int fd = -1;
    ASSERT_EQ(edgetensor_clone_fd(t, &fd), 0) << last_error();
    ASSERT_GE(fd, 0);
    edgetensor_tensor* imported = nullptr;
    ASSERT_EQ(edgetensor_from_desc(&d, fd, &imported), 0) << last_error();
    ASSERT_EQ(edgetensor_map(imported, EDGETENSOR_ACCESS_READ, &m), 0);
    EXPECT_EQ(static_cast<const uint8_t*>(edgetensor_map_data(m))[29], 0x5A);
    edgetensor_unmap(m);

    edgetensor_release(imported);
    edgetensor_release(t);
}

TEST(CApi, RetainReleaseSharesOneTensor)
{
    const uint64_t shape[] = {4};
    edgetensor_tensor* t = nullptr;
    ASSERT_EQ(edgetensor_create(EDGETENSOR_DTYPE_F32, 1, shape, EDGETENSOR_MEMORY_SHM, nullptr, &t),
              0);
    const auto with_tensor = open_fds();
    EXPECT_EQ(edgetensor_retain(t), t);
    edgetensor_release(t);
    EXPECT_EQ(edgetensor_ndim(t), 1u) << "one reference is still held";
    EXPECT_EQ(open_fds(), with_tensor);
    edgetensor_release(t);
    EXPECT_LT(open_fds().size(), with_tensor.size()) << "the last release frees the storage";
    edgetensor_release(nullptr);
    EXPECT_EQ(edgetensor_retain(nullptr), nullptr);
}

TEST(CApi, ImageViewAndBatch)
{
    edgetensor_tensor* img = nullptr;
    ASSERT_EQ(edgetensor_image(64, 32, EDGETENSOR_FORMAT_RGBA, EDGETENSOR_DTYPE_U8,
                               EDGETENSOR_ACCESS_READ_WRITE, EDGETENSOR_MEMORY_AUTO, "img", &img),
              0)
        << last_error();
    EdgeTensorDesc d{};
    ASSERT_EQ(edgetensor_describe(img, &d), 0) << last_error();
    EXPECT_EQ(d.format, EDGETENSOR_FORMAT_RGBA);
    EXPECT_EQ(d.shape[0], 32u);
    EXPECT_EQ(d.shape[1], 64u);
    EXPECT_EQ(d.shape[2], 4u);

    edgetensor_tensor* v = nullptr;
    ASSERT_EQ(edgetensor_view(img, 8, 4, 16, 8, &v), 0) << last_error();
    uint64_t s[3] = {};
    ASSERT_EQ(edgetensor_shape(v, s, nullptr, 3), 0);
    EXPECT_EQ(s[0], 8u);
    EXPECT_EQ(s[1], 16u);
    edgetensor_release(img); // the view keeps the storage alive
    edgetensor_mapping* m = nullptr;
    ASSERT_EQ(edgetensor_map(v, EDGETENSOR_ACCESS_READ, &m), 0) << last_error();
    edgetensor_unmap(m);

    edgetensor_tensor* bad = nullptr;
    EXPECT_EQ(edgetensor_view(v, 10, 0, 16, 8, &bad), -ERANGE);
    EXPECT_EQ(bad, nullptr);
    EXPECT_EQ(edgetensor_last_error_code(), int(ErrorCode::RegionOutOfBounds));
    EXPECT_NE(last_error().find("RegionOutOfBounds"), std::string::npos) << last_error();

    const uint64_t shape[] = {3, 4, 4};
    edgetensor_tensor* batch = nullptr;
    ASSERT_EQ(
        edgetensor_create(EDGETENSOR_DTYPE_U8, 3, shape, EDGETENSOR_MEMORY_MEM, nullptr, &batch),
        0);
    edgetensor_tensor* b2 = nullptr;
    ASSERT_EQ(edgetensor_batch(batch, 2, &b2), 0) << last_error();
    EXPECT_EQ(edgetensor_ndim(b2), 2u);
    EXPECT_EQ(edgetensor_batch(batch, 3, &bad), -ERANGE);
    EXPECT_EQ(edgetensor_last_error_code(), int(ErrorCode::BatchIndexOutOfBounds));
    edgetensor_release(b2);
    edgetensor_release(batch);
    edgetensor_release(v);
}

TEST(CApi, ErrorsAreNegativeErrnoWithAMessage_Negative)
{
    const uint64_t shape[] = {4};
    edgetensor_tensor* t = nullptr;
    EXPECT_EQ(edgetensor_create(99, 1, shape, EDGETENSOR_MEMORY_MEM, nullptr, &t), -EINVAL);
    EXPECT_EQ(t, nullptr);
    EXPECT_NE(last_error().find("dtype"), std::string::npos) << last_error();
    EXPECT_EQ(edgetensor_create(EDGETENSOR_DTYPE_U8, 0, shape, EDGETENSOR_MEMORY_MEM, nullptr, &t),
              -EINVAL);
    EXPECT_EQ(edgetensor_create(EDGETENSOR_DTYPE_U8, 1, shape, 7, nullptr, &t), -EINVAL);
    EXPECT_EQ(
        edgetensor_create(EDGETENSOR_DTYPE_U8, 1, shape, EDGETENSOR_MEMORY_MEM, nullptr, nullptr),
        -EINVAL);
    EXPECT_EQ(edgetensor_image(8, 8, 0, EDGETENSOR_DTYPE_U8, EDGETENSOR_ACCESS_READ,
                               EDGETENSOR_MEMORY_MEM, nullptr, &t),
              -EINVAL);
    EXPECT_EQ(edgetensor_image(8, 8, EDGETENSOR_FORMAT_RGB, EDGETENSOR_DTYPE_U8, 9,
                               EDGETENSOR_MEMORY_MEM, nullptr, &t),
              -EINVAL);

    ASSERT_EQ(edgetensor_create(EDGETENSOR_DTYPE_U8, 1, shape, EDGETENSOR_MEMORY_MEM, nullptr, &t),
              0);
    int fd = 123;
    EXPECT_EQ(edgetensor_clone_fd(t, &fd), -ENOTSUP);
    EXPECT_EQ(fd, -1);
    EXPECT_EQ(edgetensor_last_error_code(), int(ErrorCode::NotSupported));
    edgetensor_mapping* m = nullptr;
    EXPECT_EQ(edgetensor_map(t, EDGETENSOR_ACCESS_NONE, &m), -EINVAL);
    EXPECT_EQ(m, nullptr);
    EdgeTensorDesc d{};
    EXPECT_EQ(edgetensor_describe(nullptr, &d), -EINVAL);
    EXPECT_EQ(edgetensor_memory(nullptr), -1);
    edgetensor_release(t);
}

TEST(CApi, FdsPassedInAreConsumedEvenOnFailure_Negative)
{
    const auto before = open_fds();
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    const uint64_t shape[] = {4};
    edgetensor_tensor* t = nullptr;
    EXPECT_EQ(edgetensor_from_fd(p[0], EDGETENSOR_DTYPE_U8, 1, shape, &t), -EMEDIUMTYPE);
    EXPECT_EQ(edgetensor_last_error_code(), int(ErrorCode::UnknownBufferType));
    EXPECT_EQ(edgetensor_from_fd(p[1], 99, 1, shape, &t), -EINVAL);
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());

    // A garbage descriptor also consumes its fd.
    ASSERT_EQ(edgetensor_create(EDGETENSOR_DTYPE_U8, 1, shape, EDGETENSOR_MEMORY_SHM, nullptr, &t),
              0);
    const auto with_tensor = open_fds();
    int fd = -1;
    ASSERT_EQ(edgetensor_clone_fd(t, &fd), 0);
    EdgeTensorDesc d = edgetensor_desc_init();
    edgetensor_tensor* imported = nullptr;
    EXPECT_EQ(edgetensor_from_desc(&d, fd, &imported), -EINVAL);
    EXPECT_EQ(edgetensor_last_error_code(), int(ErrorCode::InvalidDescriptor));
    EXPECT_NE(last_error().find("ndim 0"), std::string::npos) << last_error();
    ASSERT_EQ(edgetensor_clone_fd(t, &fd), 0);
    EXPECT_EQ(edgetensor_from_desc(nullptr, fd, &imported), -EINVAL);
    EXPECT_EQ(open_fds(), with_tensor) << describe_fds(open_fds());
    edgetensor_release(t);
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

TEST(CApi, LastErrorIsPerThread)
{
    edgetensor_tensor* t = nullptr;
    EXPECT_EQ(edgetensor_batch(nullptr, 0, &t), -EINVAL);
    const std::string mine = last_error();
    std::string theirs;
    std::thread([&] {
        EXPECT_STREQ(edgetensor_last_error(), "") << "a new thread starts without an error";
        const uint64_t shape[] = {1};
        EXPECT_EQ(edgetensor_create(42, 1, shape, EDGETENSOR_MEMORY_MEM, nullptr, &t), -EINVAL);
        theirs = edgetensor_last_error();
    }).join();
    EXPECT_EQ(last_error(), mine);
    EXPECT_NE(theirs, mine);
}

TEST(CApi, DlpackThroughC)
{
    const uint64_t shape[] = {2, 8};
    edgetensor_tensor* t = nullptr;
    ASSERT_EQ(edgetensor_create(EDGETENSOR_DTYPE_F32, 2, shape, EDGETENSOR_MEMORY_MEM, nullptr, &t),
              0);
    DLManagedTensor* m = nullptr;
    ASSERT_EQ(edgetensor_to_dlpack(t, EDGETENSOR_ACCESS_READ_WRITE, &m), 0) << last_error();
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->dl_tensor.strides[0], 8);
    static_cast<float*>(m->dl_tensor.data)[9] = 2.5f;
    edgetensor_release(t); // the export keeps it alive

    edgetensor_tensor* back = nullptr;
    ASSERT_EQ(edgetensor_from_dlpack(m, &back), 0) << last_error();
    edgetensor_mapping* map = nullptr;
    ASSERT_EQ(edgetensor_map(back, EDGETENSOR_ACCESS_READ, &map), 0);
    EXPECT_EQ(static_cast<const float*>(edgetensor_map_data(map))[9], 2.5f);
    edgetensor_unmap(map);
    edgetensor_release(back);

    // A refused import still runs the producer's deleter, exactly once.
    static int deletes;
    deletes = 0;
    float data[4] = {};
    int64_t dshape[1] = {4};
    DLManagedTensor gpu{};
    gpu.dl_tensor = {data, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, dshape, nullptr, 0};
    gpu.deleter = [](DLManagedTensor*) { ++deletes; };
    EXPECT_EQ(edgetensor_from_dlpack(&gpu, &back), -ENOTSUP);
    EXPECT_EQ(deletes, 1);
    EXPECT_EQ(edgetensor_from_dlpack(&gpu, nullptr), -EINVAL);
    EXPECT_EQ(deletes, 2) << "ownership is taken even when the call is misused";
}

} // namespace
