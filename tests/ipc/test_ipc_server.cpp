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
#include <memory>
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
    void over_byte_bound(uint64_t frame_bytes, uint64_t held_bytes, uint64_t bound, bool dropped,
                         bool first) noexcept override
    {
        std::lock_guard<std::mutex> lock(mu);
        bound_reports.push_back({frame_bytes, held_bytes, bound, dropped, first});
    }
    void waiting_for_receiver(const HoldUp& who) noexcept override
    {
        std::lock_guard<std::mutex> lock(mu);
        wait_reports.push_back(who);
    }
    void gave_up_on_receiver(const HoldUp& who) noexcept override
    {
        std::lock_guard<std::mutex> lock(mu);
        give_up_reports.push_back(who);
    }
    std::vector<HoldUp> waits()
    {
        std::lock_guard<std::mutex> lock(mu);
        return wait_reports;
    }
    std::vector<HoldUp> give_ups()
    {
        std::lock_guard<std::mutex> lock(mu);
        return give_up_reports;
    }
    struct BoundReport {
        uint64_t frame_bytes, held_bytes, bound;
        bool dropped, first;
    };
    bool logged(const std::string& part)
    {
        std::lock_guard<std::mutex> lock(mu);
        return std::any_of(lines.begin(), lines.end(),
                           [&](const std::string& l) { return l.find(part) != std::string::npos; });
    }
    std::vector<BoundReport> reports()
    {
        std::lock_guard<std::mutex> lock(mu);
        return bound_reports;
    }
    std::mutex mu;
    std::vector<BoundReport> bound_reports;
    std::vector<HoldUp> wait_reports;
    std::vector<HoldUp> give_up_reports;
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
        frame_mem_.reset();
        FdCheckedTest::TearDown();
    }
    // A frame of one 4096-byte memfd (the same file every time), held by `keep`.
    Result<SendOutcome> send_one(Keepalive keep, bool wait_for_connection, bool block)
    {
        if (!frame_mem_)
            frame_mem_ = sealed_memfd(4096);
        const MemoryRecord rec = flat_record(4096);
        const int fds[] = {frame_mem_.get()};
        return server.send_frame(FrameHead{}, std::span(&rec, 1), fds, std::move(keep),
                                 wait_for_connection, block);
    }
    ServerConfig config_for_path() const
    {
        ServerConfig c;
        c.path = path;
        return c;
    }
    // Started with NV12 caps, and one receiver connected: its end of the socket.
    UniqueFd start_with_one_receiver(const ServerConfig& config)
    {
        EXPECT_TRUE(started(server, config));
        server.set_caps("video/x-raw, format=(string)NV12");
        auto rx = connect_to(path);
        EXPECT_TRUE(rx) << rx.error().message();
        EXPECT_TRUE(eventually([&] { return server.clients() == 1u; }));
        return rx ? std::move(*rx) : UniqueFd();
    }
    // The receiver's end of a server started with these bounds, after `frames` blocking sends.
    UniqueFd start_and_send(uint32_t max_pending, uint32_t report_wait_ms, uint64_t max_held_bytes,
                            int frames)
    {
        ServerConfig config = config_for_path();
        config.max_pending = max_pending;
        config.report_wait_ms = report_wait_ms;
        config.max_held_bytes = max_held_bytes;
        UniqueFd rx = start_with_one_receiver(config);
        for (int i = 0; i < frames && rx; ++i)
            EXPECT_TRUE(send_one(Keepalive(), false, true));
        return rx;
    }
    RecordingObserver observer;
    Server server{observer};

private:
    UniqueFd frame_mem_;
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
    // The serving thread counts the frame out under its lock and lets the Keepalive go after
    // it (a Keepalive may unref a GstBuffer): held() can say 1 an instant before drops says 2.
    EXPECT_TRUE(eventually([&] { return drops.load() == 2; }));
    EXPECT_EQ(server.held(), 1u);

    // Leaving frees what the receiver still held.
    rx->reset();
    EXPECT_TRUE(eventually([&] { return server.clients() == 0u; }));
    EXPECT_TRUE(eventually([&] { return drops.load() == 3; }));
    EXPECT_EQ(server.held(), 0u);
    EXPECT_EQ(server.peak_clients(), 1u);

    server.stop();
    EXPECT_NE(::access(path.c_str(), F_OK), 0) << "stop() left the socket file";
}

