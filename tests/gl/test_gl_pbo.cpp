// SPDX-License-Identifier: MIT
//
// The GL context owner and TensorMemory::Pbo: contexts start headless, PBO maps go through the
// GL thread, views and batches share the PBO and its identity, and once the owner is gone every
// PBO operation says "disconnected" instead of hanging or crashing.

#include "gl_test_util.hpp"

#include <edgetensor/tensor.hpp>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace edgetensor::test
{
namespace
{

TEST(GlContext, SharedContextIsHeadlessOpenGlEs3)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    const GlInfo& info = ctx.info();
    EXPECT_NE(info.version.find("OpenGL ES 3"), std::string::npos) << info.version;
    EXPECT_FALSE(info.renderer.empty());
    EXPECT_TRUE(info.platform == "surfaceless" || info.platform == "device") << info.platform;
    EXPECT_GE(info.max_texture_size, 2048);
    if (info.renderer.find("llvmpipe") != std::string::npos) {
        EXPECT_TRUE(info.software);
    }
    std::printf("GL: %s | %s | %s %s | dma-buf import %d modifiers %d\n", info.version.c_str(),
                info.renderer.c_str(), info.platform.c_str(), info.device.c_str(),
                int(info.dma_buf_import), int(info.dma_buf_import_modifiers));
}

TEST(GlContext, SharedIsOneContextWhileHeldCreateGivesAnother)
{
    ET_GL_CONTEXT_OR_SKIP(a);
    auto b = GlContext::shared();
    ASSERT_TRUE(b) << b.error().message();
    auto own = GlContext::create();
    ASSERT_TRUE(own) << own.error().message();
    auto t = a.create_pbo(DType::U8, {16});
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_TRUE(a.owns(*t));
    EXPECT_TRUE(b->owns(*t));
    EXPECT_FALSE(own->owns(*t));
}

TEST(GlContext, ContextsStartAndStopRepeatedly)
{
    ET_GL_CONTEXT_OR_SKIP(keep); // a display user that outlives the others
    for (int i = 0; i < 4; ++i) {
        auto c = GlContext::create();
        ASSERT_TRUE(c) << c.error().message();
        auto t = c->create_pbo(DType::F32, {8, 8});
        ASSERT_TRUE(t) << t.error().message();
        auto m = t->map_as<float>(CpuAccess::ReadWrite);
        ASSERT_TRUE(m);
        m->data()[3] = 1.5f;
    }
    auto t = keep.create_pbo(DType::U8, {4});
    ASSERT_TRUE(t) << "the shared context survived the others' shutdown: " << t.error().message();
}

TEST(GlContext, UnknownDeviceIsNamedInTheError_Negative)
{
    ScopedEnv dev("EDGETENSOR_GL_DEVICE", "/dev/dri/renderD199");
    auto c = GlContext::create();
    ASSERT_FALSE(c);
    EXPECT_TRUE(c.error().code() == ErrorCode::Unavailable ||
                c.error().code() == ErrorCode::NotSupported);
    if (c.error().code() == ErrorCode::Unavailable &&
        c.error().message().find("cannot load") == std::string::npos) {
        EXPECT_NE(c.error().message().find("/dev/dri/renderD199"), std::string::npos)
            << c.error().message();
    }
}

TEST(Pbo, CreatedZeroFilledAndMappedThroughTheGlThread)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U16, {3, 5}, "pbo-a");
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->memory(), TensorMemory::Pbo);
    EXPECT_EQ(t->provider(), "gl-pbo");
    EXPECT_EQ(t->fd(), -1);
    EXPECT_EQ(t->name(), "pbo-a");
    EXPECT_FALSE(t->clone_fd());
    {
        auto m = t->map_as<uint16_t>(CpuAccess::ReadWrite);
        ASSERT_TRUE(m) << m.error().message();
        ASSERT_EQ(m->len(), 15u);
        for (size_t i = 0; i < 15; ++i) {
            EXPECT_EQ(m->data()[i], 0) << i;
            m->data()[i] = uint16_t(1000 + i);
        }
    }
    // A new map (a new glMapBufferRange) sees what the last one wrote.
    auto r = t->map_as<const uint16_t>(CpuAccess::Read);
    ASSERT_TRUE(r);
    for (size_t i = 0; i < 15; ++i)
        EXPECT_EQ(r->data()[i], 1000 + i);
}

TEST(Pbo, NestedMapsShareOneMapping)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {64});
    ASSERT_TRUE(t);
    auto a = t->map();
    ASSERT_TRUE(a);
    auto b = t->map_read();
    ASSERT_TRUE(b);
    EXPECT_EQ(a->data().data(), b->data().data());
    a->data()[7] = 42;
    EXPECT_EQ(b->data()[7], 42);
}

