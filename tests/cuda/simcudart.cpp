// SPDX-License-Identifier: MIT
//
// A simulated CUDA runtime for the tests: the entry points edgetensor resolves from libcudart,
// exported under the same names, over host memory, so the cuda suite runs on machines without
// CUDA through the library's own dlopen path (EDGETENSOR_CUDART=<this library>).
//
// It enforces the contract a real driver assumes and counts every breach as a violation that
// tests read (simcuda_violations): GL interop calls need a current GL context (the GL thread's)
// and a GL buffer that still exists, registered once, mapped before its pointer is asked for or
// used, unmapped before it is unregistered; an imported fd is owned by the runtime only when the
// import succeeds (it stays open until cudaDestroyExternalMemory, and must still be the same
// file then), mapped buffers are freed before their memory is destroyed, registered host memory
// is whole mapped pages registered once (no overlap) and still mapped when it is unregistered,
// and cudaMemcpy reaches only device memory that is mapped now.
//
// "Device memory" is host memory: a mapped GL buffer is glMapBufferRange'd for the length of
// the CUDA mapping, an imported fd is mmap'd, registered host memory is its own device pointer
// (as with CUDA's unified addressing), so values written on one side are read on the other.
//
// Errors on demand: SIMCUDA_FAIL="cudaFoo=ERR[,cudaBar=ERR]" fails every call of those entry
// points with cudaError ERR; simcuda_fail() fails the next N calls of one. SIMCUDA_DEVICES=N
// sets what cudaGetDeviceCount reports (default 1; 0 answers cudaErrorNoDevice).

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace
{

// CUDA's types and codes, declared from CUDA's headers (independently of the library's own
// declarations, so a layout mistake on either side shows up as a failed import).
using cudaError_t = int;
constexpr cudaError_t cudaSuccess = 0;
constexpr cudaError_t cudaErrorInvalidValue = 1;
constexpr cudaError_t cudaErrorMemoryAllocation = 2;
constexpr cudaError_t cudaErrorNoDevice = 100;
constexpr cudaError_t cudaErrorMapBufferObjectFailed = 205;
constexpr cudaError_t cudaErrorUnmapBufferObjectFailed = 206;
constexpr cudaError_t cudaErrorAlreadyMapped = 208;
constexpr cudaError_t cudaErrorNotMapped = 211;
constexpr cudaError_t cudaErrorInvalidGraphicsContext = 219;
constexpr cudaError_t cudaErrorOperatingSystem = 304;
constexpr cudaError_t cudaErrorInvalidResourceHandle = 400;
constexpr cudaError_t cudaErrorHostMemoryAlreadyRegistered = 712;
constexpr cudaError_t cudaErrorHostMemoryNotRegistered = 713;
constexpr cudaError_t cudaErrorNotSupported = 801;
constexpr unsigned kHostRegisterKnownFlags = 0x01 | 0x02 | 0x04 | 0x08; // Portable..ReadOnly
constexpr cudaError_t cudaErrorUnknown = 999;

struct ExternalMemoryHandleDesc {
    int type;
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
struct ExternalMemoryBufferDesc {
    unsigned long long offset;
    unsigned long long size;
    unsigned int flags;
    unsigned int reserved[16];
};
static_assert(sizeof(ExternalMemoryHandleDesc) == 104, "CUDA layout");
static_assert(sizeof(ExternalMemoryBufferDesc) == 88, "CUDA layout");

// The GL we need, resolved from the process's libEGL / libGLESv2 (no GL headers needed).
using GLuint = unsigned int;
using GLenum = unsigned int;
using GLint = int;
constexpr GLenum kCopyReadBuffer = 0x8F36; // GL_COPY_READ_BUFFER (and its binding query)
constexpr GLenum kBufferSize = 0x8764;     // GL_BUFFER_SIZE
constexpr unsigned kMapRead = 0x1, kMapWrite = 0x2;

struct Gl {
    void* (*eglGetCurrentContext)() = nullptr;
    unsigned char (*glIsBuffer)(GLuint) = nullptr;
    void (*glBindBuffer)(GLenum, GLuint) = nullptr;
    void (*glGetIntegerv)(GLenum, GLint*) = nullptr;
    void (*glGetBufferParameteriv)(GLenum, GLenum, GLint*) = nullptr;
    void* (*glMapBufferRange)(GLenum, intptr_t, intptr_t, unsigned) = nullptr;
    unsigned char (*glUnmapBuffer)(GLenum) = nullptr;
    bool ok = false;
};

struct Resource {
    GLuint buffer = 0;
    void* context = nullptr;
    size_t size = 0;
    void* ptr = nullptr; // while mapped
};
struct Import {
    int fd = -1;
    dev_t dev = 0;
    ino_t ino = 0;
    uint8_t* base = nullptr;
    size_t size = 0;
    int buffers = 0;
};
struct Buffer {
    Import* import = nullptr;
    size_t size = 0;
};

struct Registration {
    size_t size = 0;
    unsigned flags = 0;
};

struct State {
    std::mutex mu;
    bool configured = false;
    int devices = 1;
    std::map<std::string, int> always_fail;               // from SIMCUDA_FAIL
    std::map<std::string, std::pair<int, int>> next_fail; // name -> (error, calls left)
    std::map<std::string, int> calls;
    std::map<std::string, long> threads;
    int violations = 0;
    std::string last_violation;
    std::map<Resource*, bool> resources;
    std::map<Import*, bool> imports;
    std::map<uint8_t*, Buffer> buffers;
    std::map<uint8_t*, Registration> registered; // host ranges, by base
    std::map<uint8_t*, size_t> allocations;      // cudaMalloc
    unsigned last_register_flags = 0;
    int last_import_fd = -1;
    Gl gl;
};

State& st()
{
    static State* s = new State(); // never destroyed: runtime calls may come at exit
    return *s;
}

void violation(State& s, const std::string& what)
{
    ++s.violations;
    s.last_violation = what;
    std::fprintf(stderr, "simcudart: CONTRACT VIOLATION: %s\n", what.c_str());
}

void configure(State& s)
{
    if (s.configured)
        return;
    s.configured = true;
    if (const char* d = std::getenv("SIMCUDA_DEVICES"))
        s.devices = std::atoi(d);
    if (const char* f = std::getenv("SIMCUDA_FAIL")) {
        std::string spec(f);
        size_t pos = 0;
        while (pos < spec.size()) {
            size_t end = spec.find(',', pos);
            if (end == std::string::npos)
                end = spec.size();
            const std::string item = spec.substr(pos, end - pos);
            const size_t eq = item.find('=');
            if (eq != std::string::npos)
                s.always_fail[item.substr(0, eq)] = std::atoi(item.c_str() + eq + 1);
            pos = end + 1;
        }
    }
    void* egl = ::dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    void* gles = ::dlopen("libGLESv2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (egl && gles) {
        Gl& g = s.gl;
        g.eglGetCurrentContext =
            reinterpret_cast<void* (*)()>(::dlsym(egl, "eglGetCurrentContext"));
        g.glIsBuffer = reinterpret_cast<unsigned char (*)(GLuint)>(::dlsym(gles, "glIsBuffer"));
        g.glBindBuffer = reinterpret_cast<void (*)(GLenum, GLuint)>(::dlsym(gles, "glBindBuffer"));
        g.glGetIntegerv =
            reinterpret_cast<void (*)(GLenum, GLint*)>(::dlsym(gles, "glGetIntegerv"));
        g.glGetBufferParameteriv = reinterpret_cast<void (*)(GLenum, GLenum, GLint*)>(
            ::dlsym(gles, "glGetBufferParameteriv"));
        g.glMapBufferRange = reinterpret_cast<void* (*)(GLenum, intptr_t, intptr_t, unsigned)>(
            ::dlsym(gles, "glMapBufferRange"));
        g.glUnmapBuffer =
            reinterpret_cast<unsigned char (*)(GLenum)>(::dlsym(gles, "glUnmapBuffer"));
        g.ok = g.eglGetCurrentContext && g.glIsBuffer && g.glBindBuffer && g.glGetIntegerv &&
               g.glGetBufferParameteriv && g.glMapBufferRange && g.glUnmapBuffer;
    }
}

/// Counts the call, records its thread, and returns the error it must fail with (0: none).
cudaError_t enter(State& s, const char* fn)
{
    configure(s);
    ++s.calls[fn];
    s.threads[fn] = long(::syscall(SYS_gettid));
    if (auto it = s.always_fail.find(fn); it != s.always_fail.end())
        return it->second;
    if (auto it = s.next_fail.find(fn); it != s.next_fail.end() && it->second.second != 0) {
        if (it->second.second > 0)
            --it->second.second;
        return it->second.first;
    }
    return cudaSuccess;
}

/// The GL context current on this thread, or a violation: interop needs the GL thread.
void* current_context(State& s, const char* fn)
{
    if (!s.gl.ok) {
        violation(s, std::string(fn) + " called but libEGL/libGLESv2 cannot be resolved");
        return nullptr;
    }
    void* c = s.gl.eglGetCurrentContext();
    if (!c)
        violation(s, std::string(fn) + " called on a thread without a current GL context");
    return c;
}

// Binds `buffer` to GL_COPY_READ_BUFFER for one scope, restoring what was bound.
class Bind
{
public:
    Bind(const Gl& g, GLuint buffer) : g_(g)
    {
        g_.glGetIntegerv(kCopyReadBuffer, &old_);
        g_.glBindBuffer(kCopyReadBuffer, buffer);
    }
    ~Bind() { g_.glBindBuffer(kCopyReadBuffer, GLuint(old_)); }

private:
    const Gl& g_;
    GLint old_ = 0;
};

bool in_device_memory(State& s, const void* p, size_t n)
{
    auto inside = [&](const void* base, size_t size) {
        const auto* b = static_cast<const uint8_t*>(base);
        const auto* q = static_cast<const uint8_t*>(p);
        return q >= b && n <= size && q + n <= b + size;
    };
    for (auto& [r, _] : s.resources)
        if (r->ptr && inside(r->ptr, r->size))
            return true;
    for (auto& [ptr, b] : s.buffers)
        if (inside(ptr, b.size))
            return true;
    for (auto& [ptr, r] : s.registered)
        if (inside(ptr, r.size))
            return true;
    for (auto& [ptr, size] : s.allocations)
        if (inside(ptr, size))
            return true;
    return false;
}

/// Whether every page of [p, p + n) is mapped in this process (mincore fails with ENOMEM on a
/// hole).
bool pages_mapped(const void* p, size_t n)
{
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    const auto start = reinterpret_cast<uintptr_t>(p) / page * page;
    const auto end = reinterpret_cast<uintptr_t>(p) + n;
    std::vector<unsigned char> v((end - start + page - 1) / page);
    return ::mincore(reinterpret_cast<void*>(start), end - start, v.data()) == 0;
}

void unmap_gl(State& s, Resource* r)
{
    Bind bind(s.gl, r->buffer);
    s.gl.glUnmapBuffer(kCopyReadBuffer);
    r->ptr = nullptr;
}

} // namespace

extern "C" {

// ---- the runtime entry points -------------------------------------------------------------

__attribute__((visibility("default"))) cudaError_t cudaGetDeviceCount(int* count)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaGetDeviceCount"))
        return e;
    if (!count)
        return cudaErrorInvalidValue;
    *count = s.devices > 0 ? s.devices : 0;
    return s.devices > 0 ? cudaSuccess : cudaErrorNoDevice;
}

__attribute__((visibility("default"))) cudaError_t cudaRuntimeGetVersion(int* v)
{
    if (!v)
        return cudaErrorInvalidValue;
    *v = 12040;
    return cudaSuccess;
}

__attribute__((visibility("default"))) const char* cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorInvalidValue:
        return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
        return "cudaErrorMemoryAllocation";
    case cudaErrorNoDevice:
        return "cudaErrorNoDevice";
    case cudaErrorMapBufferObjectFailed:
        return "cudaErrorMapBufferObjectFailed";
    case cudaErrorUnmapBufferObjectFailed:
        return "cudaErrorUnmapBufferObjectFailed";
    case cudaErrorAlreadyMapped:
        return "cudaErrorAlreadyMapped";
    case cudaErrorNotMapped:
        return "cudaErrorNotMapped";
    case cudaErrorInvalidGraphicsContext:
        return "cudaErrorInvalidGraphicsContext";
    case cudaErrorOperatingSystem:
        return "cudaErrorOperatingSystem";
    case cudaErrorInvalidResourceHandle:
        return "cudaErrorInvalidResourceHandle";
    case cudaErrorHostMemoryAlreadyRegistered:
        return "cudaErrorHostMemoryAlreadyRegistered";
    case cudaErrorHostMemoryNotRegistered:
        return "cudaErrorHostMemoryNotRegistered";
    case cudaErrorNotSupported:
        return "cudaErrorNotSupported";
    case cudaErrorUnknown:
    default:
        return "cudaErrorUnknown";
    }
}

