// SPDX-License-Identifier: MIT
//
// The per-buffer cost of the chain around the converter, ours beside stock in one run:
//  - pool acquire + release of a 1080p NV12 buffer with VIDEO_META: GstEdgeTensorBufferPool
//    against GstVideoBufferPool (what GStreamer elements allocate from);
//  - an import-cache hit against re-wrapping the fd every frame (what an element without a
//    cache does: adopt a dup of the fd as a new tensor, fstatfs + fstat + mapping included);
//  - allocating a frame and mapping it for the first time, per backend (Mem, Shm and, where a
//    provider exists, each DMA-BUF provider: run this in the VM lane for those) at 720p, 1080p
//    and 4K (backend 0 = heap, 1 = shm, 2 = dma-heap, 3 = udmabuf, 4 = drm-prime).
// Timing only; no target is asserted. docs/performance.md has the figures and the command.

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/video/gstvideopool.h>
#include <gst/video/video.h>

#include <edgetensor/dma.hpp>
#include <edgetensor/tensor.hpp>

#include "run_skipped.hpp"

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace
{

using edgetensor::CpuAccess;
using edgetensor::PixelFormat;
using edgetensor::TensorDyn;
using edgetensor::TensorMemory;

constexpr const char* kNv12_1080p = "video/x-raw,format=NV12,width=1920,height=1080,"
                                    "framerate=30/1";

// ---- pools ---------------------------------------------------------------------------------

GstBufferPool* make_pool(bool ours)
{
    GstBufferPool* pool = ours ? gst_edge_tensor_buffer_pool_new() : gst_video_buffer_pool_new();
    if (!ours)
        gst_object_ref_sink(pool);
    GstCaps* caps = gst_caps_from_string(kNv12_1080p);
    GstVideoInfo info;
    gst_video_info_from_caps(&info, caps);
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, guint(GST_VIDEO_INFO_SIZE(&info)), 4, 0);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool, config)) {
        // Ours writes corrections back (the aligned DMA-BUF stride); take them, as elements do.
        config = gst_buffer_pool_get_config(pool);
        gst_buffer_pool_set_config(pool, config);
    }
    gst_caps_unref(caps);
    if (!gst_buffer_pool_set_active(pool, TRUE)) {
        gst_object_unref(pool);
        return nullptr;
    }
    return pool;
}

void BM_PoolAcquireRelease(benchmark::State& state)
{
    const bool ours = state.range(0) == 1;
    GstBufferPool* pool = make_pool(ours);
    if (!pool) {
        state.SkipWithError("pool activation failed");
        return;
    }
    for (auto _ : state) {
        GstBuffer* buf = nullptr;
        if (gst_buffer_pool_acquire_buffer(pool, &buf, nullptr) != GST_FLOW_OK) {
            state.SkipWithError("acquire failed");
            break;
        }
        benchmark::DoNotOptimize(buf);
        gst_buffer_unref(buf);
    }
    state.SetLabel(ours ? "GstEdgeTensorBufferPool" : "GstVideoBufferPool");
    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
}

// ---- import --------------------------------------------------------------------------------

// A foreign 1080p NV12 frame: a memfd wrapped by GStreamer's own fd allocator, as a decoder or
// another process would hand it over.
struct ForeignFrame {
    int fd = -1;
    GstBuffer* buffer = nullptr;
    GstAllocator* fd_alloc = nullptr;
    GstVideoInfo info{};

    ForeignFrame()
    {
        GstCaps* caps = gst_caps_from_string(kNv12_1080p);
        gst_video_info_from_caps(&info, caps);
        gst_caps_unref(caps);
        fd = memfd_create("bench-foreign", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, off_t(GST_VIDEO_INFO_SIZE(&info))) != 0)
            return;
        fd_alloc = gst_fd_allocator_new();
        buffer = gst_buffer_new();
        gst_buffer_append_memory(buffer,
                                 gst_fd_allocator_alloc(fd_alloc, fd, GST_VIDEO_INFO_SIZE(&info),
                                                        GST_FD_MEMORY_FLAG_DONT_CLOSE));
    }
    ~ForeignFrame()
    {
        if (buffer)
            gst_buffer_unref(buffer);
        if (fd_alloc)
            gst_object_unref(fd_alloc);
        if (fd >= 0)
            close(fd);
    }
};

void BM_ImportCacheHit(benchmark::State& state)
{
    ForeignFrame f;
    if (!f.buffer) {
        state.SkipWithError("memfd unavailable");
        return;
    }
    GstEdgeTensorImportCache* cache = gst_edge_tensor_import_cache_new(8);
    GstCaps* caps = gst_caps_from_string(kNv12_1080p);
    gst_edge_tensor_import_cache_set_caps(cache, caps);
    gst_caps_unref(caps);
    guint64 id = 0;
    if (gst_edge_tensor_import_cache_import(cache, f.buffer, &id, nullptr) !=
        GST_EDGE_TENSOR_IMPORT_MISS) {
        state.SkipWithError("the first import was not a miss");
    }
    for (auto _ : state) {
        const auto r = gst_edge_tensor_import_cache_import(cache, f.buffer, &id, nullptr);
        if (r != GST_EDGE_TENSOR_IMPORT_HIT) {
            state.SkipWithError("not a hit");
            break;
        }
        benchmark::DoNotOptimize(id);
    }
    gst_edge_tensor_import_cache_free(cache);
}

