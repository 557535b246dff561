// SPDX-License-Identifier: MIT
//
// DLPack 0.6 (libdlpack-dev): export a host-mapped tensor, import a kDLCPU tensor without
// copying. Exported tensors own a CPU map and a tensor handle until their deleter runs;
// imported ones own the producer's DLManagedTensor until the last edgetensor handle drops.

#include "interop/layout_check.hpp"
#include "storage.hpp"
#include "tensor_access.hpp"

#include "edgetensor/pixel_format.hpp"
#include "edgetensor/tensor_dyn.hpp"

#include <dlpack/dlpack.h>

#include <memory>
#include <new>
#include <vector>

namespace edgetensor
{
namespace
{

constexpr const char* kImportName = "dlpack";

bool to_dl_dtype(DType t, DLDataType* out)
{
    DLDataType d{};
    d.lanes = 1;
    d.bits = uint8_t(dtype_size(t) * 8);
    switch (t) {
    case DType::U8:
    case DType::U16:
    case DType::U32:
    case DType::U64:
        d.code = kDLUInt;
        break;
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
        d.code = kDLInt;
        break;
    case DType::F16:
    case DType::F32:
    case DType::F64:
        d.code = kDLFloat;
        break;
    default:
        return false;
    }
    *out = d;
    return true;
}

Result<DType> from_dl_dtype(const DLDataType& d)
{
    if (d.lanes != 1)
        return make_error(ErrorCode::NotSupported, "DLPack tensor has vector elements (" +
                                                       std::to_string(d.lanes) +
                                                       " lanes); edgetensor elements are scalars");
    auto pick = [&](DType a, DType b, DType c, DType e) -> Result<DType> {
        switch (d.bits) {
        case 8:
            return a;
        case 16:
            return b;
        case 32:
            return c;
        case 64:
            return e;
        default:
            return make_error(ErrorCode::NotSupported, "DLPack element of " +
                                                           std::to_string(d.bits) +
                                                           " bits has no edgetensor dtype");
        }
    };
    switch (d.code) {
    case kDLUInt:
        return pick(DType::U8, DType::U16, DType::U32, DType::U64);
    case kDLInt:
        return pick(DType::I8, DType::I16, DType::I32, DType::I64);
    case kDLFloat:
        if (d.bits == 16)
            return DType::F16;
        if (d.bits == 32)
            return DType::F32;
        if (d.bits == 64)
            return DType::F64;
        return make_error(ErrorCode::NotSupported,
                          "DLPack float of " + std::to_string(d.bits) +
                              " bits has no edgetensor dtype (f16, f32, f64 only)");
    case kDLBfloat:
        return make_error(ErrorCode::NotSupported, "DLPack bfloat16 has no edgetensor dtype");
    case kDLComplex:
        return make_error(ErrorCode::NotSupported, "DLPack complex elements have no edgetensor "
                                                   "dtype");
    default:
        return make_error(ErrorCode::NotSupported, "DLPack type code " + std::to_string(d.code) +
                                                       " has no edgetensor dtype");
    }
}

/// What an exported DLManagedTensor owns. The DLManagedTensor lives inside it, so the deleter
/// frees everything in one delete. Members are destroyed in reverse order: the map ends its
/// CPU access (DMA-BUF sync END) before the tensor handle lets go of the storage.
struct ExportContext {
    DLManagedTensor managed{};
    TensorDyn tensor;
    RawMap map;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;

    static void deleter(DLManagedTensor* self) noexcept
    {
        if (self)
            delete static_cast<ExportContext*>(self->manager_ctx);
    }
};

/// Calls a producer's deleter exactly once, when it goes out of scope.
struct ManagedDeleter {
    void operator()(DLManagedTensor* m) const noexcept
    {
        if (m && m->deleter)
            m->deleter(m);
    }
};
using ManagedPtr = std::unique_ptr<DLManagedTensor, ManagedDeleter>;

/// Foreign host memory owned by a DLPack producer.
class DlpackStorage final : public detail::Storage
{
public:
    DlpackStorage(ManagedPtr&& managed, uint8_t* base, size_t capacity)
        : Storage(capacity, CpuAccess::ReadWrite), managed_(std::move(managed)), base_(base)
    {
    }