// The FRAME is sent outside the server's lock, after the frame was counted as held for its
// receiver: when the socket refuses it (full, EAGAIN) it is dropped and no longer held, and
// when the receiver is gone (EPIPE) it is reaped with what it held; nothing stays pinned.
TEST_F(IpcServerTest, AFrameTheSocketRefusesIsDroppedAndNotHeld_Negative)
{
    ServerConfig config = config_for_path();
    config.max_pending = 100000; // only the socket's buffer limits what is in flight
    UniqueFd rx = start_with_one_receiver(config);
    ASSERT_TRUE(rx);
    std::atomic<int> drops{0};
    int sent = 0;
    while (server.dropped() == 0 && sent < 100000) {
        auto r = send_one(Keepalive(&drops, count_drop), true, false);
        ASSERT_TRUE(r) << r.error().message();
        ++sent;
    }
    ASSERT_EQ(server.dropped(), 1u) << "the receiver never reads: its socket must fill";
    EXPECT_EQ(server.sent(), uint64_t(sent - 1));
    EXPECT_EQ(server.held(), uint32_t(sent - 1)) << "the refused frame is not held";
    EXPECT_EQ(drops.load(), 1) << "the refused frame's Keepalive went at once";

    // The receiver leaves without reading: the next send fails or finds it gone, and
    // everything it held is let go.
    rx.reset();
    (void)send_one(Keepalive(&drops, count_drop), false, false);
    EXPECT_TRUE(eventually([&] { return server.clients() == 0u; }));
    EXPECT_TRUE(eventually([&] { return drops.load() == sent + 1; }));
    EXPECT_EQ(server.held(), 0u);
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

// Reads every FRAME that arrives on `fd` within a short while; RELEASE them later.
std::vector<uint64_t> drain_frames(int fd)
{
    std::vector<uint64_t> seqs;
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 200) <= 0)
            return seqs;
        auto rec = receive_record(fd);
        if (!rec || rec->eof)
            return seqs;
        auto m = parse(rec->bytes, std::move(rec->fds), rec->truncated);
        if (m && m->type == MsgType::Frame)
            seqs.push_back(m->frame.head.seq);
    }
}

void release(int fd, std::span<const uint64_t> seqs)
{
    auto r = encode_release(seqs);
    ASSERT_TRUE(r);
    ASSERT_TRUE(send_record(fd, *r));
}

// DONE: the frames after the last one read are let go at once, the ones read stay held until
// released; the receiver gets no more frames, is not waited for, and is no connection to wait
// for either.
TEST_F(IpcServerTest, DoneLetsGoOfUnreadFramesAndTheReceiverNoLongerCounts)
{
    ServerConfig config = config_for_path();
    config.max_pending = 2;
    UniqueFd rx = start_with_one_receiver(config);
    ASSERT_TRUE(rx);
    std::atomic<int> drops{0};
    for (int i = 0; i < 2; ++i)
        ASSERT_TRUE(send_one(Keepalive(&drops, count_drop), false, true));
    EXPECT_EQ(server.held(), 2u);
    ASSERT_EQ(next_message(rx.get()).type, MsgType::Hello);
    ASSERT_EQ(next_message(rx.get()).type, MsgType::Caps);
    const Message first = next_message(rx.get());
    ASSERT_EQ(first.type, MsgType::Frame);
    ASSERT_TRUE(send_record(rx.get(), encode_done({first.frame.head.seq})));
    EXPECT_TRUE(eventually([&] { return drops.load() == 1; })) << "the unread frame let go";
    EXPECT_EQ(server.held(), 1u);
    EXPECT_TRUE(observer.logged("takes no more frames"));

    // It holds max-pending frames no more, yet block does not wait for it, and it gets nothing.
    auto r = send_one(Keepalive(&drops, count_drop), false, true);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, SendOutcome::Done);
    EXPECT_EQ(drops.load(), 2) << "nobody took the frame";
    EXPECT_EQ(server.sent(), 2u);
    EXPECT_EQ(server.dropped(), 0u) << "not a drop: it asked for nothing";
    // Nor does a sender waiting for a connection take it for one.
    std::thread unlocker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        server.unlock();
    });
    r = send_one(Keepalive(), true, true);
    unlocker.join();
    server.unlock_stop();
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, SendOutcome::Flushing) << "waited for a receiver that takes frames";
    EXPECT_EQ(drain_frames(rx.get()), std::vector<uint64_t>{first.frame.head.seq + 1})
        << "only the unread frame sent before DONE";

    // What it read releases as before; a second DONE changes nothing.
    release(rx.get(), std::span(&first.frame.head.seq, 1));
    ASSERT_TRUE(send_record(rx.get(), encode_done({0})));
    EXPECT_TRUE(eventually([&] { return server.held() == 0u; }));
    EXPECT_EQ(server.clients(), 1u) << "still connected";
    rx.reset();
    EXPECT_TRUE(eventually([&] { return server.clients() == 0u; }));
}

