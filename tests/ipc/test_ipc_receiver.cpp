// SPDX-License-Identifier: MIT
//
// tensoripcsrc's receiving side (ipc::Receiver) without GStreamer, against hand-written sinks
// and the real ipc::Server: the greeting, caps and frames it reports, the RELEASE each frame
// sends when its token dies, every kind of bad record refused with its fds closed, the fd
// budget (a full fd table at receive, connect and start), a close before the greeting,
// reconnecting, unlock while blocked, and that nothing leaks. Also run under
// ThreadSanitizer: unlock() comes from another thread.

#include "ipc_fixture.hpp"
#include "ipc_receiver.hpp"
#include "ipc_records.hpp"
#include "ipc_server.hpp"
#include "ipc_socket.hpp"
#include "ipc_wire.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace edgetensor::ipc
{
namespace
{

using test::eventually;
using test::FakeSink;
using test::flat_record;
using test::FullFdTable;
using test::next_message;
using test::sealed_memfd;

constexpr const char* kCaps = "video/x-raw, format=(string)GRAY8, width=(int)64, height=(int)16";
constexpr uint64_t kFrameBytes = 64 * 16;

class RecordingLog final : public LogObserver
{
public:
    bool log_enabled(LogLevel) const noexcept override { return true; }
    void log(LogLevel, const std::string& message) noexcept override
    {
        std::lock_guard<std::mutex> lock(mu_);
        lines_.push_back(message);
    }
    bool has(const std::string& part) const
    {
        std::lock_guard<std::mutex> lock(mu_);
        return std::any_of(lines_.begin(), lines_.end(),
                           [&](const std::string& l) { return l.find(part) != std::string::npos; });
    }

private:
    mutable std::mutex mu_;
    std::vector<std::string> lines_;
};

class QuietServerObserver final : public ServerObserver
{
public:
    bool log_enabled(LogLevel) const noexcept override { return false; }
    void log(LogLevel, const std::string&) noexcept override {}
    void refused_uid(const PeerCredentials&, int, const std::string&,
                     const std::string&) noexcept override
    {
    }
    void refused(Refusal, uint32_t, const std::string&, const std::string&, bool) noexcept override
    {
    }
    void over_byte_bound(uint64_t, uint64_t, uint64_t, bool, bool) noexcept override {}
    void waiting_for_receiver(const HoldUp&) noexcept override {}
    void gave_up_on_receiver(const HoldUp&) noexcept override {}
};

void send(int fd, const std::vector<uint8_t>& bytes, std::vector<int> fds = {})
{
    auto r = send_record(fd, bytes, fds);
    ASSERT_TRUE(r) << r.error().message();
}

FrameHead head_for(uint64_t seq, uint32_t caps_seq = 1)
{
    FrameHead h;
    h.seq = seq;
    h.caps_seq = caps_seq;
    return h;
}

void send_frame(int fd, const FrameHead& head, int mem_fd, std::vector<int> extra_fds = {})
{
    const MemoryRecord rec = flat_record(kFrameBytes);
    auto m = encode_frame(head, std::span(&rec, 1));
    ASSERT_TRUE(m) << m.error().message();
    extra_fds.insert(extra_fds.begin(), mem_fd);
    send(fd, *m, extra_fds);
}

void greet(int fd, uint32_t max_pending = 2)
{
    Hello h;
    h.max_pending = max_pending;
    h.sink_pid = 4242;
    send(fd, encode_hello(h));
    send(fd, *encode_caps(1, kCaps));
}

// The sink's greeting (the receiver may hold `max_pending` frames), its caps and FRAME 1; the
// frame's memfd, for the frames after it.
UniqueFd greet_and_send_first(int fd, uint32_t max_pending)
{
    greet(fd, max_pending);
    UniqueFd mem = sealed_memfd(kFrameBytes, 9);
    send_frame(fd, head_for(1), mem.get());
    return mem;
}

// The fd-checked socket directory with a receiver in it, started.
class IpcReceiverTest : public test::FdCheckedTest
{
protected:
    void SetUp() override
    {
        auto r = receiver.start();
        ASSERT_TRUE(r) << r.error().message();
    }
    void TearDown() override
    {
        receiver.stop();
        FdCheckedTest::TearDown();
    }
    ReceiverConfig config() const
    {
        ReceiverConfig c;
        c.path = path;
        return c;
    }
    // The sink's greeting and caps, accepted.
    void expect_caps()
    {
        const Event e = receiver.next(config());
        ASSERT_EQ(e.kind, Event::Kind::Caps) << e.why;
        EXPECT_EQ(e.caps_seq, 1u);
        EXPECT_EQ(e.caps, kCaps);
        receiver.accept_caps(e.caps_seq);
    }
    // The caps, then what next() reports (a frame, for the caller to check).
    Event expect_caps_and_a_frame()
    {
        expect_caps();
        return receiver.next(config());
    }
    RecordingLog log;
    Receiver receiver{log};
};

TEST_F(IpcReceiverTest, ReportsCapsAndFramesAndReleasesEachFrameWhenItsTokenDies)
{
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) {
        greet(c.get());
        UniqueFd mem = sealed_memfd(kFrameBytes, 9);
        send_frame(c.get(), head_for(7), mem.get());
    });
    expect_caps();
    Event f = receiver.next(config());
    ASSERT_EQ(f.kind, Event::Kind::Frame) << f.why;
    sink.join();
    EXPECT_EQ(f.frame.head.seq, 7u);
    EXPECT_EQ(f.frame.head.n_memories, 1u);
    EXPECT_TRUE(f.frame.fds[0]);
    ASSERT_TRUE(f.release);
    EXPECT_EQ(f.release->seq, 7u);
    EXPECT_TRUE(log.has("connected to " + path));
    EXPECT_TRUE(log.has("sink pid 4242 lets us hold 2 frames"));
    const ReceiverStats s = receiver.stats();
    EXPECT_EQ(s.sink_pid, uint64_t(::getpid())) << "the sink's pid is SO_PEERCRED's";
    EXPECT_EQ(s.rejected, 0u);

    // Held: nothing released yet. Dropped: released, once.
    EXPECT_TRUE(sink.nothing_pending());
    auto keep = f.release;
    f = Event{};
    EXPECT_TRUE(sink.nothing_pending()) << "a copy of the token still holds the frame";
    keep.reset();
    const Message rel = next_message(sink.client());
    ASSERT_EQ(rel.type, MsgType::Release);
    EXPECT_EQ(rel.releases, std::vector<uint64_t>{7});
    EXPECT_TRUE(sink.nothing_pending());

    receiver.count_received();
    EXPECT_EQ(receiver.received(), 1u);
}

