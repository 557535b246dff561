// SPDX-License-Identifier: MIT
//
// What the GL converter imports directly (GlDmaBufFormats, gl.hpp): the driver's answer to
// eglQueryDmaBufFormatsEXT / eglQueryDmaBufModifiersEXT filtered by what the direct import can
// sample, as a pure function of that answer (unit-tested with a fake one,
// tests/gl/test_gl_dma_buf_formats.cpp), the EDGETENSOR_GL_DMABUF_MODIFIERS replacement of it,
// and the per-display cache.

#pragma once

#include "edgetensor/gl.hpp"
#include "gl/direct_check.hpp"

#include <optional>
#include <string_view>

namespace edgetensor::detail::gl
{

/// The formats the converter imports directly on a GL described by `info`, from `query`'s
/// answer per YUV FourCC; `env_direct` is EDGETENSOR_GL_DIRECT as plan_direct() reads it.
/// Linear is listed where the driver offers it (or lists no modifier); tiled and compressed
/// ones, external-only included, only where direct imports are not off whatever the frame.
GlDmaBufFormats importable_dma_buf_formats(const GlInfo& info, const char* env_direct,
                                           const FormatQuery& query);

/// EDGETENSOR_GL_DMABUF_MODIFIERS: "NV12:0x0,0x0100000000000001;YUYV:0x0", FourCCs as DRM
/// spells them (I420 is YU12, YUY2 is YUYV), modifiers in hex. InvalidArgument naming the
/// entry that is not of that form.
Result<GlDmaBufFormats> parse_dma_buf_formats(std::string_view text);

/// EDGETENSOR_GL_DMABUF_MODIFIERS parsed, when set; nullopt when unset or invalid, an invalid
/// value warned about (category "gl") once per value and process.
std::optional<GlDmaBufFormats> replacement_dma_buf_formats();

/// The formats of `w`'s display: EDGETENSOR_GL_DMABUF_MODIFIERS when set (and valid), else
/// importable_dma_buf_formats() of its driver's answer, queried on its thread once per display
/// and process. Not on the GL thread.
GlDmaBufFormats dma_buf_formats_of(Worker& w);

} // namespace edgetensor::detail::gl