void BM_ImportRewrapFd(benchmark::State& state)
{
    ForeignFrame f;
    if (!f.buffer) {
        state.SkipWithError("memfd unavailable");
        return;
    }
    const edgetensor::PlaneLayout planes[2] = {
        {GST_VIDEO_INFO_PLANE_OFFSET(&f.info, 0), size_t(GST_VIDEO_INFO_PLANE_STRIDE(&f.info, 0))},
        {GST_VIDEO_INFO_PLANE_OFFSET(&f.info, 1), size_t(GST_VIDEO_INFO_PLANE_STRIDE(&f.info, 1))}};
    for (auto _ : state) {
        auto t = TensorDyn::from_fd_image(edgetensor::UniqueFd(fcntl(f.fd, F_DUPFD_CLOEXEC, 0)),
                                          1920, 1080, PixelFormat::Nv12, planes,
                                          edgetensor::DType::U8, CpuAccess::Read, "rewrap");
        if (!t) {
            state.SkipWithError(t.error().message().c_str());
            break;
        }
        benchmark::DoNotOptimize(t->buffer_identity().id());
    }
}

// ---- allocation + first map ----------------------------------------------------------------

// Backends by argument: the two host ones, then each DMA-BUF provider on its own.
enum Backend : int64_t { kMem, kShm, kDmaHeap, kUdmabuf, kDrmPrime };

void BM_AllocFirstMap(benchmark::State& state)
{
    const auto backend = Backend(state.range(0));
    const size_t w = size_t(state.range(1)), h = size_t(state.range(2));
    TensorMemory memory = backend == kMem   ? TensorMemory::Mem
                          : backend == kShm ? TensorMemory::Shm
                                            : TensorMemory::Dma;
    if (memory == TensorMemory::Dma) {
        const edgetensor::DmaProvider provider =
            backend == kDmaHeap   ? edgetensor::DmaProvider::DmaHeap
            : backend == kUdmabuf ? edgetensor::DmaProvider::Udmabuf
                                  : edgetensor::DmaProvider::DrmPrime;
        if (!edgetensor::is_dma_provider_available(provider)) {
            state.SkipWithError((std::string(edgetensor::dma_provider_name(provider)) +
                                 " is not available here (run in the VM lane)")
                                    .c_str());
            return;
        }
        const edgetensor::DmaProvider only[] = {provider};
        if (!edgetensor::set_dma_providers(only)) {
            state.SkipWithError("cannot select the provider");
            return;
        }
    }
    for (auto _ : state) {
        auto t = TensorDyn::image(w, h, PixelFormat::Nv12, edgetensor::DType::U8,
                                  CpuAccess::ReadWrite, memory, "bench");
        if (!t) {
            state.SkipWithError(t.error().message().c_str());
            break;
        }
        auto m = t->map_write();
        if (!m) {
            state.SkipWithError(m.error().message().c_str());
            break;
        }
        benchmark::DoNotOptimize(m->data().data());
        if (state.iterations() == 1)
            state.SetLabel(std::string(t->provider()));
    }
    if (memory == TensorMemory::Dma)
        edgetensor::reset_dma_providers();
}

void alloc_args(benchmark::internal::Benchmark* b)
{
    for (Backend k : {kMem, kShm, kDmaHeap, kUdmabuf, kDrmPrime})
        for (auto [w, h] : {std::pair{1280, 720}, std::pair{1920, 1080}, std::pair{3840, 2160}})
            b->Args({int64_t(k), w, h});
    b->ArgNames({"backend", "w", "h"});
}

BENCHMARK(BM_PoolAcquireRelease)->Arg(0)->Arg(1)->ArgName("ours");
BENCHMARK(BM_ImportCacheHit);
BENCHMARK(BM_ImportRewrapFd);
BENCHMARK(BM_AllocFirstMap)->Apply(alloc_args)->Unit(benchmark::kMicrosecond);

/// Prints the ratios after the table, from the runs' CPU time per iteration (ns).
class SummaryReporter : public benchmark::ConsoleReporter
{
public:
    SummaryReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

    void ReportRuns(const std::vector<Run>& runs) override
    {
        for (const auto& r : runs)
            if (r.run_type == Run::RT_Iteration && !edgetensor::bench::run_skipped(r) &&
                r.iterations > 0)
                ns_[r.benchmark_name()] =
                    r.GetAdjustedCPUTime() * 1e9 / benchmark::GetTimeUnitMultiplier(r.time_unit);
        ConsoleReporter::ReportRuns(runs);
    }

    void Finalize() override
    {
        ConsoleReporter::Finalize();
        std::printf("\nsummary (CPU time per buffer)\n");
        const double stock = find("BM_PoolAcquireRelease/ours:0");
        const double ours = find("BM_PoolAcquireRelease/ours:1");
        if (stock > 0 && ours > 0)
            std::printf("  pool acquire+release, 1080p NV12 + video meta: ours %.0f ns, "
                        "GstVideoBufferPool %.0f ns: %.2fx (target <= 1.2x)\n",
                        ours, stock, ours / stock);
        const double hit = find("BM_ImportCacheHit");
        const double rewrap = find("BM_ImportRewrapFd");
        if (hit > 0 && rewrap > 0)
            std::printf("  import-cache hit %.0f ns (target <= 1000 ns), re-wrapping the fd "
                        "%.0f ns: hit is %.1fx cheaper (target >= 20x)\n",
                        hit, rewrap, rewrap / hit);
    }

private:
    double find(const std::string& name) const
    {
        auto it = ns_.find(name);
        return it == ns_.end() ? 0.0 : it->second;
    }
    std::map<std::string, double> ns_;
};

} // namespace

int main(int argc, char** argv)
{
    gst_init(nullptr, nullptr);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    SummaryReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
