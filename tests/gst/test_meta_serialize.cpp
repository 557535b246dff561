// SPDX-License-Identifier: MIT
//
// GstEdgeTensorMeta across processes: its serialization record (tensor_meta_codec) round-trips
// every field that travels and refuses every malformed record with an error naming the field
// (on every GStreamer version); from 1.24, gst_meta_serialize()/gst_meta_deserialize() use it
// (unixfdsink/unixfdsrc carry it: tests/gst/test_unixfd.cpp), and for tensorbatch's
// GstEdgeTensorBatchMeta too, whose record is the IPC protocol's BATCH record.

#include "glib_raii.hpp"
#include "gst126_require.hpp"
#include "gst_test_util.hpp"
#include "gstedgetensormeta_serialize.hpp"
#include "tensor_meta_codec.hpp"

#include <cctype>
#include <functional>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

using gst::decode_tensor_meta;
using gst::encode_tensor_meta;
using gst::kTensorMetaCodecVersion;
using gst::kTensorMetaRecordSize;
using gst::TensorMetaFields;

// The meta of a pooled NV12 frame: what a real sender serializes.
struct PooledMeta {
    PoolPtr pool;
    BufferPtr buffer;
    GstEdgeTensorMeta* meta = nullptr;
};

PooledMeta pooled_nv12()
{
    PooledMeta p;
    PoolOptions o;
    o.video_meta = true;
    p.pool = make_active_pool("video/x-raw,format=NV12,width=322,height=122,framerate=30/1,"
                              "colorimetry=bt709",
                              o);
    EXPECT_TRUE(p.pool);
    if (!p.pool)
        return p;
    p.buffer = acquire(p.pool.get());
    p.meta = gst_buffer_get_edge_tensor_meta(p.buffer.get());
    EXPECT_TRUE(p.meta);
    return p;
}

TensorMetaFields valid_fields()
{
    TensorMetaFields f;
    f.memory_kind = 2;
    f.desc = edgetensor_desc_init();
    f.desc.kind = EDGETENSOR_KIND_HOST;
    f.desc.ndim = 3;
    f.desc.dtype = EDGETENSOR_DTYPE_F32;
    f.desc.shape[0] = 3;
    f.desc.shape[1] = 32;
    f.desc.shape[2] = 64;
    f.desc.strides[0] = 32 * 256;
    f.desc.strides[1] = 256;
    f.desc.strides[2] = 4;
    f.desc.capacity = 3 * 32 * 256;
    f.desc.colorimetry = EDGETENSOR_COLORIMETRY_PACK(1, 1, 2, 2);
    f.n_planes = 1;
    f.plane_strides[0] = 256;
    f.flags = 1;
    f.applied_colorimetry = EDGETENSOR_COLORIMETRY_PACK(1, 1, 2, 2);
    return f;
}

bool same(const TensorMetaFields& a, const TensorMetaFields& b)
{
    return encode_tensor_meta(a) == encode_tensor_meta(b);
}

TEST(GstMetaSerialize, APooledFramesFieldsRoundTrip)
{
    PooledMeta p = pooled_nv12();
    ASSERT_TRUE(p.meta);
    const TensorMetaFields f = gst::tensor_meta_fields(*p.meta);
    const auto bytes = encode_tensor_meta(f);
    ASSERT_EQ(bytes.size(), kTensorMetaRecordSize);
    auto back = decode_tensor_meta(bytes, kTensorMetaCodecVersion);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->desc.handle, -1) << "an fd of the sender names nothing here";
    EXPECT_EQ(back->desc.ptr, nullptr);
    EXPECT_EQ(back->desc.sync, 0u);
    TensorMetaFields want = f;
    want.desc.handle = -1;
    want.desc.ptr = nullptr;
    EXPECT_TRUE(same(*back, want));
    EXPECT_EQ(back->video_format, guint32(GST_VIDEO_FORMAT_NV12));
    EXPECT_EQ(back->width, 322u);
    EXPECT_EQ(back->n_planes, 2u);
    EXPECT_EQ(back->plane_strides[0], p.meta->plane_strides[0]);
    EXPECT_EQ(back->plane_offsets[1], p.meta->plane_offsets[1]);
    EXPECT_EQ(back->desc.colorimetry, p.meta->desc.colorimetry);
    EXPECT_NE(back->desc.colorimetry, 0u) << "bt709 in the caps";
}

