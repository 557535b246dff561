// SPDX-License-Identifier: MIT
//
// cuda_map() of PBO tensors: registration, map and unmap on the GL context's own thread; the
// PBO locked against CPU maps and GL converters while CUDA holds it (and the other way round);
// the registration dropped before the buffer is deleted, also when the context shuts down
// first; every failing CUDA call reported and undone.

#include "../gl/gl_test_util.hpp"
#include "cuda_test_util.hpp"
#include "gl/gl_worker.hpp"

#include <edgetensor/convert.hpp>
#include <edgetensor/gl.hpp>

#include <thread>

namespace edgetensor::test
{
namespace
{

class CudaPbo : public CudaTest
{
protected:
    /// The kernel thread id of `w`'s GL thread.
    static long gl_tid(detail::gl::Worker& w)
    {
        auto r = w.call<long>([]() -> Result<long> { return this_tid(); });
        return r ? *r : -1;
    }
    /// Waits until every task queued on `w` so far (a PBO's release) has run.
    static void drain(detail::gl::Worker& w)
    {
        (void)w.call<int>([]() -> Result<int> { return 0; });
    }
    static void fill(const TensorDyn& t, uint8_t seed)
    {
        auto m = t.map_write();
        ASSERT_TRUE(m) << m.error().message();
        auto d = m->data();
        for (size_t i = 0; i < d.size(); ++i)
            d[i] = uint8_t(seed + i * 5);
    }
};

#define ET_SHARED_WORKER(var)                                                                      \
    ET_GL_CONTEXT_OR_SKIP(var##_ctx);                                                              \
    auto var##_r = detail::gl::shared_worker();                                                    \
    ASSERT_TRUE(var##_r) << var##_r.error().message();                                             \
    detail::gl::Worker& var = **var##_r

TEST_F(CudaPbo, EveryInteropCallRunsOnTheGlThread)
{
    ET_SIM_OR_SKIP();
    ET_SHARED_WORKER(w);
    auto t = w_ctx.create_pbo(DType::U8, {4096}, "routed");
    ASSERT_TRUE(t) << t.error().message();
    const long gl = gl_tid(w);
    ASSERT_GT(gl, 0);
    ASSERT_NE(gl, this_tid());
    {
        auto m = t->cuda_map();
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(m->memory(), TensorMemory::Pbo);
        EXPECT_EQ(m->size_bytes(), 4096u);
    }
    *t = TensorDyn();
    drain(w);
    for (const char* fn : {"cudaGraphicsGLRegisterBuffer", "cudaGraphicsMapResources",
                           "cudaGraphicsResourceGetMappedPointer", "cudaGraphicsUnmapResources",
                           "cudaGraphicsUnregisterResource"}) {
        EXPECT_EQ(sim_->calls(fn), 1) << fn;
        EXPECT_EQ(sim_->thread(fn), gl) << fn << " ran off the GL thread";
    }
}

TEST_F(CudaPbo, CudaReadsWhatTheCpuWroteAndTheCpuSeesWhatCudaWrote)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {64, 64}, "values");
    ASSERT_TRUE(t) << t.error().message();
    fill(*t, 9);
    std::vector<uint8_t> back(4096, 0);
    {
        auto m = t->cuda_map();
        ASSERT_TRUE(m) << m.error().message();
        auto host = copy_to_host(*m, 4096);
        for (size_t i = 0; i < host.size(); ++i)
            ASSERT_EQ(host[i], uint8_t(9 + i * 5)) << i;
        for (size_t i = 0; i < back.size(); ++i)
            back[i] = uint8_t(255 - i);
        ASSERT_EQ(cuda_api().cudaMemcpy(m->device_ptr(), back.data(), back.size(),
                                        detail::cuda::cudaMemcpyHostToDevice),
                  detail::cuda::cudaSuccess);
    }
    auto cpu = t->map_read();
    ASSERT_TRUE(cpu) << cpu.error().message();
    EXPECT_TRUE(std::equal(back.begin(), back.end(), cpu->cdata().begin()));
}

TEST_F(CudaPbo, RegisteredOnceMappedPerGuardNestedGuardsShareTheMapping)
{
    ET_SIM_OR_SKIP();
    ET_GL_CONTEXT_OR_SKIP(w_ctx);
    auto t = w_ctx.create_pbo(DType::U8, {4096});
    ASSERT_TRUE(t) << t.error().message();
    for (int i = 0; i < 3; ++i) {
        auto a = t->cuda_map();
        ASSERT_TRUE(a) << a.error().message();
        auto b = t->cuda_map();
        ASSERT_TRUE(b) << b.error().message();
        EXPECT_EQ(a->device_ptr(), b->device_ptr());
        EXPECT_EQ(sim_->live("mapped"), 1);
        a->reset();
        EXPECT_EQ(sim_->live("mapped"), 1) << "the other guard still uses the mapping";
    }
    EXPECT_EQ(sim_->live("mapped"), 0);
    EXPECT_EQ(sim_->calls("cudaGraphicsGLRegisterBuffer"), 1);
    EXPECT_EQ(sim_->calls("cudaGraphicsMapResources"), 3);
    EXPECT_EQ(sim_->calls("cudaGraphicsUnmapResources"), 3);
    EXPECT_EQ(sim_->live("resources"), 1) << "the registration lasts as long as the PBO";
}

TEST_F(CudaPbo, ViewPointerIsOffsetToTheWindow)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t =
        ctx.create_pbo_image(64, 32, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite, "img");
    ASSERT_TRUE(t) << t.error().message();
    fill(*t, 1);
    auto view = t->view(Region{8, 4, 16, 8});
    ASSERT_TRUE(view) << view.error().message();
    auto whole = t->cuda_map();
    ASSERT_TRUE(whole) << whole.error().message();
    auto vm = view->cuda_map();
    ASSERT_TRUE(vm) << vm.error().message();
    EXPECT_EQ(static_cast<uint8_t*>(vm->device_ptr()),
              static_cast<uint8_t*>(whole->device_ptr()) + view->offset());
    EXPECT_EQ(vm->size_bytes(), 7u * 64 * 4 + 16 * 4);
    auto host = copy_to_host(*vm, vm->size_bytes());
    const size_t start = (4 * 64 + 8) * 4;
    EXPECT_EQ(host[0], uint8_t(1 + start * 5));
    EXPECT_EQ(host[64 * 4], uint8_t(1 + (start + 64 * 4) * 5));
}

TEST_F(CudaPbo, NegativeCpuMapIsRefusedWhileCudaHoldsThePbo)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {256}, "locked");
    ASSERT_TRUE(t) << t.error().message();
    {
        auto m = t->cuda_map();
        ASSERT_TRUE(m) << m.error().message();
        auto cpu = t->map_read();
        ASSERT_FALSE(cpu);
        EXPECT_EQ(cpu.error().code(), ErrorCode::InvalidArgument);
        EXPECT_NE(cpu.error().message().find("mapped for CUDA"), std::string::npos)
            << cpu.error().message();
    }
    EXPECT_TRUE(t->map_read()) << "the CPU may map it once the guard is gone";
}

