// SPDX-License-Identifier: MIT
//
// tensoripcsink and tensoripcsrc in one process: frames, identities and releases, every kind
// of invalid message from a hand-written hostile sink, credentials, timeouts, copies and slow
// receivers. The two-process tests (gst-launch-1.0 peers, kill -9) are in test_ipc_process.cpp.

#include "fd_count.hpp"
#include "ipc_records.hpp"
#include "ipc_socket.hpp"
#include "ipc_test_util.hpp"
#include "ipc_wire.hpp"

#include <gst/app/gstappsrc.h>

#include <fcntl.h>
#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>

namespace edgetensor::test
{
namespace
{

class GstIpc : public ::testing::Test
{
protected:
    static void SetUpTestSuite() { load_system_plugins(); }
};

constexpr const char* kSmallNv12 = "video/x-raw,format=NV12,width=64,height=32,framerate=30/1";

std::string sender(const std::string& path, const std::string& extra = "",
                   const std::string& src = "num-buffers=120 pattern=frame-counter min-buffers=5 "
                                            "max-buffers=5")
{
    return "tensortestsrc " + src + " ! " + kSmallNv12 +
           " ! tensoripcsink name=sink socket-path=" + path +
           " wait-for-connection=true block=true sync=false " + extra;
}

std::string receiver(const std::string& path, const std::string& extra = "")
{
    return "tensoripcsrc name=src socket-path=" + path + " " + extra +
           " ! appsink name=out sync=false max-buffers=8 enable-last-sample=false";
}

TEST_F(GstIpc, FramesArriveWithContentTimestampsAndOneIdentityPerRemoteBuffer)
{
    const auto before = open_fds();
    {
        SocketDir dir;
        Pipeline tx(sender(dir.path()));
        Pipeline rx(receiver(dir.path()));
        ASSERT_TRUE(tx && rx);
        ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        SenderBuffers files;
        for (guint64 n = 0; n < 120; ++n) {
            auto s = pull(rx);
            ASSERT_TRUE(s) << "frame " << n;
            GstBuffer* b = gst_sample_get_buffer(s.get());
            EXPECT_EQ(GST_BUFFER_OFFSET(b), n) << "block=true: no frame is skipped";
            EXPECT_EQ(GST_BUFFER_PTS(b), gst_util_uint64_scale(n, GST_SECOND, 30));
            EXPECT_TRUE(frame_counter_content(b));
            ASSERT_TRUE(gst_buffer_get_edge_tensor_meta(b)) << "every frame carries the meta";
            ASSERT_TRUE(gst_is_fd_memory(gst_buffer_peek_memory(b, 0)));
            files.note(b);
            if (n == 0) {
                GstCaps* caps = gst_sample_get_caps(s.get());
                ASSERT_TRUE(caps);
                // tensortestsrc fixes colorimetry, pixel-aspect-ratio and interlace-mode on top
                // of what the capsfilter asks for; the receiver has exactly the sender's caps.
                EXPECT_TRUE(gst_caps_is_fixed(caps));
                EXPECT_TRUE(gst_caps_is_subset(caps, caps_from(kSmallNv12).get()))
                    << "the sender's caps";
            }
        }
        EXPECT_TRUE(files.one_identity_each(5)) << "the sender's pool holds 5";
        auto eos = rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 5s);
        ASSERT_TRUE(eos);
        EXPECT_EQ(GST_MESSAGE_TYPE(eos.get()), GST_MESSAGE_EOS) << message_text(eos.get());
        GstElement* sink = tx.by_name("sink");
        EXPECT_EQ(u64_property(sink, "sent"), 120u);
        EXPECT_EQ(u64_property(sink, "dropped"), 0u);
        EXPECT_EQ(u64_property(sink, "copies"), 0u);
        // Releases are what kept the bounded pool turning (block=true, max-pending=2); at the
        // end only the sample appsink caches may still be held.
        EXPECT_TRUE(eventually([&] { return uint_property(sink, "held") <= 1; }, 2s));
        rx.stop();
        EXPECT_TRUE(eventually([&] { return uint_property(sink, "held") == 0; }, 2s));
        EXPECT_EQ(u64_property(rx.by_name("src"), "received"), 120u);
        EXPECT_EQ(u64_property(rx.by_name("src"), "rejected"), 0u);
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

// ---- a hostile sink, written by hand ------------------------------------------------------

constexpr size_t kFrameBytes = 64 * 32 * 3 / 2;

ipc::FrameHead head_for(guint64 seq)
{
    ipc::FrameHead h;
    h.seq = seq;
    h.offset = seq;
    h.pts = seq * GST_MSECOND;
    h.caps_seq = 1;
    h.n_planes = 2;
    h.plane_offset[1] = 64 * 32;
    h.plane_stride[0] = 64;
    h.plane_stride[1] = 64;
    return h;
}

class HostileSink
{
public:
    explicit HostileSink(const std::string& path) : listen_(*ipc::listen_on(path, 0600)) {}

    bool accept(std::chrono::milliseconds timeout)
    {
        return eventually(
            [&] {
                auto c = ipc::accept_on(listen_.get());
                if (c)
                    client_ = std::move(*c);
                return bool(client_);
            },
            timeout);
    }
    void send(const std::vector<uint8_t>& bytes, std::vector<int> fds = {})
    {
        auto r = ipc::send_record(client_.get(), bytes, fds);
        ASSERT_TRUE(r) << r.error().message();
    }
    void send_frame(const ipc::FrameHead& h, const ipc::MemoryRecord& r, int fd)
    {
        auto m = ipc::encode_frame(h, std::span(&r, 1));
        ASSERT_TRUE(m);
        send(*m, {fd});
    }
    std::set<guint64> releases()
    {
        std::set<guint64> seqs;
        for (;;) {
            auto rec = ipc::receive_record(client_.get());
            if (!rec || rec->eof)
                break;
            auto msg = ipc::parse(rec->bytes, std::move(rec->fds), rec->truncated);
            if (msg && msg->type == ipc::MsgType::Release)
                seqs.insert(msg->releases.begin(), msg->releases.end());
        }
        return seqs;
    }
    int client() const { return client_.get(); }

private:
    UniqueFd listen_;
    UniqueFd client_;
};

TEST_F(GstIpc, InvalidMessagesAreDroppedWithTheirFdsClosedAndTheStreamGoesOn_Negative)
{
    const auto before = open_fds();
    {
        SocketDir dir;
        HostileSink hostile(dir.path());
        Pipeline rx(receiver(dir.path()));
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_TRUE(hostile.accept(5s));
        ipc::Hello hello;
        hostile.send(ipc::encode_hello(hello));
        hostile.send(*ipc::encode_caps(1, kSmallNv12));
        UniqueFd good = sealed_memfd(kFrameBytes, 7);
        const ipc::MemoryRecord rec = flat_record(kFrameBytes);
        int expected_rejections = 0;

        // 1. wrong protocol version
        auto v = *ipc::encode_frame(head_for(1), std::span(&rec, 1));
        v[4] = 9; // a version this side does not speak
        hostile.send(v, {good.get()});
        ++expected_rejections;
        // 2. truncated (the header claims more than was sent)
        auto t = *ipc::encode_frame(head_for(2), std::span(&rec, 1));
        t.resize(t.size() - 16);
        hostile.send(t, {good.get()});
        ++expected_rejections;
        // 3. oversized record
        std::vector<uint8_t> huge(ipc::kMaxMessage + 100, 0);
        hostile.send(huge);
        ++expected_rejections;
        // 4. wrong fd count
        hostile.send(*ipc::encode_frame(head_for(4), std::span(&rec, 1)), {good.get(), good.get()});
        ++expected_rejections;
        // 5. a pipe instead of a memfd
        int p[2];
        ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
        UniqueFd pr(p[0]), pw(p[1]);
        hostile.send_frame(head_for(5), rec, pr.get());
        ++expected_rejections;
        // 6. an unsealed memfd (the sender could shrink it under us)
        UniqueFd unsealed(::memfd_create("ipc-unsealed", MFD_CLOEXEC));
        ASSERT_EQ(::ftruncate(unsealed.get(), off_t(kFrameBytes)), 0);
        hostile.send_frame(head_for(6), rec, unsealed.get());
        ++expected_rejections;
        // 7. a descriptor addressing beyond its capacity
        ipc::MemoryRecord beyond = rec;
        beyond.desc.shape[0] = kFrameBytes * 2;
        hostile.send_frame(head_for(7), beyond, good.get());
        ++expected_rejections;
        // 8. a chroma plane stride that runs past the frame
        ipc::FrameHead wide = head_for(8);
        wide.plane_stride[1] = 4096;
        hostile.send_frame(wide, rec, good.get());
        ++expected_rejections;
        // 9. a memfd smaller than the descriptor says
        UniqueFd small = sealed_memfd(100, 0);
        hostile.send_frame(head_for(9), rec, small.get());
        ++expected_rejections;
        // 10. a frame for caps never sent
        ipc::FrameHead other = head_for(10);
        other.caps_seq = 9;
        hostile.send_frame(other, rec, good.get());
        ++expected_rejections;
        // 11. caps this element does not produce, and caps that are no caps
        hostile.send(*ipc::encode_caps(2, "audio/x-raw, rate=(int)48000"));
        ++expected_rejections;
        hostile.send(*ipc::encode_caps(3, "video/x-raw, format=(string){ NV12, I420 }"));
        ++expected_rejections;
        // 12. a RELEASE, which a sink never sends
        const guint64 seq = 1;
        hostile.send(*ipc::encode_release(std::span(&seq, 1)));
        ++expected_rejections;
        // Then two good frames, and EOS.
        hostile.send_frame(head_for(100), rec, good.get());
        hostile.send_frame(head_for(101), rec, good.get());
        hostile.send(ipc::encode_eos());

        auto s = pull(rx);
        ASSERT_TRUE(s) << "the good frame after the bad ones";
        GstBuffer* b = gst_sample_get_buffer(s.get());
        EXPECT_EQ(GST_BUFFER_OFFSET(b), 100u);
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(b, &map, GST_MAP_READ));
        EXPECT_EQ(map.size, kFrameBytes);
        EXPECT_EQ(map.data[0], 7);
        EXPECT_EQ(map.data[kFrameBytes - 1], 7);
        gst_buffer_unmap(b, &map);
        EXPECT_TRUE(gst_buffer_get_edge_tensor_meta(b));
        s.reset();
        auto s2 = pull(rx);
        ASSERT_TRUE(s2);
        EXPECT_EQ(GST_BUFFER_OFFSET(gst_sample_get_buffer(s2.get())), 101u);
        s2.reset();
        std::string warnings;
        MiniObjectPtr<GstMessage> eos;
        while (
            (eos = rx.wait(
                 GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING), 5s)) &&
            GST_MESSAGE_TYPE(eos.get()) == GST_MESSAGE_WARNING)
            warnings += message_text(eos.get()) + "\n";
        ASSERT_TRUE(eos);
        EXPECT_EQ(GST_MESSAGE_TYPE(eos.get()), GST_MESSAGE_EOS) << message_text(eos.get());
        // The first rejection reached the bus as a warning, visible without GST_DEBUG.
        EXPECT_NE(warnings.find("protocol version 9"), std::string::npos) << warnings;
        GstElement* src = rx.by_name("src");
        EXPECT_EQ(u64_property(src, "rejected"), guint64(expected_rejections));
        EXPECT_EQ(u64_property(src, "received"), 2u);
        // Frames refused after parsing are released at once; a good one once dropped (the
        // first: appsink caches the sample it handed out last).
        std::set<guint64> released;
        EXPECT_TRUE(eventually(
            [&] {
                auto r = hostile.releases();
                released.insert(r.begin(), r.end());
                return released.count(100) == 1;
            },
            2s));
        for (guint64 s_ : {5u, 6u, 8u, 9u, 10u})
            EXPECT_EQ(released.count(s_), 1u) << "frame " << s_ << " was not released";
        rx.stop();
    }
    EXPECT_EQ(open_fds(), before) << "every fd received with a refused message was closed: "
                                  << describe_fds(open_fds());
}

TEST_F(GstIpc, OnInvalidErrorStopsTheStream_Negative)
{
    SocketDir dir;
    HostileSink hostile(dir.path());
    Pipeline rx(receiver(dir.path(), "on-invalid=error"));
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    ASSERT_TRUE(hostile.accept(5s));
    hostile.send(*ipc::encode_caps(1, kSmallNv12));
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    UniqueFd pr(p[0]), pw(p[1]);
    hostile.send_frame(head_for(1), flat_record(kFrameBytes), pr.get());
    auto err = rx.wait(GST_MESSAGE_ERROR, 5s);
    ASSERT_TRUE(err);
    EXPECT_NE(message_text(err.get()).find("neither a DMA-BUF nor a memfd"), std::string::npos)
        << message_text(err.get());
}

TEST_F(GstIpc, SenderGoneWithoutEosGivesEosOrErrorAsConfigured)
{
    for (const char* mode : {"eos", "error"}) {
        SCOPED_TRACE(mode);
        SocketDir dir;
        auto hostile = std::make_unique<HostileSink>(dir.path());
        Pipeline rx(receiver(dir.path(), std::string("on-disconnect=") + mode));
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_TRUE(hostile->accept(5s));
        hostile->send(ipc::encode_hello(ipc::Hello{}));
        hostile->send(*ipc::encode_caps(1, kSmallNv12));
        const auto t0 = std::chrono::steady_clock::now();
        hostile.reset(); // the socket closes without EOS
        auto m = rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 5s);
        ASSERT_TRUE(m) << "never a hang";
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
        EXPECT_EQ(GST_MESSAGE_TYPE(m.get()),
                  std::string(mode) == "eos" ? GST_MESSAGE_EOS : GST_MESSAGE_ERROR)
            << message_text(m.get());
    }
}

