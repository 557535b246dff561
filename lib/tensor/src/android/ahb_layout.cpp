// SPDX-License-Identifier: MIT
#include "ahb_layout.hpp"

#include <cctype>
#include <cstdio>
#include <limits>

namespace edgetensor::detail::ahb
{
namespace
{

std::string dims(size_t w, size_t h)
{
    return std::to_string(w) + "x" + std::to_string(h);
}

std::string format_name(uint32_t f)
{
    switch (f) {
    case kFormatR8G8B8A8Unorm:
        return "R8G8B8A8_UNORM";
    case kFormatR16G16B16A16Float:
        return "R16G16B16A16_FLOAT";
    case kFormatBlob:
        return "BLOB";
    }
    return "format 0x" + [f] {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%x", f);
        return std::string(buf);
    }();
}

bool icontains(std::string_view hay, std::string_view needle) noexcept
{
    if (needle.empty() || hay.size() < needle.size())
        return false;
    for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
        size_t j = 0;
        while (j < needle.size() && std::tolower(static_cast<unsigned char>(hay[i + j])) ==
                                        std::tolower(static_cast<unsigned char>(needle[j])))
            ++j;
        if (j == needle.size())
            return true;
    }
    return false;
}

} // namespace

uint64_t cpu_usage_for(CpuAccess access) noexcept
{
    uint64_t u = 0;
    if (access_reads(access))
        u |= kUsageCpuReadOften;
    if (access_writes(access))
        u |= kUsageCpuWriteOften;
    return u;
}

uint64_t image_usage(CpuAccess access) noexcept
{
    return kUsageGpuSampledImage | kUsageGpuFramebuffer | cpu_usage_for(access);
}

uint64_t blob_usage(CpuAccess access) noexcept
{
    return kUsageGpuDataBuffer | cpu_usage_for(access);
}

std::optional<uint64_t> retry_usage(uint64_t refused) noexcept
{
    if (!is_hardware_only(refused))
        return std::nullopt;
    return refused | kUsageCpuReadOften | kUsageCpuWriteOften;
}

CpuAccess access_from_usage(uint64_t usage) noexcept
{
    const bool r = (usage & kUsageCpuReadMask) != 0;
    const bool w = (usage & kUsageCpuWriteMask) != 0;
    if (r && w)
        return CpuAccess::ReadWrite;
    if (r)
        return CpuAccess::Read;
    return w ? CpuAccess::Write : CpuAccess::None;
}

