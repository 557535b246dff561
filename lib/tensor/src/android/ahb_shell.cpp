// SPDX-License-Identifier: MIT
//
// The AHardwareBuffer FFI shell: allocation (with the one CPU-visible retry), lock/unlock,
// describe, getId, import of foreign buffers and the exported pointer. Every decision it makes
// comes from ahb_layout.hpp; what is left here is calling the NDK and owning references.

#include "ahb_shell.hpp"

#include "ahb_layout.hpp"
#include "errno_name.hpp"
#include "log.hpp"

#include <android/hardware_buffer.h>
#include <dlfcn.h>
#include <sys/system_properties.h>

#include <cerrno>
#include <mutex>
#include <new>
#include <string>

namespace edgetensor::detail::ahb
{

// The layout module mirrors the NDK's values; they must not drift.
static_assert(AHARDWAREBUFFER_FORMAT_R8G8B8A8_UNORM == kFormatR8G8B8A8Unorm);
static_assert(AHARDWAREBUFFER_FORMAT_R16G16B16A16_FLOAT == kFormatR16G16B16A16Float);
static_assert(AHARDWAREBUFFER_FORMAT_BLOB == kFormatBlob);
static_assert(AHARDWAREBUFFER_USAGE_CPU_READ_RARELY == kUsageCpuReadRarely);
static_assert(AHARDWAREBUFFER_USAGE_CPU_READ_OFTEN == kUsageCpuReadOften);
static_assert(AHARDWAREBUFFER_USAGE_CPU_READ_MASK == kUsageCpuReadMask);
static_assert(AHARDWAREBUFFER_USAGE_CPU_WRITE_RARELY == kUsageCpuWriteRarely);
static_assert(AHARDWAREBUFFER_USAGE_CPU_WRITE_OFTEN == kUsageCpuWriteOften);
static_assert(AHARDWAREBUFFER_USAGE_CPU_WRITE_MASK == kUsageCpuWriteMask);
static_assert(AHARDWAREBUFFER_USAGE_GPU_SAMPLED_IMAGE == kUsageGpuSampledImage);
static_assert(AHARDWAREBUFFER_USAGE_GPU_FRAMEBUFFER == kUsageGpuFramebuffer);
static_assert(AHARDWAREBUFFER_USAGE_GPU_DATA_BUFFER == kUsageGpuDataBuffer);

namespace
{

constexpr const char* kProvider = "ahardwarebuffer";

// AHardwareBuffer_getId is API 31; resolving it at run time keeps the API-26 link floor. Where
// it is missing every wrap keeps a fresh identity (correct, uncached).
using GetIdFn = int (*)(const AHardwareBuffer*, uint64_t*);
GetIdFn get_id_fn()
{
    static const GetIdFn fn = [] {
        void* sym = ::dlsym(RTLD_DEFAULT, "AHardwareBuffer_getId");
        if (!sym)
            ET_LOG_INFO("ahb", "AHardwareBuffer_getId is not available (API < 31): identities "
                               "are not interned across re-wraps");
        return reinterpret_cast<GetIdFn>(sym);
    }();
    return fn;
}

std::optional<uint64_t> buffer_id(const AHardwareBuffer* b)
{
    const GetIdFn fn = get_id_fn();
    if (!fn)
        return std::nullopt;
    uint64_t id = 0;
    const int rc = fn(b, &id);
    if (rc != 0) {
        ET_LOG_DEBUG("ahb", "AHardwareBuffer_getId failed (%d); fresh identity", rc);
        return std::nullopt;
    }
    return id;
}

std::string egl_vendor()
{
    char value[PROP_VALUE_MAX] = {};
    const int n = __system_property_get("ro.hardware.egl", value);
    return n > 0 ? std::string(value, size_t(n)) : std::string();
}

std::string ndk_error(const char* call, int rc)
{
    const int err = rc < 0 ? -rc : rc;
    return std::string(call) + " failed: " + errno_text(err);
}

class AhbStorage final : public Storage
{
public:
    // Takes over one reference of `buffer` (from allocate, or acquired for an import).
    AhbStorage(AHardwareBuffer* buffer, size_t capacity, CpuAccess declared, uint64_t usage,
               std::optional<uint64_t> id, std::optional<CompressionScheme> compression)
        : Storage(capacity, declared), buffer_(buffer), usage_(usage), id_(id),
          compression_(compression)
    {
    }
    ~AhbStorage() override
    {
        if (lock_.depth > 0) {
            ET_LOG_ERROR("ahb", "AHardwareBuffer released with %zu open map(s); unlocking",
                         lock_.depth);
            AHardwareBuffer_unlock(buffer_, nullptr);
        }
        AHardwareBuffer_release(buffer_);
    }

    TensorMemory memory() const noexcept override { return TensorMemory::Dma; }
    std::string_view provider() const noexcept override { return kProvider; }
    AHardwareBuffer* hardware_buffer() const noexcept override { return buffer_; }
    std::optional<uint64_t> platform_id() const noexcept override { return id_; }
    std::optional<CompressionScheme> compression() const noexcept override { return compression_; }

