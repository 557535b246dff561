// SPDX-License-Identifier: MIT
//
// tensorconvert through GstHarness: caps negotiation both ways, pixels against the engine,
// letterbox reporting, GstEdgeTensorMeta, system/pool/strided input, refused settings and
// caps, state cycling, and the done-when pipeline down to a decoded PNG.

#include "fd_count.hpp"
#include "gst_test_util.hpp"
#include "require.hpp"

#include <gst/check/gstharness.h>

#include <edgetensor/convert.hpp>

#include <gst/allocators/allocators.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::test
{
namespace
{

struct HarnessPtr {
    GstHarness* h = nullptr;
    explicit HarnessPtr(GstHarness* harness) : h(harness) {}
    ~HarnessPtr()
    {
        if (h)
            gst_harness_teardown(h);
    }
    HarnessPtr(const HarnessPtr&) = delete;
    HarnessPtr& operator=(const HarnessPtr&) = delete;
    GstHarness* operator->() const { return h; }
    GstHarness* get() const { return h; }
};

using BusPtr = gst::GstObjectPtr<GstBus>;

GstStaticPadTemplate any_src =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
GstStaticPadTemplate any_sink =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

// A harness around a tensorconvert created with `props` (a gst-launch style property list, so
// READY-only properties are set before the harness starts it) and a bus of our own to read
// its error and warning messages.
struct Convert {
    HarnessPtr h{nullptr};
    GstElement* element = nullptr;
    BusPtr bus{gst_bus_new()};

    Convert(const Convert&) = delete;
    Convert& operator=(const Convert&) = delete;
    ~Convert()
    {
        // Queued messages hold references to the element, which holds the bus: drop them or
        // neither is ever freed.
        gst_bus_set_flushing(bus.get(), TRUE);
    }

    explicit Convert(const std::string& props = "", bool video_meta = true)
    {
        GError* err = nullptr;
        element = gst_parse_launch(("tensorconvert " + props).c_str(), &err);
        if (!element) {
            ADD_FAILURE() << "cannot create tensorconvert " << props << ": "
                          << (err ? err->message : "?");
            g_clear_error(&err);
            return;
        }
        if (err) {
            ADD_FAILURE() << "tensorconvert " << props << ": " << err->message;
            g_clear_error(&err);
        }
        gst_element_set_bus(element, bus.get());
        h.h = gst_harness_new_empty();
        gst_harness_add_element_full(h.get(), element, &any_src, "sink", &any_sink, "src");
        gst_object_unref(element); // the harness holds it
        if (video_meta)
            gst_harness_add_propose_allocation_meta(h.get(), GST_VIDEO_META_API_TYPE, nullptr);
    }

    // The text of every error (or warning) message posted so far.
    std::string messages(GstMessageType type) { return bus_messages_text(bus.get(), type); }

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
BufferPtr make_frame(const std::string& caps_str, guint seed = 0, gint stride_pad = 0)
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

// What the engine makes of `buf` (a frame of `caps_str`) under `cfg` (src format, size and
// colorimetry are taken from the caps): the tight output tensor bytes.
std::vector<uint8_t> engine_output(const std::string& caps_str, GstBuffer* buf, ConvertConfig cfg)
{
    CapsPtr caps = caps_from(caps_str);
    GstVideoInfo info;
    EXPECT_TRUE(gst_video_info_from_caps(&info, caps.get()));
    cfg.src_format =
        *convert_format_from_name(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)));
    cfg.src_width = size_t(GST_VIDEO_INFO_WIDTH(&info));
    cfg.src_height = size_t(GST_VIDEO_INFO_HEIGHT(&info));
    if (gst_structure_has_field(gst_caps_get_structure(caps.get(), 0), "colorimetry"))
        cfg.src_colorimetry = gst::colorimetry_from_gst(info.colorimetry);
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

std::vector<uint8_t> bytes_of(GstBuffer* b)
{
    GstMapInfo map;
    if (!gst_buffer_map(b, &map, GST_MAP_READ))
        return {};
    std::vector<uint8_t> v(map.data, map.data + map.size);
    gst_buffer_unmap(b, &map);
    return v;
}

// Rows of a video/x-raw output frame, tight (the frame may carry a padded GstVideoMeta).
std::vector<uint8_t> tight_video_bytes(GstBuffer* b, const std::string& caps_str)
{
    CapsPtr caps = caps_from(caps_str);
    GstVideoInfo info;
    EXPECT_TRUE(gst_video_info_from_caps(&info, caps.get()));
    GstVideoFrame f;
    if (!gst_video_frame_map(&f, &info, b, GST_MAP_READ)) {
        ADD_FAILURE() << "cannot map the output frame";
        return {};
    }
    const size_t row =
        size_t(GST_VIDEO_INFO_WIDTH(&info)) * size_t(GST_VIDEO_FORMAT_INFO_PSTRIDE(info.finfo, 0));
    std::vector<uint8_t> v;
    for (gint y = 0; y < GST_VIDEO_INFO_HEIGHT(&info); ++y) {
        const auto* p = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0)) +
                        size_t(y) * size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0));
        v.insert(v.end(), p, p + row);
    }
    gst_video_frame_unmap(&f);
    return v;
}

guint get_uint(GstElement* e, const char* prop)
{
    guint v = 0;
    g_object_get(e, prop, &v, nullptr);
    return v;
}

std::string get_string(GstElement* e, const char* prop)
{
    gchar* v = nullptr;
    g_object_get(e, prop, &v, nullptr);
    std::string s = v ? v : "";
    g_free(v);
    return s;
}

const char* kNv12Caps = "video/x-raw,format=NV12,width=320,height=240,framerate=30/1,"
                        "colorimetry=bt709";

// ---- caps negotiation ----------------------------------------------------------------------

struct TensorCapsCase {
    const char* props;
    const char* types;
    const char* dims;
    size_t bytes;
};