TEST(Pbo, ViewsAndBatchesShareTheBufferAndIdentity)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::F32, {4, 6, 8});
    ASSERT_TRUE(t);
    auto b2 = t->batch(2);
    ASSERT_TRUE(b2) << b2.error().message();
    EXPECT_EQ(b2->buffer_identity(), t->buffer_identity());
    EXPECT_EQ(b2->memory(), TensorMemory::Pbo);
    EXPECT_EQ(b2->offset(), 2u * 6 * 8 * 4);
    auto v = b2->view(Region{2, 1, 3, 2});
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_EQ(v->buffer_identity(), t->buffer_identity());
    {
        auto m = v->map_as<float>(CpuAccess::Write);
        ASSERT_TRUE(m);
        // The view's map starts at its window: element (1, 2) of batch 2.
        m->data()[0] = 7.f;
        m->data()[8] = 9.f; // next row of the view
    }
    auto whole = t->map_as<const float>(CpuAccess::Read);
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->data()[2 * 48 + 1 * 8 + 2], 7.f);
    EXPECT_EQ(whole->data()[2 * 48 + 2 * 8 + 2], 9.f);
    EXPECT_EQ(whole->data()[0], 0.f);
    EXPECT_FALSE(t->batch(4)) << "batch index out of bounds";
}

TEST(Pbo, ImagesHaveTheHostLayout)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto img = ctx.create_pbo_image(321, 241, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(img) << img.error().message();
    EXPECT_TRUE(img->is_image());
    EXPECT_EQ(img->memory(), TensorMemory::Pbo);
    EXPECT_EQ(img->width(), 321u);
    EXPECT_EQ(img->plane_count(), 2u);
    auto rgb = ctx.create_pbo_image(321, 2, PixelFormat::Rgb, DType::U8, CpuAccess::Write);
    ASSERT_TRUE(rgb);
    EXPECT_EQ(rgb->row_stride().value_or(0), 963u); // tight, like every host image
}

TEST(Pbo, TheCoreDoesNotAllocatePbosItself_Negative)
{
    auto t = TensorDyn::create(DType::U8, {4}, TensorMemory::Pbo);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::NotSupported);
}

TEST(Pbo, DisconnectedOnceTheOwnerIsGone_Negative)
{
    auto c = GlContext::create();
    if (!c) {
        if (gl_required())
            FAIL() << c.error().message();
        GTEST_SKIP() << c.error().message();
    }
    auto t = c->create_pbo(DType::U8, {4, 4}, "orphan");
    ASSERT_TRUE(t);
    auto view = t->view(Region{1, 1, 2, 2});
    ASSERT_TRUE(view);
    *c = GlContext(); // the last owner: the GL thread exits
    for (const TensorDyn* x : {&*t, &*view}) {
        auto m = x->map();
        ASSERT_FALSE(m);
        EXPECT_EQ(m.error().code(), ErrorCode::Disconnected);
        EXPECT_NE(m.error().message().find("orphan"), std::string::npos) << m.error().message();
        EXPECT_NE(m.error().message().find("shut down"), std::string::npos) << m.error().message();
        EXPECT_EQ(error_code_name(m.error().code()), "Disconnected");
    }
    // Views, batches and the tensors themselves can still be handled and destroyed.
    auto b = t->batch(1);
    EXPECT_TRUE(b);
}

TEST(Pbo, AnOpenMapKeepsTheContextUntilItEnds)
{
    auto c = GlContext::create();
    if (!c) {
        if (gl_required())
            FAIL() << c.error().message();
        GTEST_SKIP() << c.error().message();
    }
    auto t = c->create_pbo(DType::U8, {256});
    ASSERT_TRUE(t);
    auto m = t->map_raw(CpuAccess::ReadWrite);
    ASSERT_TRUE(m);
    *c = GlContext();
    // Still mapped: the bytes are valid until the map ends.
    std::memset(m->bytes(), 0x5a, 256);
    EXPECT_EQ(m->bytes()[255], 0x5a);
    m->reset(); // the context shuts down here
    auto again = t->map();
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code(), ErrorCode::Disconnected);
}

TEST(Pbo, ThreadsMapAndCreateConcurrently)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto shared_t = ctx.create_pbo(DType::U32, {8, 64});
    ASSERT_TRUE(shared_t);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            for (int n = 0; n < 20; ++n) {
                auto own = ctx.create_pbo(DType::U8, {size_t(64 + i)});
                auto row = shared_t->batch(size_t(i * 2 + (n & 1)));
                if (!own || !row) {
                    failures++;
                    continue;
                }
                {
                    auto m = row->map_as<uint32_t>(CpuAccess::ReadWrite);
                    if (!m) {
                        failures++;
                        continue;
                    }
                    for (auto& v : m->data())
                        v = uint32_t(i * 1000 + n);
                }
                auto o = own->map();
                if (!o || o->data()[0] != 0)
                    failures++;
            }
        });
    }
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(failures.load(), 0);
    auto m = shared_t->map_as<const uint32_t>(CpuAccess::Read);
    ASSERT_TRUE(m);
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(m->data()[size_t(i * 2 + 1) * 64], uint32_t(i * 1000 + 19));
}

} // namespace
} // namespace edgetensor::test
