// SPDX-License-Identifier: MIT
//
// Stock GStreamer conventions: tensorconvert's fill-color is ARGB, as GStreamer's video
// converter takes its border colour (GstVideoConverter.border-argb, videoconvertscale's borders);
// the colorimetry a conversion applies is visible (element warning when assumed, output caps,
// output meta); tensortestsrc's caps state colorimetry, pixel-aspect-ratio and interlace-mode;
// klass strings say what the elements handle.

#include "gst_test_util.hpp"

#include <gst/check/gstharness.h>
#include <gst/edgetensor/edgetensor.h>

#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

// A harness around `launch` (one element with properties) with a bus of our own.
struct Harness {
    GstHarness* h;
    GstBus* bus = gst_bus_new();
    explicit Harness(const std::string& launch) : h(gst_harness_new_parse(launch.c_str()))
    {
        gst_element_set_bus(h->element, bus);
    }
    ~Harness()
    {
        gst_harness_teardown(h);
        gst_bus_set_flushing(bus, TRUE);
        gst_object_unref(bus);
    }
    Harness(const Harness&) = delete;
    Harness& operator=(const Harness&) = delete;
    std::vector<std::string> warnings()
    {
        std::vector<std::string> out;
        while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING)) {
            GError* e = nullptr;
            gst_message_parse_warning(m, &e, nullptr);
            out.emplace_back(e ? e->message : "");
            g_clear_error(&e);
            gst_message_unref(m);
        }
        return out;
    }
    /// The element inside the harness's bin.
    GstElement* element(const char* factory)
    {
        GstIterator* it = gst_bin_iterate_elements(GST_BIN(h->element));
        GValue v = G_VALUE_INIT;
        GstElement* found = nullptr;
        while (!found && gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
            auto* e = GST_ELEMENT(g_value_get_object(&v));
            if (std::strcmp(GST_OBJECT_NAME(gst_element_get_factory(e)), factory) == 0)
                found = e;
            g_value_reset(&v);
        }
        g_value_unset(&v);
        gst_iterator_free(it);
        return found;
    }
};

BufferPtr nv12_frame(int w, int h, guint8 y, guint8 uv)
{
    const gsize luma = gsize(w) * gsize(h);
    GstBuffer* b = gst_buffer_new_allocate(nullptr, luma * 3 / 2, nullptr);
    gst_buffer_memset(b, 0, y, luma);
    gst_buffer_memset(b, luma, uv, luma / 2);
    return BufferPtr(b);
}

std::string caps_field(GstPad* pad, const char* field)
{
    CapsPtr caps(gst_pad_get_current_caps(pad));
    if (!caps)
        return "(no caps)";
    const char* v = gst_structure_get_string(gst_caps_get_structure(caps.get(), 0), field);
    return v ? v : "(none)";
}

// ---- fill-color ----------------------------------------------------------------------------

// GStreamer's video converter (what videoconvertscale draws its borders with) takes the border
// colour as ARGB, GstVideoConverter.border-argb, default opaque black: so does fill-color.
std::vector<guint8> stock_bar_pixel(guint32 argb, GstVideoFormat format, size_t bpp)
{
    GstVideoInfo in, out;
    gst_video_info_set_format(&in, GST_VIDEO_FORMAT_NV12, 64, 16);
    gst_video_info_set_format(&out, format, 32, 32);
    GstStructure* config = gst_structure_new(
        "GstVideoConverter", GST_VIDEO_CONVERTER_OPT_DEST_X, G_TYPE_INT, 0,
        GST_VIDEO_CONVERTER_OPT_DEST_Y, G_TYPE_INT, 12, GST_VIDEO_CONVERTER_OPT_DEST_WIDTH,
        G_TYPE_INT, 32, GST_VIDEO_CONVERTER_OPT_DEST_HEIGHT, G_TYPE_INT, 8,
        GST_VIDEO_CONVERTER_OPT_FILL_BORDER, G_TYPE_BOOLEAN, TRUE,
        GST_VIDEO_CONVERTER_OPT_BORDER_ARGB, G_TYPE_UINT, argb, nullptr);
    GstVideoConverter* conv = gst_video_converter_new(&in, &out, config);
    if (!conv)
        return {};
    BufferPtr src(gst_buffer_new_allocate(nullptr, in.size, nullptr));
    gst_buffer_memset(src.get(), 0, 128, in.size);
    BufferPtr dst(gst_buffer_new_allocate(nullptr, out.size, nullptr));
    GstVideoFrame fi, fo;
    std::vector<guint8> px;
    if (gst_video_frame_map(&fi, &in, src.get(), GST_MAP_READ)) {
        if (gst_video_frame_map(&fo, &out, dst.get(), GST_MAP_WRITE)) {
            gst_video_converter_frame(conv, &fi, &fo);
            const auto* p = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&fo, 0));
            px.assign(p, p + bpp);
            gst_video_frame_unmap(&fo);
        }
        gst_video_frame_unmap(&fi);
    }
    gst_video_converter_free(conv);
    return px;
}

