// SPDX-License-Identifier: MIT
//
// The C API (edgetensor/edgetensor.h): opaque refcounted handles over TensorDyn. Every entry
// point catches everything at the boundary; errors become a negative errno plus a per-thread
// message.

#include "edgetensor/edgetensor.h"

#include "edgetensor/tensor_dyn.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <string>

struct edgetensor_tensor {
    explicit edgetensor_tensor(edgetensor::TensorDyn t) : tensor(std::move(t)) {}
    std::atomic<uint32_t> refs{1};
    edgetensor::TensorDyn tensor;
};

struct edgetensor_mapping {
    explicit edgetensor_mapping(edgetensor::RawMap m) : map(std::move(m)) {}
    edgetensor::RawMap map;
};

namespace
{

using edgetensor::ErrorCode;

thread_local std::string t_last_error;
thread_local int t_last_code = 0;

int errno_for(const edgetensor::Error& e)
{
    switch (e.code()) {
    case ErrorCode::InvalidArgument:
    case ErrorCode::InvalidShape:
    case ErrorCode::InvalidDescriptor:
    case ErrorCode::DTypeMismatch:
        return EINVAL;
    case ErrorCode::RegionOutOfBounds:
    case ErrorCode::BatchIndexOutOfBounds:
        return ERANGE;
    case ErrorCode::InsufficientCapacity:
        return ENOSPC;
    case ErrorCode::NotSupported:
        return ENOTSUP;
    case ErrorCode::AllocationFailed:
        return ENOMEM;
    case ErrorCode::Unavailable:
        return ENODEV;
    case ErrorCode::Disconnected:
        return ENOTCONN;
    case ErrorCode::Device:
        return EIO;
    case ErrorCode::UnknownBufferType:
        return EMEDIUMTYPE;
    case ErrorCode::Io:
        return e.sys_errno() > 0 ? e.sys_errno() : EIO;
    }
    return EINVAL;
}

int fail(const edgetensor::Error& e) noexcept
{
    try {
        t_last_error = std::string(edgetensor::error_code_name(e.code())) + ": " + e.message();
    } catch (...) {
        t_last_error.clear();
    }
    t_last_code = int(e.code());
    return -errno_for(e);
}

int fail(ErrorCode code, const char* msg) noexcept
{
    try {
        return fail(edgetensor::Error(code, msg));
    } catch (...) {
        t_last_code = int(code);
        return -EINVAL;
    }
}

/// Runs `body` with every exception turned into an error return.
template <typename F> int guarded(F&& body) noexcept
{
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(ErrorCode::AllocationFailed, "out of memory");
    } catch (const std::exception& e) {
        return fail(ErrorCode::InvalidArgument, e.what());
    } catch (...) {
        return fail(ErrorCode::InvalidArgument, "unexpected internal failure");
    }
}

int emit(edgetensor::Result<edgetensor::TensorDyn> r, edgetensor_tensor** out)
{
    if (!r)
        return fail(r.error());
    *out = new edgetensor_tensor(std::move(*r));
    return 0;
}

std::optional<edgetensor::Shape> make_shape(size_t ndim, const uint64_t* shape)
{
    if (ndim == 0 || !shape)
        return std::nullopt;
    edgetensor::Shape s;
    s.reserve(ndim);
    for (size_t i = 0; i < ndim; ++i) {
        if (shape[i] > SIZE_MAX)
            return std::nullopt;
        s.push_back(size_t(shape[i]));
    }
    return s;
}

int memory_from_int(int memory, std::optional<edgetensor::TensorMemory>* out)
{
    switch (memory) {
    case EDGETENSOR_MEMORY_AUTO:
        out->reset();
        return 0;
    case EDGETENSOR_MEMORY_MEM:
        *out = edgetensor::TensorMemory::Mem;
        return 0;
    case EDGETENSOR_MEMORY_DMA:
        *out = edgetensor::TensorMemory::Dma;
        return 0;
    case EDGETENSOR_MEMORY_SHM:
        *out = edgetensor::TensorMemory::Shm;
        return 0;
    default:
        return fail(ErrorCode::InvalidArgument, "memory must be one of EDGETENSOR_MEMORY_*");
    }
}