// Holding every frame the sink allows (max-pending=1, the frame kept downstream as a sink's
// last buffer is), the receiver can get no more: after a second of waiting it says so, once
// per connection, and a frame released then lets the next one come. Holding fewer than that,
// a wait of any length is no stall.
TEST_F(IpcReceiverTest, WaitingAfterHoldingEveryFrameTheSinkAllowsIsReportedOnce_Negative)
{
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) {
        UniqueFd mem = greet_and_send_first(c.get(), 1);
        // The sink sends nothing more until the frame comes back, as a blocking one does.
        const Message rel = next_message(c.get());
        ASSERT_EQ(rel.type, MsgType::Release);
        send_frame(c.get(), head_for(2), mem.get());
    });
    Event first = expect_caps_and_a_frame();
    ASSERT_EQ(first.kind, Event::Kind::Frame) << first.why;
    const auto t0 = std::chrono::steady_clock::now();
    Event stalled = receiver.next(config());
    ASSERT_EQ(stalled.kind, Event::Kind::Stalled) << stalled.why;
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(900));
    EXPECT_EQ(stalled.held, 1u);
    EXPECT_EQ(stalled.max_pending, 1u);
    first = Event{}; // released downstream at last
    Event second = receiver.next(config());
    ASSERT_EQ(second.kind, Event::Kind::Frame) << second.why;
    EXPECT_EQ(second.frame.head.seq, 2u);
    sink.join();

    // Held again and waited on for longer than a second: said once per connection, so next()
    // just waits, until unlocked.
    std::thread unlocker([this] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        receiver.unlock();
    });
    EXPECT_EQ(receiver.next(config()).kind, Event::Kind::Flushing);
    unlocker.join();
    receiver.unlock_stop();
}

