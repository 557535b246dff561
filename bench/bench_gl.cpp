// SPDX-License-Identifier: MIT
//
// The converter's GL backend beside its CPU engine, in one run, on whatever GL the host has
// (Mesa llvmpipe on a machine without a GPU). 1920x1080 NV12 in host memory -> 640x640:
//   compute:cpu            the CPU engine, one thread
//   compute:gl             OpenGL ES 3: the frame uploaded (2 planes), rendered, read back
//                          into host memory
//   compute:gl/dst:pbo     the same, read back into a PBO (GL side; no CPU copy of the output)
// for u8 RGB HWC (variant:0) and float32 CHW normalised (variant:1). Frames per second are the
// items_per_second counter, wall-clock time (GL runs on its own thread and llvmpipe's).

#include <edgetensor/convert.hpp>
#include <edgetensor/gl.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace
{

using namespace edgetensor;

constexpr size_t kSrcW = 1920, kSrcH = 1080, kDst = 640;

TensorDyn source_frame()
{
    auto t = TensorDyn::image(kSrcW, kSrcH, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite,
                              TensorMemory::Mem);
    auto m = t->map();
    for (size_t p = 0; p < 2; ++p) {
        const auto& pl = m->plane(p);
        const size_t rows = p ? kSrcH / 2 : kSrcH;
        for (size_t r = 0; r < rows; ++r)
            for (size_t c = 0; c < kSrcW; ++c)
                pl.data[r * pl.row_stride + c] =
                    uint8_t(p ? 16 + (c * 224 / kSrcW + r) % 224 : 16 + (c + (r ^ c)) % 220);
    }
    return *t;
}

ConvertConfig config(int variant, ConvertCompute compute)
{
    ConvertConfig c;
    c.src_format = ConvertFormat::Nv12;
    c.src_width = kSrcW;
    c.src_height = kSrcH;
    c.src_colorimetry.encoding = ColorEncoding::Bt709;
    c.src_colorimetry.range = ColorRange::Limited;
    c.dst_width = c.dst_height = kDst;
    c.compute = compute;
    if (variant == 1) {
        c.dtype = DType::F32;
        c.layout = TensorLayout::Chw;
        c.mean = {123.675f, 116.28f, 103.53f, 0.f};
        c.std = {58.395f, 57.12f, 57.375f, 1.f};
    }
    return c;
}

void BM_Convert(benchmark::State& state)
{
    const int variant = int(state.range(0));
    const auto compute = ConvertCompute(state.range(1));
    const bool pbo = state.range(2) != 0;
    auto conv = Converter::create(config(variant, compute));
    if (!conv) {
        state.SkipWithError(conv.error().message().c_str());
        return;
    }
    std::optional<GlContext> ctx;
    Result<TensorDyn> dst = make_error(ErrorCode::InvalidArgument, "unset");
    if (pbo) {
        auto c = GlContext::shared();
        if (!c) {
            state.SkipWithError(c.error().message().c_str());
            return;
        }
        ctx = *c;
        dst = ctx->create_pbo(conv->config().dtype, conv->output_shape(), "bench-out");
    } else {
        dst = conv->allocate_output(TensorMemory::Mem);
    }
    if (!dst) {
        state.SkipWithError(dst.error().message().c_str());
        return;
    }
    const TensorDyn src = source_frame();
    for (auto _ : state) {
        auto r = conv->run(src, *dst);
        if (!r) {
            state.SkipWithError(r.error().message().c_str());
            return;
        }
    }
    if (pbo) {
        // The work is done once the PBO can be mapped (the readback has completed).
        auto m = dst->map_read();
        benchmark::DoNotOptimize(m);
    }
    state.SetItemsProcessed(state.iterations());
    if (compute == ConvertCompute::Gl) {
        static bool said = false;
        if (!said) {
            std::printf("GL: %s (%s)\n", conv->compute_reason().c_str(),
                        GlContext::probe() ? GlContext::probe()->platform.c_str() : "?");
            said = true;
        }
    }
}

void Args(benchmark::internal::Benchmark* b)
{
    b->ArgNames({"variant", "compute", "pbo"});
    for (int v : {0, 1}) {
        b->Args({v, int(ConvertCompute::Cpu), 0});
        b->Args({v, int(ConvertCompute::Gl), 0});
        b->Args({v, int(ConvertCompute::Gl), 1});
    }
    b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Convert)->Apply(Args);

} // namespace

BENCHMARK_MAIN();
