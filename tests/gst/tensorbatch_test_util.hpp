// SPDX-License-Identifier: MIT
//
// What the tensorbatch tests (and tensorconvert's provenance and quantization tests) share:
// frames with a bright box on a dark background to find again in a slot, frames of a
// deterministic pattern, the engine's own output for a frame, a tensor's bytes, and a box found
// by thresholding a uint8 HWC picture.

#pragma once

#include "gst_test_util.hpp"

#include <edgetensor/convert.hpp>

#include <gst/check/gstharness.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::test
{

/// A rectangle in pixels, right/bottom exclusive.
struct Box {
    int x = 0;
    int y = 0;
    int w = 0;
    int h = 0;
};

/// A frame of `caps_str` (RGB, BGR, RGBA, BGRA, GRAY8 or NV12) in system memory: dark (16)
/// everywhere but `box`, which is bright (235) and neutral in colour.
inline BufferPtr frame_with_box(const std::string& caps_str, const Box& box)
{
    CapsPtr caps = caps_from(caps_str);
    GstVideoInfo info;
    if (!caps || !gst_video_info_from_caps(&info, caps.get())) {
        ADD_FAILURE() << "bad caps " << caps_str;
        return {};
    }
    BufferPtr buf(gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr));
    GstVideoFrame f;
    if (!gst_video_frame_map(&f, &info, buf.get(), GST_MAP_WRITE)) {
        ADD_FAILURE() << "cannot map a frame of " << caps_str;
        return {};
    }
    const int w = GST_VIDEO_INFO_WIDTH(&info);
    const int h = GST_VIDEO_INFO_HEIGHT(&info);
    const GstVideoFormat fmt = GST_VIDEO_INFO_FORMAT(&info);
    auto inside = [&](int x, int y) {
        return x >= box.x && x < box.x + box.w && y >= box.y && y < box.y + box.h;
    };
    if (fmt == GST_VIDEO_FORMAT_NV12) {
        auto* luma = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0));
        const int ls = GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                luma[y * ls + x] = inside(x, y) ? 235 : 16;
        auto* chroma = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 1));
        const int cs = GST_VIDEO_FRAME_PLANE_STRIDE(&f, 1);
        for (int y = 0; y < (h + 1) / 2; ++y)
            std::memset(chroma + y * cs, 128, size_t((w + 1) / 2 * 2));
    } else {
        const int ps = GST_VIDEO_FORMAT_INFO_PSTRIDE(info.finfo, 0);
        auto* px = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0));
        const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                std::memset(px + y * stride + x * ps, inside(x, y) ? 235 : 16, size_t(ps));
    }
    gst_video_frame_unmap(&f);
    return buf;
}

/// A frame of `caps_str` in system memory, every byte from a deterministic pattern of `seed`.
inline BufferPtr pattern_frame(const std::string& caps_str, guint seed)
{
    CapsPtr caps = caps_from(caps_str);
    GstVideoInfo info;
    if (!caps || !gst_video_info_from_caps(&info, caps.get())) {
        ADD_FAILURE() << "bad caps " << caps_str;
        return {};
    }
    BufferPtr buf(gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr));
    GstMapInfo map;
    EXPECT_TRUE(gst_buffer_map(buf.get(), &map, GST_MAP_WRITE));
    for (gsize i = 0; i < map.size; ++i)
        map.data[i] = guint8((i * 7 + (i / 97) * 13 + seed * 31) & 0xff);
    gst_buffer_unmap(buf.get(), &map);
    return buf;
}