TEST_F(IpcReceiverTest, HoldingFewerFramesThanTheSinkAllowsAWaitIsNoStall)
{
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) {
        UniqueFd mem = greet_and_send_first(c.get(), 2);
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        send_frame(c.get(), head_for(2), mem.get());
    });
    Event first = expect_caps_and_a_frame();
    ASSERT_EQ(first.kind, Event::Kind::Frame) << first.why;
    Event second = receiver.next(config());
    ASSERT_EQ(second.kind, Event::Kind::Frame) << second.why;
    EXPECT_EQ(second.frame.head.seq, 2u);
    sink.join();
}

TEST_F(IpcReceiverTest, BadRecordsAreRefusedCountedAndClosedAndTheSessionGoesOn_Negative)
{
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) {
        greet(c.get());
        const int fd = c.get();
        // 1. not a record of this protocol
        send(fd, {1, 2, 3});
        // 2. a header of another protocol version
        auto hello = encode_hello(Hello{});
        hello[4] = 9;
        send(fd, hello);
        // 3. a FRAME for caps never sent (released at once)
        UniqueFd mem = sealed_memfd(kFrameBytes);
        send_frame(fd, head_for(2, 5), mem.get());
        // 4. a FRAME whose fd is a pipe (released at once)
        int p[2];
        ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
        UniqueFd pr(p[0]), pw(p[1]);
        send_frame(fd, head_for(3), pr.get());
        // 5. a FRAME with two fds for one memory
        send_frame(fd, head_for(4), mem.get(), {mem.get()});
        // 6. a RELEASE, which only receivers send
        const uint64_t seq = 1;
        send(fd, *encode_release(std::span(&seq, 1)));
        // 7. a record longer than any the protocol has
        std::vector<uint8_t> big(kMaxMessage + 100, 0);
        send(fd, big);
        // 8. a good frame: the session goes on
        send_frame(fd, head_for(8), mem.get());
    });
    expect_caps();
    const char* reasons[] = {
        "shorter than the 16-byte header",
        "protocol version 9",
        "FRAME 2 for caps 5 before those caps",
        "FRAME 3: memory 0: a received fd is neither a DMA-BUF nor a memfd",
        "FRAME of 1 memories carries 2 fds",
        "a sink does not send RELEASE",
        "truncated",
    };
    uint64_t n = 0;
    for (const char* why : reasons) {
        const Event e = receiver.next(config());
        ASSERT_EQ(e.kind, Event::Kind::Invalid) << "expected: " << why;
        EXPECT_NE(e.why.find(why), std::string::npos) << e.why;
        EXPECT_EQ(e.rejections, ++n);
        EXPECT_FALSE(e.release);
    }
    Event good = receiver.next(config());
    ASSERT_EQ(good.kind, Event::Kind::Frame) << good.why;
    EXPECT_EQ(good.frame.head.seq, 8u);
    sink.join();

    const ReceiverStats s = receiver.stats();
    EXPECT_EQ(s.rejected, n);
    EXPECT_NE(s.last_rejection.find("truncated"), std::string::npos) << s.last_rejection;

    // The frames refused after their header was read were released at once; the good one is
    // released when its token dies.
    good = Event{};
    std::vector<uint64_t> released;
    for (int i = 0; i < 3; ++i) {
        const Message m = next_message(sink.client());
        ASSERT_EQ(m.type, MsgType::Release);
        released.insert(released.end(), m.releases.begin(), m.releases.end());
    }
    EXPECT_EQ(released, (std::vector<uint64_t>{2, 3, 8}));
    EXPECT_TRUE(sink.nothing_pending());
    // The fixture checks that every fd the refused records brought was closed.
}

