// SPDX-License-Identifier: MIT
//
// tensorconvert through GstHarness: caps negotiation both ways, refused caps and settings
// named, pixels against the engine, letterbox values and reporting
// (test_tensorconvert_buffers.cpp: metas, memory kinds, properties and states).

#include "gst_test_util.hpp"
#include "tensorconvert_test_util.hpp"

#include <gst/check/gstharness.h>

#include <edgetensor/convert.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

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
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    ASSERT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_try_pull(t.get()));
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
    gst_harness_set_sink_caps_str(t.get(),
                                  (std::string("video/x-raw,format=") + c.video_format).c_str());
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    ASSERT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_try_pull(t.get()));
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
    gst_harness_set_sink_caps_str(t.get(), "video/x-raw,format=RGB,width=77,height=55");
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
    gst_harness_set_sink_caps_str(sized.get(), "video/x-raw,format=RGB,width=77,height=55");
    CapsPtr any_size(gst_pad_peer_query_caps(sized.h->srcpad, nullptr));
    CapsPtr big = caps_from("video/x-raw,format=NV12,width=1920,height=1080");
    EXPECT_TRUE(gst_caps_can_intersect(any_size.get(), big.get()));
    // ... and tensors downstream dictate the input through their dimensions string.
    Convert chw("layout=chw dtype=float32");
    gst_harness_set_sink_caps_str(chw.get(), "other/tensors,num_tensors=1,format=static,"
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
    gst_harness_set_sink_caps_str(t.get(), "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("video/x-raw output needs dtype=uint8 layout=hwc"), std::string::npos)
        << err;
    EXPECT_NE(err.find("dtype=float32"), std::string::npos) << err;
}

TEST(TensorConvert, NegativeTensorsOfAnotherDtypeAreRefused)
{
    Convert t("width=64 height=64 dtype=uint8");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors,types=float32");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("does not match what downstream accepts"), std::string::npos) << err;
}

TEST(TensorConvert, NegativeUnsupportedInputCapsAreRefused)
{
    Convert t("width=64 height=64");
    CapsPtr unsupported = caps_from("video/x-raw,format=I420_10LE,width=64,height=64");
    EXPECT_FALSE(gst_pad_query_accept_caps(gst_element_get_static_pad(t.element, "sink"),
                                           unsupported.get()));
    gst_harness_set_src_caps(t.get(), unsupported.release());
    BufferPtr buf(gst_buffer_new_allocate(nullptr, 64 * 64 * 3, nullptr));
    EXPECT_EQ(gst_harness_push(t.get(), buf.release()), GST_FLOW_NOT_NEGOTIATED);
    EXPECT_EQ(gst_harness_try_pull(t.get()), nullptr);
}

TEST(TensorConvert, NegativeCropOutsideTheFrameNamesTheCrop)
{
    Convert t("crop=300,0,100,100");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("crop"), std::string::npos) << err;
}

