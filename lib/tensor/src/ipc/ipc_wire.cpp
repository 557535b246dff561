// SPDX-License-Identifier: MIT
//
// Encoding and validation of the IPC wire protocol. Parsing reads through memcpy into local
// structs (records arrive unaligned from the receiver's point of view) and checks every field
// before the caller sees it.

#include "ipc_wire.hpp"

#include "dma/uapi/dma-buf.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace edgetensor::ipc
{

namespace
{

Unexpected bad(std::string what)
{
    return make_error(ErrorCode::InvalidDescriptor, std::move(what));
}

size_t dtype_bytes(uint32_t dtype) noexcept
{
    static constexpr size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8};
    return dtype < sizeof(sizes) / sizeof(sizes[0]) ? sizes[dtype] : 0;
}

std::vector<uint8_t> with_header(MsgType type, size_t body)
{
    std::vector<uint8_t> out(kHeaderSize + body);
    Header h;
    h.type = uint16_t(type);
    h.size = uint32_t(out.size());
    std::memcpy(out.data(), &h, sizeof(h));
    return out;
}

template <typename T> T read_at(std::span<const uint8_t> bytes, size_t at)
{
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    return v;
}

Result<void> check_record(const MemoryRecord& m, uint32_t index)
{
    const std::string where = "memory " + std::to_string(index) + ": ";
    const EdgeTensorDesc& d = m.desc;
    if (d.version != EDGETENSOR_DESC_VERSION)
        return bad(where + "descriptor version " + std::to_string(d.version) +
                   ", this receiver reads version " + std::to_string(EDGETENSOR_DESC_VERSION));
    if (d.kind != EDGETENSOR_KIND_HOST && d.kind != EDGETENSOR_KIND_DMABUF)
        return bad(where + "descriptor kind " + std::to_string(d.kind) +
                   " (only HOST memfds and DMA-BUFs can be passed between processes)");
    if (d.handle != int64_t(index))
        return bad(where + "descriptor handle " + std::to_string(d.handle) +
                   " does not name its fd (expected " + std::to_string(index) + ")");
    if (d.ptr != nullptr)
        return bad(where + "descriptor carries a host address; addresses mean nothing in "
                           "another process");
    if ((d.flags & ~EDGETENSOR_FLAGS_KNOWN) != 0)
        return bad(where + "unknown descriptor flags " + std::to_string(d.flags));
    if ((d.flags & EDGETENSOR_FLAG_SYNC_PRESENT) != 0 || d.sync != 0)
        return bad(where + "sync fences are not passed between processes");
    if (d.capacity == 0)
        return bad(where + "descriptor capacity is 0");
    auto bytes = addressed_bytes(d);
    if (!bytes)
        return bad(where + bytes.error().message());
    if (*bytes > d.capacity)
        return bad(where + "shape and strides address " + std::to_string(*bytes) +
                   " bytes, beyond the capacity of " + std::to_string(d.capacity));
    if (m.size == 0)
        return bad(where + "memory size is 0");
    if (m.offset > m.maxsize || m.size > m.maxsize - m.offset)
        return bad(where + "window offset " + std::to_string(m.offset) + " + size " +
                   std::to_string(m.size) + " exceeds maxsize " + std::to_string(m.maxsize));
    if (m.maxsize > d.capacity)
        return bad(where + "maxsize " + std::to_string(m.maxsize) + " exceeds the capacity of " +
                   std::to_string(d.capacity));
    return {};
}

Result<void> check_frame_head(const FrameHead& f)
{
    if (f.n_memories < 1 || f.n_memories > kMaxMemories)
        return bad("frame with " + std::to_string(f.n_memories) + " memories (1 to " +
                   std::to_string(kMaxMemories) + ")");
    if (f.n_planes > kMaxPlanes)
        return bad("frame with " + std::to_string(f.n_planes) + " planes (at most " +
                   std::to_string(kMaxPlanes) + ")");
    for (uint32_t i = 0; i < f.n_planes; ++i)
        if (f.plane_stride[i] <= 0)
            return bad("plane " + std::to_string(i) + " stride " +
                       std::to_string(f.plane_stride[i]) + " is not positive");
    for (uint32_t i = f.n_planes; i < kMaxPlanes; ++i)
        if (f.plane_offset[i] != 0 || f.plane_stride[i] != 0)
            return bad("layout given for plane " + std::to_string(i) + " beyond n_planes");
    return {};
}

} // namespace