class TensorConvertTensorCaps : public ::testing::TestWithParam<TensorCapsCase>
{
};

TEST_P(TensorConvertTensorCaps, NegotiatesNnstreamerDimensionsInnermostFirst)
{
    const TensorCapsCase& c = GetParam();
    Convert t(c.props);
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(out);
    const std::string caps = t.out_caps_string();
    EXPECT_NE(caps.find(std::string("types=(string)") + c.types), std::string::npos) << caps;
    EXPECT_NE(caps.find(std::string("dimensions=(string)") + c.dims), std::string::npos) << caps;
    EXPECT_NE(caps.find("num_tensors=(int)1"), std::string::npos) << caps;
    EXPECT_NE(caps.find("format=(string)static"), std::string::npos) << caps;
    EXPECT_NE(caps.find("framerate=(fraction)30/1"), std::string::npos) << caps;
    EXPECT_EQ(gst_buffer_get_size(out.get()), c.bytes);
}

INSTANTIATE_TEST_SUITE_P(
    LayoutsAndDtypes, TensorConvertTensorCaps,
    ::testing::Values(
        TensorCapsCase{"width=64 height=48", "uint8", "3:64:48:1", 64 * 48 * 3},
        TensorCapsCase{"width=64 height=48 layout=chw", "uint8", "64:48:3:1", 64 * 48 * 3},
        TensorCapsCase{"width=64 height=48 dtype=int8", "int8", "3:64:48:1", 64 * 48 * 3},
        TensorCapsCase{"width=64 height=48 dtype=float16 layout=chw", "float16", "64:48:3:1",
                       64 * 48 * 3 * 2},
        TensorCapsCase{"width=64 height=48 dtype=float32", "float32", "3:64:48:1", 64 * 48 * 3 * 4},
        TensorCapsCase{"width=64 height=48 dtype=float32 layout=chw format=rgba", "float32",
                       "64:48:4:1", 64 * 48 * 4 * 4},
        TensorCapsCase{"width=64 height=48 format=gray", "uint8", "1:64:48:1", 64 * 48},
        // 0 = the input's size, or the crop's.
        TensorCapsCase{"", "uint8", "3:320:240:1", 320 * 240 * 3},
        TensorCapsCase{"crop=10,20,100,50", "uint8", "3:100:50:1", 100 * 50 * 3},
        TensorCapsCase{"height=16", "uint8", "3:320:16:1", 320 * 16 * 3}));

struct VideoCapsCase {
    const char* format_prop;
    const char* video_format;
    size_t bpp;
};

class TensorConvertVideoCaps : public ::testing::TestWithParam<VideoCapsCase>
{
};

TEST_P(TensorConvertVideoCaps, Uint8HwcOutputIsViewableVideo)
{
    const VideoCapsCase& c = GetParam();
    Convert t(std::string("width=100 height=60 format=") + c.format_prop);
    gst_harness_set_sink_caps_str(t.h.get(),
                                  (std::string("video/x-raw,format=") + c.video_format).c_str());
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(out);
    const std::string caps = t.out_caps_string();
    EXPECT_NE(caps.find("video/x-raw"), std::string::npos) << caps;
    EXPECT_NE(caps.find(std::string("format=(string)") + c.video_format), std::string::npos)
        << caps;
    EXPECT_NE(caps.find("width=(int)100"), std::string::npos) << caps;
    EXPECT_NE(caps.find("height=(int)60"), std::string::npos) << caps;
    EXPECT_EQ(tight_video_bytes(out.get(), caps).size(), 100u * 60u * c.bpp);
}

INSTANTIATE_TEST_SUITE_P(Formats, TensorConvertVideoCaps,
                         ::testing::Values(VideoCapsCase{"rgb", "RGB", 3},
                                           VideoCapsCase{"bgr", "BGR", 3},
                                           VideoCapsCase{"rgba", "RGBA", 4},
                                           VideoCapsCase{"bgra", "BGRA", 4},
                                           VideoCapsCase{"gray", "GRAY8", 1}));

TEST(TensorConvert, UpstreamCapsFollowTheOutputSizeWhenPropertiesLeaveItOpen)
{
    Convert t("");
    gst_harness_set_sink_caps_str(t.h.get(), "video/x-raw,format=RGB,width=77,height=55");
    CapsPtr sink_caps(gst_pad_peer_query_caps(t.h->srcpad, nullptr));
    ASSERT_TRUE(sink_caps);
    const GstStructure* s = gst_caps_get_structure(sink_caps.get(), 0);
    gint w = 0, h = 0;
    EXPECT_TRUE(gst_structure_get_int(s, "width", &w));
    EXPECT_TRUE(gst_structure_get_int(s, "height", &h));
    EXPECT_EQ(w, 77);
    EXPECT_EQ(h, 55);

    // With width/height set the input may be any size.
    Convert sized("width=77 height=55");
    gst_harness_set_sink_caps_str(sized.h.get(), "video/x-raw,format=RGB,width=77,height=55");
    CapsPtr any_size(gst_pad_peer_query_caps(sized.h->srcpad, nullptr));
    CapsPtr big = caps_from("video/x-raw,format=NV12,width=1920,height=1080");
    EXPECT_TRUE(gst_caps_can_intersect(any_size.get(), big.get()));
    // ... and tensors downstream dictate the input through their dimensions string.
    Convert chw("layout=chw dtype=float32");
    gst_harness_set_sink_caps_str(chw.h.get(), "other/tensors,num_tensors=1,format=static,"
                                               "types=float32,dimensions=(string)40:30:3:1");
    CapsPtr from_dims(gst_pad_peer_query_caps(chw.h->srcpad, nullptr));
    ASSERT_FALSE(gst_caps_is_empty(from_dims.get()));
    s = gst_caps_get_structure(from_dims.get(), 0);
    EXPECT_TRUE(gst_structure_get_int(s, "width", &w));
    EXPECT_TRUE(gst_structure_get_int(s, "height", &h));
    EXPECT_EQ(w, 40);
    EXPECT_EQ(h, 30);
}