// With a crop, upstream is asked first for frames the crop fits: GstBaseTransform would lead
// with downstream's own size (the crop's, 100x100), in which a crop at (600, 400) cannot lie.
// Frames of any size follow, so a source of one size too small still reaches set_caps, which
// names the crop (above).
TEST(TensorConvert, WithACropTheCapsQueryLeadsWithFramesTheCropFits)
{
    Convert t("crop=600,400,100,100");
    gst_harness_set_sink_caps_str(t.get(), "video/x-raw,format=RGB,width=100,height=100");
    GstPad* sink = gst_element_get_static_pad(t.element, "sink");
    CapsPtr answer(gst_pad_query_caps(sink, nullptr));
    gst_object_unref(sink);
    ASSERT_TRUE(answer);
    ASSERT_FALSE(gst_caps_is_empty(answer.get()));
    CapsPtr first(gst_caps_copy_nth(answer.get(), 0));
    const GstStructure* st = gst_caps_get_structure(first.get(), 0);
    const GValue* w = gst_structure_get_value(st, "width");
    const GValue* h = gst_structure_get_value(st, "height");
    ASSERT_TRUE(w && GST_VALUE_HOLDS_INT_RANGE(w)) << gst_caps_to_string(first.get());
    ASSERT_TRUE(h && GST_VALUE_HOLDS_INT_RANGE(h)) << gst_caps_to_string(first.get());
    EXPECT_EQ(gst_value_get_int_range_min(w), 700);
    EXPECT_EQ(gst_value_get_int_range_min(h), 500);
    // A 320x240 source is still answered: set_caps refuses it naming the crop.
    CapsPtr small = caps_from("video/x-raw,format=NV12,width=320,height=240");
    EXPECT_TRUE(gst_caps_can_intersect(answer.get(), small.get()));
    // The fixated choice of a source that can pick its size is one the crop fits.
    CapsPtr fixated(gst_caps_fixate(gst_caps_ref(answer.get())));
    gint fw = 0, fh = 0;
    const GstStructure* fs = gst_caps_get_structure(fixated.get(), 0);
    ASSERT_TRUE(gst_structure_get_int(fs, "width", &fw) &&
                gst_structure_get_int(fs, "height", &fh));
    EXPECT_GE(fw, 700);
    EXPECT_GE(fh, 500);
}

TEST(TensorConvert, NegativeMeanCountNotMatchingTheChannelsIsRefused)
{
    Convert t("dtype=float32 mean=1,2");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_NOT_NEGOTIATED);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("one value or one per output channel (3 for format=RGB)"), std::string::npos)
        << err;
}

TEST(TensorConvert, NegativeNormalisingAnIntegerDtypeIsRefused)
{
    Convert t("dtype=uint8 mean=10");
    gst_harness_set_src_caps_str(t.get(), kNv12Caps);
    EXPECT_EQ(gst_harness_push(t.get(), make_frame(kNv12Caps).release()), GST_FLOW_NOT_NEGOTIATED);
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
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    gst_harness_set_src_caps_str(t.get(), c.in_caps);
    for (guint seed = 0; seed < 3; ++seed) {
        BufferPtr in = make_frame(c.in_caps, seed);
        const std::vector<uint8_t> expected = engine_output(c.in_caps, in.get(), c.cfg);
        ASSERT_EQ(gst_harness_push(t.get(), gst_buffer_ref(in.get())), GST_FLOW_OK)
            << t.messages(GST_MESSAGE_ERROR);
        BufferPtr out(gst_harness_try_pull(t.get()));
        ASSERT_TRUE(out);
        const std::vector<uint8_t> got = buffer_bytes(out.get());
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
    gst_harness_set_sink_caps_str(t.get(), "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.get(), caps);
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
    ASSERT_EQ(gst_harness_push(t.get(), in.release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_try_pull(t.get()));
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
    gst_harness_set_sink_caps_str(t.get(), "video/x-raw,format=RGB");
    gst_harness_set_src_caps_str(t.get(), caps);
    ASSERT_EQ(gst_harness_push(t.get(), make_frame(caps).release()), GST_FLOW_OK);
    BufferPtr out(gst_harness_try_pull(t.get()));
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
    gst_harness_set_src_caps_str(odd.get(), caps);
    ASSERT_EQ(gst_harness_push(odd.get(), make_frame(caps).release()), GST_FLOW_OK)
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
    gst_harness_set_src_caps_str(plain.get(), caps);
    ASSERT_EQ(gst_harness_push(plain.get(), make_frame(caps).release()), GST_FLOW_OK);
    g_object_get(plain.element, "letterbox-scale", &scale, nullptr);
    EXPECT_DOUBLE_EQ(scale, 1.0);
    EXPECT_EQ(get_uint(plain.element, "letterbox-top"), 0u);
}

} // namespace
} // namespace edgetensor::test
