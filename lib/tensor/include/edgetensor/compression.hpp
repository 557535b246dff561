// SPDX-License-Identifier: MIT
//
// Vendor tile compression as image metadata: requested at creation, recorded as allocated.
// Gralloc picks a compressed tile layout by usage bits (no public flag forces or reports it), so
// what a tensor records is "this allocation is compression-eligible on a device whose GPU
// vendor compresses this class" -- best knowledge, never a guess: a scheme is recorded only
// when the vendor was positively identified.

#pragma once

#include <cstdint>
#include <string_view>

namespace edgetensor
{

/// A vendor's compressed tile layout. Values are stable codes; new schemes are appended.
enum class CompressionScheme : uint32_t {
    Ubwc = 1,  ///< Qualcomm Adreno: Universal Bandwidth Compression
    Afbc = 2,  ///< Arm Mali / Immortalis: Arm Frame Buffer Compression
    Pvric = 3, ///< Imagination PowerVR: PowerVR Image Compression
    Dcc = 4,   ///< Samsung Xclipse (AMD RDNA): Delta Colour Compression
};

/// "ubwc", "afbc", "pvric", "dcc"; "unknown" for a value outside the enum.
std::string_view compression_scheme_name(CompressionScheme scheme) noexcept;

/// What an image asks for. Every request but none() needs CpuAccess::None (tiles are opaque to
/// the CPU); combining the two is InvalidArgument at creation.
struct Compression {
    enum class Kind : uint32_t {
        None = 0,   ///< linear (the default)
        Any = 1,    ///< the device's scheme when eligible, else linear (counted, never failing)
        Scheme = 2, ///< exactly `scheme`, or the allocation fails
    };
    Kind kind = Kind::None;
    CompressionScheme scheme = CompressionScheme::Ubwc; ///< meaningful for Kind::Scheme only

    static constexpr Compression none() noexcept { return {}; }
    static constexpr Compression any() noexcept { return {Kind::Any, CompressionScheme::Ubwc}; }
    static constexpr Compression exactly(CompressionScheme s) noexcept { return {Kind::Scheme, s}; }

    friend constexpr bool operator==(const Compression& a, const Compression& b) noexcept
    {
        return a.kind == b.kind && (a.kind != Kind::Scheme || a.scheme == b.scheme);
    }
};

/// How many Compression::any() requests resolved linear (not Android, CPU-visible retry,
/// ineligible format, unidentified vendor). Process-wide; never decreases.
uint64_t compression_fallback_count() noexcept;

} // namespace edgetensor
