// SPDX-License-Identifier: MIT

#include "gl/pbo_storage.hpp"

#include "cuda/cuda_api.hpp"
#include "log.hpp"

#include "edgetensor/pixel_format.hpp"

#include <cstring>
#include <limits>

namespace edgetensor::detail::gl
{
namespace
{
// GL_COPY_WRITE_BUFFER: a binding point no draw or pixel transfer of ours uses, so binding a
// PBO there for a map leaves the converter's pack/unpack bindings alone.
constexpr GLenum kMapTarget = GL_COPY_WRITE_BUFFER;
} // namespace

struct PboStorage::CudaRegistration {
    CudaRegistration(const cuda::Api* a, std::string n) : api(a), name(std::move(n)) {}
    const cuda::Api* api;
    std::string name;
    std::mutex mu;
    cuda::cudaGraphicsResource_t resource = nullptr; // guarded by mu
    uint64_t hook = 0;                               // set once, on the GL thread

    /// On the GL thread, while the buffer still exists.
    void unregister() noexcept
    {
        std::lock_guard lock(mu);
        if (!resource)
            return;
        const cuda::cudaError_t e = api->cudaGraphicsUnregisterResource(resource);
        if (e != cuda::cudaSuccess)
            ET_LOG_ERROR("cuda", "cudaGraphicsUnregisterResource of PBO tensor '%s' failed with %s",
                         name.c_str(), cuda::error_text(*api, e).c_str());
        resource = nullptr;
    }
    cuda::cudaGraphicsResource_t get() noexcept
    {
        std::lock_guard lock(mu);
        return resource;
    }
};

Result<std::shared_ptr<PboStorage>> PboStorage::create(const std::shared_ptr<Worker>& worker,
                                                       size_t bytes, CpuAccess access,
                                                       std::string name)
{
    if (bytes == 0)
        return make_error(ErrorCode::InvalidShape, "cannot allocate a zero-byte PBO tensor");
    const size_t alloc = align_up(bytes, kDmaRowAlignment);
    if (alloc < bytes || alloc > size_t(std::numeric_limits<GLsizeiptr>::max()))
        return make_error(ErrorCode::AllocationFailed, "PBO size overflows");
    auto buf = worker->call<GLuint>([&]() -> Result<GLuint> {
        const Api& gl = worker->gl();
        GLuint b = 0;
        gl.glGenBuffers(1, &b);
        gl.glBindBuffer(kMapTarget, b);
        gl.glBufferData(kMapTarget, GLsizeiptr(alloc), nullptr, GL_DYNAMIC_READ);
        GLenum e = worker->take_gl_error();
        void* p = e == GL_NO_ERROR
                      ? gl.glMapBufferRange(kMapTarget, 0, GLsizeiptr(alloc),
                                            GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT)
                      : nullptr;
        if (p) {
            std::memset(p, 0, alloc);
            gl.glUnmapBuffer(kMapTarget);
        }
        if (e == GL_NO_ERROR)
            e = worker->take_gl_error();
        gl.glBindBuffer(kMapTarget, 0);
        if (e != GL_NO_ERROR || !p) {
            gl.glDeleteBuffers(1, &b);
            return make_error(ErrorCode::AllocationFailed,
                              "cannot allocate a " + std::to_string(alloc) +
                                  "-byte pixel buffer object (" +
                                  gl_error_name(e == GL_NO_ERROR ? GL_OUT_OF_MEMORY : e) + ")");
        }
        return b;
    });
    if (!buf)
        return unexpected(std::move(buf).error());
    ET_LOG_TRACE("gl", "PBO %u of %zu bytes on context %llu", *buf, alloc,
                 static_cast<unsigned long long>(worker->serial()));
    auto* s = new (std::nothrow)
        PboStorage(worker, worker->serial(), *buf, bytes, access, std::move(name));
    if (!s) {
        const GLuint b = *buf;
        worker->post([w = worker.get(), b] { w->gl().glDeleteBuffers(1, &b); });
        return make_error(ErrorCode::AllocationFailed, "out of memory");
    }
    return std::shared_ptr<PboStorage>(s);
}

PboStorage::~PboStorage()
{
    // A dead context took its buffers with it; a live one frees this one asynchronously.
    // The CUDA registration is dropped first, on the GL thread, while the buffer exists; when
    // the context has gone its shutdown hook did that before destroying it.
    if (auto w = worker_.lock()) {
        const GLuint b = buffer_;
        w->post([raw = w.get(), b, reg = std::move(cuda_reg_)] {
            if (reg) {
                reg->unregister();
                raw->remove_shutdown_hook(reg->hook);
            }
            raw->gl().glDeleteBuffers(1, &b);
        });
    }
}

Result<uint8_t*> PboStorage::begin_cpu_access(CpuAccess)
{
    std::lock_guard lock(mu_);
    if (cuda_maps_.load(std::memory_order_relaxed) > 0)
        return make_error(ErrorCode::InvalidArgument,
                          "PBO tensor '" + name_ +
                              "' is mapped for CUDA (a CudaMap of it lives); release it before "
                              "mapping the tensor for the CPU");
    if (maps_.load(std::memory_order_relaxed) > 0) {
        maps_.fetch_add(1, std::memory_order_acq_rel);
        return mapped_;
    }
    auto w = worker_.lock();
    if (!w)
        return disconnected("mapping PBO tensor '" + name_ + "'");
    // Read and write whatever the request: nested maps of other directions share this one.
    auto p = w->call<uint8_t*>([&]() -> Result<uint8_t*> {
        const Api& gl = w->gl();
        gl.glBindBuffer(kMapTarget, buffer_);
        void* m = gl.glMapBufferRange(kMapTarget, 0, GLsizeiptr(align_up(capacity_, 64)),
                                      GL_MAP_READ_BIT | GL_MAP_WRITE_BIT);
        const GLenum e = w->take_gl_error();
        gl.glBindBuffer(kMapTarget, 0);
        if (!m)
            return make_error(ErrorCode::Device, "glMapBufferRange of PBO tensor '" + name_ +
                                                     "' failed (" + gl_error_name(e) + ")");
        return static_cast<uint8_t*>(m);
    });
    if (!p)
        return unexpected(std::move(p).error());
    mapped_ = *p;
    hold_ = std::move(w);
    maps_.store(1, std::memory_order_release);
    return mapped_;
}

void PboStorage::end_cpu_access(CpuAccess) noexcept
{
    std::shared_ptr<Worker> release;
    {
        std::lock_guard lock(mu_);
        if (maps_.load(std::memory_order_relaxed) <= 0)
            return;
        if (maps_.fetch_sub(1, std::memory_order_acq_rel) != 1)
            return;
        release = std::move(hold_);
        mapped_ = nullptr;
        const GLuint b = buffer_;
        auto r = release->call<bool>([&]() -> Result<bool> {
            const Api& gl = release->gl();
            gl.glBindBuffer(kMapTarget, b);
            const GLboolean ok = gl.glUnmapBuffer(kMapTarget);
            gl.glBindBuffer(kMapTarget, 0);
            return ok == GL_TRUE;
        });
        if (!r || !*r)
            ET_LOG_WARNING("gl",
                           "glUnmapBuffer of PBO tensor '%s' reported corruption; its contents "
                           "are undefined",
                           name_.c_str());
    }
    // `release` may be the last owner: the context shuts down here, outside the lock.
}

} // namespace edgetensor::detail::gl