TEST(TensorConvert, NegativeVideoOutputWithFloatDtypeIsANegotiationErrorThatSaysWhy)
{
    Convert t("width=64 height=64 dtype=float32");
    gst_harness_set_sink_caps_str(t.h.get(), "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()),
              GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("video/x-raw output needs dtype=uint8 layout=hwc"), std::string::npos)
        << err;
    EXPECT_NE(err.find("dtype=float32"), std::string::npos) << err;
}

TEST(TensorConvert, NegativeTensorsOfAnotherDtypeAreRefused)
{
    Convert t("width=64 height=64 dtype=uint8");
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors,types=float32");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()),
              GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("does not match what downstream accepts"), std::string::npos) << err;
}

TEST(TensorConvert, NegativeUnsupportedInputCapsAreRefused)
{
    Convert t("width=64 height=64");
    CapsPtr unsupported = caps_from("video/x-raw,format=I420_10LE,width=64,height=64");
    EXPECT_FALSE(gst_pad_query_accept_caps(gst_element_get_static_pad(t.element, "sink"),
                                           unsupported.get()));
    gst_harness_set_src_caps(t.h.get(), unsupported.release());
    BufferPtr buf(gst_buffer_new_allocate(nullptr, 64 * 64 * 3, nullptr));
    EXPECT_EQ(gst_harness_push(t.h.get(), buf.release()), GST_FLOW_NOT_NEGOTIATED);
    EXPECT_EQ(gst_harness_try_pull(t.h.get()), nullptr);
}

TEST(TensorConvert, NegativeCropOutsideTheFrameNamesTheCrop)
{
    Convert t("crop=300,0,100,100");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()),
              GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("crop"), std::string::npos) << err;
}

TEST(TensorConvert, NegativeMeanCountNotMatchingTheChannelsIsRefused)
{
    Convert t("dtype=float32 mean=1,2");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()),
              GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("one value or one per output channel (3 for format=RGB)"), std::string::npos)
        << err;
}

TEST(TensorConvert, NegativeNormalisingAnIntegerDtypeIsRefused)
{
    Convert t("dtype=uint8 mean=10");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()),
              GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("Cannot convert"), std::string::npos) << err;
}

// ---- pixels --------------------------------------------------------------------------------

struct PixelCase {
    const char* in_caps;
    const char* props;
    ConvertConfig cfg; // what the properties mean to the engine (src fields filled in later)
};

ConvertConfig cfg_of(size_t w, size_t h, OutputFormat f, TensorLayout l, DType d,
                     ResizeMethod m = ResizeMethod::Bilinear, bool letterbox = false)
{
    ConvertConfig c;
    c.dst_width = w;
    c.dst_height = h;
    c.dst_format = f;
    c.layout = l;
    c.dtype = d;
    c.method = m;
    c.letterbox = letterbox;
    return c;
}

class TensorConvertPixels : public ::testing::TestWithParam<PixelCase>
{
};

TEST_P(TensorConvertPixels, OutputEqualsTheEngineForTheSameFrame)
{
    const PixelCase& c = GetParam();
    Convert t(c.props);
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.h.get(), c.in_caps);
    for (guint seed = 0; seed < 3; ++seed) {
        BufferPtr in = make_frame(c.in_caps, seed);
        const std::vector<uint8_t> expected = engine_output(c.in_caps, in.get(), c.cfg);
        ASSERT_EQ(gst_harness_push(t.h.get(), gst_buffer_ref(in.get())), GST_FLOW_OK)
            << t.messages(GST_MESSAGE_ERROR);
        BufferPtr out(gst_harness_try_pull(t.h.get()));
        ASSERT_TRUE(out);
        const std::vector<uint8_t> got = bytes_of(out.get());
        ASSERT_EQ(got.size(), expected.size());
        EXPECT_TRUE(got == expected) << "frame " << seed << " differs from the engine";
    }
}

ConvertConfig normalised()
{
    ConvertConfig c = cfg_of(57, 43, OutputFormat::Rgb, TensorLayout::Chw, DType::F32);
    c.mean = {123.675f, 116.28f, 103.53f, 0.f};
    c.std = {58.395f, 57.12f, 57.375f, 1.f};
    return c;
}

ConvertConfig letterboxed()
{
    ConvertConfig c = cfg_of(96, 96, OutputFormat::Bgr, TensorLayout::Hwc, DType::U8,
                             ResizeMethod::Bilinear, true);
    c.fill = {0x11, 0x22, 0x33, 255};
    return c;
}

ConvertConfig cropped()
{
    ConvertConfig c =
        cfg_of(50, 30, OutputFormat::Gray, TensorLayout::Hwc, DType::I8, ResizeMethod::Nearest);
    c.crop = Region{11, 7, 101, 61};
    return c;
}

ConvertConfig half_rgba()
{
    ConvertConfig c = cfg_of(33, 21, OutputFormat::Rgba, TensorLayout::Hwc, DType::F16);
    c.std = {255.f, 255.f, 255.f, 255.f};
    return c;
}

INSTANTIATE_TEST_SUITE_P(
    Configs, TensorConvertPixels,
    ::testing::Values(
        PixelCase{"video/x-raw,format=NV12,width=320,height=240,colorimetry=bt709",
                  "width=57 height=43 layout=chw dtype=float32 mean=123.675,116.28,103.53 "
                  "std=58.395,57.12,57.375",
                  normalised()},
        PixelCase{"video/x-raw,format=I420,width=160,height=90,colorimetry=bt601",
                  "width=96 height=96 format=bgr letterbox=true fill-color=0x112233",
                  letterboxed()},
        PixelCase{"video/x-raw,format=YUY2,width=128,height=72,colorimetry=bt2020",
                  "width=50 height=30 format=gray dtype=int8 method=nearest crop=11,7,101,61",
                  cropped()},
        PixelCase{"video/x-raw,format=RGBA,width=99,height=41",
                  "width=33 height=21 format=rgba "
                  "dtype=float16 std=255",
                  half_rgba()},
        // No colorimetry in the caps: the engine resolves it, as it does for the element.
        PixelCase{"video/x-raw,format=NV21,width=64,height=48", "width=32 height=32",
                  cfg_of(32, 32, OutputFormat::Rgb, TensorLayout::Hwc, DType::U8)}));