Result<Geometry> image_geometry(PixelFormat format, DType dtype, size_t width, size_t height)
{
    const auto info = pixel_format_info(format);
    if (!info)
        return make_error(ErrorCode::InvalidArgument,
                          "AHardwareBuffer geometry: pixel format code " +
                              std::to_string(uint32_t(format)) + " is not an image format");
    if (width == 0 || height == 0)
        return make_error(ErrorCode::InvalidShape, "AHardwareBuffer geometry: image size " +
                                                       dims(width, height) +
                                                       " has a zero dimension");
    const std::string what =
        std::string(info->name) + " " + std::string(dtype_name(dtype)) + " " + dims(width, height);
    const bool bytes8 = dtype == DType::U8 || dtype == DType::I8;
    const bool half = dtype == DType::F16;
    Geometry g;
    size_t w = 0, h = height;
    switch (format) {
    case PixelFormat::Rgba:
    case PixelFormat::Bgra:
        if (!bytes8 && !half)
            break;
        g.ahb_format = half ? kFormatR16G16B16A16Float : kFormatR8G8B8A8Unorm;
        g.bytes_per_pixel = half ? 8 : 4;
        w = width;
        break;
    case PixelFormat::Rgb:
        if (!bytes8)
            break;
        // Three bytes a pixel ride four-byte RGBA8888 texels: W*3 must be whole texels.
        if ((width * 3) % 4 != 0)
            return make_error(ErrorCode::InvalidShape,
                              "AHardwareBuffer geometry: " + what + " packs RGB into RGBA8888 " +
                                  "at (W*3/4, H), but " + std::to_string(width) +
                                  "*3 = " + std::to_string(width * 3) +
                                  " bytes is not a whole number of 4-byte pixels; the width must "
                                  "be a multiple of 4");
        g.ahb_format = kFormatR8G8B8A8Unorm;
        g.bytes_per_pixel = 4;
        w = width * 3 / 4;
        break;
    case PixelFormat::PlanarRgb:
    case PixelFormat::PlanarRgba:
        if (!bytes8 && !half)
            break;
        // Each plane row of W samples is W/4 four-sample texels; the C planes stack as C*H rows.
        if (width % 4 != 0)
            return make_error(ErrorCode::InvalidShape,
                              "AHardwareBuffer geometry: " + what + " packs each plane row into " +
                                  (half ? "RGBA16F" : "RGBA8888") +
                                  " texels at (W/4, C*H), but the width " + std::to_string(width) +
                                  " is not a multiple of 4");
        g.ahb_format = half ? kFormatR16G16B16A16Float : kFormatR8G8B8A8Unorm;
        g.bytes_per_pixel = half ? 8 : 4;
        w = width / 4;
        if (height > std::numeric_limits<size_t>::max() / info->channels)
            return make_error(ErrorCode::InvalidShape,
                              "AHardwareBuffer geometry: " + what + " overflows");
        h = size_t(info->channels) * height;
        break;
    default:
        break;
    }
    if (g.ahb_format == 0)
        return make_error(ErrorCode::NotSupported,
                          "AHardwareBuffer geometry: " + what +
                              " has no AHardwareBuffer format (supported: RGBA/BGRA u8, i8, f16; "
                              "RGB u8, i8; planar RGB/RGBA u8, i8, f16)");
    if (w > std::numeric_limits<uint32_t>::max() || h > std::numeric_limits<uint32_t>::max())
        return make_error(ErrorCode::InvalidShape, "AHardwareBuffer geometry: " + what +
                                                       " does not fit a 32-bit descriptor");
    g.width = uint32_t(w);
    g.height = uint32_t(h);
    g.row_bytes = w * g.bytes_per_pixel;
    g.tensor_rows = h;
    return g;
}

Result<Geometry> blob_geometry(size_t bytes)
{
    if (bytes == 0)
        return make_error(ErrorCode::InvalidShape, "cannot allocate a zero-byte AHardwareBuffer");
    if (bytes > std::numeric_limits<uint32_t>::max())
        return make_error(ErrorCode::InvalidArgument,
                          "an AHardwareBuffer BLOB holds at most 4294967295 bytes (its width is "
                          "32-bit); " +
                              std::to_string(bytes) + " were asked for");
    Geometry g;
    g.ahb_format = kFormatBlob;
    g.width = uint32_t(bytes);
    g.height = 1;
    g.bytes_per_pixel = 1;
    g.row_bytes = bytes;
    g.tensor_rows = 1;
    return g;
}

Result<size_t> row_pitch(const Geometry& g, uint32_t stride_pixels)
{
    if (g.ahb_format == kFormatBlob)
        return size_t(g.width);
    if (stride_pixels < g.width)
        return make_error(ErrorCode::InvalidDescriptor,
                          "gralloc reported a row stride of " + std::to_string(stride_pixels) +
                              " pixels for a " + std::to_string(g.width) + "-pixel-wide " +
                              format_name(g.ahb_format) + " buffer");
    return size_t(stride_pixels) * g.bytes_per_pixel;
}