    Result<uint8_t*> begin_cpu_access(CpuAccess access) override
    {
        std::lock_guard guard(mutex_);
        const LockDecision d = lock_usage_for(declared_, usage_, access, lock_);
        switch (d.action) {
        case LockAction::Refuse:
            return make_error(ErrorCode::NotSupported, d.reason);
        case LockAction::Reuse:
            ++lock_.depth;
            return base_;
        case LockAction::Lock:
            break;
        }
        void* addr = nullptr;
        const int rc = AHardwareBuffer_lock(buffer_, d.usage, -1, nullptr, &addr);
        if (rc != 0 || !addr)
            return unexpected(
                Error::io(rc < 0 ? -rc : EIO, ndk_error("AHardwareBuffer_lock", rc ? rc : -EIO)));
        base_ = static_cast<uint8_t*>(addr);
        lock_ = {d.usage, 1};
        ET_LOG_TRACE("ahb", "locked %p usage 0x%llx", static_cast<void*>(buffer_),
                     static_cast<unsigned long long>(d.usage));
        return base_;
    }

    void end_cpu_access(CpuAccess) noexcept override
    {
        std::lock_guard guard(mutex_);
        if (lock_.depth == 0) {
            ET_LOG_ERROR("ahb", "end of CPU access without a lock on %p",
                         static_cast<void*>(buffer_));
            return;
        }
        if (--lock_.depth > 0)
            return;
        // A null fence makes the unlock synchronous: the map's bytes are flushed on return.
        const int rc = AHardwareBuffer_unlock(buffer_, nullptr);
        if (rc != 0)
            ET_LOG_ERROR("ahb", "%s", ndk_error("AHardwareBuffer_unlock", rc).c_str());
        lock_ = {};
        base_ = nullptr;
    }

private:
    AHardwareBuffer* buffer_;
    uint64_t usage_;
    std::optional<uint64_t> id_;
    std::optional<CompressionScheme> compression_;
    std::mutex mutex_; // guards lock_ and base_
    LockState lock_;
    uint8_t* base_ = nullptr;
};

struct Allocated {
    AHardwareBuffer* buffer = nullptr;
    AHardwareBuffer_Desc desc{};
};

// AHardwareBuffer_allocate, and the one retry with CPU bits when gralloc refuses a
// hardware-only request (budget devices): degraded to linear-but-working, loudly.
Result<Allocated> allocate(const Geometry& g, uint64_t usage, std::string_view name)
{
    AHardwareBuffer_Desc desc{};
    desc.width = g.width;
    desc.height = g.height;
    desc.layers = 1;
    desc.format = g.ahb_format;
    desc.usage = usage;
    Allocated a;
    int rc = AHardwareBuffer_allocate(&desc, &a.buffer);
    if (rc != 0) {
        const std::optional<uint64_t> retry = retry_usage(usage);
        if (!retry)
            return make_error(ErrorCode::AllocationFailed,
                              ndk_error("AHardwareBuffer_allocate", rc) + " for a " +
                                  std::to_string(g.width) + "x" + std::to_string(g.height) +
                                  " buffer");
        ET_LOG_WARNING("ahb",
                       "gralloc refused hardware-only buffer '%.*s' (%ux%u, %s); retrying once "
                       "with CPU read/write usage: it will be linear (no tile compression)",
                       int(name.size()), name.data(), g.width, g.height,
                       errno_text(rc < 0 ? -rc : rc).c_str());
        desc.usage = *retry;
        a.buffer = nullptr;
        rc = AHardwareBuffer_allocate(&desc, &a.buffer);
        if (rc != 0)
            return make_error(ErrorCode::AllocationFailed,
                              ndk_error("AHardwareBuffer_allocate", rc) +
                                  " (also with CPU usage) for a " + std::to_string(g.width) + "x" +
                                  std::to_string(g.height) + " buffer");
    }
    AHardwareBuffer_describe(a.buffer, &a.desc);
    return a;
}

// Wraps a buffer whose reference the caller hands over; releases it on every failure.
StorageResult make_storage(AHardwareBuffer* buffer, const AHardwareBuffer_Desc& desc,
                           const Geometry& g, CpuAccess declared,
                           std::optional<CompressionScheme> compression)
{
    auto bytes = locked_bytes(g, desc.stride);
    if (!bytes) {
        AHardwareBuffer_release(buffer);
        return unexpected(std::move(bytes).error());
    }
    const std::optional<uint64_t> id = buffer_id(buffer);
    try {
        return std::shared_ptr<Storage>(
            std::make_shared<AhbStorage>(buffer, *bytes, declared, desc.usage, id, compression));
    } catch (const std::bad_alloc&) {
        AHardwareBuffer_release(buffer);
        return make_error(ErrorCode::AllocationFailed,
                          "out of memory while wrapping an AHardwareBuffer");
    }
}

bool available() noexcept
{
    static const bool ok = [] {
        AHardwareBuffer_Desc desc{};
        desc.width = 4096;
        desc.height = 1;
        desc.layers = 1;
        desc.format = AHARDWAREBUFFER_FORMAT_BLOB;
        desc.usage = blob_usage(CpuAccess::ReadWrite);
        AHardwareBuffer* b = nullptr;
        const int rc = AHardwareBuffer_allocate(&desc, &b);
        if (rc != 0) {
            ET_LOG_DEBUG("ahb", "probe: %s", ndk_error("AHardwareBuffer_allocate", rc).c_str());
            return false;
        }
        AHardwareBuffer_release(b);
        return true;
    }();
    return ok;
}

StorageResult allocate_bytes(const AllocRequest& req)
{
    auto g = blob_geometry(req.bytes);
    if (!g)
        return unexpected(std::move(g).error());
    auto a = allocate(*g, blob_usage(req.access), req.name);
    if (!a)
        return unexpected(std::move(a).error());
    return make_storage(a->buffer, a->desc, *g, req.access, std::nullopt);
}

Result<PlatformImage> allocate_image(const PlatformImageRequest& req)
{
    auto g = image_geometry(req.format, req.dtype, req.width, req.height);
    if (!g)
        return unexpected(std::move(g).error());
    std::optional<CompressionScheme> planned;
    if (req.compression.kind != Compression::Kind::None) {
        const std::string vendor = egl_vendor();
        auto p =
            plan_compression(req.compression, scheme_for_egl_vendor(vendor), *g, req.dtype, vendor);
        if (!p)
            return unexpected(std::move(p).error());
        planned = *p;
    }
    auto a = allocate(*g, image_usage(req.access), req.name);
    if (!a)
        return unexpected(std::move(a).error());
    auto settled = settle_compression(req.compression, planned, a->desc.usage);
    if (!settled) {
        AHardwareBuffer_release(a->buffer);
        return unexpected(std::move(settled).error());
    }
    if (req.compression.kind == Compression::Kind::Any && !*settled)
        note_compression_fallback();
    auto pitch = row_pitch(*g, a->desc.stride);
    if (!pitch) {
        AHardwareBuffer_release(a->buffer);
        return unexpected(std::move(pitch).error());
    }
    auto storage = make_storage(a->buffer, a->desc, *g, req.access, *settled);
    if (!storage)
        return unexpected(std::move(storage).error());
    return PlatformImage{std::move(*storage), *pitch};
}

Result<PlatformImage> import_image(AHardwareBuffer* buffer, const PlatformImageRequest& req)
{
    auto g = image_geometry(req.format, req.dtype, req.width, req.height);
    if (!g)
        return unexpected(std::move(g).error());
    AHardwareBuffer_Desc desc{};
    AHardwareBuffer_describe(buffer, &desc);
    EDGETENSOR_TRY(check_import(*g, desc.format, desc.width, desc.height, desc.layers));
    auto pitch = row_pitch(*g, desc.stride);
    if (!pitch)
        return unexpected(std::move(pitch).error());
    AHardwareBuffer_acquire(buffer);
    auto storage = make_storage(buffer, desc, *g, access_from_usage(desc.usage), std::nullopt);
    if (!storage)
        return unexpected(std::move(storage).error());
    return PlatformImage{std::move(*storage), *pitch};
}

StorageResult import_bytes(AHardwareBuffer* buffer)
{
    AHardwareBuffer_Desc desc{};
    AHardwareBuffer_describe(buffer, &desc);
    Geometry g;
    g.ahb_format = desc.format;
    g.width = desc.width;
    g.height = desc.height;
    switch (desc.format) {
    case AHARDWAREBUFFER_FORMAT_BLOB:
        g.bytes_per_pixel = 1;
        break;
    case AHARDWAREBUFFER_FORMAT_R8G8B8A8_UNORM:
        g.bytes_per_pixel = 4;
        break;
    case AHARDWAREBUFFER_FORMAT_R16G16B16A16_FLOAT:
        g.bytes_per_pixel = 8;
        break;
    default:
        return make_error(ErrorCode::NotSupported,
                          "from_hardware_buffer: AHardwareBuffer format " +
                              std::to_string(desc.format) +
                              " is not one edgetensor can span as bytes (BLOB, R8G8B8A8_UNORM, "
                              "R16G16B16A16_FLOAT)");
    }
    if (desc.layers != 1)
        return make_error(ErrorCode::InvalidDescriptor,
                          "the AHardwareBuffer has " + std::to_string(desc.layers) +
                              " layers; only single-layer buffers can be locked and imported");
    if (desc.format == AHARDWAREBUFFER_FORMAT_BLOB && desc.height != 1)
        return make_error(ErrorCode::InvalidDescriptor, "the AHardwareBuffer is a BLOB of height " +
                                                            std::to_string(desc.height) +
                                                            " (BLOBs have height 1)");
    AHardwareBuffer_acquire(buffer);
    return make_storage(buffer, desc, g, access_from_usage(desc.usage), std::nullopt);
}

const PlatformBufferOps kOps = {kProvider,      available,    allocate_bytes,
                                allocate_image, import_image, import_bytes};

} // namespace

const PlatformBufferOps& platform_ops() noexcept
{
    return kOps;
}

} // namespace edgetensor::detail::ahb