// Independent of the engine: solid colours through the BT.601 limited matrix, and bars that
// are exactly the fill colour.
TEST(TensorConvert, SolidFrameAndLetterboxBarsHaveTheExpectedValues)
{
    const char* caps = "video/x-raw,format=NV12,width=64,height=16,colorimetry=bt601";
    Convert t("width=32 height=32 letterbox=true fill-color=0x204060");
    gst_harness_set_sink_caps_str(t.h.get(), "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.h.get(), caps);
    BufferPtr in(gst_buffer_new_allocate(nullptr, 64 * 16 * 3 / 2, nullptr));
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(in.get(), &map, GST_MAP_WRITE));
    // BT.601 limited red: Y 81, U 90, V 240.
    std::memset(map.data, 81, 64 * 16);
    for (size_t i = 64 * 16; i < map.size; i += 2) {
        map.data[i] = 90;
        map.data[i + 1] = 240;
    }
    gst_buffer_unmap(in.get(), &map);
    ASSERT_EQ(gst_harness_push(t.h.get(), in.release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(out);
    const auto px = tight_video_bytes(out.get(), "video/x-raw,format=RGB,width=32,height=32");
    ASSERT_EQ(px.size(), 32u * 32u * 3u);
    // 64x16 into 32x32: scale 0.5, content 32x8 at rows 12..19.
    for (size_t y = 0; y < 32; ++y) {
        for (size_t x = 0; x < 32; ++x) {
            const uint8_t* p = &px[(y * 32 + x) * 3];
            if (y < 12 || y >= 20) {
                ASSERT_EQ(p[0], 0x20) << x << "," << y;
                ASSERT_EQ(p[1], 0x40) << x << "," << y;
                ASSERT_EQ(p[2], 0x60) << x << "," << y;
            } else {
                ASSERT_GE(p[0], 252) << x << "," << y;
                ASSERT_LE(p[1], 3) << x << "," << y;
                ASSERT_LE(p[2], 3) << x << "," << y;
            }
        }
    }
    EXPECT_EQ(get_uint(t.element, "letterbox-top"), 12u);
    EXPECT_EQ(get_uint(t.element, "letterbox-bottom"), 12u);
}

TEST(TensorConvert, ReportsTheLetterboxGeometry)
{
    const char* caps = "video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1";
    Convert t("width=640 height=640 letterbox=true");
    gst_harness_set_sink_caps_str(t.h.get(), "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.h.get(), caps);
    ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(caps).release()), GST_FLOW_OK);
    BufferPtr out(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(out);
    gdouble scale = 0;
    g_object_get(t.element, "letterbox-scale", &scale, nullptr);
    EXPECT_DOUBLE_EQ(scale, 1.0 / 3.0);
    EXPECT_EQ(get_uint(t.element, "letterbox-left"), 0u);
    EXPECT_EQ(get_uint(t.element, "letterbox-right"), 0u);
    EXPECT_EQ(get_uint(t.element, "letterbox-top"), 140u);
    EXPECT_EQ(get_uint(t.element, "letterbox-bottom"), 140u);

    // An odd split and a crop: the same figures as the engine's geometry.
    Convert odd("width=101 height=60 letterbox=true crop=0,0,1000,1000");
    gst_harness_set_src_caps_str(odd.h.get(), caps);
    ASSERT_EQ(gst_harness_push(odd.h.get(), make_frame(caps).release()), GST_FLOW_OK)
        << odd.messages(GST_MESSAGE_ERROR);
    const ConvertGeometry g = compute_convert_geometry(Region{0, 0, 1000, 1000}, 101, 60, true);
    g_object_get(odd.element, "letterbox-scale", &scale, nullptr);
    EXPECT_DOUBLE_EQ(scale, g.scale);
    EXPECT_EQ(get_uint(odd.element, "letterbox-left"), g.pad_left);
    EXPECT_EQ(get_uint(odd.element, "letterbox-right"), g.pad_right);
    EXPECT_NE(g.pad_left, g.pad_right) << "the case should exercise an odd split";
    EXPECT_EQ(get_uint(odd.element, "letterbox-top"), 0u);

    // Without letterbox: scale 1, no padding.
    Convert plain("width=640 height=640");
    gst_harness_set_src_caps_str(plain.h.get(), caps);
    ASSERT_EQ(gst_harness_push(plain.h.get(), make_frame(caps).release()), GST_FLOW_OK);
    g_object_get(plain.element, "letterbox-scale", &scale, nullptr);
    EXPECT_DOUBLE_EQ(scale, 1.0);
    EXPECT_EQ(get_uint(plain.element, "letterbox-top"), 0u);
}

// ---- meta and memory -----------------------------------------------------------------------

TEST(TensorConvert, EveryOutputBufferCarriesATensorMetaDescribingIt)
{
    Convert t("width=40 height=30 layout=chw dtype=float32");
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    for (guint n = 0; n < 6; ++n) {
        ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps, n).release()), GST_FLOW_OK);
        BufferPtr out(gst_harness_try_pull(t.h.get()));
        ASSERT_TRUE(out);
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
        ASSERT_TRUE(m) << "frame " << n;
        EXPECT_EQ(m->desc.dtype, uint32_t(DType::F32));
        ASSERT_EQ(m->desc.ndim, 4u);
        EXPECT_EQ(m->desc.shape[0], 1u);
        EXPECT_EQ(m->desc.shape[1], 3u);
        EXPECT_EQ(m->desc.shape[2], 30u);
        EXPECT_EQ(m->desc.shape[3], 40u);
        EXPECT_EQ(m->desc.strides[3], 4);
        EXPECT_EQ(m->desc.strides[2], 40 * 4);
        EXPECT_GE(m->desc.capacity, 40u * 30u * 3u * 4u);
        EXPECT_NE(m->identity, 0u);
        // The descriptor's memory kind matches the memory the buffer holds.
        const bool dmabuf = gst_is_dmabuf_memory(gst_buffer_peek_memory(out.get(), 0));
        EXPECT_EQ(dmabuf, m->memory_kind == GST_EDGE_TENSOR_MEMORY_DMA);
        EXPECT_TRUE(gst::tensor_from_buffer(out.get())) << "the buffer must hold a tensor";
    }
}

