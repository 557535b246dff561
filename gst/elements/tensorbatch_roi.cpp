// SPDX-License-Identifier: MIT
//
// tensorbatch's regions of interest (tensorbatch_roi.hpp).

#include "tensorbatch_roi.hpp"

#include <gst/video/video.h>

#if EDGETENSOR_HAVE_GST_ANALYTICS && GST_CHECK_VERSION(1, 24, 0)
#include <gst/analytics/analytics.h>
#define TENSORBATCH_ANALYTICS 1
#else
#define TENSORBATCH_ANALYTICS 0
#endif

#include <algorithm>
#include <string>

namespace edgetensor::gst::tensorbatch
{

namespace
{

const char* kind_name(GstEdgeTensorBatchRoiKind kind)
{
    return kind == GST_EDGE_TENSOR_BATCH_ROI_ANALYTICS ? "object detection" : "ROI";
}

std::string describe(const RawRoi& r)
{
    std::string d = std::string(kind_name(r.kind)) + " " + std::to_string(r.id);
    if (r.label)
        d += std::string(" (") + g_quark_to_string(r.label) + ")";
    d += " at " + std::to_string(r.x) + "," + std::to_string(r.y) + " " + std::to_string(r.width) +
         "x" + std::to_string(r.height);
    return d;
}

bool label_wanted(GQuark label, const std::vector<std::string>& labels)
{
    if (labels.empty())
        return true;
    const char* name = label ? g_quark_to_string(label) : "";
    return std::find(labels.begin(), labels.end(), name) != labels.end();
}

} // namespace

bool analytics_supported() noexcept
{
    return TENSORBATCH_ANALYTICS != 0;
}

std::vector<RawRoi> rois_of(GstBuffer* buffer)
{
    std::vector<RawRoi> out;
    gpointer state = nullptr;
    while (GstMeta* m = gst_buffer_iterate_meta_filtered(
               buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
        const auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(m);
        RawRoi r;
        r.x = roi->x;
        r.y = roi->y;
        r.width = roi->w;
        r.height = roi->h;
        r.kind = GST_EDGE_TENSOR_BATCH_ROI_VIDEO;
        r.id = roi->id;
        r.label = roi->roi_type;
        out.push_back(r);
    }
#if TENSORBATCH_ANALYTICS
    if (GstAnalyticsRelationMeta* rel = gst_buffer_get_analytics_relation_meta(buffer)) {
        gpointer it = nullptr;
        GstAnalyticsODMtd od;
        while (gst_analytics_relation_meta_iterate(rel, &it, gst_analytics_od_mtd_get_mtd_type(),
                                                   &od)) {
            gint x = 0, y = 0, w = 0, h = 0;
            gfloat conf = 0.f;
            if (!gst_analytics_od_mtd_get_location(&od, &x, &y, &w, &h, &conf))
                continue;
            RawRoi r;
            r.x = x;
            r.y = y;
            r.width = w;
            r.height = h;
            r.kind = GST_EDGE_TENSOR_BATCH_ROI_ANALYTICS;
            r.id = gint(gst_analytics_mtd_get_id(&od));
            r.label = gst_analytics_od_mtd_get_obj_type(&od);
            out.push_back(r);
        }
    }
#endif
    return out;
}

FrameRois select_rois(const std::vector<RawRoi>& raw, guint width, guint height,
                      const RoiFilter& filter)
{
    FrameRois f;
    for (const RawRoi& r : raw) {
        if (r.width <= 0 || r.height <= 0) {
            f.refused.push_back(describe(r) + " is empty");
            continue;
        }
        if (r.x < 0 || r.y < 0 || r.x + r.width > int64_t(width) ||
            r.y + r.height > int64_t(height)) {
            f.refused.push_back(describe(r) + " does not lie inside the " + std::to_string(width) +
                                "x" + std::to_string(height) + " frame");
            continue;
        }
        if (!label_wanted(r.label, filter.labels) || r.width < int64_t(filter.min_size) ||
            r.height < int64_t(filter.min_size)) {
            ++f.filtered;
            continue;
        }
        Roi roi;
        roi.rect = Region{size_t(r.x), size_t(r.y), size_t(r.width), size_t(r.height)};
        roi.kind = r.kind;
        roi.id = r.id;
        roi.label = r.label;
        f.accepted.push_back(roi);
    }
    return f;
}

std::vector<size_t> batch_split(size_t n, size_t batch_size)
{
    std::vector<size_t> out;
    if (batch_size == 0)
        return out;
    for (size_t left = n; left > 0; left -= std::min(left, batch_size))
        out.push_back(std::min(left, batch_size));
    return out;
}

} // namespace edgetensor::gst::tensorbatch
