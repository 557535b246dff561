// SPDX-License-Identifier: MIT
//
// GStreamer's own tensor meta (GstTensorMeta, gst-plugins-bad's analytics library, 1.26+), the
// way upstream's inference elements hand tensors to its tensor decoders (ssdobjectdetector in
// 1.26; ssdtensordec, yolov8tensordec, tensordecodebin in 1.28), written and read without the
// caller including the analytics headers. Built against gstreamer-analytics-1.0 >= 1.26 when
// the build finds it; elsewhere (GStreamer 1.22) every writer answers NotSupported and every
// reader finds nothing, so callers need no version guard of their own. Element helpers,
// compiled into the plugin; not installed. tensorinfer writes its outputs with it and reads its
// input with it; the IPC elements carry its records across processes.

#pragma once

#include "glib_raii.hpp"

#include <gst/gst.h>

#include <edgetensor/error.hpp>
#include <edgetensor/types.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace edgetensor::gst
{

/// True when this build reads and writes GstTensorMeta (GStreamer 1.26 or later).
bool have_gst_tensor_meta() noexcept;

/// How a GstTensor's dimensions map to memory (GstTensorDimOrder).
enum class TensorDimOrder {
    RowMajor, ///< the last dimension varies fastest (C order)
    ColMajor, ///< the first dimension varies fastest; also how 1.28's YOLOv8 decoder labels
              ///< [1, 4 + classes, candidates]
};

/// One tensor as GstTensorMeta carries it.
struct TensorRecord {
    /// The tensor id (a GQuark's string): what decoders look tensors up by.
    std::string id;
    DType dtype = DType::F32;
    /// As GstTensor lists them; a 0 is an empty dimension (no detections).
    std::vector<size_t> dims;
    TensorDimOrder order = TensorDimOrder::RowMajor;
    /// The bytes, from offset 0 of the buffer (a reference is held).
    MiniObjectPtr<GstBuffer> data;

    TensorRecord() = default;
    TensorRecord(const TensorRecord& o);
    TensorRecord& operator=(const TensorRecord& o);
    TensorRecord(TensorRecord&&) noexcept = default;
    TensorRecord& operator=(TensorRecord&&) noexcept = default;

    /// dims' product times the element size (0 for an empty tensor).
    size_t bytes() const noexcept;
};

/// GstTensorDataType's value for `dtype` (every edgetensor dtype has one).
int gst_tensor_data_type_of(DType dtype) noexcept;
/// The dtype of a GstTensorDataType value; nullopt for types edgetensor has none for (int4,
/// uint4, bfloat16, and 1.28's string, bool, complex and float8 types).
std::optional<DType> dtype_of_gst_tensor_data_type(int type) noexcept;
/// "float32", ... as GStreamer 1.28's caps and gst_tensor_data_type_get_name() spell them.
const char* gst_tensor_type_name(DType dtype) noexcept;

/// Attaches one GstTensorMeta holding `tensors`, in order, to `buffer` (writable; references
/// to their data are taken). NotSupported without GstTensorMeta in this build; InvalidArgument
/// for a tensor without data, without an id, or whose data is smaller than its dims say.
Result<void> add_gst_tensor_meta(GstBuffer* buffer, std::span<const TensorRecord> tensors);

/// Every tensor of every GstTensorMeta on `buffer`, in order, with references to their data.
/// Tensors of a type edgetensor has no dtype for are left out (`skipped`, when not null, counts
/// them). Empty without GstTensorMeta in this build.
std::vector<TensorRecord> read_gst_tensor_metas(GstBuffer* buffer, size_t* skipped = nullptr);

/// The tensor `id` of the GstTensorMetas on `buffer`, the first one found.
std::optional<TensorRecord> find_gst_tensor(GstBuffer* buffer, const std::string& id);

/// Describes the tensor `buffer` is (its bytes from offset 0: row-major, contiguous) in a
/// GstTensorMeta of one tensor `id`, so GStreamer's own tensor readers find it. The GstTensor's
/// data is a second buffer holding `buffer`'s memories, not a copy and not `buffer` itself (a
/// meta referencing its own buffer would never be freed). While the meta lives those memories
/// are shared: a downstream write map copies them, as for any shared GstMemory. A pool's buffer
/// gets them back exclusive when it returns: the pool removes the meta (it is not POOLED).
/// `buffer` writable. NotSupported without GstTensorMeta in this build; InvalidArgument as
/// add_gst_tensor_meta().
Result<void> describe_buffer_as_gst_tensor(GstBuffer* buffer, const std::string& id, DType dtype,
                                           std::span<const size_t> dims);

/// Removes from `buffer` (writable) every GstTensorMeta that holds a tensor `id`; how many.
size_t remove_gst_tensor_metas_with(GstBuffer* buffer, const std::string& id);

} // namespace edgetensor::gst
