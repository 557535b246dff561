// SPDX-License-Identifier: MIT
//
// Reading DMA_DRM caps in the tests of the GStreamer 1.24+ DMA-BUF negotiation.

#pragma once

#include "dma_drm.hpp"

#include <gst/gst.h>

#include <set>
#include <string>

namespace edgetensor::test
{

/// Every drm-format string in the DMA_DRM structures of `caps`.
inline std::set<std::string> drm_formats_of(const GstCaps* caps)
{
    std::set<std::string> out;
    for (guint i = 0; i < gst_caps_get_size(caps); ++i) {
        if (!gst::is_dma_drm_structure(caps, i))
            continue;
        const GValue* v = gst_structure_get_value(gst_caps_get_structure(caps, i), "drm-format");
        if (v && G_VALUE_HOLDS_STRING(v))
            out.insert(g_value_get_string(v));
        else if (v && GST_VALUE_HOLDS_LIST(v))
            for (guint k = 0; k < gst_value_list_get_size(v); ++k)
                out.insert(g_value_get_string(gst_value_list_get_value(v, k)));
    }
    return out;
}

} // namespace edgetensor::test
