// SPDX-License-Identifier: MIT
//
// tensorconvert's mismatching and bottom-up input (tensorconvert_input.hpp).

#include "tensorconvert_input.hpp"

#include "frame_check.hpp"

#include <gst/base/gstbasetransform.h>

#include <algorithm>
#include <array>
#include <cstring>

// GST_ELEMENT_ERROR/WARNING log in GST_CAT_DEFAULT: the element's category, passed in.
#define GST_CAT_DEFAULT cat

namespace edgetensor::gst::tensorconvert
{

GstFlowReturn report_drop(GstElement* element, GstDebugCategory* cat, GstBuffer* inbuf,
                          const std::string& why, guint64 dropped, guint in_row)
{
    if (in_row >= kMaxConsecutiveDrops) {
        GST_ELEMENT_ERROR(
            element, STREAM, FORMAT,
            ("%u input buffers in a row do not match the caps; the last: %s.", in_row, why.c_str()),
            ("buffer %" GST_PTR_FORMAT "; %" G_GUINT64_FORMAT " dropped in all", inbuf, dropped));
        return GST_FLOW_ERROR;
    }
    if (in_row == 1)
        GST_ELEMENT_WARNING(
            element, STREAM, FORMAT,
            ("Dropping an input buffer that does not match the caps: %s.", why.c_str()),
            ("buffer %" GST_PTR_FORMAT "; %" G_GUINT64_FORMAT
             " dropped so far (property \"dropped\"); %u in a row are an error",
             inbuf, dropped, kMaxConsecutiveDrops));
    else
        GST_DEBUG_OBJECT(element, "dropping %" GST_PTR_FORMAT " (%u in a row): %s", inbuf, in_row,
                         why.c_str());
    return GST_BASE_TRANSFORM_FLOW_DROPPED;
}

void top_down_copy(const GstVideoFrame* frame, const GstVideoInfo* caps,
                   std::vector<uint8_t>* scratch, SourceFrame* src)
{
    const GstVideoFormatInfo* finfo = frame->info.finfo;
    const guint n = std::min<guint>(GST_VIDEO_FRAME_N_PLANES(frame), guint(src->planes.size()));
    std::array<size_t, 3> offset{}, pitch{}, rows{}, bytes{};
    size_t total = 0;
    for (guint p = 0; p < n; ++p) {
        bytes[p] = plane_row_bytes(finfo, p, GST_VIDEO_INFO_WIDTH(caps));
        rows[p] = plane_rows(finfo, p, GST_VIDEO_INFO_HEIGHT(caps));
        pitch[p] = (bytes[p] + 63) & ~size_t(63);
        offset[p] = total;
        total += pitch[p] * rows[p];
    }
    scratch->resize(total);
    for (guint p = 0; p < n; ++p) {
        const auto* sp = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(frame, p));
        const ptrdiff_t ss = GST_VIDEO_FRAME_PLANE_STRIDE(frame, p);
        uint8_t* dp = scratch->data() + offset[p];
        for (size_t y = 0; y < rows[p]; ++y)
            std::memcpy(dp + y * pitch[p], sp + ptrdiff_t(y) * ss, bytes[p]);
        src->planes[p] = {dp, pitch[p]};
    }
}

} // namespace edgetensor::gst::tensorconvert