TEST_F(CudaPbo, NegativeCudaMapIsRefusedWhileTheCpuHoldsThePbo)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {256}, "cpu-held");
    ASSERT_TRUE(t) << t.error().message();
    {
        auto cpu = t->map_write();
        ASSERT_TRUE(cpu);
        auto m = t->cuda_map();
        ASSERT_FALSE(m);
        EXPECT_EQ(m.error().code(), ErrorCode::InvalidArgument);
        EXPECT_NE(m.error().message().find("mapped for the CPU"), std::string::npos)
            << m.error().message();
    }
    EXPECT_TRUE(t->cuda_map());
}

TEST_F(CudaPbo, NegativeGlConverterRefusesAPboCudaHolds)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    ConvertConfig cfg;
    cfg.src_format = ConvertFormat::Rgba;
    cfg.src_width = 32;
    cfg.src_height = 16;
    cfg.dst_format = OutputFormat::Rgba;
    cfg.compute = ConvertCompute::Gl;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    auto src = TensorDyn::image(32, 16, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem);
    ASSERT_TRUE(src);
    auto dst = ctx.create_pbo(DType::U8, conv->output_shape(), "gl-dst");
    ASSERT_TRUE(dst) << dst.error().message();
    auto m = dst->cuda_map();
    ASSERT_TRUE(m) << m.error().message();
    auto r = conv->run(*src, *dst);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("mapped for CUDA"), std::string::npos)
        << r.error().message();
    m->reset();
    EXPECT_TRUE(conv->run(*src, *dst));
}