TEST_F(GstIpc, ASinkThatClosesBeforeItsGreetingIsAnErrorEvenWithOnDisconnectEos_Negative)
{
    SocketDir dir;
    auto hostile = std::make_unique<HostileSink>(dir.path());
    Pipeline rx(receiver(dir.path(), "on-disconnect=eos"));
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    ASSERT_TRUE(hostile->accept(5s));
    hostile.reset(); // what a sink does to a receiver it refuses
    auto m = rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 5s);
    ASSERT_TRUE(m) << "never a hang";
    ASSERT_EQ(GST_MESSAGE_TYPE(m.get()), GST_MESSAGE_ERROR) << message_text(m.get());
    EXPECT_NE(message_text(m.get()).find("closed the connection before its greeting"),
              std::string::npos)
        << message_text(m.get());
}

TEST_F(GstIpc, NoSinkWithinTheTimeoutIsAnError_Negative)
{
    SocketDir dir;
    Pipeline rx(receiver(dir.path(), "timeout=300000000"));
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    auto err = rx.wait(GST_MESSAGE_ERROR, 5s);
    ASSERT_TRUE(err);
    EXPECT_NE(message_text(err.get()).find("No tensoripcsink listens"), std::string::npos)
        << message_text(err.get());
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 250ms);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
}