Result<size_t> locked_bytes(const Geometry& g, uint32_t stride_pixels)
{
    auto pitch = row_pitch(g, stride_pixels);
    if (!pitch)
        return pitch;
    if (g.ahb_format == kFormatBlob)
        return *pitch;
    size_t bytes = 0;
    if (__builtin_mul_overflow(*pitch, size_t(g.height), &bytes))
        return make_error(ErrorCode::InvalidDescriptor,
                          "an AHardwareBuffer of " + std::to_string(g.height) + " rows of " +
                              std::to_string(*pitch) + " bytes overflows size_t");
    return bytes;
}

Result<void> check_import(const Geometry& expected, uint32_t format, uint32_t width,
                          uint32_t height, uint32_t layers)
{
    if (layers != 1)
        return make_error(ErrorCode::InvalidDescriptor,
                          "the AHardwareBuffer has " + std::to_string(layers) +
                              " layers; only single-layer buffers can be locked and imported");
    if (format != expected.ahb_format)
        return make_error(ErrorCode::InvalidDescriptor,
                          "the AHardwareBuffer is " + format_name(format) +
                              " but the tensor needs " + format_name(expected.ahb_format));
    if (width != expected.width || height != expected.height)
        return make_error(ErrorCode::InvalidDescriptor,
                          "the AHardwareBuffer is " + dims(width, height) + " " +
                              format_name(format) + " pixels but the tensor needs " +
                              dims(expected.width, expected.height));
    return {};
}

LockDecision lock_usage_for(CpuAccess declared, uint64_t alloc_usage, CpuAccess requested,
                            const LockState& held)
{
    LockDecision d;
    if (requested == CpuAccess::None || static_cast<uint32_t>(requested) > 3) {
        d.reason = "CpuAccess::None is not a mappable direction; map with Read, Write or ReadWrite";
        return d;
    }
    if (declared == CpuAccess::None) {
        d.reason = "the AHardwareBuffer was declared CpuAccess::None (hardware only): locking it "
                   "for the CPU is undefined behaviour under the NDK contract, so it is refused; "
                   "declare Read, Write or ReadWrite to map it";
        return d;
    }
    const uint64_t r = alloc_usage & kUsageCpuReadMask;
    const uint64_t w = alloc_usage & kUsageCpuWriteMask;
    const bool want_r = access_reads(requested);
    const bool want_w = access_writes(requested);
    if ((want_r && r == 0) || (want_w && w == 0)) {
        d.reason = std::string("the AHardwareBuffer was allocated without CPU ") +
                   (want_r && r == 0 ? "read" : "write") + " usage, so it cannot be locked for " +
                   std::string(access_name(requested)) +
                   " (locking with undeclared usage is undefined behaviour under the NDK contract)";
        return d;
    }
    const uint64_t usage = (want_r ? r : 0) | (want_w ? w : 0);
    if (held.depth > 0) {
        const bool covers = (!want_r || (held.usage & kUsageCpuReadMask) != 0) &&
                            (!want_w || (held.usage & kUsageCpuWriteMask) != 0);
        if (covers) {
            d.action = LockAction::Reuse;
            d.usage = held.usage;
            return d;
        }
        d.reason = "the AHardwareBuffer is already locked for " +
                   std::string(access_name(access_from_usage(held.usage))) + " by " +
                   std::to_string(held.depth) + " open map(s), which does not cover " +
                   std::string(access_name(requested)) + "; release them first";
        return d;
    }
    d.action = LockAction::Lock;
    d.usage = usage;
    return d;
}

std::optional<CompressionScheme> scheme_for_egl_vendor(std::string_view vendor) noexcept
{
    if (icontains(vendor, "adreno"))
        return CompressionScheme::Ubwc;
    if (icontains(vendor, "mali") || icontains(vendor, "immortalis"))
        return CompressionScheme::Afbc;
    if (icontains(vendor, "powervr"))
        return CompressionScheme::Pvric;
    if (icontains(vendor, "xclipse"))
        return CompressionScheme::Dcc;
    return std::nullopt;
}

