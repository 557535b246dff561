// SPDX-License-Identifier: MIT
// Built against the staged install only (see check-install.sh).
#include <edgetensor/tensor.hpp>

#include <cstdio>

int main()
{
    auto t = edgetensor::Tensor<float>::create({2, 3});
    if (!t) {
        std::fprintf(stderr, "create failed: %s\n", t.error().message().c_str());
        return 1;
    }
    std::printf("installed edgetensor works: %zu bytes in %s memory\n", t->size(),
                std::string(edgetensor::memory_name(t->memory())).c_str());
    return 0;
}