__attribute__((visibility("default"))) const char* cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorNoDevice:
        return "no CUDA-capable device is detected";
    case cudaErrorHostMemoryAlreadyRegistered:
        return "part or all of the requested memory range is already mapped";
    case cudaErrorHostMemoryNotRegistered:
        return "pointer does not correspond to a registered memory region";
    case cudaErrorNotSupported:
        return "operation not supported";
    default:
        return "simulated error";
    }
}

__attribute__((visibility("default"))) cudaError_t
cudaGraphicsGLRegisterBuffer(void** resource, GLuint buffer, unsigned int flags)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaGraphicsGLRegisterBuffer"))
        return e;
    void* ctx = current_context(s, "cudaGraphicsGLRegisterBuffer");
    if (!ctx)
        return cudaErrorInvalidGraphicsContext;
    if (!resource || flags > 2)
        return cudaErrorInvalidValue;
    if (!s.gl.glIsBuffer(buffer)) {
        violation(s, "cudaGraphicsGLRegisterBuffer of GL buffer " + std::to_string(buffer) +
                         ", which does not exist");
        return cudaErrorInvalidValue;
    }
    for (auto& [r, _] : s.resources)
        if (r->buffer == buffer && r->context == ctx)
            violation(s, "GL buffer " + std::to_string(buffer) + " registered twice");
    GLint size = 0;
    {
        Bind bind(s.gl, buffer);
        s.gl.glGetBufferParameteriv(kCopyReadBuffer, kBufferSize, &size);
    }
    auto* r = new Resource{buffer, ctx, size_t(size), nullptr};
    s.resources[r] = true;
    *resource = r;
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaGraphicsUnregisterResource(void* resource)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaGraphicsUnregisterResource"))
        return e;
    auto* r = static_cast<Resource*>(resource);
    if (!s.resources.count(r)) {
        violation(s, "cudaGraphicsUnregisterResource of an unknown resource");
        return cudaErrorInvalidResourceHandle;
    }
    void* ctx = current_context(s, "cudaGraphicsUnregisterResource");
    if (ctx && ctx != r->context)
        violation(s, "resource unregistered in another GL context than it was registered in");
    if (ctx && !s.gl.glIsBuffer(r->buffer))
        violation(s, "GL buffer " + std::to_string(r->buffer) +
                         " was deleted before its CUDA registration was dropped");
    if (r->ptr) {
        violation(s, "resource unregistered while mapped");
        if (ctx)
            unmap_gl(s, r);
    }
    s.resources.erase(r);
    delete r;
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t
cudaGraphicsMapResources(int count, void** resources, void* /*stream*/)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaGraphicsMapResources"))
        return e;
    if (count != 1 || !resources)
        return cudaErrorInvalidValue;
    auto* r = static_cast<Resource*>(resources[0]);
    if (!s.resources.count(r))
        return cudaErrorInvalidResourceHandle;
    void* ctx = current_context(s, "cudaGraphicsMapResources");
    if (!ctx)
        return cudaErrorInvalidGraphicsContext;
    if (r->ptr) {
        violation(s, "resource mapped twice");
        return cudaErrorAlreadyMapped;
    }
    void* p = nullptr;
    {
        Bind bind(s.gl, r->buffer);
        p = s.gl.glMapBufferRange(kCopyReadBuffer, 0, intptr_t(r->size), kMapRead | kMapWrite);
    }
    if (!p) {
        violation(s, "cudaGraphicsMapResources of GL buffer " + std::to_string(r->buffer) +
                         ", which GL has mapped (or lost)");
        return cudaErrorMapBufferObjectFailed;
    }
    r->ptr = p;
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t
cudaGraphicsUnmapResources(int count, void** resources, void* /*stream*/)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaGraphicsUnmapResources"))
        return e;
    if (count != 1 || !resources)
        return cudaErrorInvalidValue;
    auto* r = static_cast<Resource*>(resources[0]);
    if (!s.resources.count(r))
        return cudaErrorInvalidResourceHandle;
    if (!current_context(s, "cudaGraphicsUnmapResources"))
        return cudaErrorInvalidGraphicsContext;
    if (!r->ptr) {
        violation(s, "unmap of a resource that is not mapped");
        return cudaErrorNotMapped;
    }
    unmap_gl(s, r);
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t
cudaGraphicsResourceGetMappedPointer(void** dev_ptr, size_t* size, void* resource)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaGraphicsResourceGetMappedPointer"))
        return e;
    auto* r = static_cast<Resource*>(resource);
    if (!dev_ptr || !size || !s.resources.count(r))
        return cudaErrorInvalidValue;
    if (!r->ptr) {
        violation(s, "pointer of a resource that is not mapped");
        return cudaErrorNotMapped;
    }
    *dev_ptr = r->ptr;
    *size = r->size;
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t
cudaImportExternalMemory(void** ext_mem, const ExternalMemoryHandleDesc* desc)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaImportExternalMemory"))
        return e; // failed: the fd stays the caller's
    if (!ext_mem || !desc || desc->type != 1 || desc->size == 0 || desc->flags != 0)
        return cudaErrorInvalidValue;
    for (unsigned w : desc->reserved)
        if (w != 0) {
            violation(s, "cudaExternalMemoryHandleDesc.reserved is not zero");
            return cudaErrorInvalidValue;
        }
    const int fd = desc->handle.fd;
    struct stat sb {
    };
    if (::fcntl(fd, F_GETFD) < 0 || ::fstat(fd, &sb) != 0)
        return cudaErrorInvalidValue;
    void* p = ::mmap(nullptr, desc->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return cudaErrorOperatingSystem;
    auto* imp = new Import{fd, sb.st_dev, sb.st_ino, static_cast<uint8_t*>(p), desc->size, 0};
    s.imports[imp] = true;
    s.last_import_fd = fd; // ours from here on
    *ext_mem = imp;
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t
cudaExternalMemoryGetMappedBuffer(void** dev_ptr, void* ext_mem,
                                  const ExternalMemoryBufferDesc* desc)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaExternalMemoryGetMappedBuffer"))
        return e;
    auto* imp = static_cast<Import*>(ext_mem);
    if (!dev_ptr || !desc || !s.imports.count(imp))
        return cudaErrorInvalidValue;
    for (unsigned w : desc->reserved)
        if (w != 0) {
            violation(s, "cudaExternalMemoryBufferDesc.reserved is not zero");
            return cudaErrorInvalidValue;
        }
    if (desc->flags != 0 || desc->size == 0 || desc->offset > imp->size ||
        desc->size > imp->size - desc->offset)
        return cudaErrorInvalidValue;
    uint8_t* p = imp->base + desc->offset;
    s.buffers[p] = Buffer{imp, size_t(desc->size)};
    ++imp->buffers;
    *dev_ptr = p;
    return cudaSuccess;
}

