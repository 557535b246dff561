// SPDX-License-Identifier: MIT
//
// The simulated NDK behind tests/android: AHardwareBuffer_* over heap memory, with the
// contract enforced and counted (sim_ndk_control.h). Built as a shared library, as the real
// API lives in libnativewindow.so, so the shell's dlsym(RTLD_DEFAULT, "AHardwareBuffer_getId")
// resolves the way it does on a device.

#include "sim_ndk_control.h"

#include <android/hardware_buffer.h>
#include <sys/system_properties.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

struct AHardwareBuffer {
    AHardwareBuffer_Desc desc{};
    std::unique_ptr<uint8_t[]> bytes;
    size_t size = 0;
    int refs = 1;
    bool locked = false;
    uint64_t last_lock_usage = 0;
    uint64_t id = 0;
};

namespace
{

constexpr uint64_t kCpuRead = AHARDWAREBUFFER_USAGE_CPU_READ_MASK;
constexpr uint64_t kCpuWrite = AHARDWAREBUFFER_USAGE_CPU_WRITE_MASK;
constexpr uint64_t kImageGpu =
    AHARDWAREBUFFER_USAGE_GPU_SAMPLED_IMAGE | AHARDWAREBUFFER_USAGE_GPU_FRAMEBUFFER;
constexpr size_t kMaxBytes = size_t(1) << 30;

struct Sim {
    std::mutex mutex;
    std::set<AHardwareBuffer*> live;
    SimNdkProfile profile = SIM_NDK_PROFILE_FLAGSHIP;
    bool get_id = true;
    int fail_next = 0;
    uint64_t next_id = 0x5100000000000001ull;
    uint64_t last_requested_usage = 0;
    std::map<std::string, std::string> props;
    SimNdkStats stats{};
};

Sim& sim()
{
    static Sim* s = new Sim(); // outlives every static tensor
    return *s;
}

void violation(Sim& s, const char* what)
{
    ++s.stats.violations;
    std::fprintf(stderr, "sim-ndk: contract violation: %s\n", what);
}

uint32_t bytes_per_pixel(uint32_t format)
{
    switch (format) {
    case AHARDWAREBUFFER_FORMAT_R8G8B8A8_UNORM:
    case AHARDWAREBUFFER_FORMAT_R8G8B8X8_UNORM:
    case AHARDWAREBUFFER_FORMAT_R10G10B10A2_UNORM:
        return 4;
    case AHARDWAREBUFFER_FORMAT_R8G8B8_UNORM:
        return 3;
    case AHARDWAREBUFFER_FORMAT_R5G6B5_UNORM:
        return 2;
    case AHARDWAREBUFFER_FORMAT_R16G16B16A16_FLOAT:
        return 8;
    case AHARDWAREBUFFER_FORMAT_R8_UNORM:
    case AHARDWAREBUFFER_FORMAT_BLOB:
        return 1;
    }
    return 0; // unknown, or YUV (not simulated)
}

// Validates and creates; the caller holds the mutex. Returns 0 or a negative errno.
int create(Sim& s, const AHardwareBuffer_Desc* desc, AHardwareBuffer** out, bool apply_profile)
{
    if (!desc || !out)
        return -EINVAL;
    *out = nullptr;
    s.last_requested_usage = desc->usage;
    const uint32_t bpp = bytes_per_pixel(desc->format);
    const bool blob = desc->format == AHARDWAREBUFFER_FORMAT_BLOB;
    const bool bad = bpp == 0 || desc->width == 0 || desc->height == 0 || desc->layers != 1 ||
                     (blob && desc->height != 1) || (blob && (desc->usage & kImageGpu)) ||
                     (!blob && (desc->usage & AHARDWAREBUFFER_USAGE_GPU_DATA_BUFFER)) ||
                     ((desc->usage & AHARDWAREBUFFER_USAGE_PROTECTED_CONTENT) &&
                      (desc->usage & (kCpuRead | kCpuWrite)));
    if (bad) {
        ++s.stats.invalid;
        return -EINVAL;
    }
    if (s.fail_next > 0) {
        --s.fail_next;
        ++s.stats.refused;
        return -ENOMEM;
    }
    if (apply_profile && s.profile == SIM_NDK_PROFILE_BUDGET &&
        (desc->usage & (kCpuRead | kCpuWrite)) == 0) {
        ++s.stats.refused;
        return -ENOMEM;
    }
    const uint32_t align = s.profile == SIM_NDK_PROFILE_BUDGET ? 16 : 64;
    const uint64_t stride =
        blob ? desc->width : (uint64_t(desc->width) + align - 1) / align * align;
    const uint64_t size = blob ? desc->width : stride * desc->height * bpp;
    if (size > kMaxBytes) {
        ++s.stats.refused;
        return -ENOMEM;
    }
    auto b = std::make_unique<AHardwareBuffer>();
    b->desc = *desc;
    b->desc.stride = uint32_t(stride);
    b->desc.rfu0 = 0;
    b->desc.rfu1 = 0;
    b->size = size_t(size);
    b->bytes = std::make_unique<uint8_t[]>(b->size); // zeroed, as gralloc hands out
    b->id = s.next_id++;
    *out = b.release();
    s.live.insert(*out);
    ++s.stats.allocated;
    s.stats.live = s.live.size();
    return 0;
}

} // namespace

extern "C" {

int AHardwareBuffer_allocate(const AHardwareBuffer_Desc* desc, AHardwareBuffer** outBuffer)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    return create(s, desc, outBuffer, true);
}

void AHardwareBuffer_acquire(AHardwareBuffer* buffer)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    if (!s.live.count(buffer)) {
        violation(s, "acquire of a buffer that is not live");
        return;
    }
    ++buffer->refs;
    ++s.stats.acquired;
}