/// What the engine writes for the frame `buf` of `caps_str` under `cfg` (source format, size
/// and colorimetry taken from the caps; colorimetry the caps leave out resolved as the elements
/// do, with GStreamer's defaults for the frame): the tight tensor bytes.
inline std::vector<uint8_t> engine_bytes(const std::string& caps_str, GstBuffer* buf,
                                         ConvertConfig cfg)
{
    CapsPtr caps = caps_from(caps_str);
    GstVideoInfo info;
    EXPECT_TRUE(gst_video_info_from_caps(&info, caps.get()));
    cfg.src_format =
        *convert_format_from_name(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)));
    cfg.src_width = size_t(GST_VIDEO_INFO_WIDTH(&info));
    cfg.src_height = size_t(GST_VIDEO_INFO_HEIGHT(&info));
    cfg.src_colorimetry = gst::colorimetry_from_gst(info.colorimetry);
    cfg.compute = ConvertCompute::Cpu;
    auto conv = Converter::create(cfg);
    if (!conv) {
        ADD_FAILURE() << conv.error().message();
        return {};
    }
    GstVideoFrame frame;
    EXPECT_TRUE(gst_video_frame_map(&frame, &info, buf, GST_MAP_READ));
    SourceFrame src;
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&frame); ++p)
        src.planes[p] = {static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, p)),
                         size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p))};
    std::vector<uint8_t> out(cfg.layout == TensorLayout::Chw
                                 ? conv->min_plane_stride() * output_format_channels(cfg.dst_format)
                                 : conv->min_row_stride() * conv->dst_height());
    auto r =
        conv->run(src, DestFrame{out.data(), conv->min_row_stride(), conv->min_plane_stride()});
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    gst_video_frame_unmap(&frame);
    return out;
}

/// The bounding box of the bright pixels (first channel > 127) of a `w` x `h` uint8 HWC picture
/// of `channels` channels starting at `data`; w = h = 0 when there are none.
inline Box bright_box(const uint8_t* data, int w, int h, int channels)
{
    int x0 = w, y0 = h, x1 = -1, y1 = -1;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            if (data[(size_t(y) * size_t(w) + size_t(x)) * size_t(channels)] > 127) {
                x0 = std::min(x0, x);
                y0 = std::min(y0, y);
                x1 = std::max(x1, x);
                y1 = std::max(y1, y);
            }
    if (x1 < 0)
        return {};
    return {x0, y0, x1 - x0 + 1, y1 - y0 + 1};
}

/// Maps the slot box `b` back to the source frame through `slot`, and expects it within
/// `tolerance` source pixels of `want` on every edge.
inline void expect_maps_back(const GstEdgeTensorBatchSlot* slot, const Box& b, const Box& want,
                             double tolerance)
{
    ASSERT_TRUE(slot);
    ASSERT_GT(b.w, 0) << "no box found in the slot";
    gdouble sx = 0, sy = 0, sw = 0, sh = 0;
    ASSERT_TRUE(
        gst_edge_tensor_batch_slot_box_to_source(slot, b.x, b.y, b.w, b.h, &sx, &sy, &sw, &sh));
    EXPECT_NEAR(sx, want.x, tolerance) << "left edge";
    EXPECT_NEAR(sy, want.y, tolerance) << "top edge";
    EXPECT_NEAR(sx + sw, want.x + want.w, tolerance) << "right edge";
    EXPECT_NEAR(sy + sh, want.y + want.h, tolerance) << "bottom edge";
}

/// A tensorbatch made from a gst-launch description (READY-only properties set before it
/// starts) with one GstHarness per requested sink pad (sink_0, sink_1, ...: the first one also
/// takes the batches from the source pad) and a bus of its own. The first harness plays the
/// element, so every later pad is requested while it plays.
/// "tensorbatch " and the properties EDGETENSOR_TEST_TENSORBATCH_PROPS adds to every tensorbatch
/// a test makes: meson runs the streams suites again with convert-on-arrival=true that way.
inline std::string tensorbatch_element()
{
    const char* extra = g_getenv("EDGETENSOR_TEST_TENSORBATCH_PROPS");
    return std::string("tensorbatch ") + (extra ? extra : "") + " ";
}

struct BatchHarness {
    GstElement* element = nullptr;
    std::vector<GstHarness*> pads;
    gst::GstObjectPtr<GstBus> bus{gst_bus_new()};

    explicit BatchHarness(const std::string& props, guint n_pads = 1)
    {
        GError* err = nullptr;
        element = gst_parse_launch((tensorbatch_element() + props).c_str(), &err);
        if (!element) {
            ADD_FAILURE() << "cannot create tensorbatch " << props << ": "
                          << (err ? err->message : "?");
            g_clear_error(&err);
            return;
        }
        g_clear_error(&err);
        gst_object_ref_sink(element);
        gst_element_set_bus(element, bus.get());
        for (guint i = 0; i < n_pads; ++i)
            add_pad();
    }
    ~BatchHarness()
    {
        for (auto it = pads.rbegin(); it != pads.rend(); ++it)
            gst_harness_teardown(*it);
        if (element) {
            gst_element_set_state(element, GST_STATE_NULL);
            gst_object_unref(element);
        }
        gst_bus_set_flushing(bus.get(), TRUE);
    }
    BatchHarness(const BatchHarness&) = delete;
    BatchHarness& operator=(const BatchHarness&) = delete;

