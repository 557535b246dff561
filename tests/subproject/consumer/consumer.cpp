// SPDX-License-Identifier: MIT
//
// The core from a project that builds edgetensor as a subproject: allocate, write through a
// map, view, describe, hand to DLPack.

#include <edgetensor/tensor.hpp>

#include <dlpack/dlpack.h>

#include <cstdio>

int main()
{
    using namespace edgetensor;
    auto t = Tensor<uint8_t>::image(64, 32, PixelFormat::Rgb, CpuAccess::ReadWrite);
    if (!t) {
        std::fprintf(stderr, "image: %s\n", t.error().message().c_str());
        return 1;
    }
    {
        auto map = t->map_write();
        if (!map)
            return 1;
        map->data()[0] = 42;
    }
    auto view = t->view({8, 4, 16, 16});
    auto desc = t->dyn().describe();
    auto dl = t->dyn().to_dlpack(CpuAccess::Read);
    if (!view || !desc || !dl) {
        std::fprintf(stderr, "view/describe/to_dlpack failed\n");
        return 1;
    }
    const bool ok = (*dl)->dl_tensor.ndim == 3 && desc->ndim == 3 &&
                    static_cast<const uint8_t*>((*dl)->dl_tensor.data)[0] == 42;
    (*dl)->deleter(*dl);
    std::printf("edgetensor as a subproject: %zux%zu RGB tensor in %s memory, DLPack %s\n",
                t->width(), t->height(), std::string(memory_name(t->dyn().memory())).c_str(),
                ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
