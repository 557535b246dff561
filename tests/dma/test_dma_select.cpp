// SPDX-License-Identifier: MIT
//
// Choosing DMA-BUF providers (edgetensor/dma.hpp): names, lists, the process-wide restriction
// and EDGETENSOR_DMA_PROVIDERS. None of this needs a device, so it runs on every host.

#include "dma_test_util.hpp"
#include "text_match.hpp"

#include "storage.hpp"

#include <edgetensor/tensor.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace edgetensor;
using edgetensor::test::ScopedDmaProviders;

namespace
{

using edgetensor::test::contains;

// Sets EDGETENSOR_DMA_PROVIDERS for one test and restores what was there.
class ScopedEnv
{
public:
    ScopedEnv(const char* name, const char* value) : name_(name)
    {
        if (const char* old = std::getenv(name))
            old_ = old;
        ::setenv(name, value, 1);
    }
    ~ScopedEnv()
    {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

class DmaSelect : public ::testing::Test
{
protected:
    void SetUp() override
    {
        reset_dma_providers();
        ::unsetenv("EDGETENSOR_DMA_PROVIDERS");
    }
    void TearDown() override { reset_dma_providers(); }
};

} // namespace

TEST_F(DmaSelect, NamesRoundTrip)
{
    EXPECT_EQ(dma_provider_name(DmaProvider::DmaHeap), "dma-heap");
    EXPECT_EQ(dma_provider_name(DmaProvider::Udmabuf), "udmabuf");
    EXPECT_EQ(dma_provider_name(DmaProvider::DrmPrime), "drm-prime");
    for (DmaProvider p : kDefaultDmaProviders) {
        auto parsed = parse_dma_provider(dma_provider_name(p));
        ASSERT_TRUE(parsed) << parsed.error().message();
        EXPECT_EQ(*parsed, p);
    }
}

TEST_F(DmaSelect, DefaultOrderIsHeapThenUdmabufThenDrm)
{
    auto active = active_dma_providers();
    ASSERT_TRUE(active) << active.error().message();
    const std::vector<DmaProvider> expected = {DmaProvider::DmaHeap, DmaProvider::Udmabuf,
                                               DmaProvider::DrmPrime};
    EXPECT_EQ(*active, expected);
}

TEST_F(DmaSelect, ListParsingKeepsOrderAndAcceptsCommasAndSpaces)
{
    auto list = parse_dma_provider_list(" drm-prime, udmabuf  dma-heap ");
    ASSERT_TRUE(list) << list.error().message();
    const std::vector<DmaProvider> expected = {DmaProvider::DrmPrime, DmaProvider::Udmabuf,
                                               DmaProvider::DmaHeap};
    EXPECT_EQ(*list, expected);

    auto none = parse_dma_provider_list("none");
    ASSERT_TRUE(none) << none.error().message();
    EXPECT_TRUE(none->empty());
}

TEST_F(DmaSelect, UnknownProviderNameIsRefusedWithTheName_Negative)
{
    auto r = parse_dma_provider_list("udmabuf,ion");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_TRUE(contains(r.error().message(), "'ion'")) << r.error().message();
    EXPECT_TRUE(contains(r.error().message(), "dma-heap, udmabuf, drm-prime"))
        << r.error().message();

    auto one = parse_dma_provider("DMA-HEAP");
    ASSERT_FALSE(one);
    EXPECT_EQ(one.error().code(), ErrorCode::InvalidArgument);
}

TEST_F(DmaSelect, RepeatedEmptyOrMixedListsAreRefused_Negative)
{
    for (const char* bad : {"udmabuf,udmabuf", "", " , ", "none,udmabuf", "udmabuf none"}) {
        SCOPED_TRACE(std::string("list '") + bad + "'");
        auto r = parse_dma_provider_list(bad);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
        EXPECT_FALSE(r.error().message().empty());
    }
}

TEST_F(DmaSelect, SetProvidersRestrictsAndOrdersTheChain)
{
    const DmaProvider order[] = {DmaProvider::DrmPrime, DmaProvider::DmaHeap};
    ASSERT_TRUE(set_dma_providers(order));
    auto active = active_dma_providers();
    ASSERT_TRUE(active);
    EXPECT_EQ(*active, std::vector<DmaProvider>(std::begin(order), std::end(order)));

    reset_dma_providers();
    active = active_dma_providers();
    ASSERT_TRUE(active);
    EXPECT_EQ(active->size(), kDmaProviderCount);
}

TEST_F(DmaSelect, SetProvidersRefusesBadValuesAndKeepsThePreviousSetting_Negative)
{
    const DmaProvider good[] = {DmaProvider::Udmabuf};
    ASSERT_TRUE(set_dma_providers(good));

    const DmaProvider out_of_range[] = {static_cast<DmaProvider>(7)};
    auto r = set_dma_providers(out_of_range);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_TRUE(contains(r.error().message(), "7")) << r.error().message();

    const DmaProvider twice[] = {DmaProvider::DmaHeap, DmaProvider::DmaHeap};
    r = set_dma_providers(twice);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message(), "twice")) << r.error().message();

