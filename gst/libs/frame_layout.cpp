// SPDX-License-Identifier: MIT
//
// The pooled frame layout (frame_layout.hpp): the row-stride rule for pooled video frames.

#include "frame_layout.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>

#include <edgetensor/types.hpp>

namespace edgetensor::gst
{

namespace
{

bool is_pow2(size_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

// Rounds every plane's stride up to its alignment, keeping each plane's row count, and lays
// the planes out again back to back in their original memory order.
bool realign_planes(GstVideoInfo* info, const std::array<size_t, GST_VIDEO_MAX_PLANES>& align)
{
    const guint n = std::min<guint>(GST_VIDEO_INFO_N_PLANES(info), GST_VIDEO_MAX_PLANES);
    if (n == 0)
        return false;
    std::array<guint, GST_VIDEO_MAX_PLANES> order{0, 1, 2, 3};
    // Insertion sort by offset: YV12 and friends keep planes out of index order.
    for (guint i = 1; i < n; ++i)
        for (guint k = i; k > 0 && info->offset[order[k]] < info->offset[order[k - 1]]; --k)
            std::swap(order[k], order[k - 1]);

    std::array<size_t, GST_VIDEO_MAX_PLANES> rows{};
    for (guint k = 0; k < n; ++k) {
        const guint p = order[k];
        const size_t end = k + 1 < n ? info->offset[order[k + 1]] : info->size;
        const size_t stride = size_t(info->stride[p]);
        if (stride == 0 || end < info->offset[p])
            return false;
        rows[p] = (end - info->offset[p] + stride - 1) / stride;
    }
    size_t off = info->offset[order[0]];
    for (guint k = 0; k < n; ++k) {
        const guint p = order[k];
        const size_t stride = align_up(size_t(info->stride[p]), std::max<size_t>(align[p], 1));
        if (stride > size_t(std::numeric_limits<gint>::max()))
            return false;
        info->stride[p] = gint(stride);
        info->offset[p] = off;
        off += stride * rows[p];
    }
    info->size = off;
    return true;
}

} // namespace

Result<FrameLayout> pooled_frame_layout(const StreamLayoutPtr& stream, size_t row_align,
                                        const GstVideoAlignment* align)
{
    if (!stream)
        return make_error(ErrorCode::InvalidArgument, "no stream layout");
    if (!is_pow2(row_align))
        return make_error(ErrorCode::InvalidArgument, "row alignment must be a power of two");
    FrameLayout out;
    out.stream = stream;
    out.size = stream->frame_bytes;
    if (!stream->video)
        return out;

    GstVideoInfo info = stream->vinfo;
    const GstVideoFormatInfo* finfo = info.finfo;
    if (GST_VIDEO_FORMAT_INFO_IS_TILED(finfo) ||
        GST_VIDEO_FORMAT_INFO_FORMAT(finfo) == GST_VIDEO_FORMAT_ENCODED)
        return make_error(ErrorCode::NotSupported,
                          std::string("video format ") + GST_VIDEO_FORMAT_INFO_NAME(finfo) +
                              " is tiled or opaque; edgetensor pools hold linear frames");
    if (GST_VIDEO_INFO_INTERLACE_MODE(&info) != GST_VIDEO_INTERLACE_MODE_PROGRESSIVE)
        return make_error(ErrorCode::NotSupported, "interlaced video is not supported");

    const GstVideoInfo& def = stream->vinfo;
    std::array<size_t, GST_VIDEO_MAX_PLANES> plane_align{};
    plane_align.fill(row_align);
    bool padded = false;
    if (align) {
        padded = align->padding_top || align->padding_bottom || align->padding_left ||
                 align->padding_right;
        for (guint i = 0; i < GST_VIDEO_MAX_PLANES; ++i)
            plane_align[i] = std::max<size_t>(plane_align[i], size_t(align->stride_align[i]) + 1);
    }
    if (padded) {
        // Padding moves the first pixel inside each plane; GStreamer's own aligner knows how.
        GstVideoAlignment a = *align;
        for (guint i = 0; i < GST_VIDEO_MAX_PLANES; ++i)
            a.stride_align[i] = guint(plane_align[i] - 1);
        if (!gst_video_info_align(&info, &a))
            return make_error(ErrorCode::InvalidArgument, "the video alignment cannot be applied");
    } else if (!realign_planes(&info, plane_align)) {
        return make_error(ErrorCode::InvalidArgument, "cannot align the planes of this format");
    }

    out.vinfo = info;
    out.size = info.size;
    for (guint i = 0; i < GST_VIDEO_INFO_N_PLANES(&info); ++i)
        out.differs_from_default = out.differs_from_default || info.stride[i] != def.stride[i] ||
                                   info.offset[i] != def.offset[i];
    return out;
}

} // namespace edgetensor::gst
