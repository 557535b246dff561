// SPDX-License-Identifier: MIT
//
// Caps -> stream layout (stream_layout.hpp): the one reader of the caps of a stream.

#include "stream_layout.hpp"

#include "dma_drm.hpp"

#include <gst/edgetensor/edgetensor.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace edgetensor::gst
{

namespace
{

// The frame's GstVideoInfo: DMA_DRM caps through GstVideoInfoDmaDrm (1.24+), linear only.
Result<void> read_video_info(const GstCaps* caps, std::span<const DrmFormat> tiled,
                             StreamLayout* out)
{
    (void)tiled; // 1.22: no DMA_DRM caps
#if GST_CHECK_VERSION(1, 24, 0)
    if (gst_video_is_dma_drm_caps(caps)) {
        GstVideoInfoDmaDrm drm;
        gst_video_info_dma_drm_init(&drm);
        if (!gst_video_info_dma_drm_from_caps(&drm, caps))
            return make_error(ErrorCode::InvalidArgument,
                              "DMA_DRM caps lack a drm-format GStreamer knows, a width or a "
                              "height");
        const bool imported =
            drm.drm_modifier != kDrmLinear &&
            std::any_of(tiled.begin(), tiled.end(), [&](const DrmFormat& d) {
                return d.fourcc == drm.drm_fourcc && d.modifier == drm.drm_modifier;
            });
        if (imported) {
            // GStreamer has no vinfo of a tiled layout (to_video_info refuses it): the
            // format's default one, for sizes and the frame check; the caller imports the
            // planes with the modifier and never maps them as rows.
            const GstVideoFormat f = gst_video_dma_drm_fourcc_to_format(drm.drm_fourcc);
            if (f == GST_VIDEO_FORMAT_UNKNOWN)
                return make_error(ErrorCode::NotSupported,
                                  "drm-format " +
                                      drm_format_name(drm.drm_fourcc, drm.drm_modifier) +
                                      " has no GStreamer video format edgetensor could read");
            GstVideoInfo vi = drm.vinfo;
            if (!gst_video_info_set_interlaced_format(
                    &out->vinfo, f, GST_VIDEO_INFO_INTERLACE_MODE(&vi),
                    guint(GST_VIDEO_INFO_WIDTH(&vi)), guint(GST_VIDEO_INFO_HEIGHT(&vi))))
                return make_error(ErrorCode::InvalidArgument,
                                  "drm-format " +
                                      drm_format_name(drm.drm_fourcc, drm.drm_modifier) +
                                      ": no frame of that size");
            out->vinfo.fps_n = vi.fps_n;
            out->vinfo.fps_d = vi.fps_d;
            out->vinfo.par_n = vi.par_n;
            out->vinfo.par_d = vi.par_d;
            out->vinfo.colorimetry = vi.colorimetry;
            out->vinfo.chroma_site = vi.chroma_site;
            out->memory = StreamMemory::DmaDrm;
            out->drm = {drm.drm_fourcc, drm.drm_modifier};
            return {};
        }
        if (drm.drm_modifier != kDrmLinear)
            return make_error(ErrorCode::NotSupported,
                              "drm-format " + drm_format_name(drm.drm_fourcc, drm.drm_modifier) +
                                  " is tiled or compressed: edgetensor reads linear DMA-BUFs "
                                  "only (drm-format " +
                                  drm_format_name(drm.drm_fourcc, kDrmLinear) +
                                  "); have the producer choose a linear one");
        // drm.vinfo says format DMA_DRM; the linear frame is the GStreamer format's default
        // layout (GstVideoMeta carries the producer's strides and offsets).
        if (!gst_video_info_dma_drm_to_video_info(&drm, &out->vinfo))
            return make_error(ErrorCode::NotSupported,
                              "drm-format " + drm_format_name(drm.drm_fourcc, drm.drm_modifier) +
                                  " has no GStreamer video format edgetensor could read");
        out->memory = StreamMemory::DmaDrm;
        out->drm = {drm.drm_fourcc, drm.drm_modifier};
        return {};
    }
#endif
    if (!gst_video_info_from_caps(&out->vinfo, caps))
        return make_error(ErrorCode::InvalidArgument,
                          "video/x-raw caps lack a known format, width or height");
#if GST_CHECK_VERSION(1, 24, 0)
    if (GST_VIDEO_INFO_FORMAT(&out->vinfo) == GST_VIDEO_FORMAT_DMA_DRM)
        return make_error(ErrorCode::InvalidArgument,
                          "format=DMA_DRM needs the memory:DMABuf caps feature and a drm-format");
#endif
    if (gst_caps_features_contains(gst_caps_get_features(caps, 0), GST_CAPS_FEATURE_MEMORY_DMABUF))
        out->memory = StreamMemory::DmaBuf;
    out->drm.fourcc = drm_fourcc_from_gst(GST_VIDEO_INFO_FORMAT(&out->vinfo));
    return {};
}

} // namespace

bool StreamLayout::same_caps(const GstCaps* other) const noexcept
{
    return caps && other && gst_caps_is_equal(caps.get(), other);
}

Result<StreamLayoutPtr> stream_layout_from_caps(const GstCaps* caps,
                                                std::span<const DrmFormat> tiled)
{
    if (!caps || gst_caps_get_size(caps) != 1 || !gst_caps_is_fixed(caps))
        return make_error(ErrorCode::InvalidArgument, "caps must be fixed, one structure");
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    auto out = std::make_shared<StreamLayout>();
    out->caps.reset(gst_caps_ref(const_cast<GstCaps*>(caps)));

    if (gst_structure_has_name(s, kTensorsMediaType)) {
        auto tc = parse_tensor_caps(s);
        if (!tc)
            return unexpected(std::move(tc).error());
        out->tensor = std::move(*tc);
        out->frame_bytes = dtype_size(out->tensor.dtype);
        for (size_t d : out->tensor.shape)
            out->frame_bytes *= d;
        out->fps_n = out->tensor.fps_n;
        out->fps_d = out->tensor.fps_d;
        return StreamLayoutPtr(std::move(out));
    }
    if (!gst_structure_has_name(s, "video/x-raw"))
        return make_error(ErrorCode::NotSupported,
                          std::string("caps ") + gst_structure_get_name(s) +
                              " are neither video/x-raw nor other/tensors");

    if (auto r = read_video_info(caps, tiled, out.get()); !r)
        return unexpected(std::move(r).error());
    out->video = true;
    out->pixel_format = pixel_format_from_gst(GST_VIDEO_INFO_FORMAT(&out->vinfo));
    out->colorimetry_from_caps = gst_structure_has_field(s, "colorimetry");
    if (out->colorimetry_from_caps)
        out->colorimetry = colorimetry_from_gst(out->vinfo.colorimetry);
    out->frame_bytes = GST_VIDEO_INFO_SIZE(&out->vinfo);
    out->fps_n = GST_VIDEO_INFO_FPS_N(&out->vinfo);
    out->fps_d = GST_VIDEO_INFO_FPS_D(&out->vinfo);
    return StreamLayoutPtr(std::move(out));
}

} // namespace edgetensor::gst