/// Device memory is host memory here (the benchmark's destination).
__attribute__((visibility("default"))) cudaError_t cudaMalloc(void** dev_ptr, size_t size)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaMalloc"))
        return e;
    if (!dev_ptr)
        return cudaErrorInvalidValue;
    auto* p = static_cast<uint8_t*>(std::malloc(size ? size : 1));
    if (!p)
        return cudaErrorMemoryAllocation;
    s.allocations[p] = size;
    *dev_ptr = p;
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaFree(void* dev_ptr)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaFree"))
        return e;
    if (!dev_ptr)
        return cudaSuccess;
    if (auto a = s.allocations.find(static_cast<uint8_t*>(dev_ptr)); a != s.allocations.end()) {
        std::free(a->first);
        s.allocations.erase(a);
        return cudaSuccess;
    }
    auto it = s.buffers.find(static_cast<uint8_t*>(dev_ptr));
    if (it == s.buffers.end()) {
        violation(s, "cudaFree of a pointer the runtime did not hand out");
        return cudaErrorInvalidValue;
    }
    --it->second.import->buffers;
    s.buffers.erase(it);
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaDestroyExternalMemory(void* ext_mem)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaDestroyExternalMemory"))
        return e;
    auto* imp = static_cast<Import*>(ext_mem);
    if (!s.imports.count(imp))
        return cudaErrorInvalidResourceHandle;
    if (imp->buffers > 0)
        violation(s, "external memory destroyed before its mapped buffers were freed");
    struct stat sb {
    };
    if (::fstat(imp->fd, &sb) != 0 || sb.st_dev != imp->dev || sb.st_ino != imp->ino)
        violation(s, "the fd the runtime took at import (" + std::to_string(imp->fd) +
                         ") was closed or replaced by someone else");
    else
        ::close(imp->fd);
    ::munmap(imp->base, imp->size);
    s.imports.erase(imp);
    delete imp;
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaHostRegister(void* ptr, size_t size,
                                                                    unsigned int flags)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaHostRegister"))
        return e;
    if (!ptr || size == 0 || (flags & ~kHostRegisterKnownFlags))
        return cudaErrorInvalidValue;
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    auto* b = static_cast<uint8_t*>(ptr);
    if (reinterpret_cast<uintptr_t>(b) % page != 0 || size % page != 0)
        violation(s, "cudaHostRegister of a range that is not whole pages: another allocation's "
                     "bytes would be locked with it");
    if (!pages_mapped(ptr, size)) {
        violation(s, "cudaHostRegister of memory that is not mapped");
        return cudaErrorInvalidValue;
    }
    for (auto& [base, r] : s.registered)
        if (b < base + r.size && base < b + size)
            return cudaErrorHostMemoryAlreadyRegistered;
    s.registered[b] = Registration{size, flags};
    s.last_register_flags = flags;
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t
cudaHostGetDevicePointer(void** dev_ptr, void* host_ptr, unsigned int flags)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaHostGetDevicePointer"))
        return e;
    if (!dev_ptr || flags != 0)
        return cudaErrorInvalidValue;
    auto* h = static_cast<uint8_t*>(host_ptr);
    for (auto& [base, r] : s.registered)
        if (h >= base && h < base + r.size) {
            if (!(r.flags & 0x02))
                violation(s, "device pointer of host memory registered without "
                             "cudaHostRegisterMapped");
            *dev_ptr = h;
            return cudaSuccess;
        }
    return cudaErrorInvalidValue;
}

