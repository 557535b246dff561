// SPDX-License-Identifier: MIT
//
// EGL_EXT_image_dma_buf_import: what one EGLImage of a DMA-BUF is made of, built as a pure
// attribute list (unit-tested without a driver), the driver's format/modifier queries, and the
// importer the converter's cache calls.
//
// Two kinds of import:
//   - grids: one plane seen as rows of bytes (DRM_FORMAT_R8 / ABGR8888); the shader does the
//     colour conversion with the CPU engine's matrices;
//   - direct YUV: ONE EGLImage of the source's native DRM format with all its planes (PLANE0..2
//     fd/offset/pitch, modifiers when the display takes them) and the colour-space and range
//     hints of its colorimetry, sampled as samplerExternalOES: the driver converts to RGB.
//     Modelled on GStreamer's gst_egl_image_from_dmabuf_direct.

#pragma once

#include "edgetensor/colorimetry.hpp"
#include "edgetensor/convert.hpp"
#include "gl/gl_api.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace edgetensor::detail::gl
{

class Worker;

/// DRM FourCCs the converter imports grids as.
inline constexpr uint32_t kFourccR8 = 0x20203852;       // DRM_FORMAT_R8 'R8  '
inline constexpr uint32_t kFourccAbgr8888 = 0x34324241; // DRM_FORMAT_ABGR8888 'AB24'
inline constexpr uint64_t kDrmFormatModLinear = 0;

/// The DRM FourCC of a YUV source format (NV12 'NV12', I420 'YU12', YUY2 'YUYV', ...), or
/// nullopt for formats without a direct import (RGB family, GRAY8).
std::optional<uint32_t> drm_fourcc_of(ConvertFormat f) noexcept;
/// Planes a DRM YUV FourCC has (1..3), 0 for one this file does not know.
size_t drm_fourcc_planes(uint32_t fourcc) noexcept;
/// "NV12" for messages.
std::string fourcc_string(uint32_t fourcc);

struct DmaBufPlane {
    int fd = -1;         ///< borrowed
    uint64_t offset = 0; ///< bytes from the start of the buffer
    uint32_t pitch = 0;  ///< bytes per row
};

/// One EGLImage of a DMA-BUF.
struct DmaBufImage {
    uint32_t width = 0;
    uint32_t height = 0;
    uint32_t fourcc = 0;
    std::vector<DmaBufPlane> planes;
    /// Named on every plane when set (EGL_EXT_image_dma_buf_import_modifiers).
    std::optional<uint64_t> modifier;
    /// Direct YUV imports: the hints EGL_YUV_COLOR_SPACE_HINT_EXT / EGL_SAMPLE_RANGE_HINT_EXT
    /// (and co-sited chroma: the CPU engine replicates chroma over its luma block). Unspecified
    /// axes are an error: the caller resolves colorimetry first.
    std::optional<Colorimetry> yuv_hints;
};

/// The EGL_LINUX_DMA_BUF_EXT attribute list for `img`, EGL_NONE-terminated. InvalidArgument
/// naming the problem: zero size, a plane count that is not the format's, a negative fd, a
/// zero pitch, an offset or pitch past EGLint, more than 3 planes, hints that are unspecified.
Result<std::vector<EGLint>> build_dma_buf_attribs(const DmaBufImage& img);

/// One modifier the display lists for a FourCC.
struct DmaBufModifier {
    uint64_t modifier = 0;
    bool external_only = false; ///< sampled only as GL_TEXTURE_EXTERNAL_OES
};

/// What the display says about one FourCC (eglQueryDmaBufFormatsEXT /
/// eglQueryDmaBufModifiersEXT); all false without EGL_EXT_image_dma_buf_import_modifiers.
struct DmaBufFormatSupport {
    bool queried = false; ///< the display answers the queries
    bool listed = false;  ///< the FourCC is among its formats
    bool linear = false;  ///< DRM_FORMAT_MOD_LINEAR is offered (or no modifier is listed)
    bool modifiers_listed = false;
    bool external_only = false; ///< linear (or every) import samples as GL_TEXTURE_EXTERNAL_OES
    std::vector<DmaBufModifier> modifiers; ///< every one listed, in the driver's order
};
DmaBufFormatSupport query_dma_buf_format(const Worker& w, uint32_t fourcc);

} // namespace edgetensor::detail::gl
