// SPDX-License-Identifier: MIT
//
// Frame checks and the row copy (frame_check.hpp).

#include "frame_check.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace edgetensor::gst
{

namespace
{

constexpr size_t kPaletteBytes = 256 * 4;

bool fail(std::string* why, std::string s)
{
    if (why)
        *why = std::move(s);
    return false;
}

std::string str(gint64 v)
{
    return std::to_string(v);
}

} // namespace

size_t plane_row_bytes(const GstVideoFormatInfo* finfo, guint plane, gint width) noexcept
{
    if (!finfo || width <= 0 || plane >= GST_VIDEO_FORMAT_INFO_N_PLANES(finfo) ||
        GST_VIDEO_FORMAT_INFO_IS_TILED(finfo))
        return 0;
    if (GST_VIDEO_FORMAT_INFO_HAS_PALETTE(finfo) && plane == 1)
        return kPaletteBytes;
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component(finfo, plane, comp);
    size_t end = 0;
    for (guint i = 0; i < GST_VIDEO_MAX_COMPONENTS && comp[i] >= 0; ++i) {
        const gint c = comp[i];
        const gint ps = GST_VIDEO_FORMAT_INFO_PSTRIDE(finfo, c);
        if (ps <= 0)
            return 0; // several pixels packed into words: not describable per component
        const gint cw = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH(finfo, c, width);
        if (cw <= 0)
            continue;
        const guint bits =
            GST_VIDEO_FORMAT_INFO_DEPTH(finfo, c) + GST_VIDEO_FORMAT_INFO_SHIFT(finfo, c);
        // The last sample of this component ends here; for odd-width 4:2:2 that is the V (or U)
        // byte after the last luma sample, which width x pixel-stride misses.
        const size_t last = size_t(GST_VIDEO_FORMAT_INFO_POFFSET(finfo, c)) +
                            size_t(ps) * size_t(cw - 1) + (bits + 7) / 8;
        // Padding bytes inside a pixel (RGBx) belong to the row as GStreamer counts it.
        end = std::max({end, last, size_t(ps) * size_t(cw)});
    }
    return end;
}

guint plane_rows(const GstVideoFormatInfo* finfo, guint plane, gint height) noexcept
{
    if (!finfo || height <= 0)
        return 0;
    if (GST_VIDEO_FORMAT_INFO_HAS_PALETTE(finfo) && plane == 1)
        return 1;
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component(finfo, plane, comp);
    if (comp[0] < 0)
        return 0;
    return guint(GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(finfo, comp[0], height));
}

bool check_video_frame(GstBuffer* buffer, const GstVideoInfo* info, std::string* why)
{
    const GstVideoFormatInfo* finfo = info->finfo;
    const guint n = GST_VIDEO_INFO_N_PLANES(info);
    const gint w = GST_VIDEO_INFO_WIDTH(info);
    const gint h = GST_VIDEO_INFO_HEIGHT(info);
    const char* fmt = gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(info));
    const gsize size = gst_buffer_get_size(buffer);
    GstVideoMeta* vm = gst_buffer_get_video_meta(buffer);

    gsize offsets[GST_VIDEO_MAX_PLANES] = {};
    gint strides[GST_VIDEO_MAX_PLANES] = {};
    if (vm) {
        if (vm->format != GST_VIDEO_INFO_FORMAT(info))
            return fail(why, std::string("its GstVideoMeta describes a ") +
                                 gst_video_format_to_string(vm->format) + " frame, the caps " +
                                 fmt);
        if (vm->width < guint(w) || vm->height < guint(h))
            return fail(why, "its GstVideoMeta describes " + str(vm->width) + "x" +
                                 str(vm->height) + ", less than the caps' " + str(w) + "x" +
                                 str(h));
        if (vm->n_planes != n)
            return fail(why, "its GstVideoMeta has " + str(vm->n_planes) + " planes, " + fmt +
                                 " has " + str(n));
        for (guint p = 0; p < n; ++p) {
            offsets[p] = vm->offset[p];
            strides[p] = vm->stride[p];
        }
    } else {
        if (size < GST_VIDEO_INFO_SIZE(info))
            return fail(why, "it holds " + str(gint64(size)) + " bytes, but a " + str(w) + "x" +
                                 str(h) + " " + fmt + " frame needs " +
                                 str(gint64(GST_VIDEO_INFO_SIZE(info))) +
                                 " (and no GstVideoMeta says its planes lie elsewhere)");
        for (guint p = 0; p < n; ++p) {
            offsets[p] = GST_VIDEO_INFO_PLANE_OFFSET(info, p);
            strides[p] = GST_VIDEO_INFO_PLANE_STRIDE(info, p);
        }
    }
    if (GST_VIDEO_FORMAT_INFO_IS_TILED(finfo))
        return true; // tile strides encode tile counts; gst_video_frame_map's checks stand

    for (guint p = 0; p < n; ++p) {
        const std::string plane = "plane " + str(p);
        const gint64 rows = plane_rows(finfo, p, h);
        gint64 rb = gint64(plane_row_bytes(finfo, p, w));
        const gint64 s = strides[p];
        if (rb == 0) // packed words (v210, ...): the caps' own pitch bounds a row
            rb = std::min<gint64>(GST_VIDEO_INFO_PLANE_STRIDE(info, p), std::llabs(s));
        if (rows > 1 && std::llabs(s) < rb)
            return fail(why, plane + "'s stride " + str(s) + " is shorter than one " + str(w) +
                                 "-pixel " + fmt + " row (" + str(rb) + " bytes)");
        // gst_video_frame_map() maps, per plane, the one memory holding its first byte (with a
        // GstVideoMeta) or the whole buffer (without).
        gint64 start = gint64(offsets[p]);
        gint64 avail = gint64(size);
        if (vm) {
            guint idx = 0, len = 0;
            gsize skip = 0;
            if (!gst_buffer_find_memory(buffer, offsets[p], 1, &idx, &len, &skip))
                return fail(why, plane + " starts at byte " + str(gint64(offsets[p])) +
                                     ", beyond the buffer's " + str(gint64(size)) + " bytes");
            start = gint64(skip);
            avail = gint64(gst_buffer_peek_memory(buffer, idx)->size);
        }
        const gint64 span = s * (rows > 0 ? rows - 1 : 0);
        const gint64 first = start + std::min<gint64>(span, 0);
        const gint64 end = start + std::max<gint64>(span, 0) + rb;
        if (first < 0)
            return fail(why, plane + " (offset " + str(gint64(offsets[p])) + ", stride " + str(s) +
                                 ", " + str(rows) + " rows) starts " + str(-first) +
                                 " bytes before its memory: a bottom-up plane's offset must "
                                 "point at its top row, (rows - 1) x |stride| bytes in");
        if (end > avail)
            return fail(why, plane + " (offset " + str(gint64(offsets[p])) + ", stride " + str(s) +
                                 ", " + str(rows) + " rows of " + str(rb) +
                                 " bytes) ends at byte " + str(end) +
                                 (vm ? " of its memory, which holds " : ", the buffer holds ") +
                                 str(avail));
    }
    return true;
}

