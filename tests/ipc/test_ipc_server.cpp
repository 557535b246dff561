// SPDX-License-Identifier: MIT
//
// The sink's serving side (ipc::Server) without GStreamer: what a receiver is sent, when a
// frame's Keepalive is dropped (its last holder released it, or left), the max-pending drop
// rule, and that nothing leaks. Also run under ThreadSanitizer: the serving thread and the
// sending thread share every receiver.

#include "ipc_fixture.hpp"
#include "ipc_records.hpp"
#include "ipc_server.hpp"
#include "ipc_socket.hpp"
#include "ipc_wire.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace edgetensor::ipc
{
namespace
{

class RecordingObserver final : public ServerObserver
{
public:
    bool log_enabled(LogLevel) const noexcept override { return true; }
    void log(LogLevel, const std::string& message) noexcept override
    {
        std::lock_guard<std::mutex> lock(mu);
        lines.push_back(message);
    }
    void refused_uid(const PeerCredentials&, int, const std::string&,
                     const std::string&) noexcept override
    {
        refusals++;
    }
    void refused(Refusal why, uint32_t max_clients, const std::string&, const std::string&,
                 bool first) noexcept override
    {
        if (why == Refusal::NoFds) {
            fd_refusals++;
            return;
        }
        full_refusals++;
        if (first)
            first_full_refusals++;
        full_limit = max_clients;
    }
    std::mutex mu;
    std::vector<std::string> lines;
    std::atomic<int> refusals{0};
    std::atomic<int> full_refusals{0};
    std::atomic<int> fd_refusals{0};
    std::atomic<int> first_full_refusals{0};
    std::atomic<uint32_t> full_limit{0};
};

using test::eventually;
using test::flat_record;
using test::next_message;
using test::sealed_memfd;

::testing::AssertionResult started(Server& server, const ServerConfig& config)
{
    StartError err{StartStep::Listen, Error(ErrorCode::Io, "")};
    if (server.start(config, &err))
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << err.error.message();
}

void count_drop(void* counter)
{
    static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

// The fd-checked socket directory with a server and a recording observer in it.
class IpcServerTest : public test::FdCheckedTest
{
protected:
    void TearDown() override
    {
        server.stop();
        FdCheckedTest::TearDown();
    }
    ServerConfig config_for_path() const
    {
        ServerConfig c;
        c.path = path;
        return c;
    }
    RecordingObserver observer;
    Server server{observer};
};

TEST_F(IpcServerTest, KeepsEachFrameUntilItsReceiverReleasesOrLeaves)
{
    ServerConfig config = config_for_path();
    config.max_pending = 2;
    ASSERT_TRUE(started(server, config));
    server.set_caps("video/x-raw, format=(string)NV12");

    auto rx = connect_to(path);
    ASSERT_TRUE(rx) << rx.error().message();
    const Message hello = next_message(rx->get());
    EXPECT_EQ(hello.type, MsgType::Hello);
    EXPECT_EQ(hello.hello.max_pending, 2u);
    EXPECT_EQ(hello.hello.sink_pid, uint64_t(::getpid()));
    const Message caps = next_message(rx->get());
    ASSERT_EQ(caps.type, MsgType::Caps);
    EXPECT_EQ(caps.caps, "video/x-raw, format=(string)NV12");

    UniqueFd mem = sealed_memfd(4096);
    const MemoryRecord rec = flat_record(4096);
    const int fds[] = {mem.get()};
    std::atomic<int> drops{0};
    std::vector<uint64_t> seqs;
    for (int i = 0; i < 3; ++i) {
        auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds,
                                   Keepalive(&drops, count_drop), true, false);
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(*r, SendOutcome::Done);
    }
    // The third frame found the receiver holding max-pending frames: dropped for it, and
    // its Keepalive with it.
    EXPECT_EQ(server.sent(), 2u);
    EXPECT_EQ(server.dropped(), 1u);
    EXPECT_EQ(server.held(), 2u);
    EXPECT_EQ(drops.load(), 1);
    for (int i = 0; i < 2; ++i) {
        Message f = next_message(rx->get());
        ASSERT_EQ(f.type, MsgType::Frame);
        EXPECT_EQ(f.frame.head.caps_seq, caps.caps_seq);
        EXPECT_TRUE(f.frame.fds[0]);
        seqs.push_back(f.frame.head.seq);
    }
    EXPECT_NE(seqs[0], seqs[1]);

    auto release = encode_release(std::span(seqs.data(), 1));
    ASSERT_TRUE(release);
    ASSERT_TRUE(send_record(rx->get(), *release));
    EXPECT_TRUE(eventually([&] { return server.held() == 1u; }));
    EXPECT_EQ(drops.load(), 2);

    // Leaving frees what the receiver still held.
    rx->reset();
    EXPECT_TRUE(eventually([&] { return server.clients() == 0u; }));
    EXPECT_TRUE(eventually([&] { return drops.load() == 3; }));
    EXPECT_EQ(server.held(), 0u);
    EXPECT_EQ(server.peak_clients(), 1u);

    server.stop();
    EXPECT_NE(::access(path.c_str(), F_OK), 0) << "stop() left the socket file";
}

// True when the sink closed `fd` without a word (what a refused receiver sees).
bool closed_without_greeting(int fd)
{
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0)
        return false;
    auto rec = receive_record(fd);
    return rec && rec->eof;
}

TEST_F(IpcServerTest, MaxClientsRefusesOneMoreBeforeItsGreeting)
{
    ServerConfig config = config_for_path();
    config.max_clients = 2;
    ASSERT_TRUE(started(server, config));

    auto a = connect_to(path);
    auto b = connect_to(path);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(next_message(a->get()).type, MsgType::Hello);
    EXPECT_EQ(next_message(b->get()).type, MsgType::Hello);
    EXPECT_TRUE(eventually([&] { return server.clients() == 2u; }));

    // A third and a fourth: disconnected before any greeting; reported first once.
    for (int i = 0; i < 2; ++i) {
        auto c = connect_to(path);
        ASSERT_TRUE(c) << c.error().message();
        EXPECT_TRUE(closed_without_greeting(c->get())) << "receiver " << i + 3;
    }
    EXPECT_TRUE(eventually([&] { return observer.full_refusals.load() == 2; }));
    EXPECT_EQ(observer.first_full_refusals.load(), 1);
    EXPECT_EQ(observer.full_limit.load(), 2u);
    EXPECT_EQ(observer.refusals.load(), 0) << "not a uid refusal";
    EXPECT_EQ(server.clients(), 2u);

    // A place freed is a place taken.
    a->reset();
    EXPECT_TRUE(eventually([&] { return server.clients() == 1u; }));
    auto d = connect_to(path);
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(next_message(d->get()).type, MsgType::Hello);
    EXPECT_TRUE(eventually([&] { return server.clients() == 2u; }));
    EXPECT_EQ(server.peak_clients(), 2u);
    server.stop();
}

double cpu_seconds()
{
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// With the fd table full, accept() fails with EMFILE and the connection stays in the backlog:
// the listening socket stays readable, and a server that only retries spins. It must refuse
// the receiver (a close before the greeting), say so, go idle, and serve again afterwards.
TEST_F(IpcServerTest, AFullFdTableRefusesTheReceiverAndDoesNotSpin_Negative)
{
    ASSERT_TRUE(started(server, config_for_path()));
    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
    rlimit low = old;
    low.rlim_cur = std::min<rlim_t>(old.rlim_cur, 512);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
    std::vector<UniqueFd> filler;
    for (;;) {
        UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (!fd)
            break;
        filler.push_back(std::move(fd));
    }
    ASSERT_FALSE(filler.empty());
    for (int round = 1; round <= 2; ++round) {
        filler.pop_back(); // exactly one slot: the receiver's own socket
        auto rx = connect_to(path);
        ASSERT_TRUE(rx) << rx.error().message();
        EXPECT_TRUE(closed_without_greeting(rx->get())) << "round " << round;
        EXPECT_TRUE(eventually([&] { return observer.fd_refusals.load() == round; }));
        // Idle while the table stays full: no poll loop on a readable listening socket.
        const double t0 = cpu_seconds();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        EXPECT_LT(cpu_seconds() - t0, 0.15) << "the serving thread spins";
        rx->reset();
        filler.push_back(UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
    }
    EXPECT_EQ(server.clients(), 0u);
    filler.clear();
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);

    auto rx = connect_to(path);
    ASSERT_TRUE(rx) << rx.error().message();
    EXPECT_EQ(next_message(rx->get()).type, MsgType::Hello) << "served once fds are back";
    EXPECT_TRUE(eventually([&] { return server.clients() == 1u; }));
}

TEST_F(IpcServerTest, UnlockEndsAWaitForAReceiver)
{
    ASSERT_TRUE(started(server, config_for_path()));
    const MemoryRecord rec = flat_record(4096);
    const int fds[] = {-1};
    std::thread unlocker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        server.unlock();
    });
    auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(), true, false);
    unlocker.join();
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(*r, SendOutcome::Flushing);
    server.unlock_stop();
}

TEST(IpcServer, NamesTheStepThatFailed)
{
    RecordingObserver observer;
    Server server(observer);
    ServerConfig config;
    config.path = "/nonexistent-dir-for-et-ipc/s";
    StartError err{StartStep::Thread, Error(ErrorCode::Io, "")};
    EXPECT_FALSE(server.start(config, &err));
    EXPECT_EQ(err.step, StartStep::Listen);
    EXPECT_FALSE(err.error.message().empty());
}

} // namespace
} // namespace edgetensor::ipc
