// SPDX-License-Identifier: MIT
//
// The IPC record parser against random and mutated records (the libFuzzer target's harness
// with a seeded generator, so every build runs it): no crash, nothing accepted that must not
// be, and every fd closed. EDGETENSOR_FUZZ_ITERATIONS overrides the 100,000 iterations.

#include "fd_count.hpp"
#include "fuzz_ipc_common.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

namespace edgetensor::fuzz
{
namespace
{

// Mutations start near-valid only if the seeds are valid.
TEST(FuzzIpcMessage, EverySeedIsAValidRecord)
{
    const IpcFds pool;
    for (unsigned seed = 1; seed < kSeedRecords; ++seed) {
        const size_t nfds = seed == 1 ? 1 : seed == 4 ? 2 : 0;
        std::vector<UniqueFd> fds;
        for (size_t i = 0; i < nfds; ++i)
            fds.push_back(UniqueFd::dup(pool.pick(0)));
        auto m = ipc::parse(seed_record(seed), std::move(fds), false);
        ASSERT_TRUE(m) << "seed " << seed << ": " << m.error().message();
        EXPECT_EQ(check_accepted(*m, nfds), "") << "seed " << seed;
        if (m->type == ipc::MsgType::Frame) {
            EXPECT_TRUE(ipc::check_frame_fds(m->frame)) << "seed " << seed;
        }
    }
}

TEST(FuzzIpcMessage, MutatedRecordsNeverCrashLeakOrPassInvalid)
{
    const char* env = std::getenv("EDGETENSOR_FUZZ_ITERATIONS");
    const long iterations = env ? std::atol(env) : 100000;
    const auto before = test::open_fds();
    {
        const IpcFds pool;
        std::mt19937_64 rng(13);
        long accepted = 0;
        for (long it = 0; it < iterations; ++it) {
            const unsigned seed = unsigned(rng() % kSeedRecords);
            std::vector<uint8_t> bytes = seed_record(seed);
            if (bytes.empty())
                bytes.resize(rng() % 512);
            const int flips = 1 + int(rng() % 4);
            for (int k = 0; k < flips; ++k) {
                switch (rng() % 4) {
                case 0: // flip a byte
                    if (!bytes.empty())
                        bytes[rng() % bytes.size()] ^= uint8_t(1u << (rng() % 8));
                    break;
                case 1: // truncate
                    if (!bytes.empty())
                        bytes.resize(rng() % bytes.size());
                    break;
                case 2: // extend
                    bytes.resize(bytes.size() + rng() % 64, uint8_t(rng()));
                    break;
                default: // a random 8-byte word anywhere
                    if (bytes.size() >= 8) {
                        const uint64_t w = rng();
                        std::memcpy(bytes.data() + rng() % (bytes.size() - 7), &w, 8);
                    }
                    break;
                }
            }
            const size_t nfds = (rng() % 8 == 0) ? rng() % 6 : (seed == 1 ? 1 : seed == 4 ? 2 : 0);
            std::vector<UniqueFd> fds;
            for (size_t i = 0; i < nfds; ++i)
                fds.push_back(UniqueFd::dup(pool.pick(unsigned(rng() % 8 == 0 ? rng() : 0))));
            auto m = ipc::parse(bytes, std::move(fds), rng() % 64 == 0);
            if (m) {
                ++accepted;
                const std::string problem = check_accepted(*m, nfds);
                ASSERT_TRUE(problem.empty()) << problem << " (iteration " << it << ")";
                if (m->type == ipc::MsgType::Frame)
                    (void)ipc::check_frame_fds(m->frame);
            }
        }
        EXPECT_GT(accepted, 0) << "the mutations never produced a valid record";
    }
    EXPECT_EQ(test::open_fds(), before) << test::describe_fds(test::open_fds());
}

} // namespace
} // namespace edgetensor::fuzz