TEST(Conventions, FillColorIsArgbWithADefaultOfOpaqueBlack)
{
    GstElement* ours = gst_element_factory_make("tensorconvert", nullptr);
    ASSERT_TRUE(ours);
    GParamSpec* fill = g_object_class_find_property(G_OBJECT_GET_CLASS(ours), "fill-color");
    ASSERT_TRUE(fill);
    EXPECT_EQ(G_PARAM_SPEC_UINT(fill)->default_value, 0xff000000u);
    EXPECT_EQ(G_PARAM_SPEC_UINT(fill)->maximum, G_MAXUINT32);
    // The value a GStreamer user writes for an opaque colour is accepted as is.
    gst_util_set_object_arg(G_OBJECT(ours), "fill-color", "0xff000000");
    guint v = 0;
    g_object_get(ours, "fill-color", &v, nullptr);
    EXPECT_EQ(v, 0xff000000u);
    gst_object_unref(ours);
}

// 64x16 into 32x32 with letterbox: rows 0..11 and 20..31 are the fill.
std::vector<guint8> bar_pixel(const char* fill, const char* format, size_t bpp)
{
    std::string nick(format);
    for (char& ch : nick)
        ch = char(g_ascii_tolower(ch));
    Harness t(std::string("tensorconvert width=32 height=32 letterbox=true format=") + nick +
              " fill-color=" + fill);
    gst_harness_set_src_caps_str(t.h, "video/x-raw,format=NV12,width=64,height=16,"
                                      "colorimetry=bt601,framerate=30/1");
    gst_harness_set_sink_caps_str(t.h, (std::string("video/x-raw,format=") + format).c_str());
    if (gst_harness_push(t.h, nv12_frame(64, 16, 128, 128).release()) != GST_FLOW_OK)
        return {};
    BufferPtr out(gst_harness_pull(t.h));
    GstMapInfo map;
    if (!out || !gst_buffer_map(out.get(), &map, GST_MAP_READ))
        return {};
    std::vector<guint8> px(map.data, map.data + bpp); // pixel (0, 0): a bar
    gst_buffer_unmap(out.get(), &map);
    return px;
}

TEST(Conventions, FillColorAlphaReachesFourChannelOutputsOnly)
{
    EXPECT_EQ(bar_pixel("0x80112233", "RGB", 3), (std::vector<guint8>{0x11, 0x22, 0x33}));
    EXPECT_EQ(bar_pixel("0x80112233", "BGR", 3), (std::vector<guint8>{0x33, 0x22, 0x11}));
    EXPECT_EQ(bar_pixel("0x80112233", "RGBA", 4), (std::vector<guint8>{0x11, 0x22, 0x33, 0x80}));
    EXPECT_EQ(bar_pixel("0xff0000ff", "RGB", 3), (std::vector<guint8>{0, 0, 0xff}))
        << "0xAARRGGBB: blue is the low byte";
    // The default is opaque black.
    EXPECT_EQ(bar_pixel("0xff000000", "RGBA", 4), (std::vector<guint8>{0, 0, 0, 0xff}));
}

TEST(Conventions, FillColorBarsEqualTheStockConvertersBorderForTheSameArgb)
{
    for (guint32 argb : {0xff000000u, 0x80112233u, 0xff727272u, 0x00ffffffu}) {
        gchar hex[16];
        g_snprintf(hex, sizeof hex, "0x%08x", argb);
        EXPECT_EQ(bar_pixel(hex, "RGBA", 4), stock_bar_pixel(argb, GST_VIDEO_FORMAT_RGBA, 4))
            << hex;
        EXPECT_EQ(bar_pixel(hex, "RGB", 3), stock_bar_pixel(argb, GST_VIDEO_FORMAT_RGB, 3)) << hex;
    }
}

// ---- colorimetry ---------------------------------------------------------------------------