// Two receivers with room for 8 frames each could pin 16 frames of 4 KiB; the byte bound lets
// them pin 3 (12 KiB) and drops the rest for both, reported to the element once.
TEST_F(IpcServerTest, MaxHeldBytesDropsWhatWouldPassItWithoutBlock)
{
    ServerConfig config = config_for_path();
    config.max_pending = 8;
    config.max_held_bytes = 3 * 4096 + 100;
    ASSERT_TRUE(started(server, config));
    server.set_caps("video/x-raw, format=(string)NV12");
    auto a = connect_to(path);
    auto b = connect_to(path);
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(eventually([&] { return server.clients() == 2u; }));

    UniqueFd mem = sealed_memfd(4096);
    const MemoryRecord rec = flat_record(4096);
    const int fds[] = {mem.get()};
    std::atomic<int> drops{0};
    for (int i = 0; i < 6; ++i) {
        auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds,
                                   Keepalive(&drops, count_drop), false, false);
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_LE(server.held_bytes(), config.max_held_bytes) << "frame " << i;
    }
    EXPECT_EQ(server.held(), 3u);
    EXPECT_EQ(server.held_bytes(), 3u * 4096);
    EXPECT_EQ(server.peak_held_bytes(), 3u * 4096);
    EXPECT_EQ(server.sent(), 6u) << "3 frames to each of 2 receivers";
    EXPECT_EQ(server.dropped(), 6u) << "3 frames dropped for each of 2 receivers";
    EXPECT_EQ(drops.load(), 3) << "a dropped frame's Keepalive dies at once";
    auto reports = observer.reports();
    ASSERT_EQ(reports.size(), 3u);
    EXPECT_TRUE(reports[0].first);
    EXPECT_TRUE(reports[0].dropped);
    EXPECT_EQ(reports[0].frame_bytes, 4096u);
    EXPECT_EQ(reports[0].held_bytes, 3u * 4096);
    EXPECT_EQ(reports[0].bound, config.max_held_bytes);
    EXPECT_FALSE(reports[1].first) << "reported as first once per start";
    EXPECT_FALSE(reports[2].first);

    // Released by both, a frame makes room for one more.
    const auto seqs_a = drain_frames(a->get());
    const auto seqs_b = drain_frames(b->get());
    ASSERT_EQ(seqs_a.size(), 3u);
    ASSERT_EQ(seqs_b, seqs_a);
    release(a->get(), std::span(seqs_a.data(), 1));
    EXPECT_EQ(server.held(), 3u) << "still held by the other receiver";
    release(b->get(), std::span(seqs_b.data(), 1));
    EXPECT_TRUE(eventually([&] { return server.held_bytes() == 2u * 4096; }));
    auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(&drops, count_drop),
                               false, false);
    ASSERT_TRUE(r);
    EXPECT_EQ(server.held_bytes(), 3u * 4096);
    EXPECT_EQ(server.peak_held_bytes(), 3u * 4096) << "never past the bound";
    a->reset();
    b->reset();
    EXPECT_TRUE(eventually([&] { return server.held_bytes() == 0u; }));
}

