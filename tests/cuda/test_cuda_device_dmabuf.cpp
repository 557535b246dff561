// SPDX-License-Identifier: MIT
//
// A DMA-BUF of GPU memory, exported by CUDA itself (cuMemGetHandleForAddressRange), through
// the public API: from_fd, a CPU map, cuda_map() and the GL converter. It is the one DMA-BUF a
// GPU server without dma-heap, udmabuf or DRM nodes has, and a real driver decides each step,
// so the test takes either answer and checks it: a step that works must give the bytes CUDA
// wrote; a step that is refused must say why in words a user can act on (docs/cuda.md records
// what an H200 answered). Needs the real driver (libcuda.so.1): skipped against the simulated
// runtime, which CI loads; tools/cuda-device-check.sh runs it on GPU machines.

#include "cuda_test_util.hpp"
#include "fd_count.hpp"
#include "text_match.hpp"

#include <edgetensor/convert.hpp>
#include <edgetensor/gl.hpp>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace edgetensor::test
{
namespace
{

/// The few driver-API entry points the test needs, from libcuda.so.1 (not the runtime).
struct Driver {
    using CUresult = int;
    using CUdeviceptr = unsigned long long;
    void* lib = nullptr;
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuDeviceGet)(int*, int) = nullptr;
    CUresult (*cuDeviceGetAttribute)(int*, int, int) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(void**, int) = nullptr;
    CUresult (*cuCtxSetCurrent)(void*) = nullptr;
    CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t) = nullptr;
    CUresult (*cuMemFree_v2)(CUdeviceptr) = nullptr;
    CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void*, size_t) = nullptr;
    CUresult (*cuMemGetHandleForAddressRange)(void*, CUdeviceptr, size_t, int,
                                              unsigned long long) = nullptr;

    /// Empty when there is no driver or it lacks DMA-BUF export; `why` says which.
    static Driver load(std::string& why)
    {
        Driver d;
        d.lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!d.lib) {
            why = std::string("no CUDA driver: ") + ::dlerror();
            return {};
        }
        bool ok = true;
        auto sym = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(d.lib, name));
            ok = ok && fn;
        };
        sym(d.cuInit, "cuInit");
        sym(d.cuDeviceGet, "cuDeviceGet");
        sym(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
        sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
        sym(d.cuCtxSetCurrent, "cuCtxSetCurrent");
        sym(d.cuMemAlloc_v2, "cuMemAlloc_v2");
        sym(d.cuMemFree_v2, "cuMemFree_v2");
        sym(d.cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2");
        sym(d.cuMemGetHandleForAddressRange, "cuMemGetHandleForAddressRange");
        if (!ok) {
            why = "libcuda.so.1 lacks an entry point (cuMemGetHandleForAddressRange: CUDA 11.7+)";
            return {};
        }
        int dev = 0, supported = 0;
        void* ctx = nullptr;
        if (d.cuInit(0) || d.cuDeviceGet(&dev, 0) ||
            d.cuDeviceGetAttribute(&supported, 124 /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */,
                                   dev) ||
            d.cuDevicePrimaryCtxRetain(&ctx, dev) || d.cuCtxSetCurrent(ctx)) {
            why = "the CUDA driver does not start a context on device 0";
            return {};
        }
        if (!supported) {
            why = "device 0 cannot export DMA-BUFs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)";
            return {};
        }
        return d;
    }
};

/// An NV12 frame with a pattern in every byte of both planes (pitch = width).
std::vector<uint8_t> nv12_pattern(size_t w, size_t h, size_t bytes)
{
    std::vector<uint8_t> v(bytes, 0);
    for (size_t y = 0; y < h; ++y)
        for (size_t x = 0; x < w; ++x)
            v[y * w + x] = uint8_t(16 + (x * 7 + y * 3) % 220);
    for (size_t y = 0; y < h / 2; ++y)
        for (size_t x = 0; x < w; x += 2) {
            v[h * w + y * w + x] = uint8_t(64 + (x / 2) % 128);
            v[h * w + y * w + x + 1] = uint8_t(192 - y % 128);
        }
    return v;
}

class CudaDeviceDmaBuf : public CudaTest
{
};

