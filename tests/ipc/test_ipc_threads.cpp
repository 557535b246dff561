// SPDX-License-Identifier: MIT
//
// The IPC module under threads, as the elements use it (suite tsan): frames released from
// several threads at once through one socket while another thread receives, records with fds
// crossing while the fds' owners close them, a listener accepting while clients connect, and the
// sink's back-pressure wait (Generation) handing turns between threads.

#include "fd_count.hpp"
#include "ipc_socket.hpp"
#include "ipc_wake.hpp"
#include "ipc_wire.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace edgetensor::ipc
{
namespace
{

TEST(IpcThreads, ReleasesFromManyThreadsAllArrive)
{
    const auto before = test::open_fds();
    {
        int sv[2];
        ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        UniqueFd tx(sv[0]), rx(sv[1]);
        constexpr int kThreads = 4, kEach = 500;
        std::mutex send_mu; // the elements serialise sends on one connection the same way
        std::vector<std::thread> senders;
        for (int t = 0; t < kThreads; ++t) {
            senders.emplace_back([&, t] {
                for (int i = 0; i < kEach; ++i) {
                    const uint64_t seq = uint64_t(t) * kEach + uint64_t(i);
                    auto msg = encode_release(std::span(&seq, 1));
                    ASSERT_TRUE(msg);
                    for (;;) {
                        std::lock_guard<std::mutex> lock(send_mu);
                        auto r = send_record(tx.get(), *msg);
                        if (r)
                            break;
                        ASSERT_EQ(r.error().sys_errno(), EAGAIN) << r.error().message();
                    }
                }
            });
        }
        std::set<uint64_t> got;
        while (got.size() < size_t(kThreads * kEach)) {
            pollfd p{rx.get(), POLLIN, 0};
            ASSERT_GT(::poll(&p, 1, 5000), 0) << "releases stopped arriving at " << got.size();
            auto rec = receive_record(rx.get());
            ASSERT_TRUE(rec) << rec.error().message();
            auto m = parse(rec->bytes, std::move(rec->fds), rec->truncated);
            ASSERT_TRUE(m) << m.error().message();
            got.insert(m->releases.begin(), m->releases.end());
        }
        for (auto& t : senders)
            t.join();
        EXPECT_EQ(got.size(), size_t(kThreads * kEach));
    }
    EXPECT_EQ(test::open_fds(), before) << test::describe_fds(test::open_fds());
}

// Two threads take strict turns through one counter, each waiting for the other's change as
// send_frame() waits for a release: a lost wake-up leaves both asleep and the test times out;
// a waiter that woke without its condition would break the turns. A third thread notifies
// with nothing changed, which must wake nobody for good.
TEST(IpcThreads, GenerationTurnsBetweenThreadsLoseNoWakeUp)
{
    constexpr int kTurns = 20000;
    std::mutex mu;
    Generation changed;
    int counter = 0; // under mu: even is the first thread's turn, odd the second's
    std::atomic<bool> done{false};
    auto player = [&](int parity) {
        for (int i = 0; i < kTurns; ++i) {
            std::unique_lock<std::mutex> lock(mu);
            changed.wait(lock, [&] { return counter % 2 == parity; });
            EXPECT_EQ(counter % 2, parity);
            ++counter;
            lock.unlock();
            changed.notify_all();
        }
    };
    std::thread noise([&] {
        while (!done.load())
            changed.notify_all();
    });
    std::thread a(player, 0), b(player, 1);
    a.join();
    b.join();
    done = true;
    noise.join();
    EXPECT_EQ(counter, 2 * kTurns);
}

// wait_until() gives up at its deadline (woken for nothing meanwhile), and returns as soon as
// the state it waits for comes.
TEST(IpcThreads, AGenerationWaitWithADeadlineEndsAtItOrAtTheChange)
{
    using namespace std::chrono;
    std::mutex mu;
    Generation changed;
    bool ready = false; // under mu
    std::atomic<bool> done{false};
    std::thread noise([&] {
        while (!done.load()) {
            changed.notify_all();
            std::this_thread::sleep_for(milliseconds(5));
        }
    });
    {
        std::unique_lock<std::mutex> lock(mu);
        const auto start = steady_clock::now();
        EXPECT_FALSE(changed.wait_until(lock, start + milliseconds(100), [&] { return ready; }));
        EXPECT_GE(steady_clock::now() - start, milliseconds(100));
        EXPECT_TRUE(lock.owns_lock());
    }
    std::thread setter([&] {
        std::this_thread::sleep_for(milliseconds(50));
        {
            std::lock_guard<std::mutex> lock(mu);
            ready = true;
        }
        changed.notify_all();
    });
    {
        std::unique_lock<std::mutex> lock(mu);
        const auto start = steady_clock::now();
        EXPECT_TRUE(changed.wait_until(lock, start + seconds(30), [&] { return ready; }));
        EXPECT_LT(steady_clock::now() - start, seconds(10));
    }
    setter.join();
    done = true;
    noise.join();
}

TEST(IpcThreads, AListenerAcceptsWhileClientsConnectAndSendFds)
{
    const auto before = test::open_fds();
    {
        char tmpl[] = "/tmp/et-ipc-threads-XXXXXX";
        ASSERT_TRUE(::mkdtemp(tmpl));
        const std::string path = std::string(tmpl) + "/s";
        auto l = listen_on(path, 0600);
        ASSERT_TRUE(l) << l.error().message();
        constexpr int kClients = 4;
        std::atomic<int> received{0};
        std::thread server([&] {
            std::vector<UniqueFd> clients;
            while (received.load() < kClients) {
                if (auto c = accept_on(l->get()))
                    clients.push_back(std::move(*c));
                for (auto& c : clients) {
                    auto rec = receive_record(c.get());
                    if (!rec || rec->eof)
                        continue;
                    auto m = parse(rec->bytes, std::move(rec->fds), rec->truncated);
                    if (m && m->type == MsgType::Frame)
                        ++received;
                }
                std::this_thread::yield();
            }
        });
        std::vector<std::thread> clients;
        for (int i = 0; i < kClients; ++i) {
            clients.emplace_back([&] {
                auto c = connect_to(path);
                ASSERT_TRUE(c) << c.error().message();
                UniqueFd mem(::memfd_create("ipc-thread", MFD_CLOEXEC | MFD_ALLOW_SEALING));
                ASSERT_EQ(::ftruncate(mem.get(), 4096), 0);
                MemoryRecord r;
                r.desc = edgetensor_desc_init();
                r.desc.kind = EDGETENSOR_KIND_HOST;
                r.desc.handle = 0;
                r.desc.ndim = 1;
                r.desc.shape[0] = 4096;
                r.desc.strides[0] = 1;
                r.desc.capacity = 4096;
                r.size = r.maxsize = 4096;
                FrameHead h;
                auto msg = encode_frame(h, std::span(&r, 1));
                ASSERT_TRUE(msg);
                const int fds[] = {mem.get()};
                ASSERT_TRUE(send_record(c->get(), *msg, fds));
                mem.reset(); // the record holds its own reference in flight
                pollfd p{c->get(), POLLIN, 0};
                ::poll(&p, 1, 2000); // until the server closes
            });
        }
        server.join();
        for (auto& t : clients)
            t.join();
        EXPECT_EQ(received.load(), kClients);
        ::unlink(path.c_str());
        ::rmdir(tmpl);
    }
    EXPECT_EQ(test::open_fds(), before) << test::describe_fds(test::open_fds());
}

} // namespace
} // namespace edgetensor::ipc
