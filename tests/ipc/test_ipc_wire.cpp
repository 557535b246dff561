// SPDX-License-Identifier: MIT
//
// The IPC wire protocol alone (no GStreamer): records round-trip, every malformed record is
// refused with a reason naming the field, and every fd that came with a refused record is
// closed (/proc/self/fd is counted around each case).

#include "fd_count.hpp"
#include "ipc_records.hpp"
#include "ipc_socket.hpp"
#include "ipc_wire.hpp"

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::ipc
{
namespace
{

using test::describe_fds;
using test::flat_record;
using test::open_fds;
using test::sealed_memfd;

std::vector<uint8_t> frame_bytes(const FrameHead& head, std::vector<MemoryRecord> recs)
{
    auto m = encode_frame(head, recs);
    EXPECT_TRUE(m);
    return m ? *m : std::vector<uint8_t>{};
}

// parse() must refuse `bytes` with `fds`, mention `needle`, and close every fd.
void expect_refused(const std::vector<uint8_t>& bytes, std::vector<UniqueFd> fds,
                    const std::string& needle, bool truncated = false)
{
    std::vector<int> raw;
    for (auto& f : fds)
        raw.push_back(f.get());
    auto r = parse(bytes, std::move(fds), truncated);
    ASSERT_FALSE(r) << "accepted a record that should mention \"" << needle << "\"";
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidDescriptor);
    EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
    for (int f : raw)
        EXPECT_EQ(::fcntl(f, F_GETFD), -1) << "fd " << f << " of a refused record is still open";
}

TEST(IpcWire, EveryMessageRoundTrips)
{
    Hello h;
    h.max_pending = 3;
    h.sink_pid = 42;
    auto hello = parse(encode_hello(h), {}, false);
    ASSERT_TRUE(hello) << hello.error().message();
    EXPECT_EQ(hello->type, MsgType::Hello);
    EXPECT_EQ(hello->hello.max_pending, 3u);
    EXPECT_EQ(hello->hello.sink_pid, 42u);

    auto caps = encode_caps(7, "video/x-raw, format=(string)NV12");
    ASSERT_TRUE(caps);
    auto c = parse(*caps, {}, false);
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_EQ(c->caps_seq, 7u);
    EXPECT_EQ(c->caps, "video/x-raw, format=(string)NV12");

    const uint64_t seqs[] = {1, 5, 9};
    auto rel = encode_release(seqs);
    ASSERT_TRUE(rel);
    auto r = parse(*rel, {}, false);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->releases, (std::vector<uint64_t>{1, 5, 9}));

    auto e = parse(encode_eos(), {}, false);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->type, MsgType::Eos);

    auto d = parse(encode_done({42}), {}, false);
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->type, MsgType::Done);
    EXPECT_EQ(d->done.last_seq, 42u);

    FrameHead head;
    head.seq = 11;
    head.pts = 1000;
    head.capture = 123456789012345;
    head.caps_seq = 7;
    head.n_planes = 2;
    head.plane_offset[1] = 4096;
    head.plane_stride[0] = 64;
    head.plane_stride[1] = 64;
    UniqueFd fd = sealed_memfd(8192);
    const int raw = fd.get();
    std::vector<UniqueFd> fds;
    fds.push_back(std::move(fd));
    auto f = parse(frame_bytes(head, {flat_record(8192)}), std::move(fds), false);
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_EQ(f->frame.head.seq, 11u);
    EXPECT_EQ(f->frame.head.pts, 1000u);
    EXPECT_EQ(f->frame.head.capture, 123456789012345u) << "the capture time travels (version 4)";
    EXPECT_EQ(f->frame.head.n_memories, 1u);
    EXPECT_EQ(f->frame.fds[0].get(), raw);
    EXPECT_EQ(f->frame.total_size(), 8192u);
    EXPECT_TRUE(check_frame_fds(f->frame)) << check_frame_fds(f->frame).error().message();
}