__attribute__((visibility("default"))) cudaError_t cudaHostUnregister(void* ptr)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaHostUnregister"))
        return e;
    auto it = s.registered.find(static_cast<uint8_t*>(ptr));
    if (it == s.registered.end()) {
        violation(s, "cudaHostUnregister of memory that is not registered (or not its base)");
        return cudaErrorHostMemoryNotRegistered;
    }
    if (!pages_mapped(ptr, it->second.size))
        violation(s, "host memory unmapped before it was unregistered");
    s.registered.erase(it);
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaMemcpy(void* dst, const void* src,
                                                              size_t count, int kind)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    if (cudaError_t e = enter(s, "cudaMemcpy"))
        return e;
    const bool src_dev = kind == 2 || kind == 3;
    const bool dst_dev = kind == 1 || kind == 3;
    if (kind < 0 || kind > 4)
        return cudaErrorInvalidValue;
    if (kind == 4) {
        if (!in_device_memory(s, src, count) && !in_device_memory(s, dst, count)) {
            violation(s, "cudaMemcpy(Default) with no mapped device pointer");
            return cudaErrorInvalidValue;
        }
    } else if ((src_dev && !in_device_memory(s, src, count)) ||
               (dst_dev && !in_device_memory(s, dst, count))) {
        violation(s, "cudaMemcpy through a device pointer that is not mapped now");
        return cudaErrorInvalidValue;
    }
    std::memmove(dst, src, count);
    return cudaSuccess;
}