TEST_F(CudaDeviceDmaBuf, GpuMemoryExportedByCudaIsReadOrRefusedWithTheReason)
{
    if (sim_)
        GTEST_SKIP() << "needs a real CUDA driver to export GPU memory as a DMA-BUF";
    std::string why;
    Driver drv = Driver::load(why);
    if (!drv.lib)
        GTEST_SKIP() << why;

    const size_t w = 640, h = 480, bytes = 2u << 20; // the export covers whole 2 MiB pages
    const std::vector<uint8_t> host = nv12_pattern(w, h, bytes);
    Driver::CUdeviceptr dptr = 0;
    ASSERT_EQ(drv.cuMemAlloc_v2(&dptr, bytes), 0);
    ASSERT_EQ(drv.cuMemcpyHtoD_v2(dptr, host.data(), bytes), 0);
    int fd = -1;
    const int r = drv.cuMemGetHandleForAddressRange(&fd, dptr, bytes, 1 /* DMA_BUF_FD */, 0);
    if (r != 0 || fd < 0) {
        drv.cuMemFree_v2(dptr);
        GTEST_SKIP() << "cuMemGetHandleForAddressRange(DMA_BUF_FD) failed with CUresult " << r;
    }
    auto flat = TensorDyn::from_fd(UniqueFd(::dup(fd)), DType::U8, {bytes}, "gpu-memory");
    ASSERT_TRUE(flat) << flat.error().message();
    EXPECT_EQ(flat->memory(), TensorMemory::Dma);
    const auto fds_before = open_fds();
    {
        // The CPU: the same bytes, or a refusal that says the exporter will not be mapped.
        auto m = flat->map_read();
        if (m) {
            EXPECT_EQ(std::memcmp(m->cdata().data(), host.data(), bytes), 0);
        } else {
            EXPECT_EQ(m.error().code(), ErrorCode::Io);
            EXPECT_TRUE(contains(m.error().message(), "does not let the CPU map it"))
                << m.error().message();
            EXPECT_FALSE(contains(m.error().message(), "Unknown error")) << m.error().message();
            std::printf("CPU map: %s\n", m.error().message().c_str());
        }
    }
    {
        // CUDA: the same bytes through the imported pointer, or the reason and what to use.
        auto c = flat->cuda_map();
        if (c) {
            EXPECT_EQ(copy_to_host(*c, bytes), host);
        } else {
            EXPECT_TRUE(
                contains(c.error().message(), "does not take this DMA-BUF as CUDA external memory"))
                << c.error().message();
            std::printf("cuda_map: %s\n", c.error().message().c_str());
            EXPECT_EQ(open_fds(), fds_before) << "the dup CUDA did not take is closed";
        }
    }
    {
        // The GL converter, as a tensorconvert compute=gl would meet it: the CPU engine's
        // output on a host copy (within the GL path's tolerance), or both reasons it failed.
        if (gl_built() && GlContext::probe()) {
            const PlaneLayout planes[] = {{0, w}, {w * h, w}};
            auto img = flat->as_image(w, h, PixelFormat::Nv12, planes);
            ASSERT_TRUE(img) << img.error().message();
            auto copy = TensorDyn::image(w, h, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite,
                                         TensorMemory::Mem);
            ASSERT_TRUE(copy);
            {
                auto cm = copy->map_write();
                ASSERT_TRUE(cm);
                for (size_t p = 0; p < 2; ++p) {
                    const auto pl = cm->plane(p);
                    for (size_t y = 0; y < (p ? h / 2 : h); ++y)
                        std::memcpy(pl.data + y * pl.row_stride,
                                    host.data() + (p ? w * h : 0) + y * w, w);
                }
            }
            ConvertConfig cfg;
            cfg.src_format = ConvertFormat::Nv12;
            cfg.src_width = w;
            cfg.src_height = h;
            cfg.dst_width = 320;
            cfg.dst_height = 240;
            auto cpu = Converter::create(cfg);
            cfg.compute = ConvertCompute::Gl;
            auto gl = Converter::create(cfg);
            ASSERT_TRUE(cpu && gl);
            auto ref = cpu->allocate_output(TensorMemory::Mem);
            auto out = gl->allocate_output(TensorMemory::Mem);
            ASSERT_TRUE(ref && out);
            ASSERT_TRUE(cpu->run(*copy, *ref));
            auto g = gl->run(*img, *out);
            if (g) {
                auto a = ref->map_read();
                auto b = out->map_read();
                ASSERT_TRUE(a && b);
                int worst = 0;
                for (size_t i = 0; i < a->cdata().size(); ++i)
                    worst = std::max(worst, std::abs(int(a->cdata()[i]) - int(b->cdata()[i])));
                EXPECT_LE(worst, 2) << "the GL output of the imported GPU memory, against the CPU";
            } else {
                EXPECT_TRUE(contains(g.error().message(), "can be neither imported ("))
                    << g.error().message();
                std::printf("GL converter: %s\n", g.error().message().c_str());
            }
        }
    }
    flat = unexpected(Error(ErrorCode::InvalidArgument, "released"));
    ::close(fd);
    drv.cuMemFree_v2(dptr);
}

} // namespace
} // namespace edgetensor::test