TEST_F(GstIpc, AReceiverStartedBeforeTheSenderWaitsForIt)
{
    SocketDir dir;
    Pipeline rx(receiver(dir.path()));
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    std::this_thread::sleep_for(300ms);
    Pipeline tx(sender(dir.path()));
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    for (int n = 0; n < 120; ++n) {
        auto s = pull(rx);
        ASSERT_TRUE(s) << "frame " << n;
        EXPECT_TRUE(frame_counter_content(gst_sample_get_buffer(s.get())));
    }
}

TEST_F(GstIpc, PeerCredentialsOfTheWrongUserAreRefused_Negative)
{
    const gint other = gint(::getuid()) + 1;
    { // the sink refuses the receiver
        SocketDir dir;
        Pipeline tx(sender(dir.path(), "allowed-uid=" + std::to_string(other),
                           "is-live=true pattern=frame-counter"));
        // on-disconnect=eos (the default): a refusal is an error all the same.
        Pipeline rx(receiver(dir.path()));
        ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        auto w = tx.wait(GST_MESSAGE_WARNING, 5s);
        ASSERT_TRUE(w);
        EXPECT_NE(message_text(w.get()).find("allowed-uid is " + std::to_string(other)),
                  std::string::npos)
            << message_text(w.get());
        auto e = rx.wait(GST_MESSAGE_ERROR, 5s);
        ASSERT_TRUE(e) << "the refused receiver hears of it";
        EXPECT_NE(message_text(e.get()).find("closed the connection before its greeting"),
                  std::string::npos)
            << message_text(e.get());
        EXPECT_EQ(uint_property(tx.by_name("sink"), "clients"), 0u);
    }
    { // the receiver refuses the sink
        SocketDir dir;
        Pipeline tx(sender(dir.path(), "", "is-live=true"));
        Pipeline rx(receiver(dir.path(), "allowed-uid=" + std::to_string(other)));
        ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        auto e = rx.wait(GST_MESSAGE_ERROR, 5s);
        ASSERT_TRUE(e);
        EXPECT_NE(message_text(e.get()).find("allowed-uid is"), std::string::npos)
            << message_text(e.get());
    }
    { // the right uid is served
        SocketDir dir;
        const std::string uid = "allowed-uid=" + std::to_string(::getuid());
        Pipeline tx(sender(dir.path(), uid));
        Pipeline rx(receiver(dir.path(), uid));
        ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        EXPECT_TRUE(pull(rx));
    }
}