const char* msg_type_name(uint16_t type) noexcept
{
    switch (MsgType(type)) {
    case MsgType::Hello:
        return "HELLO";
    case MsgType::Caps:
        return "CAPS";
    case MsgType::Frame:
        return "FRAME";
    case MsgType::Release:
        return "RELEASE";
    case MsgType::Eos:
        return "EOS";
    case MsgType::Done:
        return "DONE";
    }
    return "unknown";
}

uint64_t Frame::total_size() const noexcept
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < head.n_memories && i < kMaxMemories; ++i)
        n += memories[i].size;
    return n;
}

Result<uint64_t> addressed_bytes(const EdgeTensorDesc& d)
{
    if (d.ndim < 1 || d.ndim > EDGETENSOR_DESC_MAX_NDIM)
        return bad("descriptor ndim " + std::to_string(d.ndim) + " (1 to 8)");
    const size_t elem = dtype_bytes(d.dtype);
    if (elem == 0)
        return bad("descriptor dtype " + std::to_string(d.dtype) + " is unknown");
    uint64_t last = 0;
    for (uint32_t i = 0; i < d.ndim; ++i) {
        if (d.shape[i] == 0)
            return bad("descriptor dimension " + std::to_string(i) + " is 0");
        if (d.strides[i] < 0)
            return bad("descriptor stride " + std::to_string(i) + " is negative");
        uint64_t span = 0;
        if (__builtin_mul_overflow(d.shape[i] - 1, uint64_t(d.strides[i]), &span) ||
            __builtin_add_overflow(last, span, &last))
            return bad("descriptor shape and strides overflow 64 bits");
    }
    for (uint32_t i = d.ndim; i < EDGETENSOR_DESC_MAX_NDIM; ++i)
        if (d.shape[i] != 0 || d.strides[i] != 0)
            return bad("descriptor dimension " + std::to_string(i) + " is set beyond ndim");
    uint64_t total = 0;
    if (__builtin_add_overflow(last, uint64_t(elem), &total))
        return bad("descriptor shape and strides overflow 64 bits");
    return total;
}

std::vector<uint8_t> encode_hello(const Hello& hello)
{
    auto out = with_header(MsgType::Hello, sizeof(Hello));
    std::memcpy(out.data() + kHeaderSize, &hello, sizeof(hello));
    return out;
}

Result<std::vector<uint8_t>> encode_caps(uint32_t caps_seq, const std::string& caps)
{
    if (caps.size() > kMaxCaps)
        return make_error(ErrorCode::InvalidArgument,
                          "caps of " + std::to_string(caps.size()) + " bytes exceed the " +
                              std::to_string(kMaxCaps) + "-byte limit of a message");
    if (caps.find('\0') != std::string::npos)
        return make_error(ErrorCode::InvalidArgument, "caps string holds a NUL byte");
    auto out = with_header(MsgType::Caps, sizeof(CapsHead) + caps.size());
    CapsHead c{caps_seq, uint32_t(caps.size())};
    std::memcpy(out.data() + kHeaderSize, &c, sizeof(c));
    std::memcpy(out.data() + kHeaderSize + sizeof(c), caps.data(), caps.size());
    return out;
}

Result<std::vector<uint8_t>> encode_frame(FrameHead head, std::span<const MemoryRecord> memories,
                                          std::span<const uint8_t> meta)
{
    if (memories.empty() || memories.size() > kMaxMemories)
        return make_error(ErrorCode::InvalidArgument,
                          "a frame holds 1 to " + std::to_string(kMaxMemories) + " memories, not " +
                              std::to_string(memories.size()));
    const size_t body = sizeof(FrameHead) + memories.size_bytes() + meta.size();
    if (kHeaderSize + body > kMaxMessage)
        return make_error(ErrorCode::InvalidArgument,
                          "a frame of " + std::to_string(kHeaderSize + body) +
                              " bytes (its metas take " + std::to_string(meta.size()) +
                              ") exceeds the " + std::to_string(kMaxMessage) +
                              "-byte limit of a message");
    head.n_memories = uint32_t(memories.size());
    head.meta_bytes = uint32_t(meta.size());
    auto out = with_header(MsgType::Frame, body);
    std::memcpy(out.data() + kHeaderSize, &head, sizeof(head));
    std::memcpy(out.data() + kFrameFixedSize, memories.data(), memories.size_bytes());
    if (!meta.empty())
        std::memcpy(out.data() + kFrameFixedSize + memories.size_bytes(), meta.data(), meta.size());
    return out;
}

