// SPDX-License-Identifier: MIT
//
// Host pages given to CUDA in place: cudaHostRegister page-locks them and maps them into the
// device's address space, so a kernel (or a copy engine) reads and writes the tensor's own
// bytes over the bus. On a discrete NVIDIA GPU this is the zero-copy path for memory the CPU
// owns: its driver refuses DMA-BUFs as external memory (docs/cuda.md).

#include "cuda/cuda_import.hpp"
#include "dma/dma_internal.hpp"
#include "log.hpp"

#include <new>

namespace edgetensor::detail::cuda
{

Result<std::unique_ptr<HostRegistration>>
HostRegistration::create(void* base, size_t bytes, bool read_only, std::string_view what)
{
    auto a = api();
    if (!a)
        return unexpected(std::move(a).error());
    const Api& cu = **a;
    const unsigned flags = kHostRegisterMapped | (read_only ? kHostRegisterReadOnly : 0u);
    cudaError_t e = cu.cudaHostRegister(base, bytes, flags);
    if (e != cudaSuccess) {
        Unexpected u = call_failed(cu, what, "cudaHostRegister", e);
        if (e != cudaErrorHostMemoryAlreadyRegistered)
            return u;
        return make_error(u.error.code(),
                          u.error.message() +
                              ": these pages are registered with CUDA already (a cudaHostRegister "
                              "of the process's own?); CUDA registers a page once, so unregister "
                              "it and let cuda_map() register the tensor");
    }
    void* dev = nullptr;
    e = cu.cudaHostGetDevicePointer(&dev, base, 0);
    if (e != cudaSuccess) {
        const cudaError_t u = cu.cudaHostUnregister(base);
        if (u != cudaSuccess)
            ET_LOG_ERROR("cuda", "%.*s: cudaHostUnregister failed with %s", int(what.size()),
                         what.data(), error_text(cu, u).c_str());
        return call_failed(cu, what, "cudaHostGetDevicePointer", e);
    }
    ET_LOG_DEBUG("cuda", "%.*s: %zu bytes of host memory registered%s, device pointer %p",
                 int(what.size()), what.data(), bytes, read_only ? " read-only" : "", dev);
    auto* out = new (std::nothrow) HostRegistration(&cu, base, dev);
    if (!out) {
        cu.cudaHostUnregister(base);
        return make_error(ErrorCode::AllocationFailed, "out of memory");
    }
    return std::unique_ptr<HostRegistration>(out);
}

HostRegistration::~HostRegistration()
{
    const cudaError_t e = api_->cudaHostUnregister(base_);
    if (e != cudaSuccess)
        ET_LOG_ERROR("cuda", "cudaHostUnregister of a tensor's pages failed with %s",
                     error_text(*api_, e).c_str());
}

Result<void*> HostAccess::begin(void* base, size_t bytes, bool read_only, std::string_view what)
{
    std::lock_guard lock(mu_);
    if (!reg_) {
        auto r = HostRegistration::create(base, dma_round_to_pages(bytes), read_only, what);
        if (!r)
            return unexpected(std::move(r).error());
        reg_ = std::move(*r);
    }
    return reg_->device_ptr();
}

void HostAccess::reset() noexcept
{
    std::lock_guard lock(mu_);
    reg_.reset();
}

} // namespace edgetensor::detail::cuda
