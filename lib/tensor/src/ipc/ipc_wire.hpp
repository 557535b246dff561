// SPDX-License-Identifier: MIT
//
// The tensoripcsink/tensoripcsrc wire protocol (docs/ipc.md), free of GStreamer so it can be
// unit-tested and fuzzed alone. Internal to the project: not an installed header.
//
// One message per SOCK_SEQPACKET record: a 16-byte header, then a body whose layout the type
// fixes. Every number is little-endian host order (both ends are one machine). fds travel as
// SCM_RIGHTS ancillary data; a FRAME carries exactly one fd per memory record, then its meta
// fds (ipc_meta.hpp), and every other message none. Nothing a peer sends is trusted: parse() checks
// every field and length before anything is used, and the fds it was handed are closed (they are
// UniqueFds) whenever it refuses a message.

#pragma once

#include "ipc_meta.hpp"

#include <edgetensor/error.hpp>
#include <edgetensor/tensor_desc.h>
#include <edgetensor/unique_fd.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace edgetensor::ipc
{

inline constexpr uint32_t kMagic = 0x50495445u; ///< "ETIP" in memory order
/// 2: FRAME carries a meta section (GStreamer's tensor and analytics metas) and meta fds.
/// 3: DONE, so a receiver that takes no more frames stops holding the sender back.
/// 4: FRAME carries the frame's capture time on CLOCK_MONOTONIC, so a live receiver can put
///    it on its own pipeline's clock (as unixfdsink/unixfdsrc do).
/// 5: the meta section may carry a BATCH record (tensorbatch's per-slot provenance).
inline constexpr uint16_t kVersion = 5;
inline constexpr size_t kHeaderSize = 16;
/// The largest record either side accepts (a FRAME is under 1 KiB; caps strings dominate).
inline constexpr size_t kMaxMessage = 64 * 1024;
inline constexpr size_t kMaxCaps = kMaxMessage - kHeaderSize - 8;
inline constexpr uint32_t kMaxMemories = 4;
inline constexpr uint32_t kMaxPlanes = 4;
inline constexpr uint32_t kMaxReleases = 64;
/// Room for more fds than any valid message carries, so a sender that sends too many is
/// caught (and every one of them closed) instead of truncated by the kernel.
inline constexpr size_t kMaxFdsReceived = 16;

enum class MsgType : uint16_t {
    Hello = 1,   ///< sink -> source, first message on a connection
    Caps = 2,    ///< sink -> source, before the first frame and whenever caps change
    Frame = 3,   ///< sink -> source, one buffer; one fd per memory
    Release = 4, ///< source -> sink, the frames (by seq) it no longer uses
    Eos = 5,     ///< sink -> source, end of stream
    Done = 6,    ///< source -> sink, it takes no more frames; those after `last_seq` are unread
};

const char* msg_type_name(uint16_t type) noexcept;

struct Header {
    uint32_t magic = kMagic;
    uint16_t version = kVersion;
    uint16_t type = 0;
    uint32_t size = 0; ///< the whole record, header included
    uint32_t reserved = 0;
};
static_assert(sizeof(Header) == kHeaderSize);

struct Hello {
    uint32_t max_pending = 0; ///< frames the sink lets this receiver hold at once
    uint32_t reserved = 0;
    uint64_t sink_pid = 0;
};
static_assert(sizeof(Hello) == 16);

struct CapsHead {
    uint32_t caps_seq = 0; ///< frames name the caps they belong to
    uint32_t length = 0;   ///< bytes of the caps string that follow (no terminating NUL)
};
static_assert(sizeof(CapsHead) == 8);

/// Buffer flags carried over (GST_BUFFER_FLAG_* values the receiver may keep).
struct FrameHead {
    uint64_t seq = 0; ///< sink-unique, named by RELEASE
    uint64_t pts = UINT64_MAX;
    uint64_t dts = UINT64_MAX;
    uint64_t duration = UINT64_MAX;
    uint64_t offset = UINT64_MAX;
    uint64_t offset_end = UINT64_MAX;
    /// When the frame is due at the sender (its running time + base time + the sink's
    /// latency), on CLOCK_MONOTONIC in ns: a time both processes read alike. UINT64_MAX: none
    /// (no valid PTS, or no clock at the sender).
    uint64_t capture = UINT64_MAX;
    uint32_t flags = 0;
    uint32_t caps_seq = 0;
    uint32_t n_memories = 0; ///< 1..kMaxMemories, = fds attached
    uint32_t n_planes = 0;   ///< 0 = no video meta; else the plane layout below is valid
    uint64_t plane_offset[kMaxPlanes] = {};
    int32_t plane_stride[kMaxPlanes] = {};
    uint32_t meta_bytes = 0; ///< bytes of the meta section after the memory records (0: none)
    uint32_t n_meta_fds = 0; ///< fds after the memories' that the meta section names
};
static_assert(sizeof(FrameHead) == 128);

/// One GstMemory of the buffer: the tensor behind its fd, and the memory's window on it.
struct MemoryRecord {
    EdgeTensorDesc desc{};        ///< handle = index of the fd in this message; ptr = 0
    uint64_t offset = 0;          ///< the memory's first byte in the fd
    uint64_t size = 0;            ///< the memory's bytes
    uint64_t maxsize = 0;         ///< bytes of the fd the memory may address (offset + size <= it)
    uint64_t remote_identity = 0; ///< the sender's BufferIdentity, for logs only
};
static_assert(sizeof(MemoryRecord) == 224);

inline constexpr size_t kFrameFixedSize = kHeaderSize + sizeof(FrameHead);

/// The file behind a received fd, as check_fd() read it with fstat() (a memfd, to size it):
/// the receiver's lookups by file reuse it instead of asking the kernel again for every frame.
/// Not known for a DMA-BUF, which check_fd() sizes with lseek().
struct FdFile {
    uint64_t dev = 0;
    uint64_t ino = 0;
    bool known = false;
};

/// The memfds a receiver keeps open from earlier frames (tensoripcsrc maps each file once),
/// every one of them checked by check_fd() when it first came. A memfd's seals are never
/// removed, and while one file is kept open no other can have its (st_dev, st_ino): check_fd()
/// does not ask the kernel for the seals of a file kept() names, one system call less a frame.
class KeptFiles
{
public:
    /// True when a memfd of this (st_dev, st_ino), checked when it came, is open here now.
    virtual bool kept(uint64_t dev, uint64_t ino) const noexcept = 0;

protected:
    ~KeptFiles() = default;
};

struct Frame {
    FrameHead head;
    std::array<MemoryRecord, kMaxMemories> memories{};
    std::array<UniqueFd, kMaxMemories> fds;     ///< fds[i] belongs to memories[i]
    std::array<FdFile, kMaxMemories> files{};   ///< fds[i]'s file, once check_frame_fds() saw it
    FrameMetas metas;                           ///< parsed and checked meta section
    std::array<UniqueFd, kMaxMetaFds> meta_fds; ///< meta_fds[i] is what metas.fds[i] describes
    /// Bytes of the frame as the receiver will see it: the memories' sizes added up.
    uint64_t total_size() const noexcept;
};

/// A receiver's last word before it stops reading: it will RELEASE the frames it read (up to
/// and including `last_seq`, 0 = none) as they die, and never read the ones after them.
struct Done {
    uint64_t last_seq = 0;
};
static_assert(sizeof(Done) == 8);

struct Message {
    MsgType type = MsgType::Hello;
    Hello hello;
    uint32_t caps_seq = 0;
    std::string caps;
    Frame frame;
    std::vector<uint64_t> releases;
    Done done;
};

// ---- encoding (senders) ----------------------------------------------------------------------

std::vector<uint8_t> encode_hello(const Hello& hello);
/// Errors: InvalidArgument when the caps string exceeds kMaxCaps or holds a NUL byte.
Result<std::vector<uint8_t>> encode_caps(uint32_t caps_seq, const std::string& caps);
/// `memories` holds 1..kMaxMemories records; head.n_memories is set from it, head.meta_bytes
/// from `meta` (encode_metas()); head.n_meta_fds must be the count of meta fds it names.
/// Errors: InvalidArgument when the record would exceed kMaxMessage.
Result<std::vector<uint8_t>> encode_frame(FrameHead head, std::span<const MemoryRecord> memories,
                                          std::span<const uint8_t> meta = {});
/// 1..kMaxReleases seqs.
Result<std::vector<uint8_t>> encode_release(std::span<const uint64_t> seqs);
std::vector<uint8_t> encode_eos();
std::vector<uint8_t> encode_done(const Done& done);

// ---- parsing (receivers) ---------------------------------------------------------------------

/// Parses and validates one received record. `fds` are the fds that came with it (owned: on
/// any error they are closed when the vector dies); `truncated` says the kernel cut the record
/// or its ancillary data (MSG_TRUNC / MSG_CTRUNC). Checks: size, magic, version, type, body
/// length, fd count, every descriptor (version, kind, handle, ndim, dtype, shape, strides,
/// flags, the bytes the strides address against capacity), every memory window and the meta
/// section (parse_metas()). Errors are
/// InvalidDescriptor with a message that names the field. Pure: no system call.
Result<Message> parse(std::span<const uint8_t> bytes, std::vector<UniqueFd> fds, bool truncated);

/// Checks a received fd against its record: a DMA-BUF for kind DMABUF, a memfd/tmpfs file for
/// kind HOST (sealed against shrinking, so the sender cannot cut it under a reader's mapping),
/// at least max(capacity, maxsize) bytes long. Errors name the fd's filesystem magic or size.
/// Returns the fd's file where the checks read it (a memfd).
Result<FdFile> check_fd(int fd, const MemoryRecord& record, const KeptFiles* kept = nullptr);

/// check_fd() for every memory of a parsed frame, and for every meta fd against its kind and
/// size; `frame.files` gets the memories' files as check_fd() found them.
Result<void> check_frame_fds(Frame& frame, const KeptFiles* kept = nullptr);

/// Bytes a descriptor's shape and strides address (last element included), or an error when
/// they overflow or a stride is negative.
Result<uint64_t> addressed_bytes(const EdgeTensorDesc& desc);

} // namespace edgetensor::ipc