void AHardwareBuffer_release(AHardwareBuffer* buffer)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    if (!s.live.count(buffer)) {
        violation(s, "release of a buffer that is not live (double release?)");
        return;
    }
    ++s.stats.released;
    if (--buffer->refs > 0)
        return;
    if (buffer->locked)
        violation(s, "last reference released while the buffer is locked");
    s.live.erase(buffer);
    s.stats.live = s.live.size();
    delete buffer;
}

void AHardwareBuffer_describe(const AHardwareBuffer* buffer, AHardwareBuffer_Desc* outDesc)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    if (!outDesc)
        return;
    if (!s.live.count(const_cast<AHardwareBuffer*>(buffer))) {
        violation(s, "describe of a buffer that is not live");
        *outDesc = AHardwareBuffer_Desc{};
        return;
    }
    *outDesc = buffer->desc;
}

int AHardwareBuffer_lock(AHardwareBuffer* buffer, uint64_t usage, int32_t fence, const ARect* rect,
                         void** outVirtualAddress)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    if (!s.live.count(buffer)) {
        violation(s, "lock of a buffer that is not live");
        return -EINVAL;
    }
    const uint64_t r = usage & kCpuRead;
    const uint64_t w = usage & kCpuWrite;
    const uint64_t ar = buffer->desc.usage & kCpuRead;
    const uint64_t aw = buffer->desc.usage & kCpuWrite;
    // CPU values only; each requested direction exactly what the buffer was allocated with.
    const bool refused = !outVirtualAddress || fence != -1 || rect != nullptr || usage == 0 ||
                         (usage & ~(kCpuRead | kCpuWrite)) != 0 || (r && r != ar) || (w && w != aw);
    if (refused) {
        ++s.stats.lock_refusals;
        std::fprintf(stderr, "sim-ndk: lock refused: usage 0x%llx on a buffer allocated 0x%llx\n",
                     static_cast<unsigned long long>(usage),
                     static_cast<unsigned long long>(buffer->desc.usage));
        return -EINVAL;
    }
    if (buffer->locked) {
        ++s.stats.lock_refusals;
        return -EBUSY;
    }
    buffer->locked = true;
    buffer->last_lock_usage = usage;
    *outVirtualAddress = buffer->bytes.get();
    ++s.stats.locks;
    return 0;
}

int AHardwareBuffer_unlock(AHardwareBuffer* buffer, int32_t* fence)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    if (!s.live.count(buffer)) {
        violation(s, "unlock of a buffer that is not live");
        return -EINVAL;
    }
    if (!buffer->locked) {
        violation(s, "unlock of a buffer that is not locked");
        return -EINVAL;
    }
    buffer->locked = false;
    if (fence)
        *fence = -1;
    ++s.stats.unlocks;
    return 0;
}

int AHardwareBuffer_getId(const AHardwareBuffer* buffer, uint64_t* outId)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    if (!buffer || !outId)
        return -EINVAL;
    if (!s.get_id)
        return -ENOSYS;
    if (!s.live.count(const_cast<AHardwareBuffer*>(buffer))) {
        violation(s, "getId of a buffer that is not live");
        return -EINVAL;
    }
    *outId = buffer->id;
    return 0;
}

int __system_property_get(const char* name, char* value)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    value[0] = '\0';
    auto it = s.props.find(name ? name : "");
    if (it == s.props.end())
        return 0;
    const size_t n = std::min(it->second.size(), size_t(PROP_VALUE_MAX - 1));
    std::memcpy(value, it->second.data(), n);
    value[n] = '\0';
    return int(n);
}

void sim_ndk_reset(void)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    s.profile = SIM_NDK_PROFILE_FLAGSHIP;
    s.get_id = true;
    s.fail_next = 0;
    s.props.clear();
    s.last_requested_usage = 0;
    s.stats = SimNdkStats{};
    s.stats.live = s.live.size();
}

void sim_ndk_set_profile(SimNdkProfile profile)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    s.profile = profile;
}

void sim_ndk_set_get_id_supported(int supported)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    s.get_id = supported != 0;
}

void sim_ndk_set_property(const char* name, const char* value)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    if (value)
        s.props[name] = value;
    else
        s.props.erase(name);
}

void sim_ndk_fail_next_allocations(int n)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    s.fail_next = n;
}

void sim_ndk_get_stats(SimNdkStats* out)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    s.stats.live = s.live.size();
    *out = s.stats;
}

int sim_ndk_refcount(const AHardwareBuffer* buffer)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    return s.live.count(const_cast<AHardwareBuffer*>(buffer)) ? buffer->refs : -1;
}

int sim_ndk_locked(const AHardwareBuffer* buffer)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    if (!s.live.count(const_cast<AHardwareBuffer*>(buffer)))
        return -1;
    return buffer->locked ? 1 : 0;
}

uint64_t sim_ndk_last_lock_usage(const AHardwareBuffer* buffer)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    return s.live.count(const_cast<AHardwareBuffer*>(buffer)) ? buffer->last_lock_usage : 0;
}

uint64_t sim_ndk_last_requested_usage(void)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    return s.last_requested_usage;
}

AHardwareBuffer* sim_ndk_foreign_buffer(uint32_t width, uint32_t height, uint32_t format,
                                        uint64_t usage)
{
    Sim& s = sim();
    std::lock_guard lock(s.mutex);
    AHardwareBuffer_Desc desc{};
    desc.width = width;
    desc.height = height;
    desc.layers = 1;
    desc.format = format;
    desc.usage = usage;
    AHardwareBuffer* b = nullptr;
    return create(s, &desc, &b, false) == 0 ? b : nullptr;
}

} // extern "C"