TEST(GstMetaSerialize, TheSyncFenceDoesNotTravel)
{
    TensorMetaFields f = valid_fields();
    f.desc.flags = EDGETENSOR_FLAG_SYNC_PRESENT;
    f.desc.sync = 42;
    auto back = decode_tensor_meta(encode_tensor_meta(f), kTensorMetaCodecVersion);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->desc.flags, 0u);
    EXPECT_EQ(back->desc.sync, 0u);
}

struct Malformed {
    const char* name;
    std::function<void(TensorMetaFields&)> spoil;
    const char* says; // a word the error must hold
};

class GstMetaSerializeRefuses : public ::testing::TestWithParam<Malformed>
{
};

TEST_P(GstMetaSerializeRefuses, WithAnErrorNamingTheField_Negative)
{
    TensorMetaFields f = valid_fields();
    GetParam().spoil(f);
    auto r = decode_tensor_meta(encode_tensor_meta(f), kTensorMetaCodecVersion);
    ASSERT_FALSE(r) << GetParam().name << " was accepted";
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidDescriptor);
    EXPECT_NE(r.error().message().find(GetParam().says), std::string::npos) << r.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, GstMetaSerializeRefuses,
    ::testing::Values(
        Malformed{"memory kind", [](auto& f) { f.memory_kind = 4; }, "memory kind 4"},
        Malformed{"desc version", [](auto& f) { f.desc.version = 2; }, "descriptor version 2"},
        Malformed{"desc kind", [](auto& f) { f.desc.kind = 5; }, "descriptor kind 5"},
        Malformed{"ndim", [](auto& f) { f.desc.ndim = 9; }, "ndim 9"},
        Malformed{"dtype", [](auto& f) { f.desc.dtype = 11; }, "dtype 11"},
        Malformed{"pixel format", [](auto& f) { f.desc.format = 12; }, "pixel format 12"},
        Malformed{"colorimetry", [](auto& f) { f.desc.colorimetry = 0x00000005; }, "colorimetry"},
        Malformed{"desc flags", [](auto& f) { f.desc.flags = 2; }, "descriptor flags 2"},
        Malformed{"dimension beyond ndim", [](auto& f) { f.desc.shape[5] = 1; },
                  "dimension 5 is set beyond ndim"},
        Malformed{"zero dimension", [](auto& f) { f.desc.shape[1] = 0; }, "dimension 1 is 0"},
        Malformed{"negative stride", [](auto& f) { f.desc.strides[2] = -4; },
                  "stride 2 is negative"},
        Malformed{"beyond capacity", [](auto& f) { f.desc.capacity -= 1; },
                  "more than its capacity"},
        Malformed{"overflow",
                  [](auto& f) {
                      f.desc.shape[0] = uint64_t(1) << 40;
                      f.desc.strides[0] = int64_t(1) << 40;
                  },
                  "overflow"},
        Malformed{"planes", [](auto& f) { f.n_planes = 5; }, "5 planes"},
        Malformed{"plane stride", [](auto& f) { f.plane_strides[0] = 0; }, "plane 0 stride 0"},
        Malformed{"plane offset", [](auto& f) { f.plane_offsets[0] = f.desc.capacity; },
                  "beyond the capacity"},
        Malformed{"plane beyond n_planes", [](auto& f) { f.plane_strides[3] = 64; },
                  "plane 3 is set beyond n_planes"},
        Malformed{"meta flags", [](auto& f) { f.flags = 4; }, "meta flags 4"},
        Malformed{"empty video frame",
                  [](auto& f) {
                      f.video_format = guint32(GST_VIDEO_FORMAT_RGB);
                      f.width = 0;
                  },
                  "0x0"},
        Malformed{"applied colorimetry", [](auto& f) { f.applied_colorimetry = 0x09000000; },
                  "applied colorimetry"}),
    [](const auto& param_info) {
        std::string n = param_info.param.name;
        for (char& c : n)
            if (!std::isalnum(static_cast<unsigned char>(c)))
                c = '_';
        return n;
    });

