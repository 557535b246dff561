// SPDX-License-Identifier: MIT
//
// The CUDA runtime entry points edgetensor uses, resolved once per process with dlopen (never
// linked, no CUDA header needed to build). The few types and constants are declared here with
// the layout of CUDA's own driver_types.h / cuda_gl_interop.h (the structs with the trailing
// reserved words of CUDA 12 and later: older runtimes read a prefix of them, and the reserved
// words must be zero for newer ones).

#pragma once

#include "edgetensor/cuda.hpp"
#include "edgetensor/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace edgetensor::detail::cuda
{

using cudaError_t = int; // enum cudaError
constexpr cudaError_t cudaSuccess = 0;
constexpr cudaError_t cudaErrorNoDevice = 100;

using GLuint = unsigned int;
struct cudaGraphicsResource;
using cudaGraphicsResource_t = cudaGraphicsResource*;
struct CUexternalMemory_st;
using cudaExternalMemory_t = CUexternalMemory_st*;
struct CUstream_st;
using cudaStream_t = CUstream_st*;

constexpr unsigned int cudaGraphicsRegisterFlagsNone = 0;
constexpr int cudaExternalMemoryHandleTypeOpaqueFd = 1; // enum cudaExternalMemoryHandleType
// CUDA defines these two as macros: ours are named apart so both headers can be included.
constexpr unsigned int kHostRegisterMapped = 0x02;   // cudaHostRegisterMapped
constexpr unsigned int kHostRegisterReadOnly = 0x08; // cudaHostRegisterReadOnly
constexpr cudaError_t cudaErrorHostMemoryAlreadyRegistered = 712;

enum cudaMemcpyKind : int {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

struct cudaExternalMemoryHandleDesc {
    int type; // enum cudaExternalMemoryHandleType
    union {
        int fd;
        struct {
            void* handle;
            const void* name;
        } win32;
        const void* nvSciBufObject;
    } handle;
    unsigned long long size;
    unsigned int flags;
    unsigned int reserved[16];
};

struct cudaExternalMemoryBufferDesc {
    unsigned long long offset;
    unsigned long long size;
    unsigned int flags;
    unsigned int reserved[16];
};

static_assert(sizeof(cudaExternalMemoryHandleDesc) == 104 &&
                  offsetof(cudaExternalMemoryHandleDesc, handle) == 8 &&
                  offsetof(cudaExternalMemoryHandleDesc, size) == 24 &&
                  offsetof(cudaExternalMemoryHandleDesc, flags) == 32,
              "cudaExternalMemoryHandleDesc must have CUDA's layout (LP64)");
static_assert(sizeof(cudaExternalMemoryBufferDesc) == 88 &&
                  offsetof(cudaExternalMemoryBufferDesc, flags) == 16,
              "cudaExternalMemoryBufferDesc must have CUDA's layout (LP64)");

// X(return, name, parameters): every entry point the table resolves; all are required.
#define ET_CUDA_FUNCS(X)                                                                           \
    X(cudaError_t, cudaGetDeviceCount, (int* count))                                               \
    X(const char*, cudaGetErrorName, (cudaError_t error))                                          \
    X(const char*, cudaGetErrorString, (cudaError_t error))                                        \
    X(cudaError_t, cudaGraphicsGLRegisterBuffer,                                                   \
      (cudaGraphicsResource_t * resource, GLuint buffer, unsigned int flags))                      \
    X(cudaError_t, cudaGraphicsUnregisterResource, (cudaGraphicsResource_t resource))              \
    X(cudaError_t, cudaGraphicsMapResources,                                                       \
      (int count, cudaGraphicsResource_t* resources, cudaStream_t stream))                         \
    X(cudaError_t, cudaGraphicsUnmapResources,                                                     \
      (int count, cudaGraphicsResource_t* resources, cudaStream_t stream))                         \
    X(cudaError_t, cudaGraphicsResourceGetMappedPointer,                                           \
      (void** dev_ptr, size_t* size, cudaGraphicsResource_t resource))                             \
    X(cudaError_t, cudaImportExternalMemory,                                                       \
      (cudaExternalMemory_t * ext_mem, const cudaExternalMemoryHandleDesc* desc))                  \
    X(cudaError_t, cudaExternalMemoryGetMappedBuffer,                                              \
      (void** dev_ptr, cudaExternalMemory_t ext_mem, const cudaExternalMemoryBufferDesc* desc))    \
    X(cudaError_t, cudaDestroyExternalMemory, (cudaExternalMemory_t ext_mem))                      \
    X(cudaError_t, cudaFree, (void* dev_ptr))                                                      \
    X(cudaError_t, cudaHostRegister, (void* ptr, size_t size, unsigned int flags))                 \
    X(cudaError_t, cudaHostUnregister, (void* ptr))                                                \
    X(cudaError_t, cudaHostGetDevicePointer, (void** dev_ptr, void* host_ptr, unsigned int flags)) \
    X(cudaError_t, cudaMemcpy, (void* dst, const void* src, size_t count, cudaMemcpyKind kind))    \
    X(cudaError_t, cudaDeviceSynchronize, ())

struct Api {
#define ET_CUDA_DECLARE(ret, name, args) ret(*name) args = nullptr;
    ET_CUDA_FUNCS(ET_CUDA_DECLARE)
#undef ET_CUDA_DECLARE
    /// Optional (informational only).
    cudaError_t (*cudaRuntimeGetVersion)(int* version) = nullptr;
};

/// The table, once libcudart is loaded and a device answers; otherwise the reason
/// (ErrorCode::Unavailable). Loads on the first call of the process, never again.
Result<const Api*> api();

/// What was loaded (valid when api() succeeds).
const CudaInfo& info();

/// "cudaErrorInvalidValue (invalid argument)", through the table when it is loaded.
std::string error_text(const Api& a, cudaError_t e);

/// Io error for a failed CUDA call: "<what>: <call> failed with <error_text>".
Unexpected call_failed(const Api& a, std::string_view what, const char* call, cudaError_t e);

/// How many times this process called dlopen() for the runtime (tests: never more than the
/// one load, whatever happens afterwards).
uint64_t dlopen_calls() noexcept;

} // namespace edgetensor::detail::cuda