TEST_F(GstIpc, AReceiverBeyondMaxClientsIsRefusedAndTheOthersGoOn_Negative)
{
    SocketDir dir;
    Pipeline tx(sender(dir.path(), "max-clients=1", "is-live=true pattern=frame-counter"));
    GstElement* sink = tx.by_name("sink");
    guint max_clients = 0;
    g_object_get(sink, "max-clients", &max_clients, nullptr);
    EXPECT_EQ(max_clients, 1u);
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    Pipeline rx1(receiver(dir.path()));
    ASSERT_NE(rx1.play(), GST_STATE_CHANGE_FAILURE);
    ASSERT_TRUE(pull(rx1)) << "the first receiver is served";
    ASSERT_EQ(uint_property(sink, "clients"), 1u);

    Pipeline rx2(receiver(dir.path()));
    ASSERT_NE(rx2.play(), GST_STATE_CHANGE_FAILURE);
    auto e = rx2.wait(GST_MESSAGE_ERROR, 5s);
    ASSERT_TRUE(e) << "the second one hears of its refusal";
    EXPECT_NE(message_text(e.get()).find("closed the connection before its greeting"),
              std::string::npos)
        << message_text(e.get());
    auto w = tx.wait(GST_MESSAGE_WARNING, 5s);
    ASSERT_TRUE(w);
    EXPECT_NE(message_text(w.get()).find("max-clients (1)"), std::string::npos)
        << message_text(w.get());

    // The served receiver goes on; the refused one left nothing behind.
    for (int n = 0; n < 10; ++n)
        ASSERT_TRUE(pull(rx1)) << "frame " << n;
    EXPECT_EQ(uint_property(sink, "clients"), 1u);
}