TEST(IpcWire, MalformedRecordsAreRefusedAndTheirFdsClosed_Negative)
{
    const auto before = open_fds();
    FrameHead head;
    head.seq = 1;
    const MemoryRecord good = flat_record(4096);
    auto one_fd = [] {
        std::vector<UniqueFd> v;
        v.push_back(sealed_memfd(4096));
        return v;
    };
    const auto valid = frame_bytes(head, {good});

    { // wrong protocol version
        auto b = valid;
        b[4] = 9;
        expect_refused(b, one_fd(), "protocol version 9");
    }
    { // bad magic
        auto b = valid;
        b[0] ^= 0xff;
        expect_refused(b, one_fd(), "bad magic");
    }
    { // truncated: shorter than the header, and a frame cut short
        expect_refused(std::vector<uint8_t>(valid.begin(), valid.begin() + 7), one_fd(),
                       "shorter than the 16-byte header");
        auto b = std::vector<uint8_t>(valid.begin(), valid.end() - 10);
        const uint32_t size = uint32_t(b.size());
        std::memcpy(b.data() + 8, &size, 4);
        expect_refused(b, one_fd(), "body bytes");
    }
    { // header size disagrees with the record
        auto b = valid;
        b.push_back(0);
        expect_refused(b, one_fd(), "header says");
    }
    { // oversized, and cut by the kernel
        std::vector<uint8_t> big(kMaxMessage + 1, 0);
        expect_refused(big, one_fd(), "exceeds");
        expect_refused(valid, one_fd(), "truncated", true);
    }
    { // wrong fd count: none, two
        expect_refused(valid, {}, "carries 0 fds");
        auto two = one_fd();
        two.push_back(sealed_memfd(4096));
        expect_refused(valid, std::move(two), "carries 2 fds");
        // fds on a message that carries none
        expect_refused(encode_eos(), one_fd(), "expected none");
        expect_refused(encode_done({1}), one_fd(), "DONE carries 1 fds, expected none");
    }
    { // DONE cut short, and with a tail
        auto b = encode_done({1});
        b.resize(b.size() - 1);
        const uint32_t size = uint32_t(b.size());
        std::memcpy(b.data() + 8, &size, 4);
        expect_refused(b, {}, "DONE body of 7 bytes, expected 8");
        b = encode_done({1});
        b.push_back(0);
        const uint32_t longer = uint32_t(b.size());
        std::memcpy(b.data() + 8, &longer, 4);
        expect_refused(b, {}, "DONE body of 9 bytes");
    }
    { // unknown type
        auto b = encode_eos();
        b[6] = 77;
        expect_refused(b, {}, "unknown message type 77");
    }
    auto with = [&](auto mutate, const std::string& needle) {
        MemoryRecord r = good;
        FrameHead h = head;
        mutate(r, h);
        expect_refused(frame_bytes(h, {r}), one_fd(), needle);
    };
    with([](MemoryRecord& r, FrameHead&) { r.desc.version = 2; }, "descriptor version 2");
    with([](MemoryRecord& r, FrameHead&) { r.desc.kind = EDGETENSOR_KIND_CUDA_DEVICE; },
         "descriptor kind 4");
    with([](MemoryRecord& r, FrameHead&) { r.desc.handle = 3; }, "does not name its fd");
    with([](MemoryRecord& r, FrameHead&) { r.desc.ptr = &r; }, "host address");
    with([](MemoryRecord& r, FrameHead&) { r.desc.ndim = 9; }, "ndim 9");
    with([](MemoryRecord& r, FrameHead&) { r.desc.dtype = 11; }, "dtype 11");
    with([](MemoryRecord& r, FrameHead&) { r.desc.shape[0] = 0; }, "dimension 0 is 0");
    with([](MemoryRecord& r, FrameHead&) { r.desc.strides[0] = -1; }, "negative");
    with([](MemoryRecord& r, FrameHead&) { r.desc.shape[0] = 4097; }, "beyond the capacity");
    with(
        [](MemoryRecord& r, FrameHead&) {
            r.desc.ndim = 2;
            r.desc.shape[0] = uint64_t(1) << 40;
            r.desc.shape[1] = 2;
            r.desc.strides[0] = int64_t(1) << 40;
            r.desc.strides[1] = 1;
        },
        "overflow");
    with([](MemoryRecord& r, FrameHead&) { r.desc.flags = EDGETENSOR_FLAG_SYNC_PRESENT; },
         "sync fences");
    with([](MemoryRecord& r, FrameHead&) { r.offset = 100; }, "exceeds maxsize");
    with([](MemoryRecord& r, FrameHead&) { r.maxsize = r.size = 8192; }, "exceeds the capacity");
    with([](MemoryRecord&, FrameHead& h) { h.n_planes = 5; }, "5 planes");
    with(
        [](MemoryRecord&, FrameHead& h) {
            h.n_planes = 1;
            h.plane_stride[0] = 0;
        },
        "stride 0 is not positive");
    with(
        [](MemoryRecord&, FrameHead& h) {
            h.n_planes = 1;
            h.plane_stride[0] = 64;
            h.plane_offset[0] = 4096;
        },
        "beyond the frame");
    { // n_memories beyond the limit
        auto b = valid;
        const uint32_t n = 5;
        std::memcpy(b.data() + kHeaderSize + offsetof(FrameHead, n_memories), &n, 4);
        expect_refused(b, one_fd(), "5 memories");
    }
    { // a caps string with a NUL, and an empty one
        auto b = *encode_caps(1, "video/x-raw");
        b[kHeaderSize + 8 + 3] = 0;
        expect_refused(b, {}, "NUL");
        EXPECT_FALSE(encode_caps(1, std::string("a\0b", 3)));
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

// What check_fd() refuses whatever it accepted before: a pipe, an unsealed memfd, a memfd too
// small for its record, and `ok` (a good sealed memfd of 4096 bytes) described as a DMA-BUF.
void expect_bad_fds_refused(int ok)
{
    {
        int p[2];
        ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
        UniqueFd r(p[0]), w(p[1]);
        auto res = check_fd(r.get(), flat_record(4096));
        ASSERT_FALSE(res);
        EXPECT_EQ(res.error().code(), ErrorCode::UnknownBufferType);
        EXPECT_NE(res.error().message().find("0x50495045"), std::string::npos)
            << res.error().message();
    }
    {
        UniqueFd unsealed(::memfd_create("ipc-unsealed", MFD_CLOEXEC));
        ASSERT_EQ(::ftruncate(unsealed.get(), 4096), 0);
        auto res = check_fd(unsealed.get(), flat_record(4096));
        ASSERT_FALSE(res);
        EXPECT_NE(res.error().message().find("F_SEAL_SHRINK"), std::string::npos);
    }
    {
        UniqueFd small = sealed_memfd(1024);
        auto res = check_fd(small.get(), flat_record(4096));
        ASSERT_FALSE(res);
        EXPECT_NE(res.error().message().find("holds 1024 bytes"), std::string::npos);
    }
    MemoryRecord dma = flat_record(4096);
    dma.desc.kind = EDGETENSOR_KIND_DMABUF;
    auto res = check_fd(ok, dma);
    ASSERT_FALSE(res);
    EXPECT_NE(res.error().message().find("described as a DMA-BUF"), std::string::npos);
}

TEST(IpcWire, OnlyDmaBufsAndShrinkSealedMemfdsOfTheRightSizeAreAccepted_Negative)
{
    const auto before = open_fds();
    {
        UniqueFd ok = sealed_memfd(4096);
        expect_bad_fds_refused(ok.get());
        EXPECT_TRUE(check_fd(ok.get(), flat_record(4096)));
    }
    { // The library's own shared-memory tensors pass as they are.
        auto t = TensorDyn::create(DType::U8, {64, 64}, TensorMemory::Shm);
        ASSERT_TRUE(t);
        EXPECT_TRUE(check_fd(t->fd(), flat_record(4096)))
            << check_fd(t->fd(), flat_record(4096)).error().message();
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

// What check_fd() read of a memfd is handed on, so that the receiver's lookups by file need
// not ask again; a DMA-BUF (sized with lseek) leaves it unknown.
TEST(IpcWire, AnAcceptedMemfdsFileIsReturnedAndFilledInForTheFrame)
{
    UniqueFd ok = sealed_memfd(4096);
    struct stat st {
    };
    ASSERT_EQ(::fstat(ok.get(), &st), 0);
    auto file = check_fd(ok.get(), flat_record(4096));
    ASSERT_TRUE(file) << file.error().message();
    EXPECT_TRUE(file->known);
    EXPECT_EQ(file->dev, uint64_t(st.st_dev));
    EXPECT_EQ(file->ino, uint64_t(st.st_ino));

    std::vector<UniqueFd> fds;
    fds.emplace_back(::fcntl(ok.get(), F_DUPFD_CLOEXEC, 0));
    auto f = parse(frame_bytes(FrameHead{}, {flat_record(4096)}), std::move(fds), false);
    ASSERT_TRUE(f) << f.error().message();
    ASSERT_TRUE(check_frame_fds(f->frame));
    EXPECT_TRUE(f->frame.files[0].known);
    EXPECT_EQ(f->frame.files[0].ino, uint64_t(st.st_ino));
    EXPECT_FALSE(f->frame.files[1].known) << "no memory 1";
}

// Once a memfd passed, check_fd() knows the memfds' filesystem and skips its fstatfs for the
// next ones; every other check still runs for each fd.
TEST(IpcWire, AfterAMemfdPassedEveryMemfdStillHasItsSealsAndSizeChecked_Negative)
{
    const auto before = open_fds();
    {
        UniqueFd ok = sealed_memfd(4096);
        ASSERT_TRUE(check_fd(ok.get(), flat_record(4096)));
        EXPECT_TRUE(check_fd(ok.get(), flat_record(4096))) << "the second time too";
        expect_bad_fds_refused(ok.get());
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

// The files a receiver says it keeps: one (dev, ino).
class OneKeptFile final : public KeptFiles
{
public:
    explicit OneKeptFile(int fd)
    {
        struct stat st {
        };
        EXPECT_EQ(::fstat(fd, &st), 0);
        dev_ = uint64_t(st.st_dev);
        ino_ = uint64_t(st.st_ino);
    }
    bool kept(uint64_t dev, uint64_t ino) const noexcept override
    {
        ++asked;
        return dev == dev_ && ino == ino_;
    }
    mutable int asked = 0;

private:
    uint64_t dev_ = 0, ino_ = 0;
};

// A file the receiver keeps was checked when it came, and memfd seals are never removed: its
// seals are not asked again (shown by an unsealed memfd the receiver claims to keep, which
// the receiver's own bookkeeping never does). Everything else is still checked for it (its
// size, its kind), and a file it does not keep has its seals checked as before.
TEST(IpcWire, AKeptMemfdsSealsAreNotAskedAgainButItsSizeAndEveryOtherFileAre_Negative)
{
    const auto before = open_fds();
    {
        UniqueFd unsealed(::memfd_create("ipc-kept", MFD_CLOEXEC));
        ASSERT_EQ(::ftruncate(unsealed.get(), 4096), 0);
        OneKeptFile kept(unsealed.get());
        auto file = check_fd(unsealed.get(), flat_record(4096), &kept);
        ASSERT_TRUE(file) << file.error().message();
        EXPECT_TRUE(file->known);
        EXPECT_EQ(kept.asked, 1);
        EXPECT_FALSE(check_fd(unsealed.get(), flat_record(4096))) << "without the kept files";

        auto too_small = check_fd(unsealed.get(), flat_record(8192), &kept);
        ASSERT_FALSE(too_small);
        EXPECT_NE(too_small.error().message().find("holds 4096 bytes"), std::string::npos)
            << too_small.error().message();

        UniqueFd other(::memfd_create("ipc-not-kept", MFD_CLOEXEC));
        ASSERT_EQ(::ftruncate(other.get(), 4096), 0);
        auto res = check_fd(other.get(), flat_record(4096), &kept);
        ASSERT_FALSE(res);
        EXPECT_NE(res.error().message().find("F_SEAL_SHRINK"), std::string::npos);

        std::vector<UniqueFd> fds;
        fds.emplace_back(::fcntl(other.get(), F_DUPFD_CLOEXEC, 0));
        auto f = parse(frame_bytes(FrameHead{}, {flat_record(4096)}), std::move(fds), false);
        ASSERT_TRUE(f) << f.error().message();
        EXPECT_FALSE(check_frame_fds(f->frame, &kept)) << "a frame of a file not kept";
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

TEST(IpcSocket, RecordsAndFdsCrossASocketAndExcessFdsAreClosed)
{
    const auto before = open_fds();
    {
        int sv[2];
        ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        UniqueFd a(sv[0]), b(sv[1]);
        UniqueFd mem = sealed_memfd(4096);
        struct stat st_sent {
        };
        ASSERT_EQ(::fstat(mem.get(), &st_sent), 0);
        FrameHead head;
        head.seq = 3;
        const int fds[] = {mem.get()};
        ASSERT_TRUE(send_record(a.get(), frame_bytes(head, {flat_record(4096)}), fds));
        auto rec = receive_record(b.get());
        ASSERT_TRUE(rec) << rec.error().message();
        ASSERT_EQ(rec->fds.size(), 1u);
        struct stat st_got {
        };
        ASSERT_EQ(::fstat(rec->fds[0].get(), &st_got), 0);
        EXPECT_EQ(st_got.st_ino, st_sent.st_ino) << "the receiver holds the sender's buffer";
        EXPECT_GE(::fcntl(rec->fds[0].get(), F_GETFD) & FD_CLOEXEC, 1);
        auto msg = parse(rec->bytes, std::move(rec->fds), rec->truncated);
        ASSERT_TRUE(msg) << msg.error().message();

        // More fds than any valid record carries: some are cut by the kernel, the rest
        // arrive owned and the parser refuses the record.
        std::vector<UniqueFd> many;
        std::vector<int> raw;
        for (int i = 0; i < 20; ++i) {
            many.push_back(UniqueFd::dup(mem.get()));
            raw.push_back(many.back().get());
        }
        // send_record refuses more than kMaxFdsReceived itself; go around it.
        const auto bytes = frame_bytes(head, {flat_record(4096)});
        iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 20)] = {};
        msghdr m{};
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = control;
        m.msg_controllen = sizeof(control);
        cmsghdr* c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * 20);
        std::memcpy(CMSG_DATA(c), raw.data(), sizeof(int) * 20);
        ASSERT_EQ(::sendmsg(a.get(), &m, 0), ssize_t(bytes.size()));
        many.clear();
        auto cut = receive_record(b.get());
        ASSERT_TRUE(cut);
        EXPECT_TRUE(cut->truncated);
        EXPECT_FALSE(parse(cut->bytes, std::move(cut->fds), cut->truncated));
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

TEST(IpcSocket, ListeningAppliesTheModeReplacesStaleSocketsAndRefusesLiveOnes_Negative)
{
    char dir_tmpl[] = "/tmp/et-ipc-XXXXXX";
    ASSERT_TRUE(::mkdtemp(dir_tmpl));
    const std::string dir = dir_tmpl;
    const std::string path = dir + "/s";
    {
        auto l = listen_on(path, 0600);
        ASSERT_TRUE(l) << l.error().message();
        struct stat st {
        };
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0600u);
        auto again = listen_on(path, 0600);
        ASSERT_FALSE(again);
        EXPECT_NE(again.error().message().find("already listens"), std::string::npos);

        auto c = connect_to(path);
        ASSERT_TRUE(c) << c.error().message();
        auto s = accept_on(l->get());
        ASSERT_TRUE(s) << s.error().message();
        auto cred = peer_credentials(s->get());
        ASSERT_TRUE(cred);
        EXPECT_EQ(cred->uid, ::getuid());
        EXPECT_EQ(cred->pid, ::getpid());
    }
    // The listener is gone but its file stays: stale, replaced, with the new mode.
    auto l2 = listen_on(path, 0660);
    ASSERT_TRUE(l2) << l2.error().message();
    struct stat st {
    };
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0660u);
    l2->reset();
    ::unlink(path.c_str());

    auto none = connect_to(path);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().sys_errno(), ENOENT);

    const std::string file = dir + "/f";
    UniqueFd f(::open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    auto refused = listen_on(file, 0600);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("not a socket"), std::string::npos);
    EXPECT_FALSE(listen_on(dir + "/" + std::string(200, 'x'), 0600));
    ::unlink(file.c_str());
    ::rmdir(dir.c_str());
}

} // namespace
} // namespace edgetensor::ipc
