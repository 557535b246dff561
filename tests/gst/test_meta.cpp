// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta: presence, descriptor, copy semantics, tags and the colorimetry mapping.

#include "gst_test_util.hpp"

#include <tuple>

namespace edgetensor::test
{
namespace
{

TEST(GstMeta, ApiCarriesTheMemoryAndVideoTags)
{
    EXPECT_TRUE(gst_meta_api_type_has_tag(GST_EDGE_TENSOR_META_API_TYPE,
                                          g_quark_from_string(GST_META_TAG_MEMORY_STR)));
    EXPECT_TRUE(gst_meta_api_type_has_tag(GST_EDGE_TENSOR_META_API_TYPE,
                                          g_quark_from_string(GST_META_TAG_VIDEO_STR)));
}

struct FormatCase {
    const char* gst;
    uint32_t format; // EDGETENSOR_FORMAT_*
    uint32_t fourcc;
};

class MetaOnEveryBuffer : public testing::TestWithParam<FormatCase>
{
};

TEST_P(MetaOnEveryBuffer, DescribesTheTensorBehindTheBuffer)
{
    const FormatCase fc = GetParam();
    const std::string caps = std::string("video/x-raw,format=") + fc.gst +
                             ",width=322,height=122,framerate=30/1,colorimetry=bt709";
    PoolOptions o;
    o.min = 3;
    o.max = 3;
    o.video_meta = true;
    PoolPtr pool = make_active_pool(caps, o);
    ASSERT_TRUE(pool);
    std::vector<BufferPtr> held;
    for (int i = 0; i < 3; ++i) {
        held.push_back(acquire(pool.get()));
        GstBuffer* buf = held.back().get();
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(buf);
        ASSERT_TRUE(m) << caps;
        GstMemory* mem = gst_buffer_peek_memory(buf, 0);
        EXPECT_EQ(m->identity, gst_edge_tensor_memory_get_identity(mem));
        EXPECT_EQ(m->memory_kind, gst_edge_tensor_memory_get_kind(mem));
        EXPECT_EQ(m->desc.version, EDGETENSOR_DESC_VERSION);
        EXPECT_EQ(m->desc.handle, gst_edge_tensor_memory_get_fd(mem));
        EXPECT_EQ(m->desc.dtype, EDGETENSOR_DTYPE_U8);
        EXPECT_EQ(m->desc.fourcc, fc.fourcc) << caps;
        EXPECT_EQ(m->width, 322u);
        EXPECT_EQ(m->height, 122u);
        EXPECT_EQ(m->video_format, gst_video_format_from_string(fc.gst));
        // RGB formats carry no YUV matrix (GStreamer makes it "rgb"): encoding unspecified.
        const bool rgb = GST_VIDEO_FORMAT_INFO_IS_RGB(
            gst_video_format_get_info(gst_video_format_from_string(fc.gst)));
        const uint32_t bt709_limited =
            uint32_t(ColorSpace::Bt709) | uint32_t(ColorTransfer::Bt709) << 8 |
            uint32_t(rgb ? ColorEncoding::Unspecified : ColorEncoding::Bt709) << 16 |
            uint32_t(ColorRange::Limited) << 24;
        EXPECT_EQ(m->desc.colorimetry, bt709_limited);

        auto t = gst::tensor_from_buffer(buf);
        ASSERT_TRUE(t);
        EXPECT_EQ(m->desc.ndim, t->ndim());
        for (size_t d = 0; d < t->ndim(); ++d) {
            EXPECT_EQ(m->desc.shape[d], t->shape()[d]);
            EXPECT_EQ(m->desc.strides[d], t->strides()[d]);
        }
        EXPECT_GE(m->desc.capacity, gst_buffer_get_size(buf));
        if (t->is_image()) {
            EXPECT_EQ(m->desc.format, fc.format) << caps;
            EXPECT_TRUE(m->flags & GST_EDGE_TENSOR_META_FLAG_IMAGE);
        } else {
            EXPECT_EQ(m->desc.format, EDGETENSOR_FORMAT_NONE);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, MetaOnEveryBuffer,
                         testing::Values(FormatCase{"NV12", EDGETENSOR_FORMAT_NV12, 0x3231564e},
                                         FormatCase{"RGB", EDGETENSOR_FORMAT_RGB, 0x34324742},
                                         FormatCase{"RGBA", EDGETENSOR_FORMAT_RGBA, 0x34324241},
                                         FormatCase{"BGRA", EDGETENSOR_FORMAT_BGRA, 0x34325241},
                                         FormatCase{"GRAY8", EDGETENSOR_FORMAT_GREY, 0x20203852},
                                         FormatCase{"YUY2", EDGETENSOR_FORMAT_YUYV, 0x56595559},
                                         FormatCase{"NV16", EDGETENSOR_FORMAT_NV16, 0x3631564e},
                                         FormatCase{"I420", EDGETENSOR_FORMAT_NONE, 0x32315559}),
                         [](const auto& p) { return std::string(p.param.gst); });

TEST(GstMeta, NoColorimetryInCapsMeansUnspecified)
{
    PoolPtr pool = make_active_pool("video/x-raw,format=NV12,width=64,height=64");
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(buf.get());
    ASSERT_TRUE(m);
    EXPECT_EQ(m->desc.colorimetry, 0u) << "colorimetry is never guessed";
}

TEST(GstMeta, SurvivesBufferCopyWhichSharesTheMemory)
{
    PoolPtr pool = make_active_pool("video/x-raw,format=RGBA,width=64,height=64");
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(buf.get());
    ASSERT_TRUE(m);
    BufferPtr copy(gst_buffer_copy(buf.get()));
    GstEdgeTensorMeta* mc = gst_buffer_get_edge_tensor_meta(copy.get());
    ASSERT_TRUE(mc);
    EXPECT_EQ(mc->identity, m->identity);
    EXPECT_EQ(mc->desc.ndim, m->desc.ndim);
    EXPECT_EQ(mc->desc.handle, m->desc.handle);
    EXPECT_EQ(mc->plane_strides[0], m->plane_strides[0]);
}

TEST(GstMeta, IsDroppedByADeepCopy)
{
    PoolPtr pool = make_active_pool("video/x-raw,format=RGBA,width=64,height=64");
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    BufferPtr copy(gst_buffer_copy_deep(buf.get()));
    ASSERT_TRUE(copy);
    EXPECT_FALSE(gst_buffer_get_edge_tensor_meta(copy.get()))
        << "a deep copy's bytes are not the tensor";
}

TEST(GstMeta, IsDroppedByARegionCopy)
{
    PoolPtr pool = make_active_pool("video/x-raw,format=RGBA,width=64,height=64");
    ASSERT_TRUE(pool);
    BufferPtr buf = acquire(pool.get());
    BufferPtr part(gst_buffer_copy_region(buf.get(), GST_BUFFER_COPY_ALL, 256, 1024));
    ASSERT_TRUE(part);
    EXPECT_FALSE(gst_buffer_get_edge_tensor_meta(part.get()));
}

TEST(GstMeta, AddingToABufferWithoutATensorFails_Negative)
{
    BufferPtr buf(gst_buffer_new_allocate(nullptr, 100, nullptr));
    EXPECT_FALSE(gst_buffer_add_edge_tensor_meta(buf.get(), nullptr, FALSE));
    BufferPtr empty(gst_buffer_new());
    EXPECT_FALSE(gst_buffer_add_edge_tensor_meta(empty.get(), nullptr, FALSE));
}

// ---- colorimetry ---------------------------------------------------------------------------

class ColorimetryRoundTrip : public testing::TestWithParam<std::tuple<const char*, GstVideoFormat>>
{
};

TEST_P(ColorimetryRoundTrip, GStreamerToEdgeTensorAndBack)
{
    const auto [str, format] = GetParam();
    GstVideoColorimetry c;
    ASSERT_TRUE(gst_video_colorimetry_from_string(&c, str)) << str;
    for (GstVideoColorRange range :
         {c.range, GST_VIDEO_COLOR_RANGE_0_255, GST_VIDEO_COLOR_RANGE_16_235}) {
        GstVideoColorimetry in = c;
        in.range = range;
        const guint32 packed = gst_edge_tensor_colorimetry_from_gst(&in);
        Colorimetry et;
        ASSERT_TRUE(Colorimetry::unpack(packed, &et));
        EXPECT_NE(et.space, ColorSpace::Unspecified) << str;
        EXPECT_NE(et.transfer, ColorTransfer::Unspecified) << str;
        EXPECT_NE(et.range, ColorRange::Unspecified) << str;
        GstVideoColorimetry back;
        ASSERT_TRUE(gst_edge_tensor_colorimetry_to_gst(packed, format, &back));
        gchar* a = gst_video_colorimetry_to_string(&in);
        gchar* b = gst_video_colorimetry_to_string(&back);
        EXPECT_TRUE(gst_video_colorimetry_is_equal(&in, &back)) << a << " came back as " << b;
        g_free(a);
        g_free(b);
    }
}

INSTANTIATE_TEST_SUITE_P(Strings, ColorimetryRoundTrip,
                         testing::Values(std::make_tuple("bt601", GST_VIDEO_FORMAT_NV12),
                                         std::make_tuple("bt709", GST_VIDEO_FORMAT_NV12),
                                         std::make_tuple("bt2020", GST_VIDEO_FORMAT_NV12),
                                         std::make_tuple("bt2020-10", GST_VIDEO_FORMAT_P010_10LE),
                                         std::make_tuple("bt2100-pq", GST_VIDEO_FORMAT_P010_10LE),
                                         std::make_tuple("bt2100-hlg", GST_VIDEO_FORMAT_P010_10LE),
                                         std::make_tuple("sRGB", GST_VIDEO_FORMAT_RGBA)),
                         [](const auto& p) {
                             std::string n = std::get<0>(p.param);
                             for (char& ch : n)
                                 if (!g_ascii_isalnum(ch))
                                     ch = '_';
                             return n;
                         });

TEST(GstColorimetry, KnownStringsMapToTheExpectedAxes)
{
    GstVideoColorimetry c;
    ASSERT_TRUE(gst_video_colorimetry_from_string(&c, "bt709"));
    Colorimetry et = gst::colorimetry_from_gst(c);
    EXPECT_EQ(et, (Colorimetry{ColorSpace::Bt709, ColorTransfer::Bt709, ColorEncoding::Bt709,
                               ColorRange::Limited}));
    ASSERT_TRUE(gst_video_colorimetry_from_string(&c, "bt601"));
    et = gst::colorimetry_from_gst(c);
    EXPECT_EQ(et.space, ColorSpace::Smpte170m);
    EXPECT_EQ(et.encoding, ColorEncoding::Bt601);
    ASSERT_TRUE(gst_video_colorimetry_from_string(&c, "sRGB"));
    et = gst::colorimetry_from_gst(c);
    EXPECT_EQ(et, (Colorimetry{ColorSpace::Srgb, ColorTransfer::Srgb, ColorEncoding::Unspecified,
                               ColorRange::Full}));
    ASSERT_TRUE(gst_video_colorimetry_from_string(&c, "bt2100-pq"));
    EXPECT_EQ(gst::colorimetry_from_gst(c).transfer, ColorTransfer::Pq);
}

TEST(GstColorimetry, UnrepresentableAxesStayUnspecified)
{
    GstVideoColorimetry c;
    ASSERT_TRUE(gst_video_colorimetry_from_string(&c, "smpte240m"));
    const Colorimetry et = gst::colorimetry_from_gst(c);
    EXPECT_EQ(et.space, ColorSpace::Unspecified);
    EXPECT_EQ(et.encoding, ColorEncoding::Unspecified);
    EXPECT_EQ(et.range, ColorRange::Limited);
}

TEST(GstColorimetry, UnknownAxisCodesAreRefused_Negative)
{
    GstVideoColorimetry c;
    EXPECT_FALSE(gst_edge_tensor_colorimetry_to_gst(0x09u, GST_VIDEO_FORMAT_NV12, &c));
    EXPECT_FALSE(gst_edge_tensor_colorimetry_to_gst(0x7f000000u, GST_VIDEO_FORMAT_NV12, &c));
}

} // namespace
} // namespace edgetensor::test
