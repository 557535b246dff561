// SPDX-License-Identifier: MIT
//
// The FRAME meta section (ipc_meta.hpp): written field by field in host byte order like the
// rest of the protocol, read through a cursor that refuses to read past the bytes it was
// given, every count checked against the limits and against the bytes left before anything is
// allocated for it.

#include "ipc_meta.hpp"

#include "dma/uapi/dma-buf.h"
#include "ipc_meta_io.hpp"

#include <edgetensor/tensor_desc.h>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

namespace edgetensor::ipc
{

using namespace detail;

namespace
{

void encode_tensors(Writer& w, const TensorsMeta& m)
{
    w.put(uint32_t(m.tensors.size()));
    for (const TensorRecord& t : m.tensors) {
        w.str(t.id);
        w.put(t.data_type);
        w.put(t.dims_order);
        w.put(t.layout);
        w.put(uint32_t(t.dims.size()));
        for (uint64_t d : t.dims)
            w.put(d);
        w.put(t.fd_index);
        w.put(uint32_t(0));
        w.put(t.offset);
        w.put(t.size);
    }
}

void encode_mtd(Writer& w, const Mtd& m)
{
    w.put(uint32_t(m.type));
    switch (m.type) {
    case MtdType::ObjectDetection:
        w.str(m.label);
        w.put(m.x);
        w.put(m.y);
        w.put(m.w);
        w.put(m.h);
        w.put(m.rotation);
        w.put(m.confidence);
        break;
    case MtdType::Classification:
        w.put(uint32_t(m.classes.size()));
        for (const ClassEntry& c : m.classes) {
            w.str(c.label);
            w.put(c.confidence);
        }
        break;
    case MtdType::Tracking:
        w.put(m.tracking_id);
        w.put(m.first_seen);
        w.put(m.last_seen);
        w.put(uint32_t(m.lost ? 1 : 0));
        break;
    }
}

void encode_analytics(Writer& w, const AnalyticsMeta& m)
{
    w.put(uint32_t(m.mtds.size()));
    for (const Mtd& mtd : m.mtds)
        encode_mtd(w, mtd);
    w.put(uint32_t(m.relations.size()));
    for (const Relation& r : m.relations) {
        w.put(r.from);
        w.put(r.to);
        w.put(r.types);
    }
}

// Bytes a tensor of `dims` of `type` needs (nullopt-like: false on overflow).
bool needed_bytes(uint32_t type, const std::vector<uint64_t>& dims, uint64_t* out)
{
    const int bits = tensor_type_bits(type);
    if (bits <= 0) {
        *out = 0; // strings: their bytes are their own
        return true;
    }
    uint64_t n = 1;
    for (uint64_t d : dims)
        if (__builtin_mul_overflow(n, d, &n))
            return false;
    uint64_t total_bits = 0;
    if (__builtin_mul_overflow(n, uint64_t(bits), &total_bits))
        return false;
    *out = total_bits / 8 + (total_bits % 8 != 0);
    return true;
}

Result<TensorsMeta> parse_tensors(Reader& r, const std::vector<MetaFd>& fds,
                                  const std::string& where)
{
    TensorsMeta m;
    uint32_t n = 0;
    if (!r.get(&n))
        return bad(where + ": truncated");
    if (n < 1 || n > kMaxTensors)
        return bad(where + ": " + std::to_string(n) + " tensors (1 to " +
                   std::to_string(kMaxTensors) + ")");
    for (uint32_t i = 0; i < n; ++i) {
        const std::string at = where + " tensor " + std::to_string(i);
        TensorRecord t;
        if (auto s = r.str(&t.id, at + " id"); !s)
            return unexpected(std::move(s).error());
        uint32_t n_dims = 0;
        if (!r.get(&t.data_type) || !r.get(&t.dims_order) || !r.get(&t.layout) || !r.get(&n_dims))
            return bad(at + ": truncated");
        if (tensor_type_bits(t.data_type) < 0)
            return bad(at + ": data type " + std::to_string(t.data_type) + " is unknown");
        if (t.dims_order > 1)
            return bad(at + ": dimension order " + std::to_string(t.dims_order) + " is unknown");
        if (t.layout != 0)
            return bad(at + ": layout " + std::to_string(t.layout) + " is unknown");
        if (n_dims < 1 || n_dims > kMaxTensorDims)
            return bad(at + ": " + std::to_string(n_dims) + " dimensions (1 to " +
                       std::to_string(kMaxTensorDims) + ")");
        if (r.left() < size_t(n_dims) * 8)
            return bad(at + ": dimensions truncated");
        t.dims.resize(n_dims);
        for (uint64_t& d : t.dims)
            r.get(&d);
        uint32_t reserved = 1;
        if (!r.get(&t.fd_index) || !r.get(&reserved) || !r.get(&t.offset) || !r.get(&t.size))
            return bad(at + ": truncated");
        if (reserved != 0)
            return bad(at + ": reserved field is set");
        if (t.fd_index >= fds.size())
            return bad(at + ": meta fd " + std::to_string(t.fd_index) + " of " +
                       std::to_string(fds.size()));
        const uint64_t fd_size = fds[t.fd_index].size;
        if (t.offset > fd_size || t.size > fd_size - t.offset)
            return bad(at + ": bytes " + std::to_string(t.offset) + " + " + std::to_string(t.size) +
                       " beyond meta fd " + std::to_string(t.fd_index) + "'s " +
                       std::to_string(fd_size));
        uint64_t need = 0;
        if (!needed_bytes(t.data_type, t.dims, &need))
            return bad(at + ": dimensions overflow 64 bits");
        if (t.size < need)
            return bad(at + ": " + std::to_string(t.size) + " bytes, its dimensions need " +
                       std::to_string(need));
        m.tensors.push_back(std::move(t));
    }
    return m;
}

Result<void> finite(float v, const std::string& what)
{
    if (!std::isfinite(v))
        return bad(what + " is not a finite number");
    return {};
}

Result<Mtd> parse_mtd(Reader& r, const std::string& at)
{
    Mtd m;
    uint32_t type = 0;
    if (!r.get(&type))
        return bad(at + ": truncated");
    switch (type) {
    case uint32_t(MtdType::ObjectDetection): {
        m.type = MtdType::ObjectDetection;
        if (auto s = r.str(&m.label, at + " label"); !s)
            return unexpected(std::move(s).error());
        if (!r.get(&m.x) || !r.get(&m.y) || !r.get(&m.w) || !r.get(&m.h) || !r.get(&m.rotation) ||
            !r.get(&m.confidence))
            return bad(at + ": truncated");
        if (m.w < 0 || m.h < 0)
            return bad(at + ": a box of " + std::to_string(m.w) + "x" + std::to_string(m.h));
        if (auto f = finite(m.rotation, at + " rotation"); !f)
            return unexpected(std::move(f).error());
        if (auto f = finite(m.confidence, at + " confidence"); !f)
            return unexpected(std::move(f).error());
        return m;
    }
    case uint32_t(MtdType::Classification): {
        m.type = MtdType::Classification;
        uint32_t n = 0;
        if (!r.get(&n))
            return bad(at + ": truncated");
        if (n < 1 || n > kMaxClasses)
            return bad(at + ": " + std::to_string(n) + " classes (1 to " +
                       std::to_string(kMaxClasses) + ")");
        // Each class takes at least 8 bytes: a count the bytes cannot hold is refused before
        // anything is allocated for it.
        if (r.left() < size_t(n) * 8)
            return bad(at + ": classes truncated");
        m.classes.resize(n);
        for (uint32_t i = 0; i < n; ++i) {
            const std::string c = at + " class " + std::to_string(i);
            if (auto s = r.str(&m.classes[i].label, c + " label"); !s)
                return unexpected(std::move(s).error());
            if (!r.get(&m.classes[i].confidence))
                return bad(c + ": truncated");
            if (auto f = finite(m.classes[i].confidence, c + " confidence"); !f)
                return unexpected(std::move(f).error());
        }
        return m;
    }
    case uint32_t(MtdType::Tracking): {
        m.type = MtdType::Tracking;
        uint32_t lost = 2;
        if (!r.get(&m.tracking_id) || !r.get(&m.first_seen) || !r.get(&m.last_seen) ||
            !r.get(&lost))
            return bad(at + ": truncated");
        if (lost > 1)
            return bad(at + ": lost is " + std::to_string(lost));
        m.lost = lost == 1;
        return m;
    }
    }
    return bad(at + ": type " + std::to_string(type) + " is unknown");
}

Result<AnalyticsMeta> parse_analytics(Reader& r, const std::string& where)
{
    AnalyticsMeta m;
    uint32_t n = 0;
    if (!r.get(&n))
        return bad(where + ": truncated");
    if (n > kMaxMtds)
        return bad(where + ": " + std::to_string(n) + " metadata (at most " +
                   std::to_string(kMaxMtds) + ")");
    for (uint32_t i = 0; i < n; ++i) {
        auto mtd = parse_mtd(r, where + " mtd " + std::to_string(i));
        if (!mtd)
            return unexpected(std::move(mtd).error());
        m.mtds.push_back(std::move(*mtd));
    }
    uint32_t n_rel = 0;
    if (!r.get(&n_rel))
        return bad(where + ": truncated");
    if (n_rel > kMaxRelations || r.left() < size_t(n_rel) * 12)
        return bad(where + ": " + std::to_string(n_rel) + " relations (at most " +
                   std::to_string(kMaxRelations) + ", and what the record holds)");
    m.relations.resize(n_rel);
    for (uint32_t i = 0; i < n_rel; ++i) {
        Relation& rel = m.relations[i];
        r.get(&rel.from);
        r.get(&rel.to);
        r.get(&rel.types);
        const std::string at = where + " relation " + std::to_string(i);
        if (rel.from >= n || rel.to >= n)
            return bad(at + ": between metadata " + std::to_string(rel.from) + " and " +
                       std::to_string(rel.to) + " of " + std::to_string(n));
        if (rel.from == rel.to)
            return bad(at + ": of metadata " + std::to_string(rel.from) + " with itself");
        if (rel.types == 0 || (rel.types & ~kKnownRelationTypes) != 0)
            return bad(at + ": relation types " + std::to_string(rel.types));
    }
    return m;
}

} // namespace

int tensor_type_bits(uint32_t type) noexcept
{
    // INT4 INT8 INT16 INT32 INT64 UINT4 UINT8 UINT16 UINT32 UINT64 FLOAT16 FLOAT32 FLOAT64
    // BFLOAT16 STRING BOOL COMPLEX64 COMPLEX128 FLOAT8E4M3FN FLOAT8E4M3FNUZ FLOAT8E5M2
    // FLOAT8E5M2FNUZ
    static constexpr int bits[] = {4,  8,  16, 32, 64, 4,  8,   16, 32, 64, 16,
                                   32, 64, 16, 0,  8,  64, 128, 8,  8,  8,  8};
    static_assert(sizeof(bits) / sizeof(bits[0]) == kLastTensorType + 1);
    return type <= kLastTensorType ? bits[type] : -1;
}

Result<std::vector<uint8_t>> encode_metas(const FrameMetas& metas)
{
    if (metas.fds.size() > kMaxMetaFds)
        return too_many(std::to_string(metas.fds.size()) + " meta fds (at most " +
                        std::to_string(kMaxMetaFds) + ")");
    const size_t records = metas.records();
    if (records > kMaxMetaRecords)
        return too_many(std::to_string(records) + " metas (at most " +
                        std::to_string(kMaxMetaRecords) + ")");
    if (records == 0 && metas.fds.empty())
        return std::vector<uint8_t>{};
    Writer w;
    w.put(uint32_t(metas.fds.size()));
    w.put(uint32_t(records));
    for (const MetaFd& f : metas.fds) {
        w.put(f.kind);
        w.put(uint32_t(0));
        w.put(f.size);
    }
    const auto record = [&](MetaKind kind, uint8_t version, auto&& body) {
        w.put(uint16_t(kind));
        w.put(version);
        w.put(uint8_t(0));
        const size_t length_at = w.size();
        w.put(uint32_t(0));
        body();
        w.patch_u32(length_at, uint32_t(w.size() - length_at - 4));
    };
    for (const TensorsMeta& t : metas.tensors)
        record(MetaKind::Tensors, kTensorsVersion, [&] { encode_tensors(w, t); });
    for (const AnalyticsMeta& a : metas.analytics)
        record(MetaKind::Analytics, kAnalyticsVersion, [&] { encode_analytics(w, a); });
    if (metas.batch)
        record(MetaKind::Batch, kBatchVersion, [&] { encode_batch(w, *metas.batch); });
    std::vector<uint8_t> bytes = w.take();
    // One set of rules: what a reader would refuse is not sent.
    if (auto check = parse_metas(bytes, uint32_t(metas.fds.size())); !check)
        return make_error(ErrorCode::InvalidArgument, check.error().message());
    return bytes;
}

Result<FrameMetas> parse_metas(std::span<const uint8_t> bytes, uint32_t n_fds)
{
    FrameMetas m;
    if (bytes.empty()) {
        if (n_fds != 0)
            return bad("no meta section for " + std::to_string(n_fds) + " meta fds");
        return m;
    }
    Reader r(bytes);
    uint32_t fds = 0, records = 0;
    if (!r.get(&fds) || !r.get(&records))
        return bad("meta section of " + std::to_string(bytes.size()) + " bytes is truncated");
    if (fds != n_fds)
        return bad("meta section names " + std::to_string(fds) + " fds, the frame carries " +
                   std::to_string(n_fds));
    if (fds > kMaxMetaFds)
        return bad(std::to_string(fds) + " meta fds (at most " + std::to_string(kMaxMetaFds) + ")");
    if (records > kMaxMetaRecords)
        return bad(std::to_string(records) + " metas (at most " + std::to_string(kMaxMetaRecords) +
                   ")");
    if (records == 0)
        return bad("a meta section without metas");
    if (r.left() < size_t(fds) * kFdEntrySize)
        return bad("meta fd table truncated");
    for (uint32_t i = 0; i < fds; ++i) {
        MetaFd f;
        uint32_t reserved = 1;
        r.get(&f.kind);
        r.get(&reserved);
        r.get(&f.size);
        const std::string at = "meta fd " + std::to_string(i);
        if (f.kind != EDGETENSOR_KIND_HOST && f.kind != EDGETENSOR_KIND_DMABUF)
            return bad(at + ": kind " + std::to_string(f.kind) +
                       " (only memfds and DMA-BUFs pass between processes)");
        if (reserved != 0)
            return bad(at + ": reserved field is set");
        if (f.size == 0)
            return bad(at + ": size 0");
        m.fds.push_back(f);
    }
    for (uint32_t i = 0; i < records; ++i) {
        uint16_t kind = 0;
        uint8_t version = 0, reserved = 1;
        uint32_t length = 0;
        const std::string at = "meta " + std::to_string(i);
        if (r.left() < kRecordHeadSize || !r.get(&kind) || !r.get(&version) || !r.get(&reserved) ||
            !r.get(&length))
            return bad(at + ": header truncated");
        if (reserved != 0)
            return bad(at + ": reserved field is set");
        if (length > r.left())
            return bad(at + ": " + std::to_string(length) + " bytes, the section holds " +
                       std::to_string(r.left()) + " more");
        Reader body(r.take(length));
        switch (MetaKind(kind)) {
        case MetaKind::Tensors: {
            const std::string where = at + " (tensors)";
            if (version != kTensorsVersion)
                return bad(where + ": version " + std::to_string(version) + ", this side reads " +
                           std::to_string(kTensorsVersion));
            auto t = parse_tensors(body, m.fds, where);
            if (!t)
                return unexpected(std::move(t).error());
            if (body.left() != 0)
                return bad(where + ": " + std::to_string(body.left()) + " bytes left over");
            m.tensors.push_back(std::move(*t));
            break;
        }
        case MetaKind::Analytics: {
            const std::string where = at + " (analytics)";
            if (version != kAnalyticsVersion)
                return bad(where + ": version " + std::to_string(version) + ", this side reads " +
                           std::to_string(kAnalyticsVersion));
            auto a = parse_analytics(body, where);
            if (!a)
                return unexpected(std::move(a).error());
            if (body.left() != 0)
                return bad(where + ": " + std::to_string(body.left()) + " bytes left over");
            m.analytics.push_back(std::move(*a));
            break;
        }
        case MetaKind::Batch: {
            const std::string where = at + " (batch)";
            if (version != kBatchVersion)
                return bad(where + ": version " + std::to_string(version) + ", this side reads " +
                           std::to_string(kBatchVersion));
            if (m.batch)
                return bad(where + ": a second batch record");
            auto b = parse_batch(body, where);
            if (!b)
                return unexpected(std::move(b).error());
            if (body.left() != 0)
                return bad(where + ": " + std::to_string(body.left()) + " bytes left over");
            m.batch = std::move(*b);
            break;
        }
        default:
            return bad(at + ": kind " + std::to_string(kind) + " is unknown");
        }
    }
    if (r.left() != 0)
        return bad("meta section: " + std::to_string(r.left()) + " bytes left over");
    return m;
}

Result<MetaFd> describe_meta_fd(int fd)
{
    struct statfs sfs {
    };
    if (::fstatfs(fd, &sfs) != 0)
        return unexpected(Error::io(errno, "fstatfs of a tensor's fd"));
    MetaFd m;
    if (uint32_t(sfs.f_type) == DMA_BUF_MAGIC) {
        const off_t end = ::lseek(fd, 0, SEEK_END);
        if (end < 0)
            return unexpected(Error::io(errno, "lseek(SEEK_END) of a tensor's DMA-BUF"));
        m.kind = EDGETENSOR_KIND_DMABUF;
        m.size = uint64_t(end);
        return m;
    }
    if (uint32_t(sfs.f_type) != TMPFS_MAGIC)
        return make_error(ErrorCode::UnknownBufferType,
                          "a tensor's fd is neither a DMA-BUF nor a memfd");
    struct stat st {
    };
    if (::fstat(fd, &st) != 0)
        return unexpected(Error::io(errno, "fstat of a tensor's memfd"));
    const int seals = ::fcntl(fd, F_GET_SEALS);
    if (seals < 0 || !(seals & F_SEAL_SHRINK))
        return make_error(ErrorCode::NotSupported,
                          "a tensor's memfd is not sealed against shrinking (F_SEAL_SHRINK)");
    m.kind = EDGETENSOR_KIND_HOST;
    m.size = uint64_t(st.st_size);
    return m;
}

Result<UniqueFd> make_meta_blob(std::span<const uint8_t> bytes)
{
    if (bytes.empty())
        return make_error(ErrorCode::InvalidArgument, "no bytes for a meta memfd");
    UniqueFd fd(::memfd_create("edgetensor-ipc-meta", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd)
        return unexpected(Error::io(errno, "memfd_create for tensor bytes"));
    if (::ftruncate(fd.get(), off_t(bytes.size())) != 0)
        return unexpected(Error::io(errno, "ftruncate of the meta memfd"));
    for (size_t at = 0; at < bytes.size();) {
        const ssize_t n = ::pwrite(fd.get(), bytes.data() + at, bytes.size() - at, off_t(at));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return unexpected(Error::io(n < 0 ? errno : EIO, "write of the meta memfd"));
        at += size_t(n);
    }
    // Sealed against any change: a receiver reads what was sent, and nobody can cut it short.
    if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) !=
        0)
        return unexpected(Error::io(errno, "sealing the meta memfd"));
    return fd;
}

} // namespace edgetensor::ipc
