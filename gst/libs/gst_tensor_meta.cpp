// SPDX-License-Identifier: MIT
//
// GstTensorMeta written and read (gst_tensor_meta.hpp).

#include "gst_tensor_meta.hpp"

#if EDGETENSOR_HAVE_GST_TENSOR_META
#include <gst/analytics/analytics.h>
#endif

#include <edgetensor/tensor_dyn.hpp>

#include <array>
#include <utility>

namespace edgetensor::gst
{

namespace
{

// GstTensorDataType's values (stable since 1.26: 1.28 only appended).
enum : int {
    kInt8 = 1,
    kInt16 = 2,
    kInt32 = 3,
    kInt64 = 4,
    kUint8 = 6,
    kUint16 = 7,
    kUint32 = 8,
    kUint64 = 9,
    kFloat16 = 10,
    kFloat32 = 11,
    kFloat64 = 12,
};

struct TypeRow {
    DType dtype;
    int gst;
    const char* name;
};
constexpr std::array<TypeRow, 11> kTypes{{
    {DType::U8, kUint8, "uint8"},
    {DType::I8, kInt8, "int8"},
    {DType::U16, kUint16, "uint16"},
    {DType::I16, kInt16, "int16"},
    {DType::U32, kUint32, "uint32"},
    {DType::I32, kInt32, "int32"},
    {DType::U64, kUint64, "uint64"},
    {DType::I64, kInt64, "int64"},
    {DType::F16, kFloat16, "float16"},
    {DType::F32, kFloat32, "float32"},
    {DType::F64, kFloat64, "float64"},
}};

#if EDGETENSOR_HAVE_GST_TENSOR_META
static_assert(int(GST_TENSOR_DATA_TYPE_INT8) == kInt8 &&
              int(GST_TENSOR_DATA_TYPE_UINT8) == kUint8 &&
              int(GST_TENSOR_DATA_TYPE_FLOAT16) == kFloat16 &&
              int(GST_TENSOR_DATA_TYPE_FLOAT64) == kFloat64);

std::optional<TensorRecord> record_of(const GstTensor* t)
{
    auto dtype = dtype_of_gst_tensor_data_type(int(t->data_type));
    if (!dtype || !t->data)
        return std::nullopt;
    TensorRecord r;
    r.id = t->id ? g_quark_to_string(t->id) : "";
    r.dtype = *dtype;
    r.dims.assign(t->dims, t->dims + t->num_dims);
    r.order = t->dims_order == GST_TENSOR_DIM_ORDER_COL_MAJOR ? TensorDimOrder::ColMajor
                                                              : TensorDimOrder::RowMajor;
    r.data.reset(gst_buffer_ref(t->data));
    return r;
}

bool holds(const GstTensorMeta* m, GQuark id)
{
    for (gsize i = 0; i < m->num_tensors; ++i)
        if (m->tensors[i] && m->tensors[i]->id == id)
            return true;
    return false;
}
#endif

} // namespace

TensorRecord::TensorRecord(const TensorRecord& o)
    : id(o.id), dtype(o.dtype), dims(o.dims), order(o.order),
      data(o.data ? gst_buffer_ref(o.data.get()) : nullptr)
{
}

TensorRecord& TensorRecord::operator=(const TensorRecord& o)
{
    if (this != &o) {
        TensorRecord copy(o);
        *this = std::move(copy);
    }
    return *this;
}

size_t TensorRecord::bytes() const noexcept
{
    size_t n = dtype_size(dtype);
    for (size_t d : dims)
        n *= d;
    return n;
}

bool have_gst_tensor_meta() noexcept
{
    return EDGETENSOR_HAVE_GST_TENSOR_META != 0;
}

int gst_tensor_data_type_of(DType dtype) noexcept
{
    for (const auto& row : kTypes)
        if (row.dtype == dtype)
            return row.gst;
    return kUint8;
}

std::optional<DType> dtype_of_gst_tensor_data_type(int type) noexcept
{
    for (const auto& row : kTypes)
        if (row.gst == type)
            return row.dtype;
    return std::nullopt;
}

const char* gst_tensor_type_name(DType dtype) noexcept
{
    for (const auto& row : kTypes)
        if (row.dtype == dtype)
            return row.name;
    return "uint8";
}

Result<void> add_gst_tensor_meta(GstBuffer* buffer, std::span<const TensorRecord> tensors)
{
#if EDGETENSOR_HAVE_GST_TENSOR_META
    for (const TensorRecord& r : tensors) {
        if (r.id.empty())
            return make_error(ErrorCode::InvalidArgument, "a GstTensor needs an id");
        if (!r.data)
            return make_error(ErrorCode::InvalidArgument, "tensor '" + r.id + "' has no data");
        if (gst_buffer_get_size(r.data.get()) < r.bytes())
            return make_error(ErrorCode::InvalidArgument,
                              "tensor '" + r.id + "' needs " + std::to_string(r.bytes()) +
                                  " bytes; its buffer has " +
                                  std::to_string(gst_buffer_get_size(r.data.get())));
    }
    GstTensorMeta* meta = gst_buffer_add_tensor_meta(buffer);
    if (!meta)
        return make_error(ErrorCode::InvalidArgument, "cannot add a GstTensorMeta to the buffer");
    // gst_tensor_meta_set() takes the array (g_free'd) and every tensor.
    auto** arr = static_cast<GstTensor**>(g_malloc0_n(tensors.size() + 1, sizeof(GstTensor*)));
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorRecord& r = tensors[i];
        GstTensor* t = gst_tensor_alloc(r.dims.size());
        t->id = g_quark_from_string(r.id.c_str());
        t->layout = GST_TENSOR_LAYOUT_CONTIGUOUS;
        t->data_type = GstTensorDataType(gst_tensor_data_type_of(r.dtype));
        t->data = gst_buffer_ref(r.data.get());
        t->dims_order = r.order == TensorDimOrder::ColMajor ? GST_TENSOR_DIM_ORDER_COL_MAJOR
                                                            : GST_TENSOR_DIM_ORDER_ROW_MAJOR;
        t->num_dims = r.dims.size();
        for (size_t d = 0; d < r.dims.size(); ++d)
            t->dims[d] = r.dims[d];
        arr[i] = t;
    }
    gst_tensor_meta_set(meta, guint(tensors.size()), arr);
    return {};
#else
    (void)buffer;
    (void)tensors;
    return make_error(ErrorCode::NotSupported,
                      "GstTensorMeta needs GStreamer 1.26 or later (gstreamer-analytics-1.0); "
                      "this edgetensor was built against an older GStreamer");
#endif
}