namespace edgetensor::detail::gl
{

Result<void*> PboStorage::begin_cuda_access()
{
    auto cu = cuda::api();
    if (!cu)
        return unexpected(std::move(cu).error());
    const cuda::Api& api = **cu;
    std::lock_guard lock(mu_);
    if (maps_.load(std::memory_order_relaxed) > 0)
        return make_error(ErrorCode::InvalidArgument,
                          "PBO tensor '" + name_ +
                              "' is mapped for the CPU; release its CPU maps before cuda_map()");
    if (cuda_maps_.load(std::memory_order_relaxed) > 0) {
        cuda_maps_.fetch_add(1, std::memory_order_acq_rel);
        return cuda_ptr_;
    }
    auto w = worker_.lock();
    if (!w)
        return disconnected("CUDA-mapping PBO tensor '" + name_ + "'");
    const std::string what = "cuda_map() of PBO tensor '" + name_ + "'";
    // Registration, map and pointer query all need the context current: on its thread.
    auto p = w->call<void*>([&]() -> Result<void*> {
        if (!cuda_reg_) {
            cuda::cudaGraphicsResource_t res = nullptr;
            const cuda::cudaError_t e = api.cudaGraphicsGLRegisterBuffer(
                &res, buffer_, cuda::cudaGraphicsRegisterFlagsNone);
            if (e != cuda::cudaSuccess)
                return cuda::call_failed(api, what, "cudaGraphicsGLRegisterBuffer", e);
            std::shared_ptr<CudaRegistration> reg;
            try {
                reg = std::make_shared<CudaRegistration>(&api, name_);
                reg->resource = res;
                reg->hook = w->add_shutdown_hook([reg] { reg->unregister(); });
            } catch (const std::bad_alloc&) {
                api.cudaGraphicsUnregisterResource(res);
                return make_error(ErrorCode::AllocationFailed, "out of memory");
            }
            cuda_reg_ = std::move(reg);
        }
        cuda::cudaGraphicsResource_t res = cuda_reg_->get();
        cuda::cudaError_t e = api.cudaGraphicsMapResources(1, &res, nullptr);
        if (e != cuda::cudaSuccess)
            return cuda::call_failed(api, what, "cudaGraphicsMapResources", e);
        void* dev = nullptr;
        size_t size = 0;
        e = api.cudaGraphicsResourceGetMappedPointer(&dev, &size, res);
        if (e != cuda::cudaSuccess || size < capacity_) {
            const cuda::cudaError_t u = api.cudaGraphicsUnmapResources(1, &res, nullptr);
            if (u != cuda::cudaSuccess)
                ET_LOG_ERROR("cuda", "%s: cudaGraphicsUnmapResources failed with %s", what.c_str(),
                             cuda::error_text(api, u).c_str());
            if (e != cuda::cudaSuccess)
                return cuda::call_failed(api, what, "cudaGraphicsResourceGetMappedPointer", e);
            return make_error(ErrorCode::InsufficientCapacity,
                              what + ": CUDA maps " + std::to_string(size) + " bytes of a " +
                                  std::to_string(capacity_) + "-byte tensor");
        }
        return dev;
    });
    if (!p)
        return unexpected(std::move(p).error());
    cuda_ptr_ = *p;
    cuda_hold_ = std::move(w);
    cuda_maps_.store(1, std::memory_order_release);
    return cuda_ptr_;
}

void PboStorage::end_cuda_access() noexcept
{
    std::shared_ptr<Worker> release;
    {
        std::lock_guard lock(mu_);
        const int n = cuda_maps_.load(std::memory_order_relaxed);
        if (n <= 0)
            return;
        if (n > 1) {
            cuda_maps_.fetch_sub(1, std::memory_order_acq_rel);
            return;
        }
        release = std::move(cuda_hold_);
        cuda_ptr_ = nullptr;
        CudaRegistration* reg = cuda_reg_.get();
        auto r = release->call<void>([&]() -> Result<void> {
            cuda::cudaGraphicsResource_t res = reg->get();
            const cuda::cudaError_t e = reg->api->cudaGraphicsUnmapResources(1, &res, nullptr);
            if (e != cuda::cudaSuccess)
                return cuda::call_failed(*reg->api, "unmapping PBO tensor '" + name_ + "'",
                                         "cudaGraphicsUnmapResources", e);
            return {};
        });
        if (!r)
            ET_LOG_ERROR("cuda", "%s", r.error().message().c_str());
        // GL may use the buffer again only once CUDA has let go of it.
        cuda_maps_.store(0, std::memory_order_release);
    }
    // `release` may be the last owner: the context shuts down here, outside the lock.
}

} // namespace edgetensor::detail::gl