// As videotestsrc: a live tensortestsrc reports one frame of latency and no maximum. A maximum
// of one frame is less than the sink's processing deadline (20 ms) on top of it, so every live
// camera-sharing pipeline warned "Pipeline construction is invalid, please add queues".
TEST_F(GstIpc, ALiveSenderReportsOneFrameOfLatencyAndNoMaximumAndNoWarning)
{
    SocketDir dir;
    Pipeline tx("tensortestsrc name=src is-live=true num-buffers=30 ! " + std::string(kSmallNv12) +
                " ! tensoripcsink socket-path=" + dir.path());
    // PLAYING reached: the sink prerolled, so the source has negotiated its frame rate.
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    EXPECT_EQ(gst_element_get_state(tx.get(), nullptr, nullptr, 5 * GST_SECOND),
              GST_STATE_CHANGE_SUCCESS);
    GstObjectPtr<GstPad> pad(gst_element_get_static_pad(tx.by_name("src"), "src"));
    MiniObjectPtr<GstQuery> q(gst_query_new_latency());
    ASSERT_TRUE(gst_pad_query(pad.get(), q.get()));
    gboolean live = FALSE;
    GstClockTime min = 0, max = 0;
    gst_query_parse_latency(q.get(), &live, &min, &max);
    EXPECT_TRUE(live);
    EXPECT_EQ(min, GST_SECOND / 30);
    EXPECT_EQ(max, GST_CLOCK_TIME_NONE);

    auto m =
        tx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_WARNING | GST_MESSAGE_ERROR), 10s);
    ASSERT_TRUE(m) << "no EOS";
    EXPECT_EQ(GST_MESSAGE_TYPE(m.get()), GST_MESSAGE_EOS) << message_text(m.get());
}

