// SPDX-License-Identifier: MIT
//
// TensorMemory::Pbo: a tensor's bytes in a GL pixel buffer object of one GL context. The
// storage holds only a weak reference to the context's worker; CPU maps are glMapBufferRange /
// glUnmapBuffer run on the worker's thread, and an open map holds the worker alive.

#pragma once

#include "gl/gl_worker.hpp"
#include "storage.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace edgetensor::detail::gl
{

class PboStorage final : public Storage
{
public:
    /// Creates a zero-filled buffer of `bytes` on `worker` (GL_OUT_OF_MEMORY: AllocationFailed).
    static Result<std::shared_ptr<PboStorage>>
    create(const std::shared_ptr<Worker>& worker, size_t bytes, CpuAccess access, std::string name);
    ~PboStorage() override;

    TensorMemory memory() const noexcept override { return TensorMemory::Pbo; }
    std::string_view provider() const noexcept override { return "gl-pbo"; }
    /// Maps the whole buffer on the GL thread the first time (nested maps share it); fails with
    /// Disconnected once the owning context is gone.
    Result<uint8_t*> begin_cpu_access(CpuAccess access) override;
    void end_cpu_access(CpuAccess access) noexcept override;
    /// Registers the buffer with CUDA the first time (kept until the storage dies) and maps it
    /// while any CUDA map lives (nested maps share the mapping), on the GL thread; refused while
    /// a CPU map is open. An open CUDA map holds the worker alive, as a CPU map does.
    Result<void*> begin_cuda_access() override;
    void end_cuda_access() noexcept override;

    /// The buffer object's name in its context (valid on that context's thread only).
    GLuint buffer() const noexcept { return buffer_; }
    /// The serial of the owning worker (Worker::serial()).
    uint64_t owner_serial() const noexcept { return owner_serial_; }
    /// The owning worker, or null once it has shut down.
    std::shared_ptr<Worker> owner() const noexcept { return worker_.lock(); }
    /// True while a CPU or CUDA map is open (GL may not read or write the buffer then).
    bool is_mapped() const noexcept
    {
        return maps_.load(std::memory_order_acquire) > 0 ||
               cuda_maps_.load(std::memory_order_acquire) > 0;
    }
    /// Who holds the buffer mapped, for messages: "the CPU", "CUDA" or "nobody".
    const char* mapped_by() const noexcept
    {
        return maps_.load(std::memory_order_acquire) > 0        ? "the CPU"
               : cuda_maps_.load(std::memory_order_acquire) > 0 ? "CUDA"
                                                                : "nobody";
    }
    const std::string& name() const noexcept { return name_; }

private:
    PboStorage(std::weak_ptr<Worker> worker, uint64_t serial, GLuint buffer, size_t capacity,
               CpuAccess access, std::string name)
        : Storage(capacity, access), worker_(std::move(worker)), owner_serial_(serial),
          buffer_(buffer), name_(std::move(name))
    {
    }

    std::weak_ptr<Worker> worker_;
    uint64_t owner_serial_;
    GLuint buffer_;
    std::string name_;

    std::mutex mu_; // map transitions
    std::atomic<int> maps_{0};
    uint8_t* mapped_ = nullptr;    // guarded by mu_
    std::shared_ptr<Worker> hold_; // guarded by mu_: keeps the context alive while mapped

    // CUDA. The registration is shared with a shutdown hook of the worker, which drops it
    // before the context (and this buffer with it) is destroyed when the storage outlives it.
    struct CudaRegistration;
    std::shared_ptr<CudaRegistration> cuda_reg_; // guarded by mu_
    std::atomic<int> cuda_maps_{0};              // changed under mu_
    void* cuda_ptr_ = nullptr;                   // guarded by mu_
    std::shared_ptr<Worker> cuda_hold_;          // guarded by mu_
};

} // namespace edgetensor::detail::gl
