// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta's serialization record against random and mutated bytes (the libFuzzer
// target's harness with a seeded generator, so every build runs it): no crash, and nothing
// accepted that must not be. EDGETENSOR_FUZZ_ITERATIONS overrides the 100,000 iterations.

#include "fuzz_tensor_meta_common.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

namespace edgetensor::fuzz
{
namespace
{

TEST(FuzzTensorMeta, MutatedRecordsNeverCrashOrPassInvalid)
{
    const char* env = std::getenv("EDGETENSOR_FUZZ_ITERATIONS");
    const long iterations = env ? std::atol(env) : 100000;
    std::mt19937_64 rng(17);
    long accepted = 0;
    for (long it = 0; it < iterations; ++it) {
        std::vector<uint8_t> bytes = seed_tensor_meta(unsigned(rng() % 2));
        const int flips = 1 + int(rng() % 3);
        for (int k = 0; k < flips; ++k) {
            switch (rng() % 5) {
            case 0: // flip a bit
                if (!bytes.empty())
                    bytes[rng() % bytes.size()] ^= uint8_t(1u << (rng() % 8));
                break;
            case 1: // truncate
                if (rng() % 8 == 0 && !bytes.empty())
                    bytes.resize(rng() % bytes.size());
                break;
            case 2: // extend
                if (rng() % 8 == 0)
                    bytes.resize(bytes.size() + 1 + rng() % 16, uint8_t(rng()));
                break;
            case 3: // a small number in a 4-byte field (counts, codes)
                if (bytes.size() >= 4) {
                    const uint32_t w = uint32_t(rng() % 16);
                    std::memcpy(bytes.data() + (rng() % (bytes.size() / 4)) * 4, &w, 4);
                }
                break;
            default: // a random 8-byte word anywhere
                if (bytes.size() >= 8) {
                    const uint64_t w = rng();
                    std::memcpy(bytes.data() + rng() % (bytes.size() - 7), &w, 8);
                }
                break;
            }
        }
        if (bytes.empty())
            continue;
        const uint8_t version = rng() % 32 == 0 ? uint8_t(rng()) : gst::kTensorMetaCodecVersion;
        auto f = gst::decode_tensor_meta(bytes, version);
        if (f) {
            ++accepted;
            const std::string problem = check_accepted_tensor_meta(*f, bytes);
            ASSERT_TRUE(problem.empty()) << problem << " (iteration " << it << ")";
        } else {
            ASSERT_FALSE(f.error().message().empty());
        }
    }
    EXPECT_GT(accepted, 0) << "the mutations never produced a valid record";
}

} // namespace
} // namespace edgetensor::fuzz
