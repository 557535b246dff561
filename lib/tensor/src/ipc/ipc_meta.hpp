// SPDX-License-Identifier: MIT
//
// The metas a FRAME carries besides its memories (docs/ipc.md): GStreamer's tensor meta
// (GstTensorMeta, 1.26+) and analytics relation meta (GstAnalyticsRelationMeta, 1.24+) in plain
// types, and their records on the wire. Free of GStreamer, like the rest of the protocol, so
// the parser of another process's bytes is unit-tested and fuzzed on every GStreamer version;
// the elements convert to and from the GstMetas where their GStreamer has them.
//
// tensorbatch's per-slot provenance (GstEdgeTensorBatchMeta, every version) travels too.
//
// A FRAME's meta section: how many meta fds follow the memory fds and what each is (its kind
// and size), then records, each {kind u16, version u8, 0 u8, length u32, body}. Every kind has
// its own version, checked like the protocol's: a reader refuses a version it does not read.
// A tensor's bytes are never in the record: they are a window (fd index, offset, size) on one
// of the meta fds, so a 3 MB model output costs what a 1 KB one does.

#pragma once

#include <edgetensor/error.hpp>
#include <edgetensor/unique_fd.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace edgetensor::ipc
{

inline constexpr uint32_t kMaxMetaFds = 4;
inline constexpr uint32_t kMaxMetaRecords = 8;
inline constexpr uint32_t kMaxTensors = 16;     ///< per tensor meta
inline constexpr uint32_t kMaxTensorDims = 16;  ///< per tensor
inline constexpr uint32_t kMaxLabelBytes = 256; ///< a tensor id, an object type, a class name
inline constexpr uint32_t kMaxMtds = 256;       ///< per analytics meta
inline constexpr uint32_t kMaxClasses = 256;    ///< per classification
inline constexpr uint32_t kMaxRelations = 4096; ///< per analytics meta

enum class MetaKind : uint16_t {
    Tensors = 1,   ///< GstTensorMeta
    Analytics = 2, ///< GstAnalyticsRelationMeta
    Batch = 3,     ///< GstEdgeTensorBatchMeta (tensorbatch's per-slot provenance)
};
inline constexpr uint8_t kTensorsVersion = 1;
inline constexpr uint8_t kAnalyticsVersion = 1;
inline constexpr uint8_t kBatchVersion = 1;
/// Slots of a batch record (GST_EDGE_TENSOR_BATCH_MAX_SLOTS); a FRAME's 64 KiB hold about 700.
inline constexpr uint32_t kMaxBatchSlots = 1024;

/// A meta fd: EDGETENSOR_KIND_HOST (a memfd, sealed against shrinking) or _DMABUF, at least
/// `size` bytes long; checked against the kernel like a memory's fd.
struct MetaFd {
    uint32_t kind = 0;
    uint64_t size = 0;
};

/// GstTensorDataType's values (1.26; 1.28 appended STRING..FLOAT8E5M2FNUZ).
inline constexpr uint32_t kTensorTypeString = 14;
inline constexpr uint32_t kLastTensorType = 21;
/// Bits of one element of GstTensorDataType `type` (0: variable, a UTF-8 string; -1: unknown).
int tensor_type_bits(uint32_t type) noexcept;

/// One GstTensor: its id (the GQuark's string), type, order, layout, dims, and where its bytes
/// are: `size` bytes at `offset` of meta fd `fd_index`.
struct TensorRecord {
    std::string id;
    uint32_t data_type = 0;
    uint32_t dims_order = 0; ///< 0 row-major, 1 column-major
    uint32_t layout = 0;     ///< 0 contiguous (the only one)
    std::vector<uint64_t> dims;
    uint32_t fd_index = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
};

struct TensorsMeta {
    std::vector<TensorRecord> tensors;
};

/// GstAnalytics metadata types carried: object detection, classification, tracking.
enum class MtdType : uint32_t { ObjectDetection = 1, Classification = 2, Tracking = 3 };

struct ClassEntry {
    std::string label;
    float confidence = 0;
};

struct Mtd {
    MtdType type = MtdType::ObjectDetection;
    // ObjectDetection
    std::string label;
    int32_t x = 0, y = 0, w = 0, h = 0;
    float rotation = 0; ///< radians (1.26's oriented boxes; 0 otherwise)
    float confidence = 0;
    // Classification
    std::vector<ClassEntry> classes;
    // Tracking
    uint64_t tracking_id = 0, first_seen = 0, last_seen = 0;
    bool lost = false;
};

/// `types` (GstAnalyticsRelTypes bits) from mtd `from` to mtd `to`, indices into mtds.
struct Relation {
    uint32_t from = 0, to = 0, types = 0;
};
inline constexpr uint32_t kKnownRelationTypes = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4);