TEST(GstMetaSerialize, AnotherVersionOrSizeIsRefused_Negative)
{
    const auto bytes = encode_tensor_meta(valid_fields());
    auto v = decode_tensor_meta(bytes, kTensorMetaCodecVersion + 1);
    ASSERT_FALSE(v);
    EXPECT_NE(v.error().message().find("version 2"), std::string::npos) << v.error().message();
    for (size_t n : {size_t(0), size_t(4), bytes.size() - 1, bytes.size() + 1}) {
        std::vector<uint8_t> b = bytes;
        b.resize(n);
        auto r = decode_tensor_meta(b, kTensorMetaCodecVersion);
        ASSERT_FALSE(r) << n << " bytes accepted";
        EXPECT_NE(r.error().message().find(std::to_string(n) + " bytes"), std::string::npos)
            << r.error().message();
    }
}

TEST(GstMetaSerialize, AVideoFormatThisGStreamerDoesNotKnowIsRefused_Negative)
{
    PooledMeta p = pooled_nv12();
    ASSERT_TRUE(p.meta);
    TensorMetaFields f = gst::tensor_meta_fields(*p.meta);
    f.video_format = 100000;
    BufferPtr b(gst_buffer_new());
    auto* m = reinterpret_cast<GstEdgeTensorMeta*>(
        gst_buffer_add_meta(b.get(), GST_EDGE_TENSOR_META_INFO, nullptr));
    ASSERT_TRUE(m);
    std::string why;
    EXPECT_FALSE(gst::apply_tensor_meta_fields(m, b.get(), f, &why));
    EXPECT_NE(why.find("video format 100000"), std::string::npos) << why;
}

#if GST_CHECK_VERSION(1, 24, 0)

// gst_meta_serialize()'s framing around our record, then gst_meta_deserialize() onto a buffer
// of another memory: the description arrives, the identity and the sender's fd do not.
TEST(GstMetaSerialize, GstMetaSerializeAndDeserializeCarryTheMeta)
{
    PooledMeta p = pooled_nv12();
    ASSERT_TRUE(p.meta);
    GByteArray* data = g_byte_array_new();
    ASSERT_TRUE(gst_meta_serialize_simple(&p.meta->meta, data));
    BufferPtr out(gst_buffer_new());
    guint32 consumed = 0;
    GstMeta* meta = gst_meta_deserialize(out.get(), data->data, data->len, &consumed);
    EXPECT_EQ(consumed, data->len);
    ASSERT_TRUE(meta);
    auto* m = gst_buffer_get_edge_tensor_meta(out.get());
    ASSERT_EQ(&m->meta, meta);
    EXPECT_EQ(m->identity, 0u);
    EXPECT_EQ(m->desc.handle, -1);
    EXPECT_EQ(m->desc.ptr, nullptr);
    EXPECT_EQ(m->desc.capacity, p.meta->desc.capacity);
    EXPECT_EQ(m->desc.fourcc, p.meta->desc.fourcc);
    EXPECT_EQ(m->video_format, GST_VIDEO_FORMAT_NV12);
    EXPECT_EQ(m->width, 322u);
    EXPECT_EQ(m->n_planes, 2u);
    EXPECT_EQ(m->plane_offsets[1], p.meta->plane_offsets[1]);
    EXPECT_EQ(m->flags, p.meta->flags);
    EXPECT_EQ(m->desc.colorimetry, p.meta->desc.colorimetry);

    // A record spoiled after framing: the meta is refused, the rest of the stream goes on.
    data->data[data->len - 1] = 0xff; // the applied colorimetry's range: no such code
    BufferPtr spoiled(gst_buffer_new());
    consumed = 0;
    EXPECT_EQ(gst_meta_deserialize(spoiled.get(), data->data, data->len, &consumed), nullptr);
    EXPECT_EQ(consumed, data->len) << "the framing was fine: the next meta can be read";
    EXPECT_EQ(gst_buffer_get_edge_tensor_meta(spoiled.get()), nullptr);
    g_byte_array_unref(data);
}