TEST(TensorConvert, VideoOutputMetaMatchesTheFrame)
{
    Convert t("width=100 height=50");
    gst_harness_set_sink_caps_str(t.h.get(), "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK);
    BufferPtr out(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(out);
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->video_format, GST_VIDEO_FORMAT_RGB);
    EXPECT_EQ(m->width, 100u);
    EXPECT_EQ(m->height, 50u);
    EXPECT_GE(m->plane_strides[0], 300);
    if (GstVideoMeta* vm = gst_buffer_get_video_meta(out.get())) {
        EXPECT_EQ(vm->stride[0], m->plane_strides[0]);
    }
}

TEST(TensorConvert, StridedInputThroughVideoMetaGivesTheSameTensorAsATightOne)
{
    const char* caps = "video/x-raw,format=I420,width=100,height=60,colorimetry=bt709";
    Convert t("width=50 height=50 dtype=float32 std=255");
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.h.get(), caps);
    BufferPtr tight = make_frame(caps, 5);
    BufferPtr strided = make_frame(caps, 5, 92);
    ASSERT_TRUE(gst_buffer_get_video_meta(strided.get()));
    ASSERT_GT(gst_buffer_get_size(strided.get()), gst_buffer_get_size(tight.get()));
    ASSERT_EQ(gst_harness_push(t.h.get(), tight.release()), GST_FLOW_OK);
    BufferPtr a(gst_harness_try_pull(t.h.get()));
    ASSERT_EQ(gst_harness_push(t.h.get(), strided.release()), GST_FLOW_OK);
    BufferPtr b(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(bytes_of(a.get()) == bytes_of(b.get()));
}

TEST(TensorConvert, PoolMemoryInputGivesTheSameTensorAsSystemMemory)
{
    const char* caps = "video/x-raw,format=NV12,width=322,height=64,colorimetry=bt709";
    PoolOptions o;
    o.video_meta = true;
    o.alignment = true; // 64-byte rows: 322 is not a multiple of 64, so the frame is strided
    PoolPtr pool = make_active_pool(caps, o);
    ASSERT_TRUE(pool);
    BufferPtr pooled = acquire(pool.get());
    ASSERT_TRUE(pooled);
    ASSERT_TRUE(gst_buffer_get_edge_tensor_meta(pooled.get()));

    // Same picture in both: copy the pattern frame into the pooled one plane by plane.
    BufferPtr sys = make_frame(caps, 9);
    CapsPtr c = caps_from(caps);
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, c.get()));
    GstVideoFrame from, to;
    ASSERT_TRUE(gst_video_frame_map(&from, &info, sys.get(), GST_MAP_READ));
    ASSERT_TRUE(gst_video_frame_map(&to, &info, pooled.get(), GST_MAP_WRITE));
    EXPECT_EQ(GST_VIDEO_FRAME_PLANE_STRIDE(&to, 0) % 64, 0);
    ASSERT_TRUE(gst_video_frame_copy(&to, &from));
    gst_video_frame_unmap(&to);
    gst_video_frame_unmap(&from);

    const guint64 input_identity = gst_buffer_get_edge_tensor_meta(pooled.get())->identity;

    Convert t("width=80 height=40");
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.h.get(), caps);
    ASSERT_EQ(gst_harness_push(t.h.get(), sys.release()), GST_FLOW_OK);
    BufferPtr a(gst_harness_try_pull(t.h.get()));
    ASSERT_EQ(gst_harness_push(t.h.get(), pooled.release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr b(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(bytes_of(a.get()) == bytes_of(b.get()));

    // The output describes its own tensor only: the input's memory metas are not carried over.
    guint n_meta = 0;
    gpointer iter = nullptr;
    while (GstMeta* m =
               gst_buffer_iterate_meta_filtered(b.get(), &iter, GST_EDGE_TENSOR_META_API_TYPE)) {
        ++n_meta;
        EXPECT_NE(reinterpret_cast<GstEdgeTensorMeta*>(m)->identity, input_identity);
    }
    EXPECT_EQ(n_meta, 1u);
    EXPECT_EQ(gst_buffer_get_video_meta(b.get()), nullptr) << "tensor output with a video meta";
}

guint64 uint64_property(GstElement* e, const char* name)
{
    guint64 v = G_MAXUINT64;
    g_object_get(e, name, &v, nullptr);
    return v;
}

class TensorConvertImported : public ::testing::TestWithParam<std::pair<const char*, size_t>>
{
};

TEST_P(TensorConvertImported, RewrappedMemfdInputHitsTheImportCacheAndGivesTheSameTensor)
{
    const char* caps = GetParam().first;
    const size_t kSize = GetParam().second;
    constexpr int kBuffers = 2;

    // The reference: the same pictures in system memory (mapped path).
    std::vector<BufferPtr> sys;
    std::vector<std::vector<uint8_t>> expected;
    {
        Convert ref("width=32 height=16");
        gst_harness_set_sink_caps_str(ref.h.get(), "other/tensors");
        gst_harness_set_src_caps_str(ref.h.get(), caps);
        for (int i = 0; i < kBuffers; ++i) {
            sys.push_back(make_frame(caps, guint(5 + i)));
            ASSERT_EQ(gst_harness_push(ref.h.get(), gst_buffer_ref(sys.back().get())), GST_FLOW_OK);
            BufferPtr out(gst_harness_try_pull(ref.h.get()));
            ASSERT_TRUE(out);
            expected.push_back(bytes_of(out.get()));
        }
        EXPECT_EQ(uint64_property(ref.element, "cache-misses"), 0u)
            << "system memory is not imported";
    }

    std::vector<UniqueFd> memfds;
    for (int i = 0; i < kBuffers; ++i) {
        UniqueFd fd(memfd_create("tensorconvert-test", MFD_CLOEXEC));
        ASSERT_TRUE(fd);
        const std::vector<uint8_t> pixels = bytes_of(sys[size_t(i)].get());
        ASSERT_EQ(pixels.size(), kSize);
        ASSERT_EQ(pwrite(fd.get(), pixels.data(), pixels.size(), 0), ssize_t(kSize));
        memfds.push_back(std::move(fd));
    }

    const auto fds_before = open_fds();
    {
        AllocatorPtr alloc(gst_fd_allocator_new());
        Convert t("width=32 height=16");
        gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
        gst_harness_set_src_caps_str(t.h.get(), caps);
        int min_fd = 300;
        for (int round = 0; round < 2; ++round) {
            for (int i = 0; i < kBuffers; ++i) {
                // A new GstMemory with a new fd number every frame, as a camera pool may hand
                // out the same buffer.
                UniqueFd d(fcntl(memfds[size_t(i)].get(), F_DUPFD_CLOEXEC, min_fd++));
                ASSERT_TRUE(d);
                GstMemory* m =
                    gst_fd_allocator_alloc(alloc.get(), d.get(), kSize, GST_FD_MEMORY_FLAG_NONE);
                ASSERT_TRUE(m);
                d.release();
                GstBuffer* b = gst_buffer_new();
                gst_buffer_append_memory(b, m);
                ASSERT_EQ(gst_harness_push(t.h.get(), b), GST_FLOW_OK)
                    << t.messages(GST_MESSAGE_ERROR);
                BufferPtr out(gst_harness_try_pull(t.h.get()));
                ASSERT_TRUE(out);
                EXPECT_TRUE(bytes_of(out.get()) == expected[size_t(i)])
                    << "round " << round << " buffer " << i;
            }
        }
        EXPECT_EQ(uint64_property(t.element, "cache-misses"), guint64(kBuffers));
        EXPECT_EQ(uint64_property(t.element, "cache-hits"), guint64(kBuffers))
            << "the second round must find every buffer in the cache";
    }
    EXPECT_EQ(open_fds(), fds_before) << describe_fds(open_fds());
}

INSTANTIATE_TEST_SUITE_P(
    Formats, TensorConvertImported,
    ::testing::Values(std::make_pair("video/x-raw,format=RGBA,width=64,height=32",
                                     size_t(64 * 4 * 32)),
                      std::make_pair("video/x-raw,format=NV12,width=64,height=32,colorimetry=bt601",
                                     size_t(64 * 32 * 3 / 2))));

TEST(TensorConvert, DmaBufInputAndOutputGiveTheSameTensorAsSystemMemory)
{
    ET_REQUIRE_DMA_OR_SKIP();
    const char* caps = "video/x-raw,format=NV12,width=320,height=240,colorimetry=bt709";
    PoolOptions o;
    o.video_meta = true;
    o.kind = GST_EDGE_TENSOR_MEMORY_DMA;
    PoolPtr pool = make_active_pool(caps, o);
    ASSERT_TRUE(pool);
    BufferPtr dma = acquire(pool.get());
    ASSERT_TRUE(dma);
    ASSERT_TRUE(gst_is_dmabuf_memory(gst_buffer_peek_memory(dma.get(), 0)));
    BufferPtr sys = make_frame(caps, 4);
    CapsPtr c = caps_from(caps);
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, c.get()));
    GstVideoFrame from, to;
    ASSERT_TRUE(gst_video_frame_map(&from, &info, sys.get(), GST_MAP_READ));
    ASSERT_TRUE(gst_video_frame_map(&to, &info, dma.get(), GST_MAP_WRITE));
    ASSERT_TRUE(gst_video_frame_copy(&to, &from));
    gst_video_frame_unmap(&to);
    gst_video_frame_unmap(&from);

    Convert t("width=64 height=64 layout=chw dtype=float32 std=255");
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.h.get(), caps);
    ASSERT_EQ(gst_harness_push(t.h.get(), sys.release()), GST_FLOW_OK);
    BufferPtr a(gst_harness_try_pull(t.h.get()));
    ASSERT_EQ(gst_harness_push(t.h.get(), dma.release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr b(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(a && b);
    EXPECT_TRUE(bytes_of(a.get()) == bytes_of(b.get()));
    // With a provider the output pool is DMA-BUF too, and the meta says so.
    EXPECT_TRUE(gst_is_dmabuf_memory(gst_buffer_peek_memory(b.get(), 0)));
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(b.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->memory_kind, GST_EDGE_TENSOR_MEMORY_DMA);
    EXPECT_GE(m->desc.handle, 0);
}

TEST(TensorConvert, ProposesVideoMetaAndAnEdgetensorPoolUpstream)
{
    Convert t("width=64 height=64");
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    CapsPtr caps = caps_from(kNv12Caps);
    GstQuery* q = gst_query_new_allocation(caps.get(), TRUE);
    ASSERT_TRUE(gst_pad_peer_query(t.h->srcpad, q));
    EXPECT_TRUE(gst_query_find_allocation_meta(q, GST_VIDEO_META_API_TYPE, nullptr));
    ASSERT_GE(gst_query_get_n_allocation_pools(q), 1u);
    GstBufferPool* pool = nullptr;
    gst_query_parse_nth_allocation_pool(q, 0, &pool, nullptr, nullptr, nullptr);
    ASSERT_TRUE(pool);
    EXPECT_TRUE(GST_IS_EDGE_TENSOR_BUFFER_POOL(pool));
    gst_object_unref(pool);
    gst_query_unref(q);
}

// ---- properties and states -----------------------------------------------------------------

TEST(TensorConvert, NegativeBadPropertyValuesAreRefusedWithAWarning)
{
    Convert t("mean=1,2,3 std=4 crop=1,2,3,4");
    ASSERT_EQ(gst_element_set_state(t.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    struct Bad {
        const char* prop;
        const char* value;
        const char* says;
    };
    for (const Bad& b :
         {Bad{"mean", "abc", "not a finite number"}, Bad{"mean", "1,2,3,4,5", "at most 4 values"},
          Bad{"std", "1,0,1", "must not be zero"}, Bad{"std", "nan", "not a finite number"},
          Bad{"crop", "1,2,3", "four integers"}, Bad{"crop", "a,b,c,d", "not an integer"},
          Bad{"crop", "0,0,0,10", "at least 1"}, Bad{"crop", "-1,0,10,10", "not an integer"}}) {
        SCOPED_TRACE(std::string(b.prop) + "=" + b.value);
        const std::string before = get_string(t.element, b.prop);
        g_object_set(t.element, b.prop, b.value, nullptr);
        EXPECT_EQ(get_string(t.element, b.prop), before) << "the old value must be kept";
        const std::string warn = t.messages(GST_MESSAGE_WARNING);
        EXPECT_NE(warn.find(b.says), std::string::npos) << warn;
        EXPECT_NE(warn.find(b.prop), std::string::npos) << warn;
    }
    // Good values are taken.
    g_object_set(t.element, "crop", "", "mean", "0.5", nullptr);
    EXPECT_EQ(get_string(t.element, "crop"), "");
    EXPECT_EQ(get_string(t.element, "mean"), "0.5");
}

TEST(TensorConvert, NegativeReadyOnlyPropertiesAreRefusedWhilePlaying)
{
    Convert t("width=64 height=48");
    gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
    ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK);
    GstState cur = GST_STATE_VOID_PENDING;
    gst_element_get_state(t.element, &cur, nullptr, GST_CLOCK_TIME_NONE);
    ASSERT_EQ(cur, GST_STATE_PLAYING);
    g_object_set(t.element, "width", 100u, "dtype", 3 /* float32 */, "crop", "0,0,8,8", "letterbox",
                 TRUE, nullptr);
    EXPECT_EQ(get_uint(t.element, "width"), 64u);
    EXPECT_EQ(get_string(t.element, "crop"), "");
    gboolean lb = TRUE;
    g_object_get(t.element, "letterbox", &lb, nullptr);
    EXPECT_FALSE(lb);
    const std::string warn = t.messages(GST_MESSAGE_WARNING);
    EXPECT_NE(warn.find("can only change in the NULL or READY state"), std::string::npos) << warn;
    // Streaming goes on with the old settings.
    ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK);
    BufferPtr out(gst_harness_try_pull(t.h.get()));
    BufferPtr out2(gst_harness_try_pull(t.h.get()));
    ASSERT_TRUE(out && out2);
    EXPECT_EQ(gst_buffer_get_size(out2.get()), 64u * 48u * 3u);
}

TEST(TensorConvert, CyclesStatesAndRenegotiatesWithNewSettings)
{
    const guint rounds = 4;
    std::set<int> fds_before;
    for (guint pass = 0; pass < 2; ++pass) {
        // Pass 0 warms up process-wide singletons (clocks, thread pools) that keep an fd for
        // the life of the process; pass 1 must then give back every fd it opens.
        if (pass == 1)
            fds_before = open_fds();
        Convert t("width=32 height=24");
        gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
        for (guint round = 0; round < rounds; ++round) {
            SCOPED_TRACE(round);
            const guint w = 32 + 8 * round;
            ASSERT_EQ(gst_element_set_state(t.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
            g_object_set(t.element, "width", w, nullptr);
            ASSERT_EQ(get_uint(t.element, "width"), w);
            for (GstState s : {GST_STATE_READY, GST_STATE_PAUSED, GST_STATE_PLAYING})
                ASSERT_NE(gst_element_set_state(t.element, s), GST_STATE_CHANGE_FAILURE);
            gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
            for (guint n = 0; n < 3; ++n) {
                ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps, n).release()),
                          GST_FLOW_OK)
                    << t.messages(GST_MESSAGE_ERROR);
                BufferPtr out(gst_harness_try_pull(t.h.get()));
                ASSERT_TRUE(out);
                EXPECT_EQ(gst_buffer_get_size(out.get()), gsize(w) * 24u * 3u);
            }
            const std::string caps = t.out_caps_string();
            EXPECT_NE(caps.find("3:" + std::to_string(w) + ":24:1"), std::string::npos) << caps;
        }
        ASSERT_EQ(gst_element_set_state(t.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    }
    const auto fds_after = open_fds();
    std::set<int> leaked;
    for (int fd : fds_after)
        if (!fds_before.count(fd))
            leaked.insert(fd);
    EXPECT_TRUE(leaked.empty()) << "leaked: " << describe_fds(leaked);
}

TEST(TensorConvert, OutputBuffersOutliveTheElement)
{
    BufferPtr kept;
    {
        Convert t("width=16 height=16");
        gst_harness_set_sink_caps_str(t.h.get(), "other/tensors");
        gst_harness_set_src_caps_str(t.h.get(), kNv12Caps);
        ASSERT_EQ(gst_harness_push(t.h.get(), make_frame(kNv12Caps, 3).release()), GST_FLOW_OK);
        kept.reset(gst_harness_try_pull(t.h.get()));
        ASSERT_TRUE(kept);
    }
    const auto v = bytes_of(kept.get());
    EXPECT_EQ(v.size(), 16u * 16u * 3u);
    EXPECT_TRUE(gst_buffer_get_edge_tensor_meta(kept.get()));
}

// ---- the done-when pipeline --------------------------------------------------------

// GStreamer's own plugins (filesink, capsfilter, pngenc/pngdec) live beside libgstreamer; the
// test environment empties the system plugin path, so load the ones this test needs by file.
bool load_system_plugin(const char* name)
{
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&gst_init), &info) || !info.dli_fname)
        return false;
    const std::filesystem::path dir =
        std::filesystem::path(info.dli_fname).parent_path() / "gstreamer-1.0";
    const std::string file = (dir / (std::string("libgst") + name + ".so")).string();
    GError* err = nullptr;
    GstPlugin* p = gst_plugin_load_file(file.c_str(), &err);
    if (!p) {
        ADD_FAILURE() << "cannot load " << file << ": " << (err ? err->message : "?")
                      << " (install gstreamer1.0-plugins-base and -good)";
        g_clear_error(&err);
        return false;
    }
    gst_object_unref(p);
    return true;
}