bool frame_is_bottom_up(const GstVideoFrame* frame) noexcept
{
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(frame); ++p)
        if (GST_VIDEO_FRAME_PLANE_STRIDE(frame, p) < 0)
            return true;
    return false;
}

bool copy_video_frame(GstVideoFrame* dst, const GstVideoFrame* src)
{
    const GstVideoFormatInfo* finfo = dst->info.finfo;
    if (GST_VIDEO_FRAME_FORMAT(dst) != GST_VIDEO_FRAME_FORMAT(src) ||
        GST_VIDEO_FRAME_WIDTH(dst) > GST_VIDEO_FRAME_WIDTH(src) ||
        GST_VIDEO_FRAME_HEIGHT(dst) > GST_VIDEO_FRAME_HEIGHT(src))
        return false;
    const gint w = GST_VIDEO_FRAME_WIDTH(dst);
    const gint h = GST_VIDEO_FRAME_HEIGHT(dst);
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(dst); ++p)
        if (plane_row_bytes(finfo, p, w) == 0)
            return gst_video_frame_copy(dst, src); // packed words or tiles: GStreamer's copy
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(dst); ++p) {
        const size_t rb = plane_row_bytes(finfo, p, w);
        const guint rows = plane_rows(finfo, p, h);
        const ptrdiff_t ss = GST_VIDEO_FRAME_PLANE_STRIDE(src, p);
        const ptrdiff_t ds = GST_VIDEO_FRAME_PLANE_STRIDE(dst, p);
        if (rows > 1 && (size_t(std::abs(ss)) < rb || size_t(std::abs(ds)) < rb))
            return false;
        const auto* sp = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(src, p));
        auto* dp = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(dst, p));
        for (guint y = 0; y < rows; ++y)
            std::memcpy(dp + ptrdiff_t(y) * ds, sp + ptrdiff_t(y) * ss, rb);
    }
    return true;
}

} // namespace edgetensor::gst
