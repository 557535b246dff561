// SPDX-License-Identifier: MIT
#include "edgetensor/colorimetry.hpp"

#include "edgetensor/tensor_desc.h"

namespace edgetensor
{

// The C macros of tensor_desc.h are the same codes as the C++ enums.
static_assert(uint32_t(ColorSpace::Bt709) == EDGETENSOR_COLOR_PRIMARIES_BT709 &&
              uint32_t(ColorSpace::Bt2020) == EDGETENSOR_COLOR_PRIMARIES_BT2020 &&
              uint32_t(ColorSpace::Srgb) == EDGETENSOR_COLOR_PRIMARIES_SRGB &&
              uint32_t(ColorSpace::Smpte170m) == EDGETENSOR_COLOR_PRIMARIES_SMPTE170M);
static_assert(uint32_t(ColorTransfer::Bt709) == EDGETENSOR_COLOR_TRANSFER_BT709 &&
              uint32_t(ColorTransfer::Srgb) == EDGETENSOR_COLOR_TRANSFER_SRGB &&
              uint32_t(ColorTransfer::Pq) == EDGETENSOR_COLOR_TRANSFER_PQ &&
              uint32_t(ColorTransfer::Hlg) == EDGETENSOR_COLOR_TRANSFER_HLG &&
              uint32_t(ColorTransfer::Linear) == EDGETENSOR_COLOR_TRANSFER_LINEAR);
static_assert(uint32_t(ColorEncoding::Bt601) == EDGETENSOR_COLOR_MATRIX_BT601 &&
              uint32_t(ColorEncoding::Bt709) == EDGETENSOR_COLOR_MATRIX_BT709 &&
              uint32_t(ColorEncoding::Bt2020) == EDGETENSOR_COLOR_MATRIX_BT2020);
static_assert(uint32_t(ColorRange::Full) == EDGETENSOR_COLOR_RANGE_FULL &&
              uint32_t(ColorRange::Limited) == EDGETENSOR_COLOR_RANGE_LIMITED);
static_assert(Colorimetry{ColorSpace::Bt2020, ColorTransfer::Pq, ColorEncoding::Bt2020,
                          ColorRange::Limited}
                  .pack() == EDGETENSOR_COLORIMETRY_PACK(EDGETENSOR_COLOR_PRIMARIES_BT2020,
                                                         EDGETENSOR_COLOR_TRANSFER_PQ,
                                                         EDGETENSOR_COLOR_MATRIX_BT2020,
                                                         EDGETENSOR_COLOR_RANGE_LIMITED));

bool Colorimetry::unpack(uint32_t packed, Colorimetry* out) noexcept
{
    const uint32_t s = packed & 0xff, t = (packed >> 8) & 0xff, e = (packed >> 16) & 0xff,
                   r = (packed >> 24) & 0xff;
    if (s > EDGETENSOR_COLOR_PRIMARIES_MAX || t > EDGETENSOR_COLOR_TRANSFER_MAX ||
        e > EDGETENSOR_COLOR_MATRIX_MAX || r > EDGETENSOR_COLOR_RANGE_MAX)
        return false;
    if (out) {
        out->space = static_cast<ColorSpace>(s);
        out->transfer = static_cast<ColorTransfer>(t);
        out->encoding = static_cast<ColorEncoding>(e);
        out->range = static_cast<ColorRange>(r);
    }
    return true;
}

std::string Colorimetry::to_string() const
{
    static const char* spaces[] = {"", "bt709", "bt2020", "srgb", "smpte170m"};
    static const char* transfers[] = {"", "bt709", "srgb", "pq", "hlg", "linear"};
    static const char* encodings[] = {"", "bt601", "bt709", "bt2020"};
    static const char* ranges[] = {"", "full", "limited"};
    std::string out;
    auto add = [&out](const char* key, const char* value) {
        if (!*value)
            return;
        if (!out.empty())
            out += ' ';
        out += key;
        out += '=';
        out += value;
    };
    add("space", spaces[static_cast<int>(space)]);
    add("transfer", transfers[static_cast<int>(transfer)]);
    add("encoding", encodings[static_cast<int>(encoding)]);
    add("range", ranges[static_cast<int>(range)]);
    return out.empty() ? "unspecified" : out;
}

} // namespace edgetensor