TEST(TensorConvert, DoneWhenPipelineWritesACorrectLetterboxedPng)
{
    ASSERT_TRUE(load_system_plugin("coreelements"));
    ASSERT_TRUE(load_system_plugin("png"));
    const std::filesystem::path png = std::filesystem::temp_directory_path() /
                                      ("tensorconvert-" + std::to_string(getpid()) + "-out.png");
    const std::string launch =
        "tensortestsrc num-buffers=1 ! video/x-raw,format=NV12,width=1920,height=1080 ! "
        "tensorconvert name=tc width=640 height=640 letterbox=true ! video/x-raw,format=RGB ! "
        "pngenc ! filesink location=" +
        png.string();
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launch(launch.c_str(), &err);
    ASSERT_TRUE(pipeline) << (err ? err->message : "?");
    ASSERT_EQ(err, nullptr) << err->message;
    ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    GstBus* bus = gst_element_get_bus(pipeline);
    GstMessage* msg = gst_bus_timed_pop_filtered(
        bus, 30 * GST_SECOND, GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    ASSERT_TRUE(msg) << "the pipeline did not finish within 30 s";
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError* e = nullptr;
        gst_message_parse_error(msg, &e, nullptr);
        ADD_FAILURE() << "pipeline error: " << (e ? e->message : "?");
        g_clear_error(&e);
    }
    gst_message_unref(msg);
    gst_object_unref(bus);
    GstElement* tc = gst_bin_get_by_name(GST_BIN(pipeline), "tc");
    ASSERT_TRUE(tc);
    EXPECT_EQ(get_uint(tc, "letterbox-top"), 140u);
    EXPECT_EQ(get_uint(tc, "letterbox-bottom"), 140u);
    gst_object_unref(tc);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);

    // Decode the file with pngdec and check the picture.
    std::ifstream f(png, std::ios::binary);
    std::vector<char> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::filesystem::remove(png);
    ASSERT_GT(data.size(), 8u);
    ASSERT_EQ(std::memcmp(data.data(), "\x89PNG", 4), 0) << "not a PNG";
    HarnessPtr dec(gst_harness_new("pngdec"));
    gst_harness_set_src_caps_str(dec.get(), "image/png,width=640,height=640,framerate=0/1");
    GstBuffer* in = gst_buffer_new_memdup(data.data(), data.size());
    ASSERT_EQ(gst_harness_push(dec.get(), in), GST_FLOW_OK);
    gst_harness_push_event(dec.get(), gst_event_new_eos());
    BufferPtr out(gst_harness_try_pull(dec.get()));
    ASSERT_TRUE(out) << "pngdec produced nothing";
    CapsPtr caps(gst_pad_get_current_caps(dec->sinkpad));
    ASSERT_TRUE(caps);
    GstVideoInfo vi;
    ASSERT_TRUE(gst_video_info_from_caps(&vi, caps.get()));
    ASSERT_EQ(GST_VIDEO_INFO_WIDTH(&vi), 640);
    ASSERT_EQ(GST_VIDEO_INFO_HEIGHT(&vi), 640);
    ASSERT_EQ(GST_VIDEO_INFO_FORMAT(&vi), GST_VIDEO_FORMAT_RGB);
    GstVideoFrame frame;
    ASSERT_TRUE(gst_video_frame_map(&frame, &vi, out.get(), GST_MAP_READ));
    auto row_stats = [&](int y, int* nonblack, double* mean_r) {
        const auto* p = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)) +
                        y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
        *nonblack = 0;
        double r = 0;
        for (int x = 0; x < 640; ++x) {
            *nonblack += (p[3 * x] | p[3 * x + 1] | p[3 * x + 2]) != 0;
            r += p[3 * x];
        }
        *mean_r = r / 640;
    };
    // 1920x1080 into 640x640: a 640x360 picture at rows 140..499, black bars above and below.
    for (int y = 0; y < 640; ++y) {
        int nonblack = 0;
        double mean_r = 0;
        row_stats(y, &nonblack, &mean_r);
        if (y < 140 || y >= 500)
            ASSERT_EQ(nonblack, 0) << "bar row " << y << " is not black";
        else
            ASSERT_GT(nonblack, 600) << "picture row " << y << " is (nearly) black";
    }
    // tensortestsrc's gradient: red ramps with x (period 256 source pixels = 85.3 output
    // pixels), so the mean red across a row is mid-range, not a flat colour.
    int nonblack = 0;
    double mean_r = 0;
    row_stats(320, &nonblack, &mean_r);
    EXPECT_GT(mean_r, 80.0);
    EXPECT_LT(mean_r, 180.0);
    gst_video_frame_unmap(&frame);
}

} // namespace
} // namespace edgetensor::test
