// SPDX-License-Identifier: MIT
//
// DMA_DRM caps (GStreamer 1.24+): `video/x-raw(memory:DMABuf), format=DMA_DRM,
// drm-format=NV12[:<modifier>]`, the caps a producer negotiates DMA-BUFs with, written once:
// the drm-format names, the DMA_DRM structures an element lists for the linear formats it reads
// or writes, the mapping between a DMA_DRM structure and plain video/x-raw for converters, and
// the refusal of a drm-format an element cannot read, naming it. Reading fixed DMA_DRM caps is
// the stream layout's (stream_layout.hpp). Built against GStreamer 1.22 every function here
// still exists and adds nothing: no DMA_DRM caps are listed, every caps are accepted as before.
// Not installed.

#pragma once

#include "internal_api.hpp"
#include "stream_layout.hpp"

#include <gst/allocators/allocators.h>
#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdint>
#include <span>
#include <string>

/// A pad template's memory:DMABuf structure for any GStreamer format: from 1.24 the formats are
/// listed (GST_VIDEO_FORMATS_ALL has no DMA_DRM), so that format=DMA_DRM is only what the
/// element's DMA_DRM structures list (a bare memory:DMABuf would take every drm-format, tiled
/// ones too).
#if GST_CHECK_VERSION(1, 24, 0)
#define EDGETENSOR_DMABUF_CAPS                                                                     \
    "video/x-raw(memory:DMABuf), format = (string) " GST_VIDEO_FORMATS_ALL
#else
#define EDGETENSOR_DMABUF_CAPS "video/x-raw(memory:DMABuf)"
#endif

namespace edgetensor::gst
{

/// DRM_FORMAT_MOD_LINEAR: rows of pixels, the only layout the CPU reads.
inline constexpr uint64_t kDrmLinear = 0;

/// Whether this build negotiates DMA_DRM caps (GStreamer 1.24 or newer at build time).
EDGETENSOR_GST_INTERNAL bool dma_drm_negotiated() noexcept;

/// "NV12" (linear), "NV12:0x0100000000000001": as drm-format spells it.
EDGETENSOR_GST_INTERNAL std::string drm_format_name(uint32_t fourcc, uint64_t modifier);

/// `video/x-raw(memory:DMABuf), format=DMA_DRM, drm-format={...}` of the linear DRM formats of
/// `formats` (those without a DRM FourCC are left out), any size and framerate; empty caps
/// before 1.24.
EDGETENSOR_GST_INTERNAL GstCaps* dma_drm_caps(std::span<const GstVideoFormat> formats);

/// dma_drm_caps() of every raw GStreamer format: what an element that passes the bytes on
/// without reading them (tensorimport, tensoripcsink/src) takes or gives.
EDGETENSOR_GST_INTERNAL GstCaps* dma_drm_caps_any_linear();

/// The DMA_DRM twin of every plain video/x-raw structure (system memory, a format field) of
/// `caps`, in order: the same fields, format -> linear drm-format (formats without a DRM FourCC
/// left out). Empty caps before 1.24 or when none is left.
EDGETENSOR_GST_INTERNAL GstCaps* dma_drm_caps_like(const GstCaps* caps);

/// A pad template: `templ`'s caps with `dma_drm` (taken; empty before 1.24) appended.
EDGETENSOR_GST_INTERNAL GstPadTemplate* pad_template_with_dma_drm(GstStaticPadTemplate* templ,
                                                                  GstCaps* dma_drm);

/// Whether `caps`' structure `i` is DMA_DRM (feature memory:DMABuf, format=DMA_DRM).
EDGETENSOR_GST_INTERNAL bool is_dma_drm_structure(const GstCaps* caps, guint i) noexcept;

/// The DMA_DRM structure `s` as plain video/x-raw: drm-format (a string or a list) becomes
/// format, linear entries with a GStreamer format only (none: any format), and the tiled ones
/// `tiled` lists (a reader that imports them: tensorconvert compute=gl). Null when none is
/// left, or before 1.24.
EDGETENSOR_GST_INTERNAL GstStructure* dma_drm_as_video(const GstStructure* s,
                                                       std::span<const DrmFormat> tiled = {});

/// The tiled DMA_DRM twins of the plain video/x-raw structures (system memory, a format field)
/// of `caps`: the same fields, drm-format = the entries of `tiled` whose FourCC is one of the
/// structure's formats. Empty caps before 1.24 or when none is left.
EDGETENSOR_GST_INTERNAL GstCaps* dma_drm_tiled_caps_like(const GstCaps* caps,
                                                         std::span<const DrmFormat> tiled);

/// The video/x-raw structure `s` as a DMA_DRM one: format (a string or a list) becomes
/// drm-format, formats without a DRM FourCC left out. Null when none is left or before 1.24.
EDGETENSOR_GST_INTERNAL GstStructure* video_as_dma_drm(const GstStructure* s);

/// The GStreamer format of the frames of video/x-raw structure `s`: its `format`, or for
/// DMA_DRM (1.24+) that of its drm-format when it is one linear string. UNKNOWN otherwise (not
/// fixed, tiled, no such format).
EDGETENSOR_GST_INTERNAL GstVideoFormat video_format_of(const GstStructure* s);

/// For an accept-caps query: false, after an element warning on `element` that names the
/// drm-format and lists what `readable` allows, when `caps` are DMA_DRM caps outside
/// `readable` (a tiled or compressed modifier, or a format it does not read); true otherwise,
/// for the caller's usual check.
EDGETENSOR_GST_INTERNAL bool accept_dma_drm(GstElement* element, const GstCaps* caps,
                                            const GstCaps* readable);

/// The accept_caps vfunc of a GstBaseTransform subclass that reads DMA_DRM on its sink pad
/// (tensorimport, tensorconvert): accept_dma_drm() against the sink pad's template (1.24+),
/// then GstBaseTransform's own accept_caps. Guarded (vfunc_guard.hpp).
EDGETENSOR_GST_INTERNAL gboolean transform_accept_caps(GstBaseTransform* trans,
                                                       GstPadDirection direction, GstCaps* caps);

/// transform_accept_caps() against `readable` rather than the sink pad's template: caps of a
/// tiled drm-format `readable` lists (beyond the template, which lists linear ones only) are
/// accepted when the element's transform_caps() maps them to something its source template
/// allows; every other caps as transform_accept_caps() does.
EDGETENSOR_GST_INTERNAL gboolean transform_accept_caps_reading(GstBaseTransform* trans,
                                                               GstPadDirection direction,
                                                               GstCaps* caps,
                                                               const GstCaps* readable);

} // namespace edgetensor::gst