// The fd budget at receive time: a record whose fds the kernel cannot install (this process's
// table is full) arrives cut (MSG_CTRUNC). It is refused like any truncated record, and the
// next frame, once there is room, arrives whole.
TEST_F(IpcReceiverTest, AFrameArrivingWithTheFdTableFullIsRefusedAndTheNextArrives_Negative)
{
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) { greet(c.get()); });
    expect_caps();
    sink.join();
    UniqueFd mem = sealed_memfd(kFrameBytes);
    {
        FullFdTable full;
        send_frame(sink.client(), head_for(1), mem.get());
        const Event e = receiver.next(config());
        ASSERT_EQ(e.kind, Event::Kind::Invalid) << e.why;
        EXPECT_NE(e.why.find("truncated"), std::string::npos) << e.why;

        full.free_one();
        send_frame(sink.client(), head_for(2), mem.get());
        const Event f = receiver.next(config());
        ASSERT_EQ(f.kind, Event::Kind::Frame) << f.why;
        EXPECT_EQ(f.frame.head.seq, 2u);
    }
    EXPECT_EQ(receiver.rejected(), 1u);
}

// The fd budget at connect and start: out of fds is an error at once that says so, never a
// wait for a sink (timeout 0 would wait forever) and never a half-started receiver.
TEST_F(IpcReceiverTest, ConnectingOrStartingWithTheFdTableFullFailsNamingEmfile_Negative)
{
    FakeSink sink(path);
    ReceiverConfig c = config();
    c.timeout_ns = 0;
    receiver.stop();
    {
        FullFdTable full;
        auto started = receiver.start();
        ASSERT_FALSE(started);
        EXPECT_EQ(started.error().sys_errno(), EMFILE);
    }
    {
        FullFdTable full(2); // room for the wake pipe, none for the socket
        ASSERT_TRUE(receiver.start());
        const Event e = receiver.next(c);
        ASSERT_EQ(e.kind, Event::Kind::Failed);
        EXPECT_EQ(e.failure, ConnectFailure::Connect);
        EXPECT_NE(e.why.find("EMFILE"), std::string::npos) << e.why;
    }
}

TEST_F(IpcReceiverTest, ACloseBeforeTheGreetingIsARefusal_Negative)
{
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) { c.reset(); }); // what a sink does to a receiver it refuses
    const Event e = receiver.next(config());
    ASSERT_EQ(e.kind, Event::Kind::Gone) << e.why;
    EXPECT_EQ(e.departure, Departure::BeforeGreeting);
    EXPECT_EQ(e.why, "the socket was closed");
}

TEST_F(IpcReceiverTest, ARealSinkWithMaxClientsServedClosesBeforeTheGreeting_Negative)
{
    QuietServerObserver observer;
    Server server(observer);
    ServerConfig sc;
    sc.path = path;
    sc.max_clients = 1;
    StartError err{StartStep::Listen, Error(ErrorCode::Io, "")};
    ASSERT_TRUE(server.start(sc, &err)) << err.error.message();
    server.set_caps(kCaps);
    expect_caps();
    EXPECT_TRUE(eventually([&] { return server.clients() == 1u; }));

    Receiver second(log);
    ASSERT_TRUE(second.start());
    const Event e = second.next(config());
    ASSERT_EQ(e.kind, Event::Kind::Gone) << e.why;
    EXPECT_EQ(e.departure, Departure::BeforeGreeting);
    second.stop();
    server.stop();
}

TEST_F(IpcReceiverTest, ASenderGoneWithoutEosOrAfterEosSaysWhich)
{
    {
        FakeSink sink(path);
        sink.serve([](UniqueFd& c) { greet(c.get()); });
        expect_caps();
        sink.join();
        sink.hang_up();
        const Event e = receiver.next(config());
        ASSERT_EQ(e.kind, Event::Kind::Gone) << e.why;
        EXPECT_EQ(e.departure, Departure::WithoutEos);
    }
    {
        FakeSink sink(path);
        sink.serve([](UniqueFd& c) {
            greet(c.get());
            send(c.get(), encode_eos());
            c.reset();
        });
        expect_caps();
        EXPECT_EQ(receiver.next(config()).kind, Event::Kind::Eos);
        EXPECT_TRUE(log.has("the sender sent EOS"));
        const Event e = receiver.next(config());
        ASSERT_EQ(e.kind, Event::Kind::Gone) << e.why;
        EXPECT_EQ(e.departure, Departure::AfterEos);
    }
}