__attribute__((visibility("default"))) cudaError_t cudaDeviceSynchronize()
{
    State& s = st();
    std::lock_guard lock(s.mu);
    return enter(s, "cudaDeviceSynchronize");
}

// ---- control symbols for the tests ---------------------------------------------------------

__attribute__((visibility("default"))) int simcuda_is_simulated()
{
    return 1;
}

/// The next `count` calls of `fn` fail with `error` (count < 0: every call; 0: stop failing).
__attribute__((visibility("default"))) void simcuda_fail(const char* fn, int error, int count)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    s.next_fail[fn] = {error, count};
}

__attribute__((visibility("default"))) int simcuda_calls(const char* fn)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    auto it = s.calls.find(fn);
    return it == s.calls.end() ? 0 : it->second;
}

/// The kernel thread id of the last call of `fn` (0 if never called).
__attribute__((visibility("default"))) long simcuda_thread(const char* fn)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    auto it = s.threads.find(fn);
    return it == s.threads.end() ? 0 : it->second;
}

__attribute__((visibility("default"))) int simcuda_violations()
{
    State& s = st();
    std::lock_guard lock(s.mu);
    return s.violations;
}

/// The last violation's text, copied into `buf`.
__attribute__((visibility("default"))) void simcuda_last_violation(char* buf, size_t n)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    std::snprintf(buf, n, "%s", s.last_violation.c_str());
}