struct AnalyticsMeta {
    std::vector<Mtd> mtds;
    std::vector<Relation> relations;
};

/// One slot of a batch tensor: where its picture came from and how it got there (the fields of
/// GstEdgeTensorBatchSlot; the ROI label as its string, not a process-local GQuark).
struct BatchSlot {
    bool filled = false;
    uint32_t pad_index = 0;
    uint64_t pts = UINT64_MAX;
    uint32_t source_width = 0, source_height = 0;
    uint32_t crop_x = 0, crop_y = 0, crop_width = 0, crop_height = 0;
    double scale_x = 0, scale_y = 0;
    uint32_t pad_left = 0, pad_top = 0, pad_right = 0, pad_bottom = 0;
    uint32_t roi_kind = 0; ///< 0 none, 1 GstVideoRegionOfInterestMeta, 2 analytics
    int32_t roi_id = -1;
    std::string roi_label;
    uint32_t applied_colorimetry = 0;
};
inline constexpr uint32_t kLastRoiKind = 2;

struct BatchMeta {
    uint32_t slot_width = 0, slot_height = 0;
    std::vector<BatchSlot> slots;
};

struct FrameMetas {
    std::vector<MetaFd> fds;
    std::vector<TensorsMeta> tensors;
    std::vector<AnalyticsMeta> analytics;
    std::optional<BatchMeta> batch; ///< at most one a frame, as a buffer has
    size_t records() const noexcept { return tensors.size() + analytics.size() + (batch ? 1 : 0); }
    bool empty() const noexcept { return records() == 0; }
};

/// The meta section of `metas` (empty bytes for no metas and no fds). Errors
/// (InvalidArgument): more of anything than the limits above, a string with a NUL or longer
/// than kMaxLabelBytes, or what parse_metas() would refuse.
Result<std::vector<uint8_t>> encode_metas(const FrameMetas& metas);

/// Reads a meta section of `n_fds` meta fds; trusts nothing in it. Errors (InvalidDescriptor)
/// name the record and field: counts beyond the limits or the bytes, an fd count or kind that
/// is not the header's, unknown record kinds and versions, lengths that are not the body's,
/// strings with a NUL, unknown tensor types, orders, layouts, mtd types and relation bits,
/// non-finite confidences or rotations, relations naming no mtd or one mtd twice, a tensor
/// window beyond its fd or smaller than its dims need.
Result<FrameMetas> parse_metas(std::span<const uint8_t> bytes, uint32_t n_fds);

/// A BATCH record's body alone. GstEdgeTensorBatchMeta's own serialization (GStreamer 1.24+:
/// unixfdsink/unixfdsrc) writes it as its version kBatchVersion, so one format serves both.
/// Encoding refuses (InvalidArgument) what parsing would (InvalidDescriptor, naming the slot and
/// field).
Result<std::vector<uint8_t>> encode_batch_body(const BatchMeta& batch);
Result<BatchMeta> parse_batch_body(std::span<const uint8_t> bytes);

/// What a receiver would accept of `fd` as a meta fd, without a copy: a DMA-BUF, or a memfd
/// sealed against shrinking (an edgetensor pool's); its kind and size (borrowed fd). Errors
/// name what is missing: another filesystem, or no F_SEAL_SHRINK.
Result<MetaFd> describe_meta_fd(int fd);

/// A new memfd named "edgetensor-ipc-meta" holding `bytes`, sealed against any change
/// (shrink, grow, write) before it is returned: what the sink copies tensor bytes that have no
/// fd of their own into. Errors: Io with errno; InvalidArgument for no bytes.
Result<UniqueFd> make_meta_blob(std::span<const uint8_t> bytes);

} // namespace edgetensor::ipc
