// SPDX-License-Identifier: MIT
//
// 1000 allocate / map / clone / import / compose / destroy cycles on real DMA-BUFs (and 300
// on each provider forced alone) leave /proc/self/fd exactly as it was: no provider leaks its
// device, memfd, GEM handle or buffer fd, and nothing is closed twice.

#include "dma_test_util.hpp"
#include "fd_count.hpp"

#include <edgetensor/tensor.hpp>

using namespace edgetensor;
using edgetensor::test::describe_fds;
using edgetensor::test::open_fds;
using edgetensor::test::ScopedDmaProviders;

namespace
{

void cycle(int rounds)
{
    for (int i = 0; i < rounds; ++i) {
        auto t = Tensor<uint8_t>::create({16, 256}, TensorMemory::Dma);
        ASSERT_TRUE(t) << t.error().message();
        ASSERT_EQ(t->memory(), TensorMemory::Dma);
        {
            auto m = t->map_write();
            ASSERT_TRUE(m) << m.error().message();
            m->data()[i % 4096] = uint8_t(i);
        }
        auto fd = t->clone_fd();
        ASSERT_TRUE(fd) << fd.error().message();
        auto imported = Tensor<uint8_t>::from_fd(std::move(*fd), {4096});
        ASSERT_TRUE(imported) << imported.error().message();
        {
            auto m = imported->map_read();
            ASSERT_TRUE(m) << m.error().message();
            ASSERT_EQ(m->cdata()[i % 4096], uint8_t(i));
        }
        auto unused = imported->clone_fd(); // dropped without use: must be closed
        ASSERT_TRUE(unused);
        auto img = TensorDyn::image(33, 9, PixelFormat::Nv12, DType::U8, CpuAccess::Write,
                                    TensorMemory::Dma);
        ASSERT_TRUE(img) << img.error().message();
        auto chroma = TensorDyn::create(DType::U8, {4, 32}, TensorMemory::Dma);
        ASSERT_TRUE(chroma) << chroma.error().message();
        auto luma = TensorDyn::create(DType::U8, {8, 32}, TensorMemory::Dma);
        ASSERT_TRUE(luma) << luma.error().message();
        auto nv12 = TensorDyn::from_planes(*luma, *chroma, PixelFormat::Nv12);
        ASSERT_TRUE(nv12) << nv12.error().message();
    }
}

} // namespace

TEST(DmaFdAccounting, DefaultChainCyclesLeaveFdsUnchanged)
{
    ET_REQUIRE_DMA_OR_SKIP();
    cycle(1); // one-time probes and caches before the snapshot
    const auto before = open_fds();
    cycle(1000);
    const auto after = open_fds();
    EXPECT_EQ(after, before) << "now open: " << describe_fds(after);
}

TEST(DmaFdAccounting, EveryProviderCyclesLeaveFdsUnchanged)
{
    ET_REQUIRE_DMA_OR_SKIP();
    size_t exercised = 0;
    for (DmaProvider p : kDefaultDmaProviders) {
        if (!is_dma_provider_available(p)) {
            EXPECT_FALSE(edgetensor::test::dma_provider_required(p))
                << dma_provider_name(p) << " is required but unavailable";
            continue;
        }
        SCOPED_TRACE(std::string(dma_provider_name(p)));
        ScopedDmaProviders only({p});
        cycle(1);
        const auto before = open_fds();
        // Fewer rounds than the default chain's 1000 (this runs three providers under TCG):
        // a per-cycle leak shows up as hundreds of fds either way.
        cycle(300);
        const auto after = open_fds();
        EXPECT_EQ(after, before) << "now open: " << describe_fds(after);
        ++exercised;
    }
    EXPECT_GE(exercised, 1u);
}