    auto active = active_dma_providers();
    ASSERT_TRUE(active);
    EXPECT_EQ(*active, std::vector<DmaProvider>{DmaProvider::Udmabuf});
}

TEST_F(DmaSelect, UnknownProviderValueIsNeverAvailable_Negative)
{
    EXPECT_FALSE(is_dma_provider_available(static_cast<DmaProvider>(3)));
    EXPECT_FALSE(is_dma_provider_available(static_cast<DmaProvider>(0xffffffffu)));
}

TEST_F(DmaSelect, EnvironmentListRestrictsTheChain)
{
    ScopedEnv env("EDGETENSOR_DMA_PROVIDERS", "drm-prime");
    auto active = active_dma_providers();
    ASSERT_TRUE(active) << active.error().message();
    EXPECT_EQ(*active, std::vector<DmaProvider>{DmaProvider::DrmPrime});
    EXPECT_EQ(is_dma_available(), is_drm_prime_available());

    // An explicit override wins over the environment.
    const DmaProvider heap[] = {DmaProvider::DmaHeap};
    ASSERT_TRUE(set_dma_providers(heap));
    active = active_dma_providers();
    ASSERT_TRUE(active);
    EXPECT_EQ(*active, std::vector<DmaProvider>{DmaProvider::DmaHeap});
}

TEST_F(DmaSelect, UnknownProviderInEnvironmentGivesAClearError_Negative)
{
    ScopedEnv env("EDGETENSOR_DMA_PROVIDERS", "udmabuf,bogus");
    auto active = active_dma_providers();
    ASSERT_FALSE(active);
    EXPECT_EQ(active.error().code(), ErrorCode::InvalidArgument);
    EXPECT_TRUE(contains(active.error().message(), "EDGETENSOR_DMA_PROVIDERS"))
        << active.error().message();
    EXPECT_TRUE(contains(active.error().message(), "'bogus'")) << active.error().message();

    // Nothing guesses around a broken setting: no DMA, and an explicit Dma request says why.
    EXPECT_FALSE(is_dma_available());
    auto t = TensorDyn::create(DType::U8, {64}, TensorMemory::Dma);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::InvalidArgument);
    EXPECT_TRUE(contains(t.error().message(), "bogus")) << t.error().message();
}

TEST_F(DmaSelect, EmptyListDisablesDmaAndTheChainFallsThrough)
{
    ASSERT_TRUE(set_dma_providers({}));
    EXPECT_FALSE(is_dma_available());

    auto dma = TensorDyn::create(DType::U8, {256}, TensorMemory::Dma);
    ASSERT_FALSE(dma);
    EXPECT_EQ(dma.error().code(), ErrorCode::Unavailable);
    EXPECT_TRUE(contains(dma.error().message(), "disabled")) << dma.error().message();

    auto any = TensorDyn::create(DType::U8, {256});
    ASSERT_TRUE(any) << any.error().message();
    EXPECT_NE(any->memory(), TensorMemory::Dma);
    auto img = TensorDyn::image(321, 4, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(img) << img.error().message();
    EXPECT_EQ(img->memory(), TensorMemory::Mem);
}

TEST_F(DmaSelect, AvailabilityAgreesWithTheProviders)
{
    bool any = false;
    for (DmaProvider p : kDefaultDmaProviders)
        any = any || is_dma_provider_available(p);
    EXPECT_EQ(is_dma_available(), any);
    // Probes are cached: asking twice gives the same answer.
    for (DmaProvider p : kDefaultDmaProviders)
        EXPECT_EQ(is_dma_provider_available(p), is_dma_provider_available(p));
}

TEST_F(DmaSelect, UnavailableProvidersEachSayWhy_Negative)
{
    // On a host without providers every one of them is listed with its reason; in the VM the
    // providers exist and this checks the providers the lane hid (if any).
    for (DmaProvider p : kDefaultDmaProviders) {
        if (is_dma_provider_available(p))
            continue;
        SCOPED_TRACE(std::string(dma_provider_name(p)));
        ScopedDmaProviders only({p});
        auto t = TensorDyn::create(DType::U8, {4096}, TensorMemory::Dma);
        ASSERT_FALSE(t);
        EXPECT_EQ(t.error().code(), ErrorCode::Unavailable);
        EXPECT_TRUE(contains(t.error().message(), std::string(dma_provider_name(p))))
            << t.error().message();
    }
}

TEST_F(DmaSelect, SeamRefusesZeroAndOverflowingSizes_Negative)
{
    detail::AllocRequest zero;
    zero.bytes = 0;
    auto r = detail::allocate_dma(zero);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidShape);

    detail::AllocRequest huge;
    huge.bytes = SIZE_MAX - 10;
    r = detail::allocate_dma(huge);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_TRUE(contains(r.error().message(), "overflows")) << r.error().message();
}

TEST_F(DmaSelect, SeamRefusesAnEmptyImportFd_Negative)
{
    auto r = detail::import_dma(UniqueFd(), 4096, CpuAccess::Read);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
}
