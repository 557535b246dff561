// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta's serialization record (tensor_meta_codec.hpp). Written and read field by
// field in little-endian order, so neither the struct's padding nor the host's byte order is
// part of the format; read through bounds-checked cursors, every value checked before use.

#include "tensor_meta_codec.hpp"

#include <cstdio>
#include <string>

namespace edgetensor::gst
{

namespace
{

// The meta's flags (GstEdgeTensorMetaFlags) and memory kinds (GstEdgeTensorMemoryKind), as
// numbers: this file sees no GStreamer header.
constexpr uint32_t kKnownMetaFlags = (1u << 0) | (1u << 1);
constexpr uint32_t kLastMemoryKind = 3;
constexpr uint32_t kLastDescKind = EDGETENSOR_KIND_CUDA_DEVICE;
constexpr uint32_t kLastDtype = EDGETENSOR_DTYPE_F64;
constexpr uint32_t kLastPixelFormat = EDGETENSOR_FORMAT_NV24;

Unexpected bad(std::string what)
{
    return make_error(ErrorCode::InvalidDescriptor, "GstEdgeTensorMeta record: " + std::move(what));
}

class Writer
{
public:
    void u32(uint32_t v)
    {
        for (int i = 0; i < 4; ++i)
            out_.push_back(uint8_t(v >> (8 * i)));
    }
    void u64(uint64_t v)
    {
        for (int i = 0; i < 8; ++i)
            out_.push_back(uint8_t(v >> (8 * i)));
    }
    std::vector<uint8_t> take() { return std::move(out_); }

private:
    std::vector<uint8_t> out_;
};

// Reads past the end as zeros; decode() checks the size first, so it never does.
class Reader
{
public:
    explicit Reader(std::span<const uint8_t> b) : b_(b) {}
    uint32_t u32() { return uint32_t(next(4)); }
    uint64_t u64() { return next(8); }

private:
    uint64_t next(size_t n)
    {
        uint64_t v = 0;
        for (size_t i = 0; i < n && at_ + i < b_.size(); ++i)
            v |= uint64_t(b_[at_ + i]) << (8 * i);
        at_ += n;
        return v;
    }
    std::span<const uint8_t> b_;
    size_t at_ = 0;
};

size_t dtype_bytes(uint32_t dtype) noexcept
{
    static constexpr size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8};
    return dtype <= kLastDtype ? sizes[dtype] : 0;
}

bool colorimetry_known(uint32_t c) noexcept
{
    return EDGETENSOR_COLORIMETRY_PRIMARIES(c) <= EDGETENSOR_COLOR_PRIMARIES_MAX &&
           EDGETENSOR_COLORIMETRY_TRANSFER(c) <= EDGETENSOR_COLOR_TRANSFER_MAX &&
           EDGETENSOR_COLORIMETRY_MATRIX(c) <= EDGETENSOR_COLOR_MATRIX_MAX &&
           EDGETENSOR_COLORIMETRY_RANGE(c) <= EDGETENSOR_COLOR_RANGE_MAX;
}

Result<void> check_desc(const EdgeTensorDesc& d)
{
    if (d.version != EDGETENSOR_DESC_VERSION)
        return bad("descriptor version " + std::to_string(d.version) + ", this side reads " +
                   std::to_string(EDGETENSOR_DESC_VERSION));
    if (d.kind > kLastDescKind)
        return bad("descriptor kind " + std::to_string(d.kind) + " is unknown");
    if (d.ndim > EDGETENSOR_DESC_MAX_NDIM)
        return bad("descriptor ndim " + std::to_string(d.ndim) + " (at most " +
                   std::to_string(EDGETENSOR_DESC_MAX_NDIM) + ")");
    const size_t elem = dtype_bytes(d.dtype);
    if (elem == 0)
        return bad("descriptor dtype " + std::to_string(d.dtype) + " is unknown");
    if (d.format > kLastPixelFormat)
        return bad("descriptor pixel format " + std::to_string(d.format) + " is unknown");
    if (!colorimetry_known(d.colorimetry))
        return bad("descriptor colorimetry 0x" + [&] {
            char b[16];
            std::snprintf(b, sizeof(b), "%08x", d.colorimetry);
            return std::string(b);
        }() + " holds an unknown code");
    if ((d.flags & ~EDGETENSOR_FLAGS_KNOWN) != 0)
        return bad("unknown descriptor flags " + std::to_string(d.flags));
    for (uint32_t i = d.ndim; i < EDGETENSOR_DESC_MAX_NDIM; ++i)
        if (d.shape[i] != 0 || d.strides[i] != 0)
            return bad("descriptor dimension " + std::to_string(i) + " is set beyond ndim " +
                       std::to_string(d.ndim));
    if (d.ndim == 0)
        return {};
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
    uint64_t total = 0;
    if (__builtin_add_overflow(last, uint64_t(elem), &total) || total > d.capacity)
        return bad("descriptor shape and strides address more than its capacity of " +
                   std::to_string(d.capacity) + " bytes");
    return {};
}

} // namespace