TEST_F(GstIpc, SystemMemoryIsCopiedOnlyWithCopyModeAuto)
{
    auto push_system_frames = [](const Pipeline& p, int n) {
        GstElement* src = p.by_name("in");
        for (int i = 0; i < n; ++i) {
            GstBuffer* b = gst_buffer_new_allocate(nullptr, kFrameBytes, nullptr);
            gst_buffer_memset(b, 0, guint8(i + 1), kFrameBytes);
            GST_BUFFER_OFFSET(b) = guint64(i);
            ASSERT_EQ(gst_app_src_push_buffer(GST_APP_SRC(src), b), GST_FLOW_OK);
        }
        gst_app_src_end_of_stream(GST_APP_SRC(src));
    };
    const std::string appsrc = std::string("appsrc name=in format=time caps=") + kSmallNv12;
    { // auto: copied, counted, warned once; the receiver gets the bytes
        SocketDir dir;
        Pipeline tx(appsrc +
                    " ! tensoripcsink name=sink wait-for-connection=true block=true "
                    "socket-path=" +
                    dir.path());
        Pipeline rx(receiver(dir.path()));
        ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        push_system_frames(tx, 3);
        for (int i = 0; i < 3; ++i) {
            auto s = pull(rx);
            ASSERT_TRUE(s);
            GstMapInfo map;
            GstBuffer* b = gst_sample_get_buffer(s.get());
            ASSERT_TRUE(gst_buffer_map(b, &map, GST_MAP_READ));
            EXPECT_EQ(map.data[0], guint8(i + 1));
            EXPECT_EQ(map.data[kFrameBytes - 1], guint8(i + 1));
            gst_buffer_unmap(b, &map);
        }
        EXPECT_EQ(u64_property(tx.by_name("sink"), "copies"), 3u);
        auto w = tx.wait(GST_MESSAGE_WARNING, 1s);
        ASSERT_TRUE(w);
        EXPECT_NE(message_text(w.get()).find("Copying frames"), std::string::npos);
        EXPECT_FALSE(tx.wait(GST_MESSAGE_WARNING, 100ms)) << "warned once";
    }
    { // never: an element error naming the memory
        SocketDir dir;
        Pipeline tx(appsrc + " ! tensoripcsink copy-mode=never socket-path=" + dir.path());
        ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
        push_system_frames(tx, 1);
        auto e = tx.wait(GST_MESSAGE_ERROR, 5s);
        ASSERT_TRUE(e);
        EXPECT_NE(message_text(e.get()).find("has no fd to pass"), std::string::npos)
            << message_text(e.get());
    }
}