// With block, a frame that would pass the bound waits until releases make room: every frame
// is delivered and the bytes held never pass the bound.
TEST_F(IpcServerTest, MaxHeldBytesMakesBlockWaitForReleases)
{
    ServerConfig config = config_for_path();
    config.max_pending = 16;
    config.max_held_bytes = 2 * 4096;
    UniqueFd rx = start_with_one_receiver(config);
    ASSERT_TRUE(rx);
    UniqueFd mem = sealed_memfd(4096);
    const MemoryRecord rec = flat_record(4096);
    const int fds[] = {mem.get()};

    // The receiver releases each frame a little after it arrives, from another thread.
    constexpr int kFrames = 20;
    std::atomic<bool> over{false};
    std::atomic<int> got{0};
    std::thread receiver([&] {
        while (got.load() < kFrames) {
            pollfd p{rx.get(), POLLIN, 0};
            if (::poll(&p, 1, 5000) <= 0)
                return;
            auto rec_in = receive_record(rx.get());
            if (!rec_in || rec_in->eof)
                return;
            auto m = parse(rec_in->bytes, std::move(rec_in->fds), rec_in->truncated);
            if (!m || m->type != MsgType::Frame)
                continue;
            if (server.held_bytes() > config.max_held_bytes)
                over = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            const uint64_t seq = m->frame.head.seq;
            release(rx.get(), std::span(&seq, 1));
            got++;
        }
    });
    for (int i = 0; i < kFrames; ++i) {
        auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(), false, true);
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(*r, SendOutcome::Done);
        EXPECT_LE(server.held_bytes(), config.max_held_bytes);
    }
    receiver.join();
    EXPECT_EQ(got.load(), kFrames);
    EXPECT_FALSE(over.load());
    EXPECT_EQ(server.sent(), uint64_t(kFrames));
    EXPECT_EQ(server.dropped(), 0u);
    EXPECT_LE(server.peak_held_bytes(), config.max_held_bytes);
    // The wait was reported once (not as a drop) when it first happened, if it did.
    for (const auto& r : observer.reports())
        EXPECT_FALSE(r.dropped);
    EXPECT_LE(observer.reports().size(), 1u);
}

// The receiver holds what the bound allows: the next frame waits (the element hears of it
// once, not as a drop) until a release makes room.
TEST_F(IpcServerTest, MaxHeldBytesWaitIsReportedOnceAndEndsWithARelease)
{
    ServerConfig config = config_for_path();
    config.max_pending = 16;
    config.max_held_bytes = 2 * 4096;
    UniqueFd rx = start_with_one_receiver(config);
    ASSERT_TRUE(rx);
    UniqueFd mem = sealed_memfd(4096);
    const MemoryRecord rec = flat_record(4096);
    const int fds[] = {mem.get()};
    for (int i = 0; i < 2; ++i)
        ASSERT_TRUE(
            server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(), false, true));
    std::atomic<bool> third_sent{false};
    std::thread sender([&] {
        auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(), false, true);
        EXPECT_TRUE(r);
        third_sent = true;
    });
    EXPECT_TRUE(eventually([&] { return observer.reports().size() == 1u; }));
    EXPECT_FALSE(third_sent.load());
    const auto reports = observer.reports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_FALSE(reports[0].dropped);
    EXPECT_TRUE(reports[0].first);
    EXPECT_EQ(reports[0].held_bytes, 2u * 4096);
    const auto seqs = drain_frames(rx.get());
    ASSERT_EQ(seqs.size(), 2u);
    release(rx.get(), std::span(seqs.data(), 1));
    sender.join();
    EXPECT_TRUE(third_sent.load());
    EXPECT_EQ(server.held_bytes(), 2u * 4096);
    EXPECT_EQ(server.peak_held_bytes(), 2u * 4096);
    EXPECT_EQ(server.dropped(), 0u);
    EXPECT_EQ(observer.reports().size(), 1u);
}