// After a sender left, next() connects to whoever listens next; a frame still held from the
// old connection releases into nothing (never into the new sink, whose seqs start over).
TEST_F(IpcReceiverTest, ReconnectsAfterTheSenderLeftAndOldFramesReleaseIntoTheOldConnectionOnly)
{
    Event old_frame;
    {
        FakeSink first(path);
        first.serve([](UniqueFd& c) {
            greet(c.get());
            UniqueFd mem = sealed_memfd(kFrameBytes);
            send_frame(c.get(), head_for(1), mem.get());
        });
        expect_caps();
        old_frame = receiver.next(config());
        ASSERT_EQ(old_frame.kind, Event::Kind::Frame) << old_frame.why;
        first.join();
        first.hang_up();
        EXPECT_EQ(receiver.next(config()).kind, Event::Kind::Gone);
    }
    FakeSink second(path);
    second.serve([](UniqueFd& c) {
        greet(c.get());
        UniqueFd mem = sealed_memfd(kFrameBytes);
        send_frame(c.get(), head_for(1), mem.get());
    });
    expect_caps();
    Event new_frame = receiver.next(config());
    ASSERT_EQ(new_frame.kind, Event::Kind::Frame) << new_frame.why;
    second.join();

    old_frame = Event{};
    EXPECT_TRUE(second.nothing_pending()) << "the old frame's RELEASE reached the new sink";
    new_frame = Event{};
    const Message rel = next_message(second.client());
    ASSERT_EQ(rel.type, MsgType::Release);
    EXPECT_EQ(rel.releases, std::vector<uint64_t>{1});
}

TEST_F(IpcReceiverTest, AFrameHeldPastStopReleasesIntoNothing)
{
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) {
        greet(c.get());
        UniqueFd mem = sealed_memfd(kFrameBytes);
        send_frame(c.get(), head_for(1), mem.get());
    });
    expect_caps();
    Event f = receiver.next(config());
    ASSERT_EQ(f.kind, Event::Kind::Frame) << f.why;
    sink.join();
    receiver.stop();
    f = Event{};
    // The sink sees the connection end, not a RELEASE: it frees what it held on its own.
    pollfd p{sink.client(), POLLIN, 0};
    ASSERT_GT(::poll(&p, 1, 5000), 0);
    auto rec = receive_record(sink.client());
    ASSERT_TRUE(rec) << rec.error().message();
    EXPECT_TRUE(rec->eof);
}

// finish(): DONE names the last frame read (frames sent after it wait unread in the socket),
// frames still held release afterwards, and next() reports EOS without reading on.
TEST_F(IpcReceiverTest, FinishSaysDoneAfterTheLastFrameReadAndReadsNoMore)
{
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) {
        greet(c.get());
        UniqueFd mem = sealed_memfd(kFrameBytes);
        send_frame(c.get(), head_for(1), mem.get());
        send_frame(c.get(), head_for(2), mem.get());
    });
    expect_caps();
    Event f = receiver.next(config());
    ASSERT_EQ(f.kind, Event::Kind::Frame) << f.why;
    sink.join();
    receiver.finish();
    receiver.finish(); // once is what counts
    const Message done = next_message(sink.client());
    ASSERT_EQ(done.type, MsgType::Done);
    EXPECT_EQ(done.done.last_seq, 1u) << "frame 2 was never read";
    EXPECT_TRUE(sink.nothing_pending()) << "one DONE";
    EXPECT_TRUE(log.has("no more frames after frame 1"));

    EXPECT_EQ(receiver.next(config()).kind, Event::Kind::Eos);
    EXPECT_EQ(receiver.next(config()).kind, Event::Kind::Eos) << "until stop()";
    f = Event{};
    const Message rel = next_message(sink.client());
    ASSERT_EQ(rel.type, MsgType::Release) << "a frame read before DONE still releases";
    EXPECT_EQ(rel.releases, std::vector<uint64_t>{1});
}

