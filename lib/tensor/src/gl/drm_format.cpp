// SPDX-License-Identifier: MIT
//
// DRM format names and GlDmaBufFormats' lookup (gl.hpp), built with or without the GL backend:
// callers name a drm-format in their messages whatever the build.

#include "edgetensor/gl.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace edgetensor
{

std::string drm_format_string(uint32_t fourcc, uint64_t modifier)
{
    // GStreamer's spelling (gst_video_dma_drm_fourcc_to_string): the four characters as they
    // are, padding included, then the modifier in 16 hex digits unless it is linear.
    std::string s;
    for (int k = 0; k < 4; ++k) {
        const char c = char((fourcc >> (8 * k)) & 0xff);
        s += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    if (modifier != 0) {
        char b[24];
        std::snprintf(b, sizeof b, ":0x%016" PRIx64, modifier);
        s += b;
    }
    return s;
}

bool GlDmaBufFormats::lists(uint32_t fourcc, uint64_t modifier) const noexcept
{
    return std::any_of(formats.begin(), formats.end(), [&](const GlDmaBufFormat& f) {
        return f.fourcc == fourcc &&
               std::find(f.modifiers.begin(), f.modifiers.end(), modifier) != f.modifiers.end();
    });
}

} // namespace edgetensor
