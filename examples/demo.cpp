// SPDX-License-Identifier: MIT
//
// edgetensor-demo: what the library does, on whatever this host offers. Allocates on every
// backend available, imports a memfd by fd (zero-copy: the same bytes), takes a view, maps it.

#include <edgetensor/tensor.hpp>

#include <cstdio>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace edgetensor;

namespace
{

int fail(const char* what, const Error& e)
{
    std::fprintf(stderr, "demo: %s failed: %s\n", what, e.message().c_str());
    return 1;
}

void describe(const char* label, const TensorDyn& t)
{
    std::printf("  %-26s memory=%-3s provider=%-16s shape=[", label,
                std::string(memory_name(t.memory())).c_str(), std::string(t.provider()).c_str());
    for (size_t i = 0; i < t.shape().size(); ++i)
        std::printf("%s%zu", i ? ", " : "", t.shape()[i]);
    std::printf("] bytes=%zu capacity=%zu", t.size(), t.capacity_bytes());
    if (auto rs = t.row_stride())
        std::printf(" row_stride=%zu", *rs);
    std::printf(" id=%llu\n", (unsigned long long)t.buffer_identity().id());
}

} // namespace

int main()
{
    std::printf("edgetensor demo\n");
    std::printf("host: dma=%s shm=%s\n", is_dma_available() ? "yes" : "no",
                is_shm_available() ? "yes" : "no");

    std::printf("allocations:\n");
    auto generic = Tensor<uint8_t>::create({480, 640, 3}, {}, "auto");
    if (!generic)
        return fail("auto allocation", generic.error());
    describe("create (auto chain)", generic->dyn());

    for (TensorMemory m : {TensorMemory::Dma, TensorMemory::Shm, TensorMemory::Mem}) {
        auto t = Tensor<float>::create({3, 224, 224}, m);
        std::string label = "create f32 " + std::string(memory_name(m));
        if (!t) {
            std::printf("  %-26s unavailable: %s\n", label.c_str(), t.error().message().c_str());
            continue;
        }
        describe(label.c_str(), t->dyn());
    }

    auto img = Tensor<uint8_t>::image(321, 240, PixelFormat::Nv12, CpuAccess::ReadWrite);
    if (!img)
        return fail("NV12 image", img.error());
    describe("image NV12 321x240", img->dyn());

    std::printf("zero-copy import of a memfd:\n");
    int raw = memfd_create("demo-frame", MFD_CLOEXEC);
    if (raw < 0 || ftruncate(raw, 64 * 48) != 0) {
        std::perror("memfd");
        return 1;
    }
    UniqueFd owner(raw);
    {
        unsigned char* p = static_cast<unsigned char*>(
            mmap(nullptr, 64 * 48, PROT_READ | PROT_WRITE, MAP_SHARED, owner.get(), 0));
        for (int y = 0; y < 48; ++y)
            for (int x = 0; x < 64; ++x)
                p[y * 64 + x] = static_cast<unsigned char>(x + y);
        munmap(p, 64 * 48);
    }
    auto imported = Tensor<uint8_t>::from_fd(UniqueFd::dup(owner.get()), {48, 64}, "frame");
    if (!imported)
        return fail("from_fd", imported.error());
    describe("from_fd(memfd)", imported->dyn());

    auto view = imported->view({8, 4, 16, 8});
    if (!view)
        return fail("view", view.error());
    describe("view {8,4,16x8}", view->dyn());
    auto map = view->map_read();
    if (!map)
        return fail("map_read", map.error());
    const auto data = map->data();
    std::printf("  view row 0 starts at byte %zu of the buffer and reads %u %u %u ...\n",
                view->dyn().offset(), data[0], data[1], data[2]);
    std::printf("  same identity as its parent: %s\n",
                view->buffer_identity() == imported->buffer_identity() ? "yes" : "no");

    int p[2];
    if (pipe2(p, O_CLOEXEC) == 0) {
        UniqueFd read_end(p[0]), write_end(p[1]);
        auto bad = Tensor<uint8_t>::from_fd(UniqueFd::dup(read_end.get()), {4});
        if (!bad)
            std::printf("from_fd(pipe) refused as expected: %s\n", bad.error().message().c_str());
    }
    std::printf("unplanned CPU maps so far: %llu\n",
                (unsigned long long)unplanned_cpu_access_count());
    return 0;
}