// Reads the `expected` frames waiting on `rx` and releases the oldest.
// A receiver that releases every frame as it arrives, on a thread of its own, counting them;
// stopped and joined when it goes out of scope (a failed assertion included). With
// `keep_newest` it keeps the newest frame until the next one arrives, as a sink that keeps its
// last sample does.
class ReleasingReader
{
public:
    explicit ReleasingReader(int fd, bool keep_newest = false)
        : thread_([this, fd, keep_newest] {
              std::vector<uint64_t> kept;
              while (!stop_) {
                  auto seqs = drain_frames(fd);
                  got_ += seqs.size();
                  if (seqs.empty())
                      continue;
                  if (keep_newest) {
                      std::swap(kept, seqs);
                      seqs.insert(seqs.end(), kept.begin(), kept.end() - 1);
                      kept.erase(kept.begin(), kept.end() - 1);
                  }
                  if (!seqs.empty())
                      release(fd, seqs);
              }
          })
    {
    }
    ~ReleasingReader()
    {
        stop_ = true;
        thread_.join();
    }
    ReleasingReader(const ReleasingReader&) = delete;
    ReleasingReader& operator=(const ReleasingReader&) = delete;
    size_t got() const { return got_.load(); }

private:
    std::atomic<bool> stop_{false};
    std::atomic<size_t> got_{0};
    std::thread thread_; // last: it starts once the counters exist
};

// The byte-bound give-up tests: max_pending 8, a bound of four frames, a 300 ms block timeout;
// hung_ never releases, the other receiver is read by reader_ (which keeps its newest frame or
// not). Four frames reach both; the fifth, held back by the bound, waits the timeout.
class IpcServerByteBoundTest : public IpcServerTest
{
protected:
    static constexpr uint64_t kFrame = 4096; // send_one()'s frame
    void pin_the_bound(bool keep_newest)
    {
        ServerConfig config = config_for_path();
        config.max_pending = 8;
        config.max_held_bytes = 4 * kFrame;
        config.report_wait_ms = 60000;
        config.block_timeout_ms = 300;
        hung_ = start_with_one_receiver(config);
        auto other = connect_to(path);
        ASSERT_TRUE(hung_ && other);
        other_ = std::move(*other);
        ASSERT_TRUE(eventually([&] { return server.clients() == 2u; }));
        reader_ = std::make_unique<ReleasingReader>(other_.get(), keep_newest);
        for (int i = 0; i < 4; ++i)
            ASSERT_TRUE(send_one(Keepalive(), false, true));
        ASSERT_TRUE(eventually([&] { return reader_->got() == 4u; }));
        const auto t0 = std::chrono::steady_clock::now();
        ASSERT_TRUE(send_one(Keepalive(), false, true));
        EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250))
            << "it waited for releases first";
    }
    void TearDown() override
    {
        reader_.reset(); // before its socket closes
        hung_.reset();
        other_.reset();
        IpcServerTest::TearDown(); // the fd check, with the receivers' sockets closed
    }
    UniqueFd hung_, other_;
    std::unique_ptr<ReleasingReader> reader_;
};

void release_oldest(int rx, size_t expected)
{
    const auto seqs = drain_frames(rx);
    ASSERT_EQ(seqs.size(), expected);
    release(rx, std::span(seqs.data(), 1));
}