/// Live objects: what = "resources" (registered), "mapped" (mapped resources), "imports",
/// "buffers", "host" (registered host ranges).
__attribute__((visibility("default"))) int simcuda_live(const char* what)
{
    State& s = st();
    std::lock_guard lock(s.mu);
    const std::string w(what);
    if (w == "resources")
        return int(s.resources.size());
    if (w == "mapped") {
        int n = 0;
        for (auto& [r, _] : s.resources)
            n += r->ptr != nullptr;
        return n;
    }
    if (w == "imports")
        return int(s.imports.size());
    if (w == "buffers")
        return int(s.buffers.size());
    if (w == "host")
        return int(s.registered.size());
    return -1;
}

/// The flags of the last successful cudaHostRegister (0 before any).
__attribute__((visibility("default"))) unsigned simcuda_last_register_flags()
{
    State& s = st();
    std::lock_guard lock(s.mu);
    return s.last_register_flags;
}

/// The fd the last successful import took (-1 before any).
__attribute__((visibility("default"))) int simcuda_last_import_fd()
{
    State& s = st();
    std::lock_guard lock(s.mu);
    return s.last_import_fd;
}

/// Clears the counters, planned failures and violations (live objects stay).
__attribute__((visibility("default"))) void simcuda_reset()
{
    State& s = st();
    std::lock_guard lock(s.mu);
    s.calls.clear();
    s.threads.clear();
    s.next_fail.clear();
    s.violations = 0;
    s.last_violation.clear();
}

} // extern "C"
