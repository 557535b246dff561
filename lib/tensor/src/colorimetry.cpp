// SPDX-License-Identifier: MIT
#include "edgetensor/colorimetry.hpp"

namespace edgetensor
{

bool Colorimetry::unpack(uint32_t packed, Colorimetry* out) noexcept
{
    const uint32_t s = packed & 0xff, t = (packed >> 8) & 0xff, e = (packed >> 16) & 0xff,
                   r = (packed >> 24) & 0xff;
    if (s > 4 || t > 5 || e > 3 || r > 2)
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