// A receiver that holds every frame max-pending lets it and releases none stops a blocking
// sender, which says so once the wait passes report_wait_ms: naming the receiver, once per
// connection, however many frames wait after. A release lets the frame go.
TEST_F(IpcServerTest, ABlockedFrameNamesTheReceiverThatHoldsItUpOnce_Negative)
{
    UniqueFd rx = start_and_send(2, 50, 0, 2);
    ASSERT_TRUE(rx);
    std::atomic<int> sent{0};
    std::thread sender([&] {
        for (int i = 0; i < 2; ++i) {
            auto r = send_one(Keepalive(), false, true);
            EXPECT_TRUE(r) << r.error().message();
            sent++;
        }
    });
    ASSERT_TRUE(eventually([&] { return observer.waits().size() == 1u; }));
    EXPECT_EQ(sent.load(), 0);
    const auto w = observer.waits().front();
    EXPECT_EQ(w.receiver.rfind("pid ", 0), 0u) << w.receiver;
    EXPECT_EQ(w.held, 2u);
    EXPECT_EQ(w.max_pending, 2u);
    EXPECT_EQ(w.waited_ms, 50u);
    EXPECT_TRUE(observer.logged("waited 50 ms for pid"));

    // One release: the third frame goes, the fourth waits again, unreported this time.
    release_oldest(rx.get(), 2);
    ASSERT_TRUE(eventually([&] { return sent.load() == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    EXPECT_EQ(sent.load(), 1);
    EXPECT_EQ(observer.waits().size(), 1u) << "once per receiver connection";
    release_oldest(rx.get(), 1);
    sender.join();
    EXPECT_EQ(sent.load(), 2);
    EXPECT_EQ(server.dropped(), 0u);
}

// block_timeout_ms: a receiver that holds every frame max-pending lets it and releases none
// holds a blocking sender back once, for the timeout, and is named once; then frames skip it
// (dropped for it) while another receiver gets every one. Once it releases a frame, frames
// wait for it again, unreported.
TEST_F(IpcServerTest, ABlockTimeoutGivesUpOnAHungReceiverAndTheOtherGetsEveryFrame_Negative)
{
    using std::chrono::milliseconds;
    using std::chrono::steady_clock;
    ServerConfig config = config_for_path();
    config.max_pending = 2;
    config.report_wait_ms = 60000; // never reached: the give-up comes first
    config.block_timeout_ms = 1000;
    UniqueFd hung = start_with_one_receiver(config);
    auto other = connect_to(path);
    ASSERT_TRUE(hung && other);
    ASSERT_TRUE(eventually([&] { return server.clients() == 2u; }));
    ReleasingReader reader(other->get());
    for (int i = 0; i < 2; ++i)
        ASSERT_TRUE(send_one(Keepalive(), false, true));
    auto t0 = steady_clock::now();
    ASSERT_TRUE(send_one(Keepalive(), false, true));
    EXPECT_GE(steady_clock::now() - t0, milliseconds(900)) << "it waited for the receiver first";
    auto give_ups = observer.give_ups();
    ASSERT_EQ(give_ups.size(), 1u);
    EXPECT_EQ(give_ups[0].receiver.rfind("pid ", 0), 0u) << give_ups[0].receiver;
    EXPECT_EQ(give_ups[0].held, 2u);
    EXPECT_EQ(give_ups[0].max_pending, 2u);
    EXPECT_EQ(give_ups[0].waited_ms, 1000u);
    EXPECT_EQ(give_ups[0].by, HeldBackBy::MaxPending);
    EXPECT_TRUE(observer.waits().empty());
    // Given up on, it holds nothing back: five frames more go at once (each would wait a
    // second otherwise), all dropped for it.
    t0 = steady_clock::now();
    for (int i = 0; i < 5; ++i)
        ASSERT_TRUE(send_one(Keepalive(), false, true));
    EXPECT_LT(steady_clock::now() - t0, milliseconds(1000));
    EXPECT_EQ(server.dropped(), 6u) << "the third frame on, for the hung receiver";
    EXPECT_TRUE(eventually([&] { return reader.got() == 8u; })) << reader.got();

    // It releases one: the next frame reaches it, and the one after waits for it again.
    release_oldest(hung.get(), 2);
    ASSERT_TRUE(eventually([&] { return server.held() == 1u; })) << "only its second frame";
    ASSERT_TRUE(send_one(Keepalive(), false, true));
    t0 = steady_clock::now();
    ASSERT_TRUE(send_one(Keepalive(), false, true));
    EXPECT_GE(steady_clock::now() - t0, milliseconds(900)) << "waited for again";
    EXPECT_EQ(observer.give_ups().size(), 1u) << "named once per connection";
    EXPECT_EQ(server.dropped(), 7u);
    EXPECT_TRUE(eventually([&] { return reader.got() == 10u; })) << reader.got();
}

// block_timeout_ms under the byte bound: a receiver below max-pending that keeps its frames
// comes to pin all max_held_bytes allows, and no release it would wait for comes. The frame the
// bound holds back waits the timeout once; the receiver is named with what it pins; the frames
// after it are dropped at once (nobody may pin more) instead of each waiting the timeout. Once
// it releases one, a frame reaches both receivers again, and the next one waits for it again,
// without a second report.
TEST_F(IpcServerByteBoundTest,
       ABlockTimeoutUnderTheByteBoundWaitsOnceForAReceiverPinningIt_Negative)
{
    using std::chrono::milliseconds;
    using std::chrono::steady_clock;
    ASSERT_NO_FATAL_FAILURE(pin_the_bound(/*keep_newest=*/false));
    UniqueFd& hung = hung_;
    ReleasingReader& reader = *reader_;
    auto give_ups = observer.give_ups();
    ASSERT_EQ(give_ups.size(), 1u);
    EXPECT_EQ(give_ups[0].receiver.rfind("pid ", 0), 0u) << give_ups[0].receiver;
    EXPECT_EQ(give_ups[0].by, HeldBackBy::MaxHeldBytes);
    EXPECT_EQ(give_ups[0].held, 4u);
    EXPECT_EQ(give_ups[0].held_bytes, 4 * kFrame);
    EXPECT_EQ(give_ups[0].max_held_bytes, 4 * kFrame);
    EXPECT_EQ(give_ups[0].waited_ms, 300u);
    EXPECT_EQ(server.dropped(), 2u) << "the frame that waited, for both receivers";
    // Ten frames more go at once (each would wait 300 ms if frames still waited for it).
    auto t0 = steady_clock::now();
    for (int i = 0; i < 10; ++i)
        ASSERT_TRUE(send_one(Keepalive(), false, true));
    EXPECT_LT(steady_clock::now() - t0, milliseconds(250));
    EXPECT_EQ(server.dropped(), 22u);
    EXPECT_EQ(server.held_bytes(), 4 * kFrame);

    // It releases one: the next frame fits and reaches both; the one after waits for it again.
    release_oldest(hung.get(), 4);
    ASSERT_TRUE(eventually([&] { return server.held_bytes() == 3 * kFrame; }));
    ASSERT_TRUE(send_one(Keepalive(), false, true));
    EXPECT_TRUE(eventually([&] { return reader.got() == 5u; })) << reader.got();
    t0 = steady_clock::now();
    ASSERT_TRUE(send_one(Keepalive(), false, true));
    EXPECT_GE(steady_clock::now() - t0, milliseconds(250)) << "waited for again";
    EXPECT_EQ(observer.give_ups().size(), 1u) << "named once per connection";
    EXPECT_EQ(server.dropped(), 24u);
    EXPECT_EQ(server.sent(), 10u);
}

// A sound receiver whose sink keeps its last frame holds the newest frame until the next one
// comes, which a frame the byte bound holds back never lets it see. The give-up takes the hung
// receiver, which holds the oldest frames, and not that one: it gets the next frame that fits
// (a receiver given up on got nothing until it released, and this one would never have).
TEST_F(IpcServerByteBoundTest,
       ABlockTimeoutUnderTheByteBoundSparesAReceiverKeepingItsLastFrame_Negative)
{
    ASSERT_NO_FATAL_FAILURE(pin_the_bound(/*keep_newest=*/true));
    UniqueFd& hung = hung_;
    ReleasingReader& reader = *reader_;
    auto give_ups = observer.give_ups();
    ASSERT_EQ(give_ups.size(), 1u) << "the hung receiver only";
    EXPECT_EQ(give_ups[0].held, 4u) << "the one holding four frames, not the one holding one";
    EXPECT_EQ(give_ups[0].by, HeldBackBy::MaxHeldBytes);

    // The hung receiver lets one go: the next frame fits and reaches the sound one too.
    release_oldest(hung.get(), 4);
    ASSERT_TRUE(eventually([&] { return server.held_bytes() == 3 * kFrame; }));
    ASSERT_TRUE(send_one(Keepalive(), false, true));
    EXPECT_TRUE(eventually([&] { return reader.got() == 5u; })) << reader.got();
    EXPECT_EQ(observer.give_ups().size(), 1u);
}

// A wait shorter than report_wait_ms names no receiver, for max-pending or for the byte bound.
TEST_F(IpcServerTest, AShortWaitNamesNoReceiver)
{
    for (uint64_t bound : {uint64_t(0), uint64_t(4096)}) {
        // max-pending 1 without a bound in bytes; max-pending 16 with room for one frame.
        UniqueFd rx = start_and_send(bound ? 16 : 1, 2000, bound, 1);
        ASSERT_TRUE(rx);
        std::thread sender([&] { EXPECT_TRUE(send_one(Keepalive(), false, true)); });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        release_oldest(rx.get(), 1);
        sender.join();
        EXPECT_TRUE(observer.waits().empty()) << "bound " << bound;
        server.stop();
    }
}

// A frame the byte bound holds back past report_wait_ms names the receivers that pin the bytes
// (those holding frames: none was sent one during the wait), with what they pin; not one that
// holds nothing. Once per connection, like a receiver at max-pending.
TEST_F(IpcServerTest, AFrameTheByteBoundHoldsUpNamesTheReceiverPinningIt_Negative)
{
    constexpr uint64_t kFrame = 4096; // send_one()'s frame
    ServerConfig config = config_for_path();
    config.max_pending = 16;
    config.max_held_bytes = 2 * kFrame;
    config.report_wait_ms = 200;
    UniqueFd rx = start_with_one_receiver(config);
    auto other = connect_to(path);
    ASSERT_TRUE(rx && other);
    ASSERT_TRUE(eventually([&] { return server.clients() == 2u; }));
    for (int i = 0; i < 2; ++i)
        ASSERT_TRUE(send_one(Keepalive(), false, true));
    // The other receiver releases both; rx keeps them.
    const auto seqs = drain_frames(other->get());
    ASSERT_EQ(seqs.size(), 2u);
    release(other->get(), seqs);
    std::atomic<int> sent{0};
    std::thread sender([&] {
        for (int i = 0; i < 2; ++i) {
            EXPECT_TRUE(send_one(Keepalive(), false, true));
            sent++;
        }
    });
    ASSERT_TRUE(eventually([&] { return observer.waits().size() == 1u; }));
    EXPECT_EQ(sent.load(), 0);
    const HoldUp w = observer.waits().front();
    EXPECT_EQ(w.receiver.rfind("pid ", 0), 0u) << w.receiver;
    EXPECT_EQ(w.by, HeldBackBy::MaxHeldBytes);
    EXPECT_EQ(w.held, 2u);
    EXPECT_EQ(w.held_bytes, 2 * kFrame);
    EXPECT_EQ(w.max_held_bytes, 2 * kFrame);
    EXPECT_EQ(w.max_pending, 16u);
    EXPECT_EQ(w.waited_ms, 200u);

    // A release lets the third frame go; the fourth waits again, unreported this time.
    release_oldest(rx.get(), 2);
    ASSERT_TRUE(eventually([&] { return sent.load() == 1; }));
    // The other receiver releases the third frame as soon as it has it (drain_frames() would
    // wait for more, holding it past report_wait_ms: named, rightly).
    const Message third = next_message(other->get());
    ASSERT_EQ(third.type, MsgType::Frame);
    release(other->get(), std::vector<uint64_t>{third.frame.head.seq});
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    EXPECT_EQ(sent.load(), 1);
    EXPECT_EQ(observer.waits().size(), 1u) << "once per receiver connection";
    release_oldest(rx.get(), 1);
    sender.join();
    EXPECT_EQ(sent.load(), 2);
    EXPECT_EQ(server.dropped(), 0u);
}

TEST_F(IpcServerTest, AFrameLargerThanMaxHeldBytesIsAnError_Negative)
{
    ServerConfig config = config_for_path();
    config.max_held_bytes = 4095;
    ASSERT_TRUE(started(server, config));
    const MemoryRecord rec = flat_record(4096);
    const int fds[] = {-1};
    std::atomic<int> drops{0};
    for (bool block : {false, true}) {
        auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds,
                                   Keepalive(&drops, count_drop), false, block);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::InsufficientCapacity);
        EXPECT_NE(r.error().message().find("4096"), std::string::npos) << r.error().message();
        EXPECT_NE(r.error().message().find("4095"), std::string::npos) << r.error().message();
    }
    EXPECT_EQ(drops.load(), 2) << "the refused frame's Keepalive dies";
    // 0 lifts the bound.
    server.set_max_held_bytes(0);
    auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(), false, false);
    EXPECT_TRUE(r);
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