    TensorMemory memory() const noexcept override { return TensorMemory::Mem; }
    std::string_view provider() const noexcept override { return "dlpack"; }
    Result<uint8_t*> begin_cpu_access(CpuAccess) override { return base_; }
    void end_cpu_access(CpuAccess) noexcept override {}

private:
    ManagedPtr managed_;
    uint8_t* base_;
};

Result<TensorDyn> import_dlpack(ManagedPtr& guard)
{
    const DLTensor& dl = guard->dl_tensor;
    if (dl.device.device_type != kDLCPU)
        return make_error(ErrorCode::NotSupported,
                          "DLPack tensor lives on device type " +
                              std::to_string(int(dl.device.device_type)) +
                              "; only kDLCPU (1) memory can be wrapped without a copy");
    if (dl.ndim <= 0)
        return make_error(ErrorCode::InvalidShape,
                          "DLPack tensor has ndim " + std::to_string(dl.ndim) +
                              "; edgetensor tensors have at least one dimension");
    if (!dl.shape)
        return make_error(ErrorCode::InvalidArgument, "DLPack tensor has a null shape array");
    if (!dl.data)
        return make_error(ErrorCode::InvalidArgument, "DLPack tensor has a null data pointer");
    auto dtype = from_dl_dtype(dl.dtype);
    if (!dtype)
        return unexpected(std::move(dtype).error());
    const size_t elem = dtype_size(*dtype);
    const size_t n = size_t(dl.ndim);

    std::vector<uint64_t> shape(n);
    std::vector<int64_t> byte_strides(n);
    int64_t tight = int64_t(elem);
    for (size_t k = n; k-- > 0;) {
        if (dl.shape[k] <= 0)
            return make_error(ErrorCode::InvalidShape,
                              "DLPack tensor dimension " + std::to_string(k) + " is " +
                                  std::to_string(dl.shape[k]) + " (empty tensors are refused)");
        shape[k] = uint64_t(dl.shape[k]);
        int64_t s = 0;
        if (dl.strides) {
            if (__builtin_mul_overflow(dl.strides[k], int64_t(elem), &s))
                return make_error(ErrorCode::NotSupported, "DLPack stride " +
                                                               std::to_string(dl.strides[k]) +
                                                               " elements overflows in bytes");
        } else {
            s = tight;
        }
        byte_strides[k] = s;
        if (!dl.strides && __builtin_mul_overflow(tight, dl.shape[k], &tight))
            return make_error(ErrorCode::InvalidShape, "DLPack tensor shape overflows");
    }
    auto layout = detail::check_layout(shape, byte_strides, elem, ErrorCode::NotSupported,
                                       "DLPack tensor is not representable");
    if (!layout)
        return unexpected(std::move(layout).error());

    uint8_t* base = static_cast<uint8_t*>(dl.data) + dl.byte_offset;
    if (reinterpret_cast<uintptr_t>(base) % elem != 0)
        return make_error(ErrorCode::NotSupported,
                          "DLPack data + byte_offset is not aligned to the " +
                              std::to_string(elem) + "-byte element size");

    auto storage = std::make_shared<DlpackStorage>(std::move(guard), base, layout->extent);
    Shape sh(shape.begin(), shape.end());
    std::vector<ptrdiff_t> st(byte_strides.begin(), byte_strides.end());
    return detail::TensorAccess::wrap(std::move(storage), *dtype, std::move(sh), std::move(st), 0,
                                      kImportName);
}

} // namespace

Result<DLManagedTensor*> TensorDyn::to_dlpack(CpuAccess access) const
{
    if (!is_valid())
        return make_error(ErrorCode::InvalidArgument, "cannot export an empty tensor to DLPack");
    if (access == CpuAccess::None)
        return make_error(ErrorCode::InvalidArgument,
                          "DLPack hands out host memory; CpuAccess::None cannot be exported");
    DLDataType dt{};
    if (!to_dl_dtype(dtype_, &dt))
        return make_error(ErrorCode::NotSupported, "dtype has no DLPack equivalent");
    if (is_image() && plane_count() == 2) {
        if (!detail::chroma_plane_is_contiguous(*this))
            return make_error(ErrorCode::NotSupported,
                              "this semi-planar image keeps its chroma plane in a separate "
                              "buffer; DLPack describes one block of memory, export each plane");
    }
    const size_t elem = dtype_size(dtype_);
    for (size_t i = 0; i < strides_.size(); ++i)
        if (strides_[i] % ptrdiff_t(elem) != 0)
            return make_error(ErrorCode::NotSupported,
                              "stride " + std::to_string(i) + " (" + std::to_string(strides_[i]) +
                                  " bytes) is not a whole number of " +
                                  std::string(dtype_name(dtype_)) +
                                  " elements; DLPack strides count elements");
    try {
        auto ctx = std::make_unique<ExportContext>();
        ctx->tensor = *this;
        ctx->shape.assign(shape_.begin(), shape_.end());
        ctx->strides.reserve(strides_.size());
        for (ptrdiff_t s : strides_)
            ctx->strides.push_back(int64_t(s / ptrdiff_t(elem)));
        auto map = map_raw(access);
        if (!map)
            return unexpected(std::move(map).error());
        ctx->map = std::move(*map);

        DLTensor& dl = ctx->managed.dl_tensor;
        dl.data = ctx->map.bytes();
        dl.device = DLDevice{kDLCPU, 0};
        dl.ndim = int(ctx->shape.size());
        dl.dtype = dt;
        dl.shape = ctx->shape.data();
        dl.strides = ctx->strides.data();
        dl.byte_offset = 0;
        ctx->managed.manager_ctx = ctx.get();
        ctx->managed.deleter = &ExportContext::deleter;
        return &ctx.release()->managed;
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed, "out of memory exporting to DLPack");
    }
}

Result<TensorDyn> TensorDyn::from_dlpack(DLManagedTensor* managed)
{
    if (!managed)
        return make_error(ErrorCode::InvalidArgument, "from_dlpack: null DLManagedTensor");
    // From here on the producer's deleter runs exactly once: through the guard when this
    // call fails (or throws), through the storage when the last tensor drops.
    ManagedPtr guard(managed);
    try {
        return import_dlpack(guard);
    } catch (const std::bad_alloc&) {
        return make_error(ErrorCode::AllocationFailed, "out of memory importing a DLPack tensor");
    }
}

} // namespace edgetensor
