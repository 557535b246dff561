// SPDX-License-Identifier: MIT
//
// What a tensor costs to get into CUDA, A/B in one run (docs/performance.md, "CUDA"):
//   copy      the usual way: cudaMemcpy host-to-device from the tensor's (pageable) heap memory
//             into device memory, every frame;
//   in place  cuda_map() of a shared-memory tensor (registered once, docs/cuda.md) and the device
//             reading it where it is: a device-to-device cudaMemcpy from the mapped pointer into
//             the same device buffer, every frame, so both sides end with the bytes in device
//             memory and the difference is who moved them.
// Per frame: wall time, the process's CPU time (the runtime's threads included) and GB/s.
// Rounds alternate copy, in place, in place, copy, ... The first cuda_map() (the registration)
// is timed on its own. Without a CUDA runtime and device it says why and exits 77.
//
//   bench/cuda_host_ab [--frames N] [--rounds R] [--width W] [--height H]

#include <edgetensor/cuda.hpp>
#include <edgetensor/tensor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace
{

using cudaError_t = int;

struct Rt {
    cudaError_t (*cudaMalloc)(void**, size_t) = nullptr;
    cudaError_t (*cudaFree)(void*) = nullptr;
    cudaError_t (*cudaMemcpy)(void*, const void*, size_t, int) = nullptr;
    cudaError_t (*cudaDeviceSynchronize)() = nullptr;
};

double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double cpu_ms()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct Sample {
    double wall = 0, cpu = 0;
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    size_t frames = 200, rounds = 3, width = 640, height = 640;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const size_t v = std::strtoull(argv[i + 1], nullptr, 10);
        if (a == "--frames")
            frames = v;
        else if (a == "--rounds")
            rounds = v;
        else if (a == "--width")
            width = v;
        else if (a == "--height")
            height = v;
    }
    auto info = edgetensor::cuda_info();
    if (!info) {
        std::printf("no CUDA: %s\n", info.error().message().c_str());
        return 77;
    }
    void* lib = dlopen(info->library.c_str(), RTLD_NOW | RTLD_NOLOAD);
    Rt rt;
    if (lib) {
        rt.cudaMalloc = reinterpret_cast<decltype(rt.cudaMalloc)>(dlsym(lib, "cudaMalloc"));
        rt.cudaFree = reinterpret_cast<decltype(rt.cudaFree)>(dlsym(lib, "cudaFree"));
        rt.cudaMemcpy = reinterpret_cast<decltype(rt.cudaMemcpy)>(dlsym(lib, "cudaMemcpy"));
        rt.cudaDeviceSynchronize = reinterpret_cast<decltype(rt.cudaDeviceSynchronize)>(
            dlsym(lib, "cudaDeviceSynchronize"));
    }
    if (!rt.cudaMalloc || !rt.cudaFree || !rt.cudaMemcpy || !rt.cudaDeviceSynchronize) {
        std::printf("%s lacks cudaMalloc/cudaMemcpy\n", info->library.c_str());
        return 1;
    }
    const edgetensor::Shape shape{3, height, width};
    const size_t bytes = 3 * height * width * sizeof(float);
    auto heap = edgetensor::TensorDyn::create(edgetensor::DType::F32, shape,
                                              edgetensor::TensorMemory::Mem, "copy");
    auto shm = edgetensor::TensorDyn::create(edgetensor::DType::F32, shape,
                                             edgetensor::TensorMemory::Shm, "in-place");
    if (!heap || !shm) {
        std::printf("cannot allocate the tensors\n");
        return 1;
    }
    for (auto* t : {&*heap, &*shm}) {
        auto m = t->map_write();
        for (size_t i = 0; i < m->data().size(); ++i)
            m->data()[i] = uint8_t(i * 31);
    }
    void* dev = nullptr;
    if (rt.cudaMalloc(&dev, bytes) != 0) {
        std::printf("cudaMalloc of %zu bytes failed\n", bytes);
        return 1;
    }
    auto heap_map = heap->map_read(); // held for the run: the copy side's source
    const uint8_t* host = heap_map->cdata().data();

    // The registration, once per storage.
    const double r0 = now_ms(), c0 = cpu_ms();
    auto first = shm->cuda_map();
    const double reg_wall = now_ms() - r0, reg_cpu = cpu_ms() - c0;
    if (!first) {
        std::printf("cuda_map of the shared-memory tensor: %s\n", first.error().message().c_str());
        return 1;
    }
    first->reset();

    auto run = [&](bool in_place) -> Sample {
        const double w0 = now_ms(), t0 = cpu_ms();
        for (size_t f = 0; f < frames; ++f) {
            if (in_place) {
                auto m = shm->cuda_map();
                rt.cudaMemcpy(dev, m->device_ptr(), bytes, 3 /* DeviceToDevice */);
                rt.cudaDeviceSynchronize();
            } else {
                rt.cudaMemcpy(dev, host, bytes, 1 /* HostToDevice */);
                rt.cudaDeviceSynchronize();
            }
        }
        return {(now_ms() - w0) / frames, (cpu_ms() - t0) / frames};
    };
    run(false); // warm both paths
    run(true);
    std::vector<double> cw, cc, iw, ic;
    for (size_t r = 0; r < rounds; ++r) {
        for (bool in_place :
             r % 2 ? std::vector<bool>{true, false} : std::vector<bool>{false, true}) {
            const Sample s = run(in_place);
            (in_place ? iw : cw).push_back(s.wall);
            (in_place ? ic : cc).push_back(s.cpu);
        }
    }
    rt.cudaFree(dev);
    std::printf("CUDA runtime %s; %zux%zux3 f32 (%.2f MB), %zu frames x %zu rounds, medians\n",
                info->library.c_str(), width, height, bytes / 1e6, frames, rounds);
    std::printf("first cuda_map() of the shared-memory tensor (registration): %.3f ms wall, %.3f "
                "ms CPU\n",
                reg_wall, reg_cpu);
    std::printf("| path | wall ms/frame | CPU ms/frame | GB/s |\n|---|---|---|---|\n");
    std::printf("| copy (cudaMemcpy H2D from heap) | %.3f | %.3f | %.1f |\n", median(cw),
                median(cc), bytes / median(cw) / 1e6);
    std::printf("| in place (cuda_map of Shm, device reads it) | %.3f | %.3f | %.1f |\n",
                median(iw), median(ic), bytes / median(iw) / 1e6);
    std::printf("in place / copy: wall %.2fx, CPU %.2fx\n", median(iw) / median(cw),
                median(ic) / median(cc));
    return 0;
}
