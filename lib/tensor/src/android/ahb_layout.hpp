// SPDX-License-Identifier: MIT
//
// Every decision the AHardwareBuffer shell (ahb_shell.cpp) must not drift on, with no NDK
// header and no Android API: allocation usage, descriptor geometry per (PixelFormat, DType),
// lock usage, the GPU vendor -> compression scheme classifier, compression resolution and the
// getId identity intern table. No CI lane can execute Android code, so this is the part that
// is tested exhaustively on the host (tests/android/test_ahb_layout.cpp); the shell only calls
// these and the NDK.

#pragma once

#include "edgetensor/compression.hpp"
#include "edgetensor/error.hpp"
#include "edgetensor/pixel_format.hpp"
#include "edgetensor/types.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace edgetensor::detail::ahb
{

// The NDK's values (<android/hardware_buffer.h>, AHardwareBuffer_Format and
// AHardwareBuffer_UsageFlags), mirrored here so this module builds everywhere. The shell
// static_asserts each against the NDK's own enumerators.
inline constexpr uint32_t kFormatR8G8B8A8Unorm = 1;
inline constexpr uint32_t kFormatR16G16B16A16Float = 0x16;
inline constexpr uint32_t kFormatBlob = 0x21;

inline constexpr uint64_t kUsageCpuReadNever = 0;
inline constexpr uint64_t kUsageCpuReadRarely = 2;
inline constexpr uint64_t kUsageCpuReadOften = 3;
inline constexpr uint64_t kUsageCpuReadMask = 0xF;
inline constexpr uint64_t kUsageCpuWriteNever = 0;
inline constexpr uint64_t kUsageCpuWriteRarely = 2ull << 4;
inline constexpr uint64_t kUsageCpuWriteOften = 3ull << 4;
inline constexpr uint64_t kUsageCpuWriteMask = 0xFull << 4;
inline constexpr uint64_t kUsageGpuSampledImage = 1ull << 8;
inline constexpr uint64_t kUsageGpuFramebuffer = 1ull << 9;
inline constexpr uint64_t kUsageGpuDataBuffer = 1ull << 24;
inline constexpr uint64_t kUsageCpuMask = kUsageCpuReadMask | kUsageCpuWriteMask;

// ---- allocation usage ----------------------------------------------------------------------

/// The CPU usage values a declaration asks gralloc for: *_OFTEN in each declared direction
/// (a declared direction is a hot path: cached / write-combined), nothing for None.
uint64_t cpu_usage_for(CpuAccess access) noexcept;
/// Image usage: GPU_SAMPLED_IMAGE | GPU_FRAMEBUFFER always (every image is a valid convert
/// source, destination and intermediate), plus cpu_usage_for(access).
uint64_t image_usage(CpuAccess access) noexcept;
/// Generic (BLOB) usage: GPU_DATA_BUFFER (the only GPU usage BLOB takes) plus CPU bits.
uint64_t blob_usage(CpuAccess access) noexcept;
/// True when `usage` carries no CPU bits (eligible for vendor tile compression).
constexpr bool is_hardware_only(uint64_t usage) noexcept
{
    return (usage & kUsageCpuMask) == 0;
}
/// The one retry after gralloc refused a hardware-only allocation (budget devices): the same
/// usage plus CPU read/write OFTEN, i.e. linear but working. Usage that already has CPU bits
/// is not retried (nullopt).
std::optional<uint64_t> retry_usage(uint64_t refused) noexcept;
/// What an imported buffer's usage bits allow the CPU to do.
CpuAccess access_from_usage(uint64_t usage) noexcept;

// ---- descriptor geometry -------------------------------------------------------------------

/// The AHardwareBuffer_Desc an image of (format, dtype, width, height) is allocated as, and how
/// a row of the AHB relates to a row of the tensor.
struct Geometry {
    uint32_t ahb_format = 0;
    uint32_t width = 0;           ///< AHB pixels
    uint32_t height = 0;          ///< AHB rows (all planes of a planar image stacked)
    uint32_t bytes_per_pixel = 0; ///< of the AHB format
    size_t row_bytes = 0;         ///< bytes of one tensor row (width * bpp of the AHB format)
    size_t tensor_rows = 0;       ///< rows of the tensor in the buffer (== height)
};

/// Packed RGBA/BGRA: RGBA8888 (u8, i8) or RGBA16F (f16) at (W, H). Packed RGB u8/i8: RGBA8888
/// at (W*3/4, H). Planar RGB/RGBA f16: RGBA16F at (W/4, C*H); u8/i8: RGBA8888 at (W/4, C*H).
/// NotSupported for anything else (Grey and YUV need API 29+/33+ formats or gralloc-private
/// plane layouts; f32 has no NDK colour format), InvalidShape when W does not divide.
Result<Geometry> image_geometry(PixelFormat format, DType dtype, size_t width, size_t height);
/// A generic tensor of `bytes`: BLOB at (bytes, 1).
Result<Geometry> blob_geometry(size_t bytes);
/// The tensor row pitch, from the stride gralloc chose (AHB pixels). InvalidDescriptor when
/// the stride is narrower than the requested width or the pitch overflows.
Result<size_t> row_pitch(const Geometry& g, uint32_t stride_pixels);
/// Bytes the CPU sees when the buffer is locked: pitch * rows (BLOB: its width).
Result<size_t> locked_bytes(const Geometry& g, uint32_t stride_pixels);
/// Whether an imported descriptor is what image_geometry() would have allocated.
Result<void> check_import(const Geometry& expected, uint32_t format, uint32_t width,
                          uint32_t height, uint32_t layers);

// ---- lock usage ----------------------------------------------------------------------------

/// The lock a storage holds now: the usage it was locked with and how many maps share it.
struct LockState {
    uint64_t usage = 0;
    size_t depth = 0;
};

enum class LockAction : uint32_t {
    Lock = 0,   ///< call AHardwareBuffer_lock with `usage`
    Reuse = 1,  ///< a held lock covers the request: depth + 1, no NDK call
    Refuse = 2, ///< `reason` says why; nothing is called
};

struct LockDecision {
    LockAction action = LockAction::Refuse;
    uint64_t usage = 0;
    std::string reason;
};

/// How to serve a CPU map of `requested` on a buffer declared `declared` and allocated with
/// `alloc_usage`. The lock replays the allocation's CPU usage VALUES masked to the requested
/// direction (the NDK's flags are values inside masks, not bits: READ_RARELY is 2, OFTEN 3).
/// Refuses a None declaration, a direction the allocation did not carry (locking with
/// undeclared usage is undefined behaviour), and a nested map the held lock does not cover.
LockDecision lock_usage_for(CpuAccess declared, uint64_t alloc_usage, CpuAccess requested,
                            const LockState& held);

// ---- compression ---------------------------------------------------------------------------

/// The scheme a GPU vendor string implies: "adreno" -> UBWC, "mali"/"immortalis" -> AFBC,
/// "powervr" -> PVRIC, "xclipse" -> DCC, matched case-insensitively anywhere in the string (so
/// both ro.hardware.egl values and GL_RENDERER strings such as "Adreno (TM) 740" work).
/// Anything else (emulation, angle, swiftshader, empty) is linear: nullopt.
std::optional<CompressionScheme> scheme_for_egl_vendor(std::string_view vendor) noexcept;

/// Whether (geometry, dtype) is a class vendors compress: RGBA8888 with u8/i8 samples.
bool compression_eligible(const Geometry& g, DType dtype) noexcept;

/// Validates a request before anything is allocated, on every platform: compression needs
/// CpuAccess::None (InvalidArgument otherwise).
Result<void> check_compression_request(Compression requested, CpuAccess access);

/// What a request resolves to on an Android device whose vendor classifies as `device` for an
/// image of geometry `g` (before allocation: hardware-only assumed). Any: the device scheme when
/// eligible, else nullopt (a fallback). Scheme(s): s, or InvalidArgument when the device or the
/// format cannot give s.
Result<std::optional<CompressionScheme>> plan_compression(Compression requested,
                                                          std::optional<CompressionScheme> device,
                                                          const Geometry& g, DType dtype,
                                                          std::string_view vendor);

/// After allocation: the scheme to record. A hardware-only allocation keeps `planned`; a
/// CPU-visible retry is linear, which is a fallback for Any and AllocationFailed for Scheme.
Result<std::optional<CompressionScheme>>
settle_compression(Compression requested, std::optional<CompressionScheme> planned,
                   uint64_t granted_usage);

// ---- identity interning --------------------------------------------------------------------

/// Maps AHardwareBuffer_getId keys to the BufferIdentity of the tensors wrapping that buffer,
/// through weak liveness guards only. A live guard means a tensor still holds its acquire
/// reference, so the system cannot have recycled the key: reuse is safe. Dead entries are
/// pruned on every insert. Thread-safe.
class IdentityInternTable
{
public:
    /// The live guard recorded for `key`, or null (none recorded, or it died).
    std::shared_ptr<const void> find(uint64_t key) const;
    /// Records `guard` for `key` (replacing a dead or live entry), after pruning dead entries.
    void insert(uint64_t key, const std::shared_ptr<const void>& guard);
    /// find(), else make() inserted under the same lock, so two racing imports of one buffer
    /// share one identity.
    template <typename Make> std::shared_ptr<const void> find_or_insert(uint64_t key, Make make)
    {
        std::lock_guard lock(mutex_);
        if (auto live = find_locked(key))
            return live;
        std::shared_ptr<const void> guard = make();
        insert_locked(key, guard);
        return guard;
    }
    /// Entries held, dead ones included until the next insert prunes them.
    size_t size() const;

private:
    std::shared_ptr<const void> find_locked(uint64_t key) const;
    void insert_locked(uint64_t key, const std::shared_ptr<const void>& guard);

    mutable std::mutex mutex_;
    std::unordered_map<uint64_t, std::weak_ptr<const void>> entries_;
};

} // namespace edgetensor::detail::ahb