TEST(Conventions, AssumedColorimetryIsAnElementWarningOncePerAssumption)
{
    Harness t("tensorconvert width=32 height=32");
    gst_harness_set_sink_caps_str(t.h, "other/tensors");
    gst_harness_set_src_caps_str(t.h, "video/x-raw,format=NV12,width=1280,height=720,"
                                      "framerate=30/1");
    for (int n = 0; n < 3; ++n) {
        ASSERT_EQ(gst_harness_push(t.h, nv12_frame(1280, 720, 100, 128).release()), GST_FLOW_OK);
        gst_buffer_unref(gst_harness_pull(t.h));
    }
    auto w = t.warnings();
    ASSERT_EQ(w.size(), 1u) << "warned once";
    EXPECT_NE(w[0].find("assuming \"bt709\""), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("matrix, range"), std::string::npos) << w[0];

    // Another unlabelled size, another assumption: said again.
    gst_harness_set_src_caps_str(t.h, "video/x-raw,format=NV12,width=640,height=480,"
                                      "framerate=30/1");
    ASSERT_EQ(gst_harness_push(t.h, nv12_frame(640, 480, 100, 128).release()), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(t.h));
    w = t.warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("assuming \"bt601\""), std::string::npos) << w[0];

    // Labelled input: nothing assumed, nothing said.
    gst_harness_set_src_caps_str(t.h, "video/x-raw,format=NV12,width=640,height=480,"
                                      "colorimetry=bt709,framerate=30/1");
    ASSERT_EQ(gst_harness_push(t.h, nv12_frame(640, 480, 100, 128).release()), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(t.h));
    EXPECT_TRUE(t.warnings().empty());
}

struct MetaColorimetry {
    std::string applied;
    std::string values;
    guint32 applied_packed = 0;
};

MetaColorimetry convert_meta(const std::string& in_caps, const std::string& sink_caps)
{
    Harness t("tensorconvert width=16 height=16");
    gst_harness_set_sink_caps_str(t.h, sink_caps.c_str());
    gst_harness_set_src_caps_str(t.h, in_caps.c_str());
    MetaColorimetry r;
    if (gst_harness_push(t.h, nv12_frame(64, 64, 100, 128).release()) != GST_FLOW_OK)
        return r;
    BufferPtr out(gst_harness_pull(t.h));
    GstEdgeTensorMeta* m = out ? gst_buffer_get_edge_tensor_meta(out.get()) : nullptr;
    if (!m)
        return r;
    gst::GCharPtr a(gst_edge_tensor_meta_get_applied_colorimetry(m));
    gst::GCharPtr v(gst_edge_tensor_meta_get_colorimetry(m));
    r.applied = a ? a.get() : "(null)";
    r.values = v ? v.get() : "(null)";
    r.applied_packed = m->applied_colorimetry;
    return r;
}

TEST(Conventions, OutputMetaRecordsTheMatrixRangeAndTransferApplied)
{
    const std::string nv12 = "video/x-raw,format=NV12,width=64,height=64,framerate=30/1";
    // As labelled.
    auto m = convert_meta(nv12 + ",colorimetry=bt709", "other/tensors");
    EXPECT_EQ(m.applied, "bt709");
    EXPECT_EQ(m.applied_packed, EDGETENSOR_COLORIMETRY_PACK(EDGETENSOR_COLOR_PRIMARIES_BT709,
                                                            EDGETENSOR_COLOR_TRANSFER_BT709,
                                                            EDGETENSOR_COLOR_MATRIX_BT709,
                                                            EDGETENSOR_COLOR_RANGE_LIMITED));
    m = convert_meta(nv12 + ",colorimetry=bt2020", "other/tensors");
    EXPECT_EQ(EDGETENSOR_COLORIMETRY_MATRIX(m.applied_packed), EDGETENSOR_COLOR_MATRIX_BT2020);
    // Full range is honoured, and recorded.
    m = convert_meta(nv12 + ",colorimetry=1:3:5:1", "other/tensors");
    EXPECT_EQ(EDGETENSOR_COLORIMETRY_RANGE(m.applied_packed), EDGETENSOR_COLOR_RANGE_FULL);
    EXPECT_EQ(EDGETENSOR_COLORIMETRY_MATRIX(m.applied_packed), EDGETENSOR_COLOR_MATRIX_BT709);
    // Unlabelled: GStreamer's default for the frame, every axis resolved.
    m = convert_meta(nv12, "other/tensors");
    EXPECT_EQ(m.applied, "bt601");
    // The output's own values: full range RGB, the source's transfer and primaries.
    m = convert_meta(nv12 + ",colorimetry=bt709", "video/x-raw,format=RGB");
    GstVideoColorimetry c;
    ASSERT_TRUE(gst_video_colorimetry_from_string(&c, m.values.c_str())) << m.values;
    EXPECT_EQ(c.range, GST_VIDEO_COLOR_RANGE_0_255);
    EXPECT_EQ(c.matrix, GST_VIDEO_COLOR_MATRIX_RGB);
    EXPECT_EQ(c.transfer, GST_VIDEO_TRANSFER_BT709);
    EXPECT_EQ(c.primaries, GST_VIDEO_COLOR_PRIMARIES_BT709);
    EXPECT_EQ(m.applied, "bt709");
}