TEST_F(CudaPbo, TheRegistrationIsDroppedOnTheGlThreadBeforeTheBufferIsDeleted)
{
    ET_SIM_OR_SKIP();
    ET_SHARED_WORKER(w);
    {
        auto t = w_ctx.create_pbo(DType::F32, {32, 32}, "dropped");
        ASSERT_TRUE(t) << t.error().message();
        auto view = t->view(Region{0, 0, 4, 4});
        ASSERT_TRUE(view);
        ASSERT_TRUE(view->cuda_map());
        EXPECT_EQ(sim_->live("resources"), 1);
    }
    drain(w);
    EXPECT_EQ(sim_->live("resources"), 0);
    EXPECT_EQ(sim_->calls("cudaGraphicsUnregisterResource"), 1);
    EXPECT_EQ(sim_->thread("cudaGraphicsUnregisterResource"), gl_tid(w));
    // The simulator checks at unregister that the GL buffer still exists (TearDown).
}

TEST_F(CudaPbo, AContextShuttingDownFirstUnregistersItsPbosThenPboCallsAreDisconnected)
{
    ET_SIM_OR_SKIP();
    ET_GL_CONTEXT_OR_SKIP(keep); // keeps the display initialised across contexts
    auto own = GlContext::create();
    ASSERT_TRUE(own) << own.error().message();
    auto t = own->create_pbo(DType::U8, {1024}, "orphan");
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_TRUE(t->cuda_map());
    EXPECT_EQ(sim_->live("resources"), 1);
    *own = GlContext(); // the last owner: the context shuts down, the PBO lives on
    EXPECT_EQ(sim_->live("resources"), 0);
    EXPECT_EQ(sim_->calls("cudaGraphicsUnregisterResource"), 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::Disconnected);
    *t = TensorDyn();
    EXPECT_EQ(sim_->calls("cudaGraphicsUnregisterResource"), 1);
}

TEST_F(CudaPbo, AGuardKeepsItsContextAliveUntilItEnds)
{
    ET_SIM_OR_SKIP();
    ET_GL_CONTEXT_OR_SKIP(keep);
    auto own = GlContext::create();
    ASSERT_TRUE(own) << own.error().message();
    auto t = own->create_pbo(DType::U8, {512}, "held");
    ASSERT_TRUE(t) << t.error().message();
    fill(*t, 77);
    auto m = t->cuda_map();
    ASSERT_TRUE(m) << m.error().message();
    *own = GlContext();
    EXPECT_EQ(sim_->live("mapped"), 1);
    auto host = copy_to_host(*m, 8);
    EXPECT_EQ(host[2], uint8_t(77 + 10));
    m->reset(); // unmaps, then the context (its last owner gone) shuts down and unregisters
    EXPECT_EQ(sim_->live("mapped"), 0);
    EXPECT_EQ(sim_->live("resources"), 0);
}

TEST_F(CudaPbo, NegativeFailedRegistrationIsReportedAndRetried)
{
    ET_SIM_OR_SKIP();
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {256}, "reg-fails");
    ASSERT_TRUE(t) << t.error().message();
    sim_->fail("cudaGraphicsGLRegisterBuffer", 219, 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::Device);
    EXPECT_NE(m.error().message().find("reg-fails"), std::string::npos) << m.error().message();
    EXPECT_NE(m.error().message().find(
                  "cudaGraphicsGLRegisterBuffer failed with cudaErrorInvalidGraphicsContext"),
              std::string::npos)
        << m.error().message();
    EXPECT_EQ(sim_->live("resources"), 0);
    EXPECT_TRUE(t->map_read()) << "a failed cuda_map leaves the PBO usable";
    EXPECT_TRUE(t->cuda_map());
    EXPECT_EQ(sim_->calls("cudaGraphicsGLRegisterBuffer"), 2);
}

TEST_F(CudaPbo, NegativeFailedMapLeavesThePboUnlocked)
{
    ET_SIM_OR_SKIP();
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {256}, "map-fails");
    ASSERT_TRUE(t) << t.error().message();
    sim_->fail("cudaGraphicsMapResources", 2, 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::AllocationFailed);
    EXPECT_NE(m.error().message().find("cudaGraphicsMapResources"), std::string::npos);
    EXPECT_EQ(sim_->live("mapped"), 0);
    EXPECT_TRUE(t->map_write()) << "not locked for CUDA after a failed map";
}