Result<std::vector<uint8_t>> encode_release(std::span<const uint64_t> seqs)
{
    if (seqs.empty() || seqs.size() > kMaxReleases)
        return make_error(ErrorCode::InvalidArgument,
                          "a release names 1 to " + std::to_string(kMaxReleases) + " frames");
    auto out = with_header(MsgType::Release, 8 + seqs.size_bytes());
    const uint32_t n[2] = {uint32_t(seqs.size()), 0};
    std::memcpy(out.data() + kHeaderSize, n, sizeof(n));
    std::memcpy(out.data() + kHeaderSize + 8, seqs.data(), seqs.size_bytes());
    return out;
}

std::vector<uint8_t> encode_eos()
{
    return with_header(MsgType::Eos, 0);
}

std::vector<uint8_t> encode_done(const Done& done)
{
    auto out = with_header(MsgType::Done, sizeof(Done));
    std::memcpy(out.data() + kHeaderSize, &done, sizeof(done));
    return out;
}

Result<Message> parse(std::span<const uint8_t> bytes, std::vector<UniqueFd> fds, bool truncated)
{
    if (truncated)
        return bad("the record or its fds were truncated (longer than " +
                   std::to_string(kMaxMessage) + " bytes or more than " +
                   std::to_string(kMaxFdsReceived) + " fds)");
    if (bytes.size() < kHeaderSize)
        return bad("a record of " + std::to_string(bytes.size()) + " bytes is shorter than the " +
                   std::to_string(kHeaderSize) + "-byte header");
    if (bytes.size() > kMaxMessage)
        return bad("a record of " + std::to_string(bytes.size()) + " bytes exceeds " +
                   std::to_string(kMaxMessage));
    const Header h = read_at<Header>(bytes, 0);
    if (h.magic != kMagic)
        return bad("bad magic 0x" + [&] {
            char b[16];
            std::snprintf(b, sizeof(b), "%08x", h.magic);
            return std::string(b);
        }() + " (not an edgetensor IPC peer)");
    if (h.version != kVersion)
        return bad("protocol version " + std::to_string(h.version) + ", this side speaks " +
                   std::to_string(kVersion));
    if (h.size != bytes.size())
        return bad("header says " + std::to_string(h.size) + " bytes, the record has " +
                   std::to_string(bytes.size()));
    if (h.reserved != 0)
        return bad("reserved header field is " + std::to_string(h.reserved));

    Message m;
    const size_t body = bytes.size() - kHeaderSize;
    const auto expect_no_fds = [&]() -> Result<void> {
        if (!fds.empty())
            return bad(std::string(msg_type_name(h.type)) + " carries " +
                       std::to_string(fds.size()) + " fds, expected none");
        return {};
    };
    switch (MsgType(h.type)) {
    case MsgType::Hello: {
        m.type = MsgType::Hello;
        if (body != sizeof(Hello))
            return bad("HELLO body of " + std::to_string(body) + " bytes, expected " +
                       std::to_string(sizeof(Hello)));
        if (auto r = expect_no_fds(); !r)
            return unexpected(std::move(r).error());
        m.hello = read_at<Hello>(bytes, kHeaderSize);
        if (m.hello.reserved != 0)
            return bad("reserved HELLO field is set");
        return m;
    }
    case MsgType::Caps: {
        m.type = MsgType::Caps;
        if (body < sizeof(CapsHead))
            return bad("CAPS body of " + std::to_string(body) + " bytes is truncated");
        if (auto r = expect_no_fds(); !r)
            return unexpected(std::move(r).error());
        const CapsHead c = read_at<CapsHead>(bytes, kHeaderSize);
        if (c.length != body - sizeof(CapsHead))
            return bad("CAPS says " + std::to_string(c.length) + " bytes of caps, the record has " +
                       std::to_string(body - sizeof(CapsHead)));
        if (c.length == 0)
            return bad("CAPS with an empty caps string");
        const char* s = reinterpret_cast<const char*>(bytes.data() + kHeaderSize + sizeof(c));
        if (std::memchr(s, '\0', c.length) != nullptr)
            return bad("CAPS string holds a NUL byte");
        m.caps_seq = c.caps_seq;
        m.caps.assign(s, c.length);
        return m;
    }
    case MsgType::Frame: {
        m.type = MsgType::Frame;
        if (body < sizeof(FrameHead))
            return bad("FRAME body of " + std::to_string(body) + " bytes is truncated");
        Frame& f = m.frame;
        f.head = read_at<FrameHead>(bytes, kHeaderSize);
        if (auto r = check_frame_head(f.head); !r)
            return unexpected(std::move(r).error());
        const size_t records = f.head.n_memories * sizeof(MemoryRecord);
        const size_t want = sizeof(FrameHead) + records + size_t(f.head.meta_bytes);
        const std::string with_metas =
            f.head.meta_bytes == 0
                ? ""
                : " and " + std::to_string(f.head.meta_bytes) + " bytes of metas";
        if (body != want)
            return bad("FRAME of " + std::to_string(f.head.n_memories) + " memories" + with_metas +
                       " needs " + std::to_string(want) + " body bytes, the record has " +
                       std::to_string(body));
        if (f.head.n_meta_fds > kMaxMetaFds)
            return bad("FRAME with " + std::to_string(f.head.n_meta_fds) + " meta fds (at most " +
                       std::to_string(kMaxMetaFds) + ")");
        if (fds.size() != size_t(f.head.n_memories) + f.head.n_meta_fds)
            return bad("FRAME of " + std::to_string(f.head.n_memories) + " memories" +
                       (f.head.n_meta_fds == 0
                            ? std::string()
                            : " and " + std::to_string(f.head.n_meta_fds) + " meta fds") +
                       " carries " + std::to_string(fds.size()) + " fds");
        for (uint32_t i = 0; i < f.head.n_memories; ++i) {
            f.memories[i] =
                read_at<MemoryRecord>(bytes, kFrameFixedSize + i * sizeof(MemoryRecord));
            if (auto r = check_record(f.memories[i], i); !r)
                return unexpected(std::move(r).error());
        }
        const uint64_t total = f.total_size();
        for (uint32_t i = 0; i < f.head.n_planes; ++i)
            if (f.head.plane_offset[i] >= total)
                return bad("plane " + std::to_string(i) + " starts at byte " +
                           std::to_string(f.head.plane_offset[i]) + ", beyond the frame's " +
                           std::to_string(total) + " bytes");
        auto metas = parse_metas(bytes.subspan(kFrameFixedSize + records, f.head.meta_bytes),
                                 f.head.n_meta_fds);
        if (!metas)
            return unexpected(std::move(metas).error());
        f.metas = std::move(*metas);
        for (uint32_t i = 0; i < f.head.n_memories; ++i)
            f.fds[i] = std::move(fds[i]);
        for (uint32_t i = 0; i < f.head.n_meta_fds; ++i)
            f.meta_fds[i] = std::move(fds[f.head.n_memories + i]);
        return m;
    }
    case MsgType::Release: {
        m.type = MsgType::Release;
        if (body < 8)
            return bad("RELEASE body of " + std::to_string(body) + " bytes is truncated");
        if (auto r = expect_no_fds(); !r)
            return unexpected(std::move(r).error());
        const uint32_t n = read_at<uint32_t>(bytes, kHeaderSize);
        const uint32_t reserved = read_at<uint32_t>(bytes, kHeaderSize + 4);
        if (n < 1 || n > kMaxReleases || reserved != 0)
            return bad("RELEASE of " + std::to_string(n) + " frames (1 to " +
                       std::to_string(kMaxReleases) + ")");
        if (body != 8 + size_t(n) * 8)
            return bad("RELEASE of " + std::to_string(n) + " frames has " + std::to_string(body) +
                       " body bytes");
        m.releases.resize(n);
        std::memcpy(m.releases.data(), bytes.data() + kHeaderSize + 8, size_t(n) * 8);
        return m;
    }
    case MsgType::Eos: {
        m.type = MsgType::Eos;
        if (body != 0)
            return bad("EOS with a body of " + std::to_string(body) + " bytes");
        if (auto r = expect_no_fds(); !r)
            return unexpected(std::move(r).error());
        return m;
    }
    case MsgType::Done: {
        m.type = MsgType::Done;
        if (body != sizeof(Done))
            return bad("DONE body of " + std::to_string(body) + " bytes, expected " +
                       std::to_string(sizeof(Done)));
        if (auto r = expect_no_fds(); !r)
            return unexpected(std::move(r).error());
        m.done = read_at<Done>(bytes, kHeaderSize);
        return m;
    }
    }
    return bad("unknown message type " + std::to_string(h.type));
}