std::vector<uint8_t> encode_tensor_meta(const TensorMetaFields& f)
{
    Writer w;
    w.u32(f.memory_kind);
    const EdgeTensorDesc& d = f.desc;
    w.u32(d.version);
    w.u32(d.kind);
    w.u32(d.ndim);
    w.u32(d.dtype);
    for (uint64_t s : d.shape)
        w.u64(s);
    for (int64_t s : d.strides)
        w.u64(uint64_t(s));
    w.u32(d.fourcc);
    w.u32(d.format);
    w.u32(d.colorimetry);
    // A sync fence is an fd of this process: it does not travel, nor does the flag naming it.
    w.u32(d.flags & ~EDGETENSOR_FLAG_SYNC_PRESENT);
    w.u64(d.capacity);
    w.u32(f.video_format);
    w.u32(f.width);
    w.u32(f.height);
    w.u32(f.n_planes);
    for (uint64_t o : f.plane_offsets)
        w.u64(o);
    for (int32_t s : f.plane_strides)
        w.u32(uint32_t(s));
    w.u32(f.flags);
    w.u32(f.applied_colorimetry);
    return w.take();
}

Result<TensorMetaFields> decode_tensor_meta(std::span<const uint8_t> bytes, uint8_t version)
{
    if (version != kTensorMetaCodecVersion)
        return bad("version " + std::to_string(version) + ", this side reads version " +
                   std::to_string(kTensorMetaCodecVersion));
    if (bytes.size() != kTensorMetaRecordSize)
        return bad(std::to_string(bytes.size()) + " bytes, a version-1 record has " +
                   std::to_string(kTensorMetaRecordSize));
    Reader r(bytes);
    TensorMetaFields f;
    f.memory_kind = r.u32();
    EdgeTensorDesc& d = f.desc;
    d = edgetensor_desc_init();
    d.version = r.u32();
    d.kind = r.u32();
    d.ndim = r.u32();
    d.dtype = r.u32();
    for (uint64_t& s : d.shape)
        s = r.u64();
    for (int64_t& s : d.strides)
        s = int64_t(r.u64());
    d.fourcc = r.u32();
    d.format = r.u32();
    d.colorimetry = r.u32();
    d.flags = r.u32();
    d.capacity = r.u64();
    f.video_format = r.u32();
    f.width = r.u32();
    f.height = r.u32();
    f.n_planes = r.u32();
    for (uint64_t& o : f.plane_offsets)
        o = r.u64();
    for (int32_t& s : f.plane_strides)
        s = int32_t(r.u32());
    f.flags = r.u32();
    f.applied_colorimetry = r.u32();

    if (f.memory_kind > kLastMemoryKind)
        return bad("memory kind " + std::to_string(f.memory_kind) + " is unknown");
    if (auto ok = check_desc(d); !ok)
        return unexpected(std::move(ok).error());
    if ((d.flags & EDGETENSOR_FLAG_SYNC_PRESENT) != 0)
        return bad("a sync fence does not travel between processes");
    if (f.n_planes > kTensorMetaMaxPlanes)
        return bad(std::to_string(f.n_planes) + " planes (at most " +
                   std::to_string(kTensorMetaMaxPlanes) + ")");
    for (uint32_t i = 0; i < f.n_planes; ++i) {
        if (f.plane_strides[i] <= 0)
            return bad("plane " + std::to_string(i) + " stride " +
                       std::to_string(f.plane_strides[i]) + " is not positive");
        if (f.plane_offsets[i] >= d.capacity)
            return bad("plane " + std::to_string(i) + " starts at byte " +
                       std::to_string(f.plane_offsets[i]) + ", beyond the capacity of " +
                       std::to_string(d.capacity));
    }
    for (uint32_t i = f.n_planes; i < kTensorMetaMaxPlanes; ++i)
        if (f.plane_offsets[i] != 0 || f.plane_strides[i] != 0)
            return bad("plane " + std::to_string(i) + " is set beyond n_planes " +
                       std::to_string(f.n_planes));
    if ((f.flags & ~kKnownMetaFlags) != 0)
        return bad("unknown meta flags " + std::to_string(f.flags));
    if (f.video_format != 0 && (f.width == 0 || f.height == 0))
        return bad("a video frame of " + std::to_string(f.width) + "x" + std::to_string(f.height));
    if (!colorimetry_known(f.applied_colorimetry))
        return bad("applied colorimetry holds an unknown code");
    return f;
}

} // namespace edgetensor::gst