Result<void> describe_buffer_as_gst_tensor(GstBuffer* buffer, const std::string& id, DType dtype,
                                           std::span<const size_t> dims)
{
    TensorRecord r;
    r.id = id;
    r.dtype = dtype;
    r.dims.assign(dims.begin(), dims.end());
#if EDGETENSOR_HAVE_GST_TENSOR_META
    if (gst_buffer_get_size(buffer) < r.bytes())
        return make_error(ErrorCode::InvalidArgument,
                          "tensor '" + id + "' needs " + std::to_string(r.bytes()) +
                              " bytes; its buffer has " +
                              std::to_string(gst_buffer_get_size(buffer)));
    // The memories themselves, referenced: no byte copied, no sub-memory made. Not
    // gst_buffer_copy_region(): from a pool's buffer GStreamer 1.26 hangs a GstParentBufferMeta
    // on the copy, a reference back to `buffer` that would keep it (and this meta) alive for good.
    // The pool's spare bytes past the tensor come along (a GstTensor's data may be larger).
    r.data.reset(gst_buffer_new());
    for (guint i = 0; i < gst_buffer_n_memory(buffer); ++i)
        gst_buffer_append_memory(r.data.get(), gst_buffer_get_memory(buffer, i));
#endif
    return add_gst_tensor_meta(buffer, std::span<const TensorRecord>(&r, 1));
}

std::vector<TensorRecord> read_gst_tensor_metas(GstBuffer* buffer, size_t* skipped)
{
    std::vector<TensorRecord> out;
    size_t skip = 0;
#if EDGETENSOR_HAVE_GST_TENSOR_META
    gpointer state = nullptr;
    while (GstMeta* m =
               gst_buffer_iterate_meta_filtered(buffer, &state, GST_TENSOR_META_API_TYPE)) {
        auto* tm = reinterpret_cast<GstTensorMeta*>(m);
        for (gsize i = 0; i < tm->num_tensors; ++i) {
            if (!tm->tensors[i])
                continue;
            if (auto r = record_of(tm->tensors[i]))
                out.push_back(std::move(*r));
            else
                ++skip;
        }
    }
#else
    (void)buffer;
#endif
    if (skipped)
        *skipped = skip;
    return out;
}

std::optional<TensorRecord> find_gst_tensor(GstBuffer* buffer, const std::string& id)
{
    for (TensorRecord& r : read_gst_tensor_metas(buffer))
        if (r.id == id)
            return std::move(r);
    return std::nullopt;
}

size_t remove_gst_tensor_metas_with(GstBuffer* buffer, const std::string& id)
{
#if EDGETENSOR_HAVE_GST_TENSOR_META
    struct Ctx {
        GQuark id;
        size_t removed;
    } ctx{g_quark_try_string(id.c_str()), 0};
    if (!ctx.id)
        return 0;
    gst_buffer_foreach_meta(
        buffer,
        [](GstBuffer*, GstMeta** meta, gpointer data) -> gboolean {
            auto* c = static_cast<Ctx*>(data);
            if ((*meta)->info->api == GST_TENSOR_META_API_TYPE &&
                holds(reinterpret_cast<GstTensorMeta*>(*meta), c->id)) {
                *meta = nullptr; // removes it
                ++c->removed;
            }
            return TRUE;
        },
        &ctx);
    return ctx.removed;
#else
    (void)buffer;
    (void)id;
    return 0;
#endif
}

} // namespace edgetensor::gst