// tensorbatch's provenance: the same framing around the IPC protocol's BATCH record. Every
// field arrives, the ROI label by its string; a slot that could not map back is neither written
// nor read.
TEST(GstMetaSerialize, TheBatchProvenanceRoundTripsAndASlotThatCannotMapBackIsRefused)
{
    BufferPtr in(gst_buffer_new());
    GstEdgeTensorBatchMeta* m = gst_buffer_add_edge_tensor_batch_meta(in.get(), 2, 224, 224);
    ASSERT_TRUE(m);
    GstEdgeTensorBatchSlot& s = m->slots[0];
    s.filled = TRUE;
    s.pad_index = 3;
    s.pts = 42 * GST_MSECOND;
    s.source_width = 640;
    s.source_height = 480;
    s.crop_x = 10;
    s.crop_y = 20;
    s.crop_width = 300;
    s.crop_height = 200;
    s.scale_x = 224.0 / 300.0;
    s.scale_y = 224.0 / 300.0;
    s.pad_top = 37;
    s.pad_bottom = 38;
    s.roi_kind = GST_EDGE_TENSOR_BATCH_ROI_VIDEO;
    s.roi_id = 9;
    s.roi_label = g_quark_from_string("car");
    s.applied_colorimetry = 0x01020304;
    GByteArray* data = g_byte_array_new();
    ASSERT_TRUE(gst_meta_serialize_simple(&m->meta, data));
    BufferPtr out(gst_buffer_new());
    guint32 consumed = 0;
    GstMeta* meta = gst_meta_deserialize(out.get(), data->data, data->len, &consumed);
    EXPECT_EQ(consumed, data->len);
    ASSERT_TRUE(meta);
    const GstEdgeTensorBatchMeta* got = gst_buffer_get_edge_tensor_batch_meta(out.get());
    ASSERT_EQ(&got->meta, meta);
    ASSERT_EQ(got->n_slots, 2u);
    EXPECT_EQ(got->slot_width, 224u);
    const GstEdgeTensorBatchSlot& g = got->slots[0];
    EXPECT_TRUE(g.filled);
    EXPECT_EQ(g.pad_index, 3u);
    EXPECT_EQ(g.pts, 42 * GST_MSECOND);
    EXPECT_EQ(g.crop_x, 10u);
    EXPECT_EQ(g.crop_height, 200u);
    EXPECT_EQ(g.scale_x, 224.0 / 300.0);
    EXPECT_EQ(g.pad_bottom, 38u);
    EXPECT_EQ(g.roi_kind, guint(GST_EDGE_TENSOR_BATCH_ROI_VIDEO));
    EXPECT_EQ(g.roi_id, 9);
    EXPECT_STREQ(gst_edge_tensor_batch_slot_get_roi_label(&g), "car");
    EXPECT_EQ(g.applied_colorimetry, 0x01020304u);
    EXPECT_FALSE(got->slots[1].filled);
    EXPECT_EQ(got->slots[1].pts, GST_CLOCK_TIME_NONE);

    // The record's first slot's `filled`: after the framing, the slot size and the count.
    const gsize body = 12 + 2 * 88 + 3; // two slots, one label of three bytes
    ASSERT_GT(data->len, body);
    data->data[data->len - body + 12] = 2;
    BufferPtr spoiled(gst_buffer_new());
    consumed = 0;
    EXPECT_EQ(gst_meta_deserialize(spoiled.get(), data->data, data->len, &consumed), nullptr);
    EXPECT_EQ(consumed, data->len) << "the framing was fine: the next meta can be read";
    EXPECT_EQ(gst_buffer_get_edge_tensor_batch_meta(spoiled.get()), nullptr);
    g_byte_array_unref(data);

    s.crop_x = 400; // 400 + 300 > 640
    GByteArray* refused = g_byte_array_new();
    EXPECT_FALSE(gst_meta_serialize_simple(&m->meta, refused));
    g_byte_array_unref(refused);
}

#else

TEST(GstMetaSerialize, GstMetaSerializationNeedsGStreamer124)
{
    ET_REQUIRE_GST126_OR_SKIP(false, edgetensor::gst::running_gst_version() +
                                         " has no meta serialization (1.24+)");
}

#endif

} // namespace
} // namespace edgetensor::test