// Before any frame, DONE says 0; after the sender's EOS nothing is sent (it is ending); a
// session started after finish() reads again.
TEST_F(IpcReceiverTest, FinishBeforeAnyFrameSaysZeroAndAfterTheSendersEosSaysNothing)
{
    {
        FakeSink sink(path);
        sink.serve([](UniqueFd& c) { greet(c.get()); });
        expect_caps();
        sink.join();
        receiver.finish();
        const Message done = next_message(sink.client());
        ASSERT_EQ(done.type, MsgType::Done);
        EXPECT_EQ(done.done.last_seq, 0u);
        receiver.stop();
    }
    ASSERT_TRUE(receiver.start());
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) {
        greet(c.get());
        send(c.get(), encode_eos());
    });
    expect_caps();
    EXPECT_EQ(receiver.next(config()).kind, Event::Kind::Eos);
    sink.join();
    receiver.finish();
    EXPECT_TRUE(sink.nothing_pending());
}

// Against the real server: a receiver that finished no longer holds back a blocking sender,
// and the second receiver still gets every frame.
TEST_F(IpcReceiverTest, AFinishedReceiverDoesNotHoldBackABlockingSink)
{
    QuietServerObserver observer;
    Server server(observer);
    ServerConfig sc;
    sc.path = path;
    sc.max_pending = 1;
    StartError err{StartStep::Listen, Error(ErrorCode::Io, "")};
    ASSERT_TRUE(server.start(sc, &err)) << err.error.message();
    server.set_caps(kCaps);
    Receiver other(log);
    ASSERT_TRUE(other.start());
    expect_caps();
    Event oc = other.next(config());
    ASSERT_EQ(oc.kind, Event::Kind::Caps);
    other.accept_caps(oc.caps_seq);
    EXPECT_TRUE(eventually([&] { return server.clients() == 2u; }));

    UniqueFd mem = sealed_memfd(kFrameBytes);
    const MemoryRecord rec = flat_record(kFrameBytes);
    const int fds[] = {mem.get()};
    ASSERT_TRUE(server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(), true, true));
    Event held = receiver.next(config()); // kept: this receiver holds max-pending frames
    ASSERT_EQ(held.kind, Event::Kind::Frame) << held.why;
    receiver.finish();
    EXPECT_TRUE(eventually([&] { return server.held() == 1u; }));
    for (int i = 0; i < 5; ++i) {
        Event o = other.next(config());
        ASSERT_EQ(o.kind, Event::Kind::Frame) << o.why;
        o = Event{}; // released
        // Would wait forever for `receiver` without its DONE.
        auto r = server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(), true, true);
        ASSERT_TRUE(r) << r.error().message();
    }
    EXPECT_EQ(server.sent(), 7u) << "1 frame to the finished receiver, 6 to the other";
    EXPECT_EQ(server.dropped(), 0u);
    held = Event{};
    EXPECT_TRUE(eventually([&] { return server.held() == 1u; })) << "the last frame, unread";
    other.stop();
    server.stop();
}

TEST_F(IpcReceiverTest, WaitsForASinkToAppear)
{
    QuietServerObserver observer;
    Server server(observer);
    std::optional<Event> got;
    std::thread rx([&] { got = receiver.next(config()); });
    EXPECT_TRUE(eventually([&] { return log.has("waiting for a sink on " + path); }));
    ServerConfig sc;
    sc.path = path;
    StartError err{StartStep::Listen, Error(ErrorCode::Io, "")};
    const bool started = server.start(sc, &err);
    if (started) {
        // The caps go out with the first frame, once the receiver is there.
        server.set_caps(kCaps);
        UniqueFd mem = sealed_memfd(kFrameBytes);
        const MemoryRecord rec = flat_record(kFrameBytes);
        const int fds[] = {mem.get()};
        auto sent =
            server.send_frame(FrameHead{}, std::span(&rec, 1), fds, Keepalive(), true, false);
        EXPECT_TRUE(sent) << sent.error().message();
    } else {
        receiver.unlock();
    }
    rx.join();
    ASSERT_TRUE(started) << err.error.message();
    ASSERT_TRUE(got);
    EXPECT_EQ(got->kind, Event::Kind::Caps) << got->why;
    receiver.stop();
    server.stop();
}