int access_from_u32(uint32_t access, edgetensor::CpuAccess* out)
{
    if (access > EDGETENSOR_ACCESS_READ_WRITE)
        return fail(ErrorCode::InvalidArgument, "access must be one of EDGETENSOR_ACCESS_*");
    *out = edgetensor::CpuAccess(access);
    return 0;
}

} // namespace

extern "C" {

const char* edgetensor_last_error(void)
{
    return t_last_error.c_str();
}

int edgetensor_last_error_code(void)
{
    return t_last_code;
}

int edgetensor_create(uint32_t dtype, size_t ndim, const uint64_t* shape, int memory,
                      const char* name, edgetensor_tensor** out)
{
    return guarded([&] {
        if (!out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_create: out is NULL");
        *out = nullptr;
        edgetensor::DType dt{};
        if (!edgetensor::dtype_from_code(dtype, &dt))
            return fail(ErrorCode::InvalidArgument, "edgetensor_create: unknown dtype code");
        const auto s = make_shape(ndim, shape);
        if (!s)
            return fail(ErrorCode::InvalidShape,
                        "edgetensor_create: shape is NULL, empty or too large");
        std::optional<edgetensor::TensorMemory> mem;
        if (int rc = memory_from_int(memory, &mem))
            return rc;
        return emit(edgetensor::TensorDyn::create(dt, *s, mem, name ? name : ""), out);
    });
}

int edgetensor_image(uint32_t width, uint32_t height, uint32_t format, uint32_t dtype,
                     uint32_t access, int memory, const char* name, edgetensor_tensor** out)
{
    return guarded([&] {
        if (!out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_image: out is NULL");
        *out = nullptr;
        edgetensor::DType dt{};
        if (!edgetensor::dtype_from_code(dtype, &dt))
            return fail(ErrorCode::InvalidArgument, "edgetensor_image: unknown dtype code");
        edgetensor::PixelFormat pf{};
        if (!edgetensor::pixel_format_from_code(format, &pf) || pf == edgetensor::PixelFormat::None)
            return fail(ErrorCode::InvalidArgument, "edgetensor_image: unknown pixel format code");
        edgetensor::CpuAccess ca{};
        if (int rc = access_from_u32(access, &ca))
            return rc;
        std::optional<edgetensor::TensorMemory> mem;
        if (int rc = memory_from_int(memory, &mem))
            return rc;
        return emit(edgetensor::TensorDyn::image(width, height, pf, dt, ca, mem, name ? name : ""),
                    out);
    });
}

int edgetensor_from_fd(int fd, uint32_t dtype, size_t ndim, const uint64_t* shape,
                       edgetensor_tensor** out)
{
    edgetensor::UniqueFd owned(fd); // ours from here on, also on every failure
    return guarded([&] {
        if (!out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_from_fd: out is NULL");
        *out = nullptr;
        edgetensor::DType dt{};
        if (!edgetensor::dtype_from_code(dtype, &dt))
            return fail(ErrorCode::InvalidArgument, "edgetensor_from_fd: unknown dtype code");
        const auto s = make_shape(ndim, shape);
        if (!s)
            return fail(ErrorCode::InvalidShape,
                        "edgetensor_from_fd: shape is NULL, empty or too large");
        return emit(edgetensor::TensorDyn::from_fd(std::move(owned), dt, *s), out);
    });
}

int edgetensor_from_desc(const EdgeTensorDesc* desc, int fd, edgetensor_tensor** out)
{
    edgetensor::UniqueFd owned(fd);
    return guarded([&] {
        if (!out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_from_desc: out is NULL");
        *out = nullptr;
        if (!desc)
            return fail(ErrorCode::InvalidArgument, "edgetensor_from_desc: desc is NULL");
        return emit(edgetensor::TensorDyn::from_desc(*desc, std::move(owned)), out);
    });
}

edgetensor_tensor* edgetensor_retain(edgetensor_tensor* t)
{
    if (t)
        t->refs.fetch_add(1, std::memory_order_relaxed);
    return t;
}

void edgetensor_release(edgetensor_tensor* t)
{
    if (t && t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
        delete t;
}

int edgetensor_describe(const edgetensor_tensor* t, EdgeTensorDesc* out)
{
    return guarded([&] {
        if (!t || !out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_describe: NULL argument");
        auto d = t->tensor.describe();
        if (!d)
            return fail(d.error());
        *out = *d;
        return 0;
    });
}

int edgetensor_clone_fd(const edgetensor_tensor* t, int* out_fd)
{
    return guarded([&] {
        if (!t || !out_fd)
            return fail(ErrorCode::InvalidArgument, "edgetensor_clone_fd: NULL argument");
        *out_fd = -1;
        auto fd = t->tensor.clone_fd();
        if (!fd)
            return fail(fd.error());
        *out_fd = fd->release();
        return 0;
    });
}

uint32_t edgetensor_ndim(const edgetensor_tensor* t)
{
    return t ? uint32_t(t->tensor.ndim()) : 0;
}

int edgetensor_shape(const edgetensor_tensor* t, uint64_t* shape, int64_t* strides, size_t max)
{
    return guarded([&] {
        if (!t)
            return fail(ErrorCode::InvalidArgument, "edgetensor_shape: tensor is NULL");
        const size_t n = std::min(max, t->tensor.ndim());
        for (size_t i = 0; i < n; ++i) {
            if (shape)
                shape[i] = t->tensor.shape()[i];
            if (strides)
                strides[i] = t->tensor.strides()[i];
        }
        return 0;
    });
}

uint32_t edgetensor_dtype(const edgetensor_tensor* t)
{
    return t ? uint32_t(t->tensor.dtype()) : 0;
}

int edgetensor_memory(const edgetensor_tensor* t)
{
    if (!t || !t->tensor.is_valid())
        return -1;
    switch (t->tensor.memory()) {
    case edgetensor::TensorMemory::Mem:
        return EDGETENSOR_MEMORY_MEM;
    case edgetensor::TensorMemory::Dma:
        return EDGETENSOR_MEMORY_DMA;
    case edgetensor::TensorMemory::Shm:
        return EDGETENSOR_MEMORY_SHM;
    default:
        return -1;
    }
}

int edgetensor_map(const edgetensor_tensor* t, uint32_t access, edgetensor_mapping** out)
{
    return guarded([&] {
        if (!t || !out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_map: NULL argument");
        *out = nullptr;
        edgetensor::CpuAccess ca{};
        if (int rc = access_from_u32(access, &ca))
            return rc;
        auto m = t->tensor.map_raw(ca);
        if (!m)
            return fail(m.error());
        *out = new edgetensor_mapping(std::move(*m));
        return 0;
    });
}

void* edgetensor_map_data(const edgetensor_mapping* m)
{
    return m ? m->map.bytes() : nullptr;
}

size_t edgetensor_map_size(const edgetensor_mapping* m)
{
    return m ? m->map.size_bytes() : 0;
}

void edgetensor_unmap(edgetensor_mapping* m)
{
    delete m;
}

int edgetensor_view(const edgetensor_tensor* t, size_t x, size_t y, size_t width, size_t height,
                    edgetensor_tensor** out)
{
    return guarded([&] {
        if (!t || !out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_view: NULL argument");
        *out = nullptr;
        return emit(t->tensor.view(edgetensor::Region{x, y, width, height}), out);
    });
}

int edgetensor_batch(const edgetensor_tensor* t, size_t n, edgetensor_tensor** out)
{
    return guarded([&] {
        if (!t || !out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_batch: NULL argument");
        *out = nullptr;
        return emit(t->tensor.batch(n), out);
    });
}

int edgetensor_to_dlpack(const edgetensor_tensor* t, uint32_t access, DLManagedTensor** out)
{
    return guarded([&] {
        if (!t || !out)
            return fail(ErrorCode::InvalidArgument, "edgetensor_to_dlpack: NULL argument");
        *out = nullptr;
        edgetensor::CpuAccess ca{};
        if (int rc = access_from_u32(access, &ca))
            return rc;
        auto r = t->tensor.to_dlpack(ca);
        if (!r)
            return fail(r.error());
        *out = *r;
        return 0;
    });
}

int edgetensor_from_dlpack(DLManagedTensor* managed, edgetensor_tensor** out)
{
    return guarded([&] {
        if (!out) {
            // Ownership was promised: honour it even when the caller got the call wrong.
            (void)edgetensor::TensorDyn::from_dlpack(managed);
            return fail(ErrorCode::InvalidArgument, "edgetensor_from_dlpack: out is NULL");
        }
        *out = nullptr;
        return emit(edgetensor::TensorDyn::from_dlpack(managed), out);
    });
}

} // extern "C"
