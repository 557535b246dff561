// SPDX-License-Identifier: MIT
//
// Shared by the gtest IPC fuzz driver and the libFuzzer target: building one fuzz case (a
// record plus the fds that come with it) from raw bytes, and what must hold after parse()
// accepts a record. Accepting garbage quietly is as much a bug as crashing on it.

#pragma once

#include "ipc_wire.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace edgetensor::fuzz
{

/// The fds a case can carry: a sealed 4 KiB memfd (valid), a pipe, an unsealed memfd, a
/// sealed but empty memfd.
struct IpcFds {
    int sealed = -1, pipe_r = -1, pipe_w = -1, unsealed = -1, empty = -1;
    IpcFds()
    {
        sealed = ::memfd_create("fuzz-ipc", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (sealed >= 0 && ::ftruncate(sealed, 4096) == 0)
            (void)::fcntl(sealed, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
        int p[2];
        if (::pipe2(p, O_CLOEXEC) == 0) {
            pipe_r = p[0];
            pipe_w = p[1];
        }
        unsealed = ::memfd_create("fuzz-ipc-unsealed", MFD_CLOEXEC);
        if (unsealed >= 0)
            (void)::ftruncate(unsealed, 4096);
        empty = ::memfd_create("fuzz-ipc-empty", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (empty >= 0)
            (void)::fcntl(empty, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
    }
    ~IpcFds()
    {
        for (int fd : {sealed, pipe_r, pipe_w, unsealed, empty})
            if (fd >= 0)
                ::close(fd);
    }
    IpcFds(const IpcFds&) = delete;
    IpcFds& operator=(const IpcFds&) = delete;
    int pick(unsigned kind) const
    {
        switch (kind & 3) {
        case 0:
            return sealed;
        case 1:
            return pipe_r;
        case 2:
            return unsealed;
        default:
            return empty;
        }
    }
};

/// The seeds a case picks from (seed_record()).
inline constexpr unsigned kSeedRecords = 5;

/// A valid one-memory FRAME over a 4 KiB memfd (1), the same with a meta section naming one
/// more 4 KiB memfd (4: a tensor meta, an analytics meta and a batch of two slots), and valid CAPS
/// (2) and RELEASE (3) records: the seeds the fuzz bytes are XORed over, so mutations start
/// near-valid.
inline std::vector<uint8_t> seed_record(unsigned which)
{
    using namespace ipc;
    switch (which % kSeedRecords) {
    case 4: {
        FrameMetas metas;
        metas.fds.push_back({EDGETENSOR_KIND_HOST, 4096});
        TensorsMeta t;
        t.tensors.push_back({"scores", 11, 0, 0, {1, 10}, 0, 0, 40});
        t.tensors.push_back({"labels", kTensorTypeString, 0, 0, {2}, 0, 64, 16});
        metas.tensors.push_back(t);
        AnalyticsMeta a;
        Mtd od;
        od.label = "person";
        od.w = od.h = 8;
        od.confidence = 0.5f;
        a.mtds.push_back(od);
        Mtd cls;
        cls.type = MtdType::Classification;
        cls.classes = {{"a", 0.5f}, {"b", 0.25f}};
        a.mtds.push_back(cls);
        Mtd trk;
        trk.type = MtdType::Tracking;
        trk.tracking_id = 3;
        a.mtds.push_back(trk);
        a.relations.push_back({0, 1, 1u << 3});
        a.relations.push_back({2, 0, 1u << 1});
        metas.analytics.push_back(a);
        BatchMeta b;
        b.slot_width = b.slot_height = 64;
        BatchSlot filled;
        filled.filled = true;
        filled.source_width = 320;
        filled.source_height = 240;
        filled.crop_width = 320;
        filled.crop_height = 240;
        filled.scale_x = filled.scale_y = 0.2;
        filled.pad_top = 8;
        filled.pad_bottom = 8;
        filled.roi_kind = 1;
        filled.roi_id = 4;
        filled.roi_label = "face";
        b.slots = {filled, BatchSlot{}};
        metas.batch = b;
        auto section = encode_metas(metas);
        if (!section)
            return {};
        MemoryRecord r;
        r.desc = edgetensor_desc_init();
        r.desc.kind = EDGETENSOR_KIND_HOST;
        r.desc.handle = 0;
        r.desc.ndim = 1;
        r.desc.dtype = EDGETENSOR_DTYPE_U8;
        r.desc.shape[0] = 4096;
        r.desc.strides[0] = 1;
        r.desc.capacity = 4096;
        r.size = 4096;
        r.maxsize = 4096;
        FrameHead h;
        h.seq = 2;
        h.n_meta_fds = 1;
        auto m = encode_frame(h, std::span(&r, 1), *section);
        return m ? *m : std::vector<uint8_t>{};
    }
    case 1: {
        MemoryRecord r;
        r.desc = edgetensor_desc_init();
        r.desc.kind = EDGETENSOR_KIND_HOST;
        r.desc.handle = 0;
        r.desc.ndim = 2;
        r.desc.dtype = EDGETENSOR_DTYPE_U8;
        r.desc.shape[0] = 32;
        r.desc.shape[1] = 128;
        r.desc.strides[0] = 128;
        r.desc.strides[1] = 1;
        r.desc.capacity = 4096;
        r.size = 4096;
        r.maxsize = 4096;
        FrameHead h;
        h.seq = 1;
        h.n_planes = 2;
        h.plane_stride[0] = 64;
        h.plane_stride[1] = 64;
        h.plane_offset[1] = 2048;
        auto m = encode_frame(h, std::span(&r, 1));
        return m ? *m : std::vector<uint8_t>{};
    }
    case 2: {
        auto m = encode_caps(1, "video/x-raw, format=(string)NV12, width=(int)64, height=(int)32");
        return m ? *m : std::vector<uint8_t>{};
    }
    case 3: {
        const uint64_t seqs[] = {1, 2};
        auto m = encode_release(seqs);
        return m ? *m : std::vector<uint8_t>{};
    }
    default:
        return {};
    }
}

/// What must hold for an accepted record. Empty when all holds.
inline std::string check_accepted(const ipc::Message& m, size_t fds_given)
{
    using namespace ipc;
    if (m.type != MsgType::Frame)
        return fds_given == 0 ? "" : "a record without fds was accepted with fds";
    const Frame& f = m.frame;
    if (f.head.n_memories < 1 || f.head.n_memories > kMaxMemories)
        return "accepted a frame with a bad memory count";
    if (size_t(f.head.n_memories) + f.head.n_meta_fds != fds_given)
        return "accepted a frame whose fd count differs from its memories and meta fds";
    if (f.head.n_meta_fds > kMaxMetaFds || f.metas.fds.size() != f.head.n_meta_fds)
        return "accepted a meta fd count the section does not describe";
    for (uint32_t i = 0; i < f.head.n_meta_fds; ++i)
        if (!f.meta_fds[i] || f.metas.fds[i].size == 0)
            return "accepted a meta fd that is missing or empty";
    if (f.metas.records() > kMaxMetaRecords)
        return "accepted more metas than the limit";
    for (const TensorsMeta& t : f.metas.tensors) {
        if (t.tensors.empty() || t.tensors.size() > kMaxTensors)
            return "accepted a tensor meta with a bad tensor count";
        for (const TensorRecord& r : t.tensors) {
            if (r.fd_index >= f.metas.fds.size())
                return "accepted a tensor in a meta fd that is not there";
            const uint64_t fd_size = f.metas.fds[r.fd_index].size;
            if (r.offset > fd_size || r.size > fd_size - r.offset)
                return "accepted a tensor window beyond its meta fd";
            if (r.dims.empty() || r.dims.size() > kMaxTensorDims ||
                tensor_type_bits(r.data_type) < 0 || r.id.size() > kMaxLabelBytes)
                return "accepted a tensor of a bad shape, type or id";
        }
    }
    for (const AnalyticsMeta& a : f.metas.analytics) {
        if (a.mtds.size() > kMaxMtds || a.relations.size() > kMaxRelations)
            return "accepted an analytics meta beyond the limits";
        for (const Mtd& mtd : a.mtds)
            if (!std::isfinite(mtd.confidence) || !std::isfinite(mtd.rotation) || mtd.w < 0 ||
                mtd.h < 0)
                return "accepted a non-finite confidence or rotation, or a negative box";
        for (const Relation& r : a.relations)
            if (r.from >= a.mtds.size() || r.to >= a.mtds.size() || r.from == r.to ||
                r.types == 0 || (r.types & ~kKnownRelationTypes) != 0)
                return "accepted a relation naming no metadata or an unknown type";
    }
    if (const auto& b = f.metas.batch) {
        if (b->slots.empty() || b->slots.size() > kMaxBatchSlots || b->slot_width == 0 ||
            b->slot_height == 0)
            return "accepted a batch of a bad slot count or size";
        for (const BatchSlot& s : b->slots) {
            if (s.roi_kind > kLastRoiKind || s.roi_label.size() > kMaxLabelBytes)
                return "accepted a batch slot of an unknown ROI kind or a long label";
            if (s.filled &&
                (!std::isfinite(s.scale_x) || !std::isfinite(s.scale_y) || s.scale_x <= 0 ||
                 s.scale_y <= 0 || s.crop_width == 0 || s.crop_height == 0 ||
                 uint64_t(s.crop_x) + s.crop_width > s.source_width ||
                 uint64_t(s.crop_y) + s.crop_height > s.source_height))
                return "accepted a filled batch slot whose crop or scale cannot map back";
        }
    }
    for (uint32_t i = 0; i < f.head.n_memories; ++i) {
        const MemoryRecord& r = f.memories[i];
        if (!f.fds[i])
            return "accepted a memory without an fd";
        auto b = addressed_bytes(r.desc);
        if (!b || *b > r.desc.capacity)
            return "accepted a descriptor addressing beyond its capacity";
        if (r.offset + r.size > r.maxsize || r.maxsize > r.desc.capacity || r.size == 0)
            return "accepted a memory window beyond the buffer";
        if (r.desc.handle != int64_t(i) || r.desc.ptr != nullptr)
            return "accepted a descriptor with a foreign handle or address";
    }
    for (uint32_t p = 0; p < f.head.n_planes; ++p)
        if (f.head.plane_offset[p] >= f.total_size() || f.head.plane_stride[p] <= 0)
            return "accepted a plane outside the frame";
    return {};
}

} // namespace edgetensor::fuzz
