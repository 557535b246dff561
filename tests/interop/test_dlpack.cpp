// SPDX-License-Identifier: MIT
//
// DLPack export/import: zero copy both ways, the producer's deleter runs exactly once (on
// success when the last handle drops, on failure before from_dlpack returns), and
// unrepresentable tensors are refused. Run under ASan in CI to prove no leak.

#include "fd_count.hpp"
#include "require.hpp"

#include <edgetensor/tensor.hpp>

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace
{

using namespace edgetensor;

/// A producer that owns a float buffer and counts how often its deleter runs.
struct Producer {
    static inline int deletes = 0;

    DLManagedTensor managed{};
    std::vector<float> data;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;

    static DLManagedTensor* make(std::vector<int64_t> shape, std::vector<int64_t> strides = {},
                                 size_t floats = 0)
    {
        auto* p = new Producer;
        size_t n = 1;
        for (int64_t d : shape)
            n *= d > 0 ? size_t(d) : 1;
        p->data.resize(floats ? floats : n);
        for (size_t i = 0; i < p->data.size(); ++i)
            p->data[i] = float(i);
        p->shape = std::move(shape);
        p->strides = std::move(strides);
        DLTensor& t = p->managed.dl_tensor;
        t.data = p->data.data();
        t.device = {kDLCPU, 0};
        t.ndim = int(p->shape.size());
        t.dtype = {kDLFloat, 32, 1};
        t.shape = p->shape.data();
        t.strides = p->strides.empty() ? nullptr : p->strides.data();
        t.byte_offset = 0;
        p->managed.manager_ctx = p;
        p->managed.deleter = [](DLManagedTensor* self) {
            ++deletes;
            delete static_cast<Producer*>(self->manager_ctx);
        };
        return &p->managed;
    }
};

class DlpackTest : public ::testing::Test
{
protected:
    void SetUp() override { Producer::deletes = 0; }
};

TEST_F(DlpackTest, ImportWrapsWithoutCopyAndDeletesOnceAtLastHandle)
{
    DLManagedTensor* m = Producer::make({2, 3});
    float* raw = static_cast<float*>(m->dl_tensor.data);
    {
        auto imported = TensorDyn::from_dlpack(m);
        ASSERT_TRUE(imported) << imported.error().message();
        TensorDyn* t = &*imported;
        EXPECT_EQ(t->dtype(), DType::F32);
        EXPECT_EQ(t->shape(), (Shape{2, 3}));
        EXPECT_EQ(t->strides(), (std::vector<ptrdiff_t>{12, 4}));
        EXPECT_EQ(t->memory(), TensorMemory::Mem);
        EXPECT_EQ(t->provider(), "dlpack");
        auto map = t->map_as<float>(CpuAccess::ReadWrite);
        ASSERT_TRUE(map) << map.error().message();
        EXPECT_EQ(map->data().data(), raw) << "the import must not copy";
        map->data()[4] = 42.0f;
        EXPECT_EQ(raw[4], 42.0f);
        map->reset();

        TensorDyn copy = *t;
        auto row = t->batch(1);
        ASSERT_TRUE(row) << row.error().message();
        *t = TensorDyn();
        EXPECT_EQ(Producer::deletes, 0) << "copies and batches still share the memory";
        copy = TensorDyn();
        EXPECT_EQ(Producer::deletes, 0);
        auto rm = row->map_as<const float>(CpuAccess::Read);
        ASSERT_TRUE(rm);
        EXPECT_EQ(rm->cdata()[1], 42.0f);
    }
    EXPECT_EQ(Producer::deletes, 1);
}

TEST_F(DlpackTest, ImportHonoursElementStridesAndByteOffset)
{
    // A transposed 3x2 view of a 2x3 buffer, starting one row in.
    DLManagedTensor* m = Producer::make({3, 2}, {1, 3}, 12);
    m->dl_tensor.byte_offset = 3 * sizeof(float);
    {
        auto t = TensorDyn::from_dlpack(m);
        ASSERT_TRUE(t) << t.error().message();
        EXPECT_EQ(t->strides(), (std::vector<ptrdiff_t>{4, 12}));
        EXPECT_FALSE(t->is_contiguous());
        auto map = t->map_as<const float>(CpuAccess::Read);
        ASSERT_TRUE(map);
        // element (i, j) at float 3 + i + 3 j
        EXPECT_EQ(map->cdata()[0], 3.0f);
        EXPECT_EQ(map->cdata()[3], 6.0f);
    }
    EXPECT_EQ(Producer::deletes, 1);
}

struct RefusedCase {
    const char* name;
    void (*mutate)(DLManagedTensor*);
    ErrorCode code;
    const char* needle;
};

TEST_F(DlpackTest, RefusedImportsCallTheDeleterExactlyOnce_Negative)
{
    const RefusedCase cases[] = {
        {"cuda",
         [](DLManagedTensor* m) {
             m->dl_tensor.device = {kDLCUDA, 0};
         },
         ErrorCode::NotSupported, "kDLCPU"},
        {"cuda-host",
         [](DLManagedTensor* m) {
             m->dl_tensor.device = {kDLCUDAHost, 0};
         },
         ErrorCode::NotSupported, "device type 3"},
        {"bfloat16",
         [](DLManagedTensor* m) {
             m->dl_tensor.dtype = {kDLBfloat, 16, 1};
         },
         ErrorCode::NotSupported, "bfloat16"},
        {"complex",
         [](DLManagedTensor* m) {
             m->dl_tensor.dtype = {kDLComplex, 64, 1};
         },
         ErrorCode::NotSupported, "complex"},
        {"lanes",
         [](DLManagedTensor* m) {
             m->dl_tensor.dtype = {kDLFloat, 32, 4};
         },
         ErrorCode::NotSupported, "lanes"},
        {"bits",
         [](DLManagedTensor* m) {
             m->dl_tensor.dtype = {kDLInt, 4, 1};
         },
         ErrorCode::NotSupported, "4 bits"},
        {"ndim0", [](DLManagedTensor* m) { m->dl_tensor.ndim = 0; }, ErrorCode::InvalidShape,
         "ndim 0"},
        {"zero-dim", [](DLManagedTensor* m) { m->dl_tensor.shape[1] = 0; }, ErrorCode::InvalidShape,
         "is 0"},
        {"negative-dim", [](DLManagedTensor* m) { m->dl_tensor.shape[0] = -2; },
         ErrorCode::InvalidShape, "is -2"},
        {"null-data", [](DLManagedTensor* m) { m->dl_tensor.data = nullptr; },
         ErrorCode::InvalidArgument, "null data"},
        {"null-shape", [](DLManagedTensor* m) { m->dl_tensor.shape = nullptr; },
         ErrorCode::InvalidArgument, "null shape"},
        {"negative-stride",
         [](DLManagedTensor* m) {
             static int64_t s[2] = {-3, 1};
             m->dl_tensor.strides = s;
         },
         ErrorCode::NotSupported, "negative"},
        {"broadcast",
         [](DLManagedTensor* m) {
             static int64_t s[2] = {0, 1};
             m->dl_tensor.strides = s;
         },
         ErrorCode::NotSupported, "broadcast"},
        {"overlap",
         [](DLManagedTensor* m) {
             static int64_t s[2] = {1, 1};
             m->dl_tensor.strides = s;
         },
         ErrorCode::NotSupported, "overlap"},
        {"misaligned", [](DLManagedTensor* m) { m->dl_tensor.byte_offset = 2; },
         ErrorCode::NotSupported, "aligned"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        Producer::deletes = 0;
        DLManagedTensor* m = Producer::make({2, 3});
        c.mutate(m);
        auto t = TensorDyn::from_dlpack(m);
        ASSERT_FALSE(t);
        EXPECT_EQ(t.error().code(), c.code) << t.error().message();
        EXPECT_NE(t.error().message().find(c.needle), std::string::npos) << t.error().message();
        EXPECT_EQ(Producer::deletes, 1);
    }
}

TEST_F(DlpackTest, NullManagedTensorIsAnError_Negative)
{
    auto t = TensorDyn::from_dlpack(nullptr);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::InvalidArgument);
}

TEST_F(DlpackTest, ProducerWithoutDeleterIsWrapped)
{
    float data[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    DLManagedTensor m{};
    m.dl_tensor = {data, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
    auto t = TensorDyn::from_dlpack(&m);
    ASSERT_TRUE(t) << t.error().message();
    auto map = t->map_as<const float>(CpuAccess::Read);
    ASSERT_TRUE(map);
    EXPECT_EQ(map->cdata()[3], 4.0f);
}

TEST_F(DlpackTest, ExportDescribesTheMappedTensor)
{
    auto t = TensorDyn::create(DType::I16, {2, 3, 5}, TensorMemory::Shm);
    ASSERT_TRUE(t) << t.error().message();
    {
        auto w = t->map_as<int16_t>(CpuAccess::Write);
        ASSERT_TRUE(w);
        for (size_t i = 0; i < w->len(); ++i)
            w->data()[i] = int16_t(i * 3);
    }
    auto r = t->to_dlpack(CpuAccess::ReadWrite);
    ASSERT_TRUE(r) << r.error().message();
    DLManagedTensor* m = *r;
    const DLTensor& dl = m->dl_tensor;
    EXPECT_EQ(dl.device.device_type, kDLCPU);
    EXPECT_EQ(dl.device.device_id, 0);
    EXPECT_EQ(dl.ndim, 3);
    EXPECT_EQ(dl.dtype.code, kDLInt);
    EXPECT_EQ(dl.dtype.bits, 16);
    EXPECT_EQ(dl.dtype.lanes, 1);
    EXPECT_EQ(dl.shape[0], 2);
    EXPECT_EQ(dl.shape[1], 3);
    EXPECT_EQ(dl.shape[2], 5);
    EXPECT_EQ(dl.strides[0], 15);
    EXPECT_EQ(dl.strides[1], 5);
    EXPECT_EQ(dl.strides[2], 1);
    EXPECT_EQ(dl.byte_offset, 0u);
    const auto* p = static_cast<const int16_t*>(dl.data);
    EXPECT_EQ(p[1 * 15 + 2 * 5 + 4], int16_t((15 + 10 + 4) * 3));
    m->deleter(m);
}

TEST_F(DlpackTest, ExportKeepsTheTensorAliveUntilTheDeleter)
{
    DLManagedTensor* m = nullptr;
    BufferIdentity id;
    {
        auto t = TensorDyn::create(DType::F32, {8}, TensorMemory::Mem);
        ASSERT_TRUE(t);
        id = t->buffer_identity();
        auto r = t->to_dlpack(CpuAccess::Read);
        ASSERT_TRUE(r) << r.error().message();
        m = *r;
    }
    EXPECT_TRUE(id.is_alive()) << "the exported tensor must hold the storage";
    EXPECT_EQ(static_cast<float*>(m->dl_tensor.data)[7], 0.0f);
    m->deleter(m);
    EXPECT_FALSE(id.is_alive()) << "the deleter must release the storage";
}

TEST_F(DlpackTest, ExportOfAViewUsesTheParentStrides)
{
    auto t = TensorDyn::create(DType::U8, {6, 10}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto v = t->view(Region{2, 1, 4, 3});
    ASSERT_TRUE(v) << v.error().message();
    auto r = v->to_dlpack(CpuAccess::Read);
    ASSERT_TRUE(r) << r.error().message();
    DLManagedTensor* m = *r;
    EXPECT_EQ(m->dl_tensor.shape[0], 3);
    EXPECT_EQ(m->dl_tensor.shape[1], 4);
    EXPECT_EQ(m->dl_tensor.strides[0], 10);
    EXPECT_EQ(m->dl_tensor.strides[1], 1);
    auto base = t->map_read();
    ASSERT_TRUE(base);
    EXPECT_EQ(m->dl_tensor.data, base->cdata().data() + 10 + 2);
    m->deleter(m);
}

TEST_F(DlpackTest, ExportThenImportRoundTripsWithoutCopy)
{
    BufferIdentity id;
    {
        auto t = TensorDyn::create(DType::F64, {4, 4}, TensorMemory::Mem);
        ASSERT_TRUE(t);
        id = t->buffer_identity();
        auto r = t->to_dlpack(CpuAccess::ReadWrite);
        ASSERT_TRUE(r);
        void* exported = (*r)->dl_tensor.data;
        auto back = TensorDyn::from_dlpack(*r);
        ASSERT_TRUE(back) << back.error().message();
        EXPECT_NE(back->buffer_identity(), id) << "an import mints its own identity";
        EXPECT_EQ(back->shape(), t->shape());
        EXPECT_EQ(back->strides(), t->strides());
        auto m = back->map_read();
        ASSERT_TRUE(m);
        EXPECT_EQ(static_cast<const void*>(m->cdata().data()), exported);
        *t = TensorDyn();
        EXPECT_TRUE(id.is_alive()) << "the import keeps the exporter's tensor alive";
    }
    EXPECT_FALSE(id.is_alive());
}

TEST_F(DlpackTest, ExportRefusals_Negative)
{
    auto t = TensorDyn::create(DType::U8, {4}, TensorMemory::Mem);
    ASSERT_TRUE(t);
    auto none = t->to_dlpack(CpuAccess::None);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code(), ErrorCode::InvalidArgument);

    auto empty = TensorDyn().to_dlpack();
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code(), ErrorCode::InvalidArgument);

    auto luma = TensorDyn::create(DType::U8, {4, 8}, TensorMemory::Mem);
    auto chroma = TensorDyn::create(DType::U8, {2, 8}, TensorMemory::Mem);
    ASSERT_TRUE(luma && chroma);
    auto nv12 = TensorDyn::from_planes(*luma, *chroma, PixelFormat::Nv12);
    ASSERT_TRUE(nv12) << nv12.error().message();
    auto r = nv12->to_dlpack(CpuAccess::Read);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::NotSupported);
}

TEST_F(DlpackTest, ExportOfAnNv12ImageCoversBothPlanes)
{
    auto img = TensorDyn::image(16, 4, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem);
    ASSERT_TRUE(img) << img.error().message();
    auto r = img->to_dlpack(CpuAccess::Read);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ((*r)->dl_tensor.shape[0], 6);
    EXPECT_EQ((*r)->dl_tensor.shape[1], 16);
    EXPECT_EQ((*r)->dl_tensor.strides[0], int64_t(*img->row_stride()));
    (*r)->deleter(*r);
}

TEST_F(DlpackTest, ExportOfADmaBufTensorHoldsTheSyncBracket)
{
    ET_REQUIRE_DMA_OR_SKIP();
    auto t = TensorDyn::create(DType::F32, {4, 64}, TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    auto r = t->to_dlpack(CpuAccess::ReadWrite);
    ASSERT_TRUE(r) << r.error().message();
    auto* f = static_cast<float*>((*r)->dl_tensor.data);
    for (int i = 0; i < 256; ++i)
        f[i] = float(i) * 0.5f;
    (*r)->deleter(*r); // ends the CPU access: DMA_BUF_IOCTL_SYNC END (write)
    auto m = t->map_as<const float>(CpuAccess::Read);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->cdata()[255], 127.5f);
}

TEST_F(DlpackTest, NoFdLeakAcrossExportAndImport)
{
    const auto before = edgetensor::test::open_fds();
    for (int i = 0; i < 50; ++i) {
        auto t = TensorDyn::create(DType::U32, {16, 16}, TensorMemory::Shm);
        ASSERT_TRUE(t);
        auto r = t->to_dlpack(CpuAccess::ReadWrite);
        ASSERT_TRUE(r);
        auto back = TensorDyn::from_dlpack(*r);
        ASSERT_TRUE(back);
    }
    const auto after = edgetensor::test::open_fds();
    EXPECT_EQ(before, after) << edgetensor::test::describe_fds(after);
}

} // namespace