bool compression_eligible(const Geometry& g, DType dtype) noexcept
{
    return g.ahb_format == kFormatR8G8B8A8Unorm && (dtype == DType::U8 || dtype == DType::I8);
}

Result<void> check_compression_request(Compression requested, CpuAccess access)
{
    if (requested.kind == Compression::Kind::None)
        return {};
    if (requested.kind != Compression::Kind::Any && requested.kind != Compression::Kind::Scheme)
        return make_error(ErrorCode::InvalidArgument, "unknown Compression kind");
    if (requested.kind == Compression::Kind::Scheme &&
        compression_scheme_name(requested.scheme) == "unknown")
        return make_error(ErrorCode::InvalidArgument,
                          "unknown CompressionScheme value " +
                              std::to_string(uint32_t(requested.scheme)));
    if (access != CpuAccess::None)
        return make_error(ErrorCode::InvalidArgument,
                          "tile compression was requested together with CpuAccess::" +
                              std::string(access_name(access)) +
                              ": compressed tiles are opaque to the CPU, so compression needs "
                              "CpuAccess::None");
    return {};
}

Result<std::optional<CompressionScheme>> plan_compression(Compression requested,
                                                          std::optional<CompressionScheme> device,
                                                          const Geometry& g, DType dtype,
                                                          std::string_view vendor)
{
    const bool eligible = compression_eligible(g, dtype);
    switch (requested.kind) {
    case Compression::Kind::None:
        return std::optional<CompressionScheme>{};
    case Compression::Kind::Any:
        if (device && eligible)
            return device;
        return std::optional<CompressionScheme>{};
    case Compression::Kind::Scheme: {
        const std::string want(compression_scheme_name(requested.scheme));
        if (!device)
            return make_error(ErrorCode::InvalidArgument,
                              want + " compression was requested but the GPU vendor '" +
                                  std::string(vendor) + "' has no known compression scheme");
        if (*device != requested.scheme)
            return make_error(ErrorCode::InvalidArgument,
                              want + " compression was requested but this device's GPU ('" +
                                  std::string(vendor) + "') compresses with " +
                                  std::string(compression_scheme_name(*device)));
        if (!eligible)
            return make_error(ErrorCode::InvalidArgument,
                              want + " compression applies to R8G8B8A8_UNORM u8/i8 images; " +
                                  format_name(g.ahb_format) + " " + std::string(dtype_name(dtype)) +
                                  " is not eligible");
        return device;
    }
    }
    return make_error(ErrorCode::InvalidArgument, "unknown Compression kind");
}

Result<std::optional<CompressionScheme>>
settle_compression(Compression requested, std::optional<CompressionScheme> planned,
                   uint64_t granted_usage)
{
    if (!planned || is_hardware_only(granted_usage))
        return planned;
    if (requested.kind == Compression::Kind::Scheme)
        return make_error(ErrorCode::AllocationFailed,
                          std::string(compression_scheme_name(*planned)) +
                              " compression was requested, but gralloc refused the hardware-only "
                              "allocation and only a CPU-visible (linear) buffer could be had");
    return std::optional<CompressionScheme>{};
}

std::shared_ptr<const void> IdentityInternTable::find_locked(uint64_t key) const
{
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : it->second.lock();
}

void IdentityInternTable::insert_locked(uint64_t key, const std::shared_ptr<const void>& guard)
{
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (it->second.expired())
            it = entries_.erase(it);
        else
            ++it;
    }
    entries_[key] = guard;
}

std::shared_ptr<const void> IdentityInternTable::find(uint64_t key) const
{
    std::lock_guard lock(mutex_);
    return find_locked(key);
}

void IdentityInternTable::insert(uint64_t key, const std::shared_ptr<const void>& guard)
{
    std::lock_guard lock(mutex_);
    insert_locked(key, guard);
}

size_t IdentityInternTable::size() const
{
    std::lock_guard lock(mutex_);
    return entries_.size();
}

} // namespace edgetensor::detail::ahb
