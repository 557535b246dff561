// SPDX-License-Identifier: MIT
//
// Colorimetry: four independent, optional axes. Never auto-filled: a consumer that must
// resolve a missing axis does so explicitly and says so.

#pragma once

#include <cstdint>
#include <string>

namespace edgetensor
{

enum class ColorSpace : uint8_t { Unspecified = 0, Bt709 = 1, Bt2020 = 2, Srgb = 3, Smpte170m = 4 };
enum class ColorTransfer : uint8_t {
    Unspecified = 0,
    Bt709 = 1,
    Srgb = 2,
    Pq = 3,
    Hlg = 4,
    Linear = 5
};
/// The YUV <-> RGB matrix.
enum class ColorEncoding : uint8_t { Unspecified = 0, Bt601 = 1, Bt709 = 2, Bt2020 = 3 };
enum class ColorRange : uint8_t { Unspecified = 0, Full = 1, Limited = 2 };

struct Colorimetry {
    ColorSpace space = ColorSpace::Unspecified;
    ColorTransfer transfer = ColorTransfer::Unspecified;
    ColorEncoding encoding = ColorEncoding::Unspecified;
    ColorRange range = ColorRange::Unspecified;

    /// `space | transfer << 8 | encoding << 16 | range << 24`.
    constexpr uint32_t pack() const noexcept
    {
        return uint32_t(space) | uint32_t(transfer) << 8 | uint32_t(encoding) << 16 |
               uint32_t(range) << 24;
    }
    /// Inverse of pack(); false (and `out` untouched) when any axis code is unknown.
    static bool unpack(uint32_t packed, Colorimetry* out) noexcept;

    constexpr bool is_unspecified() const noexcept { return pack() == 0; }
    /// "space=bt709 transfer=bt709 encoding=bt709 range=limited" (unspecified axes omitted).
    std::string to_string() const;

    friend constexpr bool operator==(const Colorimetry&, const Colorimetry&) = default;
};

} // namespace edgetensor