namespace
{
// The device of the filesystem every memfd lives on (the kernel's internal shmem mount, never
// unmounted, so its number is never another filesystem's), plus one; 0 until a received fd
// passed every check as a memfd. A HOST fd on it needs no fstatfs: its seals and size are
// still asked every time, and only a memfd can carry F_SEAL_SHRINK.
std::atomic<uint64_t> memfd_dev_plus_one{0};
} // namespace

Result<FdFile> check_fd(int fd, const MemoryRecord& record, const KeptFiles* kept)
{
    // A HOST fd is fstat()ed anyway (its size); a DMA-BUF is sized with lseek.
    struct stat st {
    };
    const bool host = record.desc.kind == EDGETENSOR_KIND_HOST;
    if (host && ::fstat(fd, &st) != 0)
        return unexpected(Error::io(errno, "fstat of a received memfd"));
    uint32_t magic = TMPFS_MAGIC;
    if (!host || memfd_dev_plus_one.load(std::memory_order_relaxed) != uint64_t(st.st_dev) + 1) {
        struct statfs sfs {
        };
        if (::fstatfs(fd, &sfs) != 0)
            return unexpected(Error::io(errno, "fstatfs of a received fd"));
        magic = uint32_t(sfs.f_type);
    }
    const uint64_t need = std::max<uint64_t>(record.desc.capacity, record.maxsize);
    auto hex = [](uint32_t v) {
        char b[16];
        std::snprintf(b, sizeof(b), "0x%08x", v);
        return std::string(b);
    };
    if (magic == DMA_BUF_MAGIC) {
        if (record.desc.kind != EDGETENSOR_KIND_DMABUF)
            return bad("a DMA-BUF fd described as host memory");
        const off_t end = ::lseek(fd, 0, SEEK_END);
        if (end < 0)
            return unexpected(Error::io(errno, "lseek(SEEK_END) of a received DMA-BUF"));
        ::lseek(fd, 0, SEEK_SET);
        if (uint64_t(end) < need)
            return bad("the DMA-BUF holds " + std::to_string(end) +
                       " bytes, the descriptor needs " + std::to_string(need));
        return FdFile{};
    }
    if (magic == TMPFS_MAGIC) {
        if (!host)
            return bad("a memfd/tmpfs fd described as a DMA-BUF");
        if (!S_ISREG(st.st_mode))
            return bad("the tmpfs fd is not a regular file");
        if (uint64_t(st.st_size) < need)
            return bad("the memfd holds " + std::to_string(st.st_size) +
                       " bytes, the descriptor needs " + std::to_string(need));
#ifdef F_GET_SEALS
        if (!kept || !kept->kept(uint64_t(st.st_dev), uint64_t(st.st_ino))) {
            const int seals = ::fcntl(fd, F_GET_SEALS);
            if (seals < 0 || !(seals & F_SEAL_SHRINK))
                return bad("the memfd is not sealed against shrinking (F_SEAL_SHRINK); the "
                           "sender could truncate it under the receiver's mapping");
            memfd_dev_plus_one.store(uint64_t(st.st_dev) + 1, std::memory_order_relaxed);
        }
#endif
        return FdFile{uint64_t(st.st_dev), uint64_t(st.st_ino), true};
    }
    return make_error(ErrorCode::UnknownBufferType,
                      "a received fd is neither a DMA-BUF nor a memfd (filesystem magic " +
                          hex(magic) + ")");
}