TEST_F(IpcReceiverTest, NoSinkWithinTheTimeoutFails_Negative)
{
    ReceiverConfig c = config();
    c.timeout_ns = 30'000'000;
    const Event e = receiver.next(c);
    ASSERT_EQ(e.kind, Event::Kind::Failed);
    EXPECT_EQ(e.failure, ConnectFailure::Timeout);
    EXPECT_NE(e.why.find("ENOENT"), std::string::npos) << e.why;
}

// A path that is a file or a directory refuses every connection and no sink will replace it:
// the receiver says so at once instead of waiting out its timeout (0: forever).
TEST_F(IpcReceiverTest, APathThatIsNoSocketFailsAtOnceSayingWhatItIs_Negative)
{
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        ASSERT_TRUE(f);
        std::fclose(f);
    }
    ReceiverConfig c = config();
    c.timeout_ns = 0;
    Event e = receiver.next(c);
    ASSERT_EQ(e.kind, Event::Kind::Failed);
    EXPECT_EQ(e.failure, ConnectFailure::Connect);
    EXPECT_NE(e.why.find("\"" + path + "\" is a file, not a socket"), std::string::npos) << e.why;
    ASSERT_EQ(::unlink(path.c_str()), 0);
    ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
    e = receiver.next(c);
    ASSERT_EQ(e.kind, Event::Kind::Failed);
    EXPECT_NE(e.why.find("is a directory, not a socket"), std::string::npos) << e.why;
    ASSERT_EQ(::rmdir(path.c_str()), 0);
}

TEST_F(IpcReceiverTest, NoPathFails_Negative)
{
    ReceiverConfig c = config();
    c.path.clear();
    const Event e = receiver.next(c);
    ASSERT_EQ(e.kind, Event::Kind::Failed);
    EXPECT_EQ(e.failure, ConnectFailure::NoPath);
}

TEST_F(IpcReceiverTest, ASinkOfAnotherUserIsRefused_Negative)
{
    FakeSink sink(path); // listening is enough: the connection waits in its backlog
    ReceiverConfig c = config();
    c.allowed_uid = int(::getuid()) + 1;
    const Event e = receiver.next(c);
    ASSERT_EQ(e.kind, Event::Kind::Failed);
    EXPECT_EQ(e.failure, ConnectFailure::WrongUid);
    EXPECT_EQ(e.peer.uid, ::getuid());
    EXPECT_EQ(e.peer.pid, ::getpid());
}

// unlock() ends next() wherever it waits (for a sink, for a record) and holds until
// unlock_stop(); then the session goes on where it was.
TEST_F(IpcReceiverTest, UnlockEndsAWaitForASinkAndForARecord)
{
    ReceiverConfig forever = config();
    forever.timeout_ns = 0;
    {
        std::optional<Event> got;
        std::thread rx([&] { got = receiver.next(forever); });
        EXPECT_TRUE(eventually([&] { return log.has("waiting for a sink"); }));
        receiver.unlock();
        rx.join();
        ASSERT_TRUE(got);
        EXPECT_EQ(got->kind, Event::Kind::Flushing);
        EXPECT_EQ(receiver.next(forever).kind, Event::Kind::Flushing) << "until unlock_stop()";
        receiver.unlock_stop();
    }
    FakeSink sink(path);
    sink.serve([](UniqueFd& c) { send(c.get(), encode_hello(Hello{})); });
    {
        std::optional<Event> got;
        std::thread rx([&] { got = receiver.next(forever); });
        sink.join();
        EXPECT_TRUE(eventually([&] { return log.has("connected to " + path); }));
        receiver.unlock();
        rx.join();
        ASSERT_TRUE(got);
        EXPECT_EQ(got->kind, Event::Kind::Flushing);
        receiver.unlock_stop();
    }
    send(sink.client(), *encode_caps(1, kCaps));
    const Event e = receiver.next(forever);
    ASSERT_EQ(e.kind, Event::Kind::Caps) << e.why;
    EXPECT_EQ(receiver.stats().rejected, 0u);
}

} // namespace
} // namespace edgetensor::ipc