TEST(Conventions, VideoOutputCapsStateTheirColorimetry)
{
    Harness t("tensorconvert width=32 height=32");
    gst_harness_set_sink_caps_str(t.h, "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.h, "video/x-raw,format=NV12,width=64,height=64,"
                                      "framerate=30/1");
    ASSERT_EQ(gst_harness_push(t.h, nv12_frame(64, 64, 100, 128).release()), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(t.h));
    const std::string c = caps_field(t.h->sinkpad, "colorimetry");
    GstVideoColorimetry cinfo;
    ASSERT_TRUE(gst_video_colorimetry_from_string(&cinfo, c.c_str())) << c;
    EXPECT_EQ(cinfo.range, GST_VIDEO_COLOR_RANGE_0_255) << c;
    EXPECT_EQ(cinfo.matrix, GST_VIDEO_COLOR_MATRIX_RGB) << c;
    EXPECT_EQ(cinfo.primaries, GST_VIDEO_COLOR_PRIMARIES_SMPTE170M)
        << c << ": an unlabelled SD frame's primaries, carried through";
    EXPECT_EQ(cinfo.transfer, GST_VIDEO_TRANSFER_BT601) << c;
}

// ---- tensortestsrc caps --------------------------------------------------------------------

std::string src_caps(const char* sink_caps)
{
    Harness s("tensortestsrc num-buffers=1");
    gst_harness_set_sink_caps_str(s.h, sink_caps);
    gst_harness_play(s.h);
    BufferPtr b(gst_harness_pull(s.h));
    CapsPtr caps(gst_pad_get_current_caps(s.h->sinkpad));
    gst::GCharPtr str(caps ? gst_caps_to_string(caps.get()) : g_strdup(""));
    return str.get();
}

TEST(Conventions, TensortestsrcCapsStateColorimetryPixelAspectRatioAndInterlaceMode)
{
    std::string c = src_caps("video/x-raw,format=NV12,width=1920,height=1080");
    EXPECT_NE(c.find("colorimetry=(string)bt709"), std::string::npos) << c;
    EXPECT_NE(c.find("pixel-aspect-ratio=(fraction)1/1"), std::string::npos) << c;
    EXPECT_NE(c.find("interlace-mode=(string)progressive"), std::string::npos) << c;
    c = src_caps("video/x-raw,format=I420,width=640,height=480");
    EXPECT_NE(c.find("colorimetry=(string)bt601"), std::string::npos) << c;
    c = src_caps("video/x-raw,format=RGBA,width=64,height=64");
    EXPECT_NE(c.find("colorimetry=(string)sRGB"), std::string::npos) << c;
    // Downstream's choice wins, and is what the frames are encoded with.
    c = src_caps("video/x-raw,format=NV12,width=1920,height=1080,colorimetry={bt601,bt2020}");
    EXPECT_NE(c.find("colorimetry=(string)bt601"), std::string::npos) << c;
    // A sink that accepts only another aspect ratio is not served square pixels as something else.
    Harness s("tensortestsrc num-buffers=1");
    gst_harness_set_sink_caps_str(s.h, "video/x-raw,format=NV12,width=64,height=64,"
                                       "pixel-aspect-ratio=4/3");
    gst_harness_play(s.h);
    MiniObjectPtr<GstMessage> err(
        gst_bus_timed_pop_filtered(s.bus, 10 * GST_SECOND, GST_MESSAGE_ERROR));
    EXPECT_TRUE(err) << "not-negotiated rather than square pixels labelled 4/3";
}

// ---- klass ---------------------------------------------------------------------------------

std::string klass_of(const char* factory)
{
    GstElementFactory* f = gst_element_factory_find(factory);
    if (!f)
        return "";
    std::string k = gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS);
    gst_object_unref(f);
    return k;
}

TEST(Conventions, KlassNamesTheTensorMediaEachElementHandles)
{
    // gst-inspect's Klass: tensorimport filters video/x-raw and other/tensors alike.
    EXPECT_EQ(klass_of("tensorimport"), "Filter/Video/Tensor");
    EXPECT_EQ(klass_of("tensortestsrc"), "Source/Video/Tensor");
    EXPECT_EQ(klass_of("tensorconvert"), "Filter/Converter/Video/Scaler/Tensor");
    GstElement* imp = gst_element_factory_make("tensorimport", nullptr);
    ASSERT_TRUE(imp);
    GParamSpec* p = g_object_class_find_property(G_OBJECT_GET_CLASS(imp), "copy-mode");
    const std::string blurb = g_param_spec_get_blurb(p);
    EXPECT_NE(blurb.find("shared memory"), std::string::npos)
        << "copies land in shared memory on hosts without DMA-BUF: " << blurb;
    gst_object_unref(imp);
}

} // namespace
} // namespace edgetensor::test