Result<void> check_frame_fds(Frame& frame, const KeptFiles* kept)
{
    for (uint32_t i = 0; i < frame.head.n_memories && i < kMaxMemories; ++i) {
        if (!frame.fds[i])
            return bad("memory " + std::to_string(i) + " has no fd");
        auto r = check_fd(frame.fds[i].get(), frame.memories[i], kept);
        if (!r)
            return make_error(r.error().code(),
                              "memory " + std::to_string(i) + ": " + r.error().message());
        frame.files[i] = *r;
    }
    for (size_t i = 0; i < frame.metas.fds.size() && i < kMaxMetaFds; ++i) {
        if (!frame.meta_fds[i])
            return bad("meta fd " + std::to_string(i) + " is missing");
        // The same kernel checks as a memory's fd: its kind, its size, and a memfd sealed
        // against shrinking.
        MemoryRecord as_memory;
        as_memory.desc.kind = frame.metas.fds[i].kind;
        as_memory.desc.capacity = frame.metas.fds[i].size;
        as_memory.maxsize = frame.metas.fds[i].size;
        if (auto r = check_fd(frame.meta_fds[i].get(), as_memory); !r)
            return make_error(r.error().code(),
                              "meta fd " + std::to_string(i) + ": " + r.error().message());
    }
    return {};
}

} // namespace edgetensor::ipc