    /// Requests the next sink pad; null when the element refuses it.
    GstHarness* add_pad()
    {
        GstHarness* h =
            gst_harness_new_with_element(element, "sink_%u", pads.empty() ? "src" : nullptr);
        if (h)
            pads.push_back(h);
        return h;
    }
    GstHarness* out() const { return pads.front(); }

    /// Pushes `buf` (a ref is taken) on pad `i` with PTS `pts`.
    GstFlowReturn push(size_t i, GstBuffer* buf, GstClockTime pts)
    {
        GstBuffer* b = gst_buffer_copy(buf);
        GST_BUFFER_PTS(b) = pts;
        GST_BUFFER_DURATION(b) = 33 * GST_MSECOND;
        return gst_harness_push(pads[i], b);
    }

    /// "message | debug" of every error (or warning) posted and not yet returned.
    std::string messages(GstMessageType type)
    {
        while (GstMessage* m = gst_bus_pop(bus.get())) {
            const GstMessageType t = GST_MESSAGE_TYPE(m);
            if (t == GST_MESSAGE_ERROR || t == GST_MESSAGE_WARNING) {
                (t == GST_MESSAGE_ERROR ? errors_ : warnings_) += bus_message_text(m) + "\n";
            } else if (t == GST_MESSAGE_ELEMENT && gst_message_get_structure(m) &&
                       gst_structure_has_name(gst_message_get_structure(m),
                                              GST_EDGE_TENSOR_STATS_NAME)) {
                stats_posted = true;
            }
            gst_message_unref(m);
        }
        return std::exchange(type == GST_MESSAGE_ERROR ? errors_ : warnings_, std::string());
    }

    /// The first error posted within `timeout` ("message | debug"), "" when none was.
    std::string wait_error(GstClockTime timeout = 10 * GST_SECOND)
    {
        std::string e = messages(GST_MESSAGE_ERROR);
        if (!e.empty())
            return e;
        if (GstMessage* m = gst_bus_timed_pop_filtered(bus.get(), timeout, GST_MESSAGE_ERROR)) {
            GError* err = nullptr;
            gchar* dbg = nullptr;
            gst_message_parse_error(m, &err, &dbg);
            e = std::string(err ? err->message : "") + " | " + (dbg ? dbg : "") + "\n";
            g_clear_error(&err);
            g_free(dbg);
            gst_message_unref(m);
        }
        return e;
    }

    /// The element's stats structure field `name`.
    guint64 stat(const char* name)
    {
        GstStructure* s = nullptr;
        g_object_get(element, "stats", &s, nullptr);
        guint64 v = 0;
        if (s)
            gst_structure_get_uint64(s, name, &v);
        if (s)
            gst_structure_free(s);
        return v;
    }

    bool stats_posted = false;

private:
    std::string errors_;
    std::string warnings_;
};

/// The slot `i` of the batch `buf` ([N, ...] of `slot_bytes` bytes each), tight.
inline std::vector<uint8_t> slot_bytes(GstBuffer* buf, size_t i, size_t slot_bytes)
{
    const std::vector<uint8_t> all = buffer_bytes(buf);
    if (all.size() < (i + 1) * slot_bytes) {
        ADD_FAILURE() << "the batch has " << all.size() << " bytes, slot " << i << " needs "
                      << (i + 1) * slot_bytes;
        return {};
    }
    return std::vector<uint8_t>(all.begin() + long(i * slot_bytes),
                                all.begin() + long((i + 1) * slot_bytes));
}

inline std::string caps_of(GstPad* pad)
{
    CapsPtr caps(gst_pad_get_current_caps(pad));
    if (!caps)
        return "";
    gst::GCharPtr s(gst_caps_to_string(caps.get()));
    return s.get();
}

} // namespace edgetensor::test
