/* SPDX-License-Identifier: MIT */
/*
 * The edgetensor C API: opaque, reference-counted tensor handles for C consumers (NPU
 * runtimes, camera SDKs, language bindings).
 *
 * Conventions:
 *  - Every fallible call returns 0 on success or a negative errno value on failure
 *    (-EINVAL bad argument or descriptor, -ERANGE region/batch out of bounds, -ENOSPC too
 *    small, -ENOTSUP not supported, -ENOMEM allocation, -ENODEV no provider, -EMEDIUMTYPE
 *    fd of an unknown buffer type, -ENOTCONN the GL context of a PBO tensor is gone, -EIO a
 *    device runtime refused a call, or the errno of a failed system call).
 *    edgetensor_last_error() then returns a sentence naming the problem, and
 *    edgetensor_last_error_code() the edgetensor::ErrorCode; both are per thread.
 *  - Handles start with one reference; edgetensor_retain() adds one, edgetensor_release()
 *    drops one and frees the handle with the last. Copies made by view/batch share storage.
 *  - Functions that take an fd take ownership of it, also when they fail. Functions that
 *    return an fd through `int*` hand ownership to the caller.
 *  - No C++ exception ever leaves these functions.
 */

#ifndef EDGETENSOR_EDGETENSOR_H
#define EDGETENSOR_EDGETENSOR_H

#include "edgetensor/tensor_desc.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct DLManagedTensor; /* <dlpack/dlpack.h>; not needed unless the DLPack calls are used */

typedef struct edgetensor_tensor edgetensor_tensor;
typedef struct edgetensor_mapping edgetensor_mapping;

/* Memory selection for the allocating calls; EDGETENSOR_MEMORY_AUTO walks the chain. */
#define EDGETENSOR_MEMORY_AUTO (-1)
#define EDGETENSOR_MEMORY_MEM 0
#define EDGETENSOR_MEMORY_DMA 1
#define EDGETENSOR_MEMORY_SHM 2

/* CPU access (edgetensor::CpuAccess). */
#define EDGETENSOR_ACCESS_NONE 0u
#define EDGETENSOR_ACCESS_READ 1u
#define EDGETENSOR_ACCESS_WRITE 2u
#define EDGETENSOR_ACCESS_READ_WRITE 3u

/* The message of the last failure on this thread ("" when none); valid until the next
 * failing call on the same thread. */
const char* edgetensor_last_error(void);
/* The edgetensor::ErrorCode of the last failure on this thread, 0 when none. */
int edgetensor_last_error_code(void);

/* Allocates a generic tensor of `ndim` dims (dtype: EDGETENSOR_DTYPE_*). */
int edgetensor_create(uint32_t dtype, size_t ndim, const uint64_t* shape, int memory,
                      const char* name, edgetensor_tensor** out);
/* Allocates an image (format: EDGETENSOR_FORMAT_*, access: EDGETENSOR_ACCESS_*). */
int edgetensor_image(uint32_t width, uint32_t height, uint32_t format, uint32_t dtype,
                     uint32_t access, int memory, const char* name, edgetensor_tensor** out);
/* Adopts `fd` (DMA-BUF or memfd/shm) as a contiguous tensor; takes ownership of `fd`. */
int edgetensor_from_fd(int fd, uint32_t dtype, size_t ndim, const uint64_t* shape,
                       edgetensor_tensor** out);
/* Validates an untrusted descriptor and adopts `fd` (-1 when none); takes ownership of `fd`. */
int edgetensor_from_desc(const EdgeTensorDesc* desc, int fd, edgetensor_tensor** out);

edgetensor_tensor* edgetensor_retain(edgetensor_tensor* t);
void edgetensor_release(edgetensor_tensor* t);

/* Fills `out`; its handle is borrowed (valid while any handle sharing the storage lives). */
int edgetensor_describe(const edgetensor_tensor* t, EdgeTensorDesc* out);
/* A new CLOEXEC fd of the storage, owned by the caller. -ENOTSUP for heap memory. */
int edgetensor_clone_fd(const edgetensor_tensor* t, int* out_fd);

uint32_t edgetensor_ndim(const edgetensor_tensor* t);
/* Copies min(ndim, max) dims of the shape (elements) and byte strides; either may be NULL. */
int edgetensor_shape(const edgetensor_tensor* t, uint64_t* shape, int64_t* strides, size_t max);
uint32_t edgetensor_dtype(const edgetensor_tensor* t);
/* EDGETENSOR_MEMORY_*; -1 for NULL. */
int edgetensor_memory(const edgetensor_tensor* t);

/* Maps for CPU access; the data pointer addresses the first element of the window. */
int edgetensor_map(const edgetensor_tensor* t, uint32_t access, edgetensor_mapping** out);
void* edgetensor_map_data(const edgetensor_mapping* m);
size_t edgetensor_map_size(const edgetensor_mapping* m);
/* Ends the CPU access (DMA-BUF sync) and frees the map. NULL is ignored. */
void edgetensor_unmap(edgetensor_mapping* m);

/* Zero-copy sub-rectangle / batch element; the result shares storage with `t`. */
int edgetensor_view(const edgetensor_tensor* t, size_t x, size_t y, size_t width, size_t height,
                    edgetensor_tensor** out);
int edgetensor_batch(const edgetensor_tensor* t, size_t n, edgetensor_tensor** out);

/* DLPack 0.6 (kDLCPU). The exported tensor keeps the map and storage alive until its deleter
 * runs. from_dlpack takes ownership of `managed`: its deleter runs exactly once, when the last
 * handle is released, or before this call returns when it fails. */
int edgetensor_to_dlpack(const edgetensor_tensor* t, uint32_t access, struct DLManagedTensor** out);
int edgetensor_from_dlpack(struct DLManagedTensor* managed, edgetensor_tensor** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EDGETENSOR_EDGETENSOR_H */
