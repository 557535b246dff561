// SPDX-License-Identifier: MIT
//
// What the tensorconvert GstHarness tests share (test_tensorconvert.cpp: caps and pixels;
// test_tensorconvert_buffers.cpp: metas, memory, properties, states, the done-when pipeline).

#pragma once

#include "element_harness.hpp"
#include "gst_test_util.hpp"

#include <gst/check/gstharness.h>
#include <gst/video/video.h>

#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{

// A harness around a tensorconvert created with `props` (a gst-launch style property list, so
// READY-only properties are set before the harness starts it) and a bus of our own to read
// its error and warning messages.
struct Convert : ElementHarness {
    explicit Convert(const std::string& props = "", bool video_meta = true)
        : ElementHarness("tensorconvert " + props, video_meta)
    {
    }

    std::string out_caps_string()
    {
        CapsPtr caps(gst_pad_get_current_caps(h->sinkpad));
        if (!caps)
            return "";
        gst::GCharPtr s(gst_caps_to_string(caps.get()));
        return s.get();
    }
};

// A frame of `caps` in plain system memory (GStreamer's default layout), every byte of every
// row set from a deterministic pattern. `stride_pad` > 0 makes a strided frame instead: each
// plane's rows get that many extra bytes (filled with garbage) and a GstVideoMeta says so.
inline BufferPtr make_frame(const std::string& caps_str, guint seed = 0, gint stride_pad = 0)
{
    CapsPtr caps = caps_from(caps_str);
    GstVideoInfo info;
    if (!caps || !gst_video_info_from_caps(&info, caps.get())) {
        ADD_FAILURE() << "bad caps " << caps_str;
        return {};
    }
    GstVideoInfo layout = info;
    if (stride_pad > 0) {
        gsize offset = 0;
        for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); ++p) {
            layout.stride[p] = info.stride[p] + stride_pad;
            layout.offset[p] = offset;
            offset += gsize(layout.stride[p]) * GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(
                                                    info.finfo, p, GST_VIDEO_INFO_HEIGHT(&info));
        }
        layout.size = offset;
    }
    BufferPtr buf(gst_buffer_new_allocate(nullptr, layout.size, nullptr));
    if (stride_pad > 0)
        gst_buffer_add_video_meta_full(buf.get(), GST_VIDEO_FRAME_FLAG_NONE,
                                       GST_VIDEO_INFO_FORMAT(&info), GST_VIDEO_INFO_WIDTH(&info),
                                       GST_VIDEO_INFO_HEIGHT(&info), GST_VIDEO_INFO_N_PLANES(&info),
                                       layout.offset, layout.stride);
    GstMapInfo map;
    EXPECT_TRUE(gst_buffer_map(buf.get(), &map, GST_MAP_WRITE));
    std::memset(map.data, 0xa5, map.size); // the padding: garbage the converter must skip
    for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); ++p) {
        const gint rows =
            GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(info.finfo, p, GST_VIDEO_INFO_HEIGHT(&info));
        for (gint y = 0; y < rows; ++y) {
            guint8* row = map.data + layout.offset[p] + gsize(y) * gsize(layout.stride[p]);
            for (gint x = 0; x < info.stride[p]; ++x)
                row[x] = guint8((x * 7 + y * 13 + p * 50 + seed * 31) & 0xff);
        }
    }
    gst_buffer_unmap(buf.get(), &map);
    return buf;
}

inline guint get_uint(GstElement* e, const char* prop)
{
    guint v = 0;
    g_object_get(e, prop, &v, nullptr);
    return v;
}

inline constexpr const char* kNv12Caps =
    "video/x-raw,format=NV12,width=320,height=240,framerate=30/1,"
    "colorimetry=bt709";

} // namespace edgetensor::test