TEST_F(CudaPbo, NegativeFailedPointerQueryUnmapsAgain)
{
    ET_SIM_OR_SKIP();
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {256}, "ptr-fails");
    ASSERT_TRUE(t) << t.error().message();
    sim_->fail("cudaGraphicsResourceGetMappedPointer", 211, 1);
    auto m = t->cuda_map();
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().message().find("cudaGraphicsResourceGetMappedPointer failed with "
                                       "cudaErrorNotMapped"),
              std::string::npos)
        << m.error().message();
    EXPECT_EQ(sim_->calls("cudaGraphicsUnmapResources"), 1);
    EXPECT_EQ(sim_->live("mapped"), 0);
    EXPECT_TRUE(t->map_write());
}

TEST_F(CudaPbo, GuardsFromManyThreadsShareOneMapping)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    auto t = ctx.create_pbo(DType::U8, {4096}, "threads");
    ASSERT_TRUE(t) << t.error().message();
    std::vector<std::thread> ths;
    std::atomic<int> ok{0};
    for (int i = 0; i < 4; ++i)
        ths.emplace_back([&] {
            for (int k = 0; k < 20; ++k) {
                auto m = t->cuda_map();
                if (m && m->device_ptr())
                    ++ok;
            }
        });
    for (auto& th : ths)
        th.join();
    EXPECT_EQ(ok.load(), 80);
    if (sim_) {
        EXPECT_EQ(sim_->live("mapped"), 0);
    }
    EXPECT_TRUE(t->map_read());
}

// The round trip of issue 16 on the GL side: the converter's output (what tensorconvert
// produces, on the CPU and on GL) in a PBO, read back through CUDA, equals the CPU output.
TEST_F(CudaPbo, ConverterOutputReadBackThroughCudaEqualsTheCpuOutput)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    const size_t w = 64, h = 48;
    auto src = TensorDyn::image(w, h, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem, "src");
    ASSERT_TRUE(src);
    {
        auto m = src->map_write();
        ASSERT_TRUE(m);
        auto d = m->data();
        for (size_t i = 0; i < d.size(); ++i)
            d[i] = uint8_t((i * 29) ^ (i >> 3));
    }
    ConvertConfig cfg;
    cfg.src_format = ConvertFormat::Rgba;
    cfg.src_width = w;
    cfg.src_height = h;
    cfg.dst_format = OutputFormat::Rgb;
    cfg.layout = TensorLayout::Chw;
    cfg.dtype = DType::F32;
    cfg.mean = {10.f, 20.f, 30.f, 0.f};
    cfg.std = {2.f, 4.f, 8.f, 1.f};
    auto cpu = Converter::create(cfg);
    ASSERT_TRUE(cpu) << cpu.error().message();
    auto ref = cpu->allocate_output(TensorMemory::Mem);
    ASSERT_TRUE(ref);
    ASSERT_TRUE(cpu->run(*src, *ref));

    for (ConvertCompute compute : {ConvertCompute::Cpu, ConvertCompute::Gl}) {
        SCOPED_TRACE(std::string(convert_compute_name(compute)));
        ConvertConfig c = cfg;
        c.compute = compute;
        auto conv = Converter::create(c);
        ASSERT_TRUE(conv) << conv.error().message();
        auto out = ctx.create_pbo(DType::F32, conv->output_shape(), "converted");
        ASSERT_TRUE(out) << out.error().message();
        auto r = conv->run(*src, *out);
        ASSERT_TRUE(r) << r.error().message();
        std::vector<uint8_t> host;
        {
            auto m = out->cuda_map();
            ASSERT_TRUE(m) << m.error().message();
            ASSERT_EQ(m->size_bytes(), ref->size());
            host = copy_to_host(*m, m->size_bytes());
        }
        auto want = ref->map_read();
        ASSERT_TRUE(want);
        const auto* got = reinterpret_cast<const float*>(host.data());
        const auto* exp = reinterpret_cast<const float*>(want->cdata().data());
        const size_t n = ref->len();
        if (compute == ConvertCompute::Cpu) {
            EXPECT_EQ(std::memcmp(got, exp, ref->size()), 0);
        } else {
            // GL computes in float shaders: within one 8-bit step of the CPU's output, and
            // bit-equal to the PBO's own bytes as the CPU reads them.
            for (size_t i = 0; i < n; ++i)
                ASSERT_NEAR(got[i], exp[i], 1.0 / 2.0 + 1e-3) << i;
            auto self = out->map_read();
            ASSERT_TRUE(self);
            EXPECT_EQ(std::memcmp(got, self->cdata().data(), ref->size()), 0);
        }
    }
}

} // namespace
} // namespace edgetensor::test