TEST_F(GstIpc, ASlowReceiverDropsFramesAndALeavingOneFreesWhatItHeld)
{
    const auto before = open_fds();
    {
        SocketDir dir;
        // A bounded pool: if the sink kept buffers for the stalled receiver beyond max-pending
        // the source would block and never reach EOS.
        Pipeline tx("tensortestsrc num-buffers=200 min-buffers=4 max-buffers=4 ! " +
                    std::string(kSmallNv12) +
                    " ! tensoripcsink name=sink max-pending=2 sync=false wait-for-connection=true "
                    "socket-path=" +
                    dir.path());
        // The receiver never pulls: its appsink holds one buffer, its queue the rest.
        Pipeline rx("tensoripcsrc socket-path=" + dir.path() +
                    " ! appsink name=out sync=false max-buffers=1 enable-last-sample=false");
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        std::this_thread::sleep_for(100ms);
        ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
        GstElement* sink = tx.by_name("sink");
        auto eos = tx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 10s);
        ASSERT_TRUE(eos) << "a slow receiver must not stall the sender";
        EXPECT_EQ(GST_MESSAGE_TYPE(eos.get()), GST_MESSAGE_EOS) << message_text(eos.get());
        // Every frame reached the receiver or was counted as dropped for it.
        EXPECT_EQ(u64_property(sink, "dropped") + u64_property(sink, "sent"), 200u);
        EXPECT_GT(u64_property(sink, "dropped"), 150u);
        EXPECT_LE(uint_property(sink, "held"), 2u);
        EXPECT_EQ(uint_property(sink, "clients"), 1u);
        rx.stop(); // the receiver leaves holding frames
        EXPECT_TRUE(eventually([&] { return uint_property(sink, "clients") == 0; }, 2s));
        EXPECT_EQ(uint_property(sink, "held"), 0u) << "everything held for it is freed";
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

// The receiver's memfd memories are read-only shares of one kept mapping per sender buffer: a
// consumer that writes into a frame it holds alone (an in-place element; here a probe where the
// buffer is writable) gets GStreamer's copy, and the sender's pages, which its next frames
// reuse, are never written from here.
struct WriteProbe {
    int frames = 0;
    int writable = 0;
    int reached = 0; // frames whose write showed through a mapping of the sender's file
};

GstPadProbeReturn write_in_place(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    constexpr size_t kProbe = 64;
    auto* p = static_cast<WriteProbe*>(data);
    GstBuffer* b = GST_PAD_PROBE_INFO_BUFFER(info);
    ++p->frames;
    GstMemory* mem = gst_buffer_peek_memory(b, 0);
    if (!gst_buffer_is_writable(b) || !gst_is_fd_memory(mem))
        return GST_PAD_PROBE_OK;
    ++p->writable;
    const gsize at = mem->offset;
    auto* theirs = static_cast<uint8_t*>(
        mmap(nullptr, at + kProbe, PROT_READ, MAP_SHARED, gst_fd_memory_get_fd(mem), 0));
    if (theirs == MAP_FAILED)
        return GST_PAD_PROBE_OK;
    GstMapInfo w;
    if (gst_buffer_map(b, &w, GST_MAP_WRITE)) {
        std::memset(w.data, 0xAB, w.size); // frame-counter bytes stay below 120
        gst_buffer_unmap(b, &w);
    }
    size_t written = 0;
    for (size_t i = 0; i < kProbe; ++i)
        written += theirs[at + i] == 0xAB;
    munmap(theirs, at + kProbe);
    p->reached += written > 0;
    return GST_PAD_PROBE_OK;
}

TEST_F(GstIpc, AConsumerThatWritesGetsACopyNotTheSendersPages)
{
    SocketDir dir;
    Pipeline tx(sender(dir.path()));
    Pipeline rx("tensoripcsrc socket-path=" + dir.path() + " ! fakesink name=out sync=false");
    ASSERT_TRUE(tx && rx);
    WriteProbe probe;
    GstObjectPtr<GstPad> pad(gst_element_get_static_pad(rx.by_name("out"), "sink"));
    gst_pad_add_probe(pad.get(), GST_PAD_PROBE_TYPE_BUFFER, write_in_place, &probe, nullptr);
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    auto eos = rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 10s);
    ASSERT_TRUE(eos);
    EXPECT_EQ(GST_MESSAGE_TYPE(eos.get()), GST_MESSAGE_EOS) << message_text(eos.get());
    EXPECT_EQ(probe.frames, 120);
    EXPECT_EQ(probe.writable, 120) << "each frame reached the probe as its only holder";
    EXPECT_EQ(probe.reached, 0) << "frames whose write reached the sender's pages";
}

TEST_F(GstIpc, TwoReceiversGetEveryFrame)
{
    SocketDir dir;
    Pipeline rx1(receiver(dir.path()));
    Pipeline rx2(receiver(dir.path()));
    ASSERT_NE(rx1.play(), GST_STATE_CHANGE_FAILURE);
    ASSERT_NE(rx2.play(), GST_STATE_CHANGE_FAILURE);
    Pipeline tx("tensortestsrc num-buffers=60 pattern=frame-counter ! " + std::string(kSmallNv12) +
                " ! tensoripcsink name=sink block=true sync=false socket-path=" + dir.path());
    GstElement* sink = tx.by_name("sink");
    // PAUSED listens but renders nothing (the first buffer only prerolls): both receivers are
    // connected before the first frame is sent.
    ASSERT_NE(gst_element_set_state(tx.get(), GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    ASSERT_TRUE(eventually([&] { return uint_property(sink, "clients") == 2; }, 5s));
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    // In turns: with block=true the sender waits for the slower of the two.
    int got[2] = {0, 0};
    for (bool more = true; more;) {
        more = false;
        for (int r = 0; r < 2; ++r) {
            if (auto s = pull(r == 0 ? rx1 : rx2, 1s)) {
                EXPECT_TRUE(frame_counter_content(gst_sample_get_buffer(s.get())));
                ++got[r];
                more = true;
            }
        }
    }
    EXPECT_EQ(got[0], 60);
    EXPECT_EQ(got[1], 60);
    EXPECT_EQ(u64_property(sink, "dropped"), 0u);
}

} // namespace
} // namespace edgetensor::test
