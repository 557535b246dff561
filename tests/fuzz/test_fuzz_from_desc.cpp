// SPDX-License-Identifier: MIT
//
// 100,000 random and mutated descriptors into TensorDyn::from_desc(): no crash, no fd leak,
// every refusal a clear error, every acceptance consistent with its descriptor and safely
// mappable. Deterministic by default; EDGETENSOR_FUZZ_SEED / EDGETENSOR_FUZZ_ITERATIONS
// override the seed and the count.

#include "fd_count.hpp"
#include "fuzz_desc_common.hpp"

#include <edgetensor/tensor.hpp>
#include <edgetensor/tensor_desc.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <map>
#include <random>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace
{

using namespace edgetensor;

uint64_t env_u64(const char* name, uint64_t fallback)
{
    const char* v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : fallback;
}

struct Seed {
    TensorDyn tensor; // keeps the buffer (and its fd) alive
    EdgeTensorDesc desc{};
};

class Corpus
{
public:
    Corpus()
    {
        add(TensorDyn::create(DType::F32, {2, 3, 4}, TensorMemory::Shm));
        add(TensorDyn::create(DType::U8, {4096}, TensorMemory::Shm));
        add(TensorDyn::create(DType::U16, {16, 64}, TensorMemory::Shm));
        add(TensorDyn::create(DType::F64, {2, 2, 2, 2, 2, 2, 2, 2}, TensorMemory::Shm));
        add(TensorDyn::image(33, 9, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                             TensorMemory::Shm));
        add(TensorDyn::image(64, 6, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite,
                             TensorMemory::Shm));
        add(TensorDyn::image(17, 5, PixelFormat::PlanarRgb, DType::F32, CpuAccess::ReadWrite,
                             TensorMemory::Shm));
        add(TensorDyn::image(20, 4, PixelFormat::Nv24, DType::U8, CpuAccess::ReadWrite,
                             TensorMemory::Shm));
        add(TensorDyn::create(DType::U8, {128}, TensorMemory::Mem)); // pointer-only HOST
        if (is_dma_available()) { // the real-kernel lane: DMABUF descriptors too
            add(TensorDyn::create(DType::U16, {8, 96}, TensorMemory::Dma));
            add(TensorDyn::image(65, 7, PixelFormat::Nv12, DType::U8, CpuAccess::ReadWrite,
                                 TensorMemory::Dma));
        }
        int p[2] = {-1, -1};
        if (::pipe2(p, O_CLOEXEC) == 0) {
            pipe_r_ = UniqueFd(p[0]);
            pipe_w_ = UniqueFd(p[1]);
        }
        empty_ = UniqueFd(::memfd_create("fuzz-empty", MFD_CLOEXEC));
    }

    const std::vector<Seed>& seeds() const { return seeds_; }
    int pipe_fd() const { return pipe_r_.get(); }
    int empty_fd() const { return empty_.get(); }

private:
    void add(Result<TensorDyn> t)
    {
        ASSERT_TRUE(t) << t.error().message();
        auto d = t->describe();
        ASSERT_TRUE(d) << d.error().message();
        seeds_.push_back({*t, *d});
    }

    std::vector<Seed> seeds_;
    UniqueFd pipe_r_, pipe_w_, empty_;
};

class Mutator
{
public:
    explicit Mutator(uint64_t seed) : rng_(seed) {}

    uint64_t below(uint64_t n) { return n ? rng_() % n : 0; }
    bool chance(unsigned percent) { return below(100) < percent; }

    uint64_t interesting()
    {
        static constexpr std::array<uint64_t, 18> values = {
            0,
            1,
            2,
            3,
            4,
            7,
            8,
            9,
            64,
            4095,
            4096,
            uint64_t(-1),
            uint64_t(-2),
            uint64_t(1) << 31,
            uint64_t(1) << 32,
            uint64_t(1) << 62,
            uint64_t(1) << 63,
            uint64_t(std::numeric_limits<int64_t>::max())};
        switch (below(4)) {
        case 0:
            return values[below(values.size())];
        case 1:
            return rng_();
        case 2:
            return below(300);
        default:
            return uint64_t(-int64_t(below(300)));
        }
    }

    void mutate(EdgeTensorDesc& d)
    {
        const uint64_t n = 1 + below(4);
        for (uint64_t i = 0; i < n; ++i) {
            switch (below(16)) {
            case 0:
                d.version = uint32_t(chance(50) ? 1 : interesting());
                break;
            case 1:
                d.kind = uint32_t(below(7));
                break;
            case 2:
                d.handle = int64_t(chance(50) ? int64_t(below(4)) - 2 : int64_t(interesting()));
                break;
            case 3:
                d.ndim = uint32_t(chance(70) ? below(10) : interesting());
                break;
            case 4:
                d.dtype = uint32_t(chance(70) ? below(12) : interesting());
                break;
            case 5:
            case 6:
                d.shape[below(8)] = chance(50) ? below(70) : interesting();
                break;
            case 7:
            case 8: {
                int64_t& s = d.strides[below(8)];
                s = int64_t(chance(50) ? uint64_t(s) + below(9) - 4 : interesting());
                break;
            }
            case 9:
                d.format = uint32_t(chance(70) ? below(13) : interesting());
                break;
            case 10:
                d.fourcc = uint32_t(chance(50) ? 0 : interesting());
                break;
            case 11:
                d.colorimetry = uint32_t(chance(50) ? below(6) << (8 * below(4)) : interesting());
                break;
            case 12:
                d.flags = uint32_t(chance(50) ? below(3) : interesting());
                break;
            case 13:
                d.capacity = chance(50) ? d.capacity + below(130) - 64 : interesting();
                break;
            case 14:
                d.sync = chance(70) ? 0 : interesting();
                break;
            default: {
                auto* bytes = reinterpret_cast<uint8_t*>(&d);
                bytes[below(sizeof(d))] ^= uint8_t(1u << below(8));
                break;
            }
            }
        }
    }

    void randomize(EdgeTensorDesc& d)
    {
        auto* bytes = reinterpret_cast<uint8_t*>(&d);
        for (size_t i = 0; i < sizeof(d); ++i)
            bytes[i] = uint8_t(rng_());
        if (chance(50))
            d.version = EDGETENSOR_DESC_VERSION;
        if (chance(50))
            d.ndim = uint32_t(1 + below(8));
    }

private:
    std::mt19937_64 rng_;
};

TEST(FuzzFromDesc, RandomAndMutatedDescriptorsNeverCrashOrLeak)
{
    const uint64_t seed = env_u64("EDGETENSOR_FUZZ_SEED", 0x5eed0ed9e7e45ull);
    const uint64_t iterations = env_u64("EDGETENSOR_FUZZ_ITERATIONS", 100000);
    SCOPED_TRACE("EDGETENSOR_FUZZ_SEED=" + std::to_string(seed));

    const auto fds_before = edgetensor::test::open_fds();
    uint64_t accepted = 0;
    std::map<ErrorCode, uint64_t> refusals;
    {
        Corpus corpus;
        ASSERT_FALSE(corpus.seeds().empty());
        Mutator mut(seed);
        for (uint64_t it = 0; it < iterations; ++it) {
            const Seed& s = corpus.seeds()[mut.below(corpus.seeds().size())];
            EdgeTensorDesc d = s.desc;
            if (mut.chance(8))
                mut.randomize(d);
            else if (!mut.chance(5)) // a few untouched seeds keep the accept path busy
                mut.mutate(d);

            int source = s.tensor.fd();
            const uint64_t pick = mut.below(100);
            if (pick < 8)
                source = -1;
            else if (pick < 14)
                source = corpus.pipe_fd();
            else if (pick < 20)
                source = corpus.empty_fd();
            else if (pick < 28)
                source = corpus.seeds()[mut.below(corpus.seeds().size())].tensor.fd();
            UniqueFd fd = source >= 0 ? UniqueFd::dup(source) : UniqueFd();
            ASSERT_EQ(fd.is_valid(), source >= 0) << "dup failed at iteration " << it;

            auto r = TensorDyn::from_desc(d, std::move(fd));
            if (r) {
                ++accepted;
                const std::string problem = edgetensor::fuzz::check_accepted(d, *r);
                ASSERT_TRUE(problem.empty()) << problem << " (iteration " << it << ")";
            } else {
                ++refusals[r.error().code()];
                ASSERT_FALSE(r.error().message().empty()) << "iteration " << it;
            }
        }
    }
    const auto fds_after = edgetensor::test::open_fds();
    EXPECT_EQ(fds_before, fds_after) << edgetensor::test::describe_fds(fds_after);

    std::string summary = "accepted " + std::to_string(accepted);
    for (const auto& [code, n] : refusals)
        summary += ", " + std::string(error_code_name(code)) + " " + std::to_string(n);
    std::printf("from_desc fuzz: %llu descriptors: %s\n", (unsigned long long)iterations,
                summary.c_str());
    // A fuzzer that never reaches the accept path tests only the first check.
    if (iterations >= 10000) {
        EXPECT_GT(accepted, iterations / 50) << summary;
        EXPECT_GT(refusals[ErrorCode::InvalidDescriptor], iterations / 4) << summary;
    }
}

} // namespace
