// SPDX-License-Identifier: MIT
//
// A FRAME's meta section alone (no GStreamer): tensor and analytics metas and tensorbatch's
// provenance round-trip with the frame, every malformed meta is refused with a reason naming the
// field (the whole record is refused and every fd that came with it closed), and meta fds are
// checked against the kernel like memory fds.

#include "fd_count.hpp"
#include "ipc_meta.hpp"
#include "ipc_records.hpp"
#include "ipc_wire.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace edgetensor::ipc
{
namespace
{

using test::flat_record;
using test::open_fds;
using test::sealed_memfd;

// An SSD's four outputs (boxes, classes, scores, count) in one 4 KiB meta fd, and two detections
// with a classification of each and a track of the first.
FrameMetas ssd_metas()
{
    FrameMetas m;
    m.fds.push_back({EDGETENSOR_KIND_HOST, 4096});
    TensorsMeta t;
    const uint32_t float32 = 11;
    t.tensors.push_back({"detection_boxes", float32, 0, 0, {1, 10, 4}, 0, 0, 160});
    t.tensors.push_back({"detection_classes", float32, 0, 0, {1, 10}, 0, 160, 40});
    t.tensors.push_back({"detection_scores", float32, 0, 0, {1, 10}, 0, 200, 40});
    t.tensors.push_back({"num_detections", float32, 0, 0, {1}, 0, 240, 4});
    m.tensors.push_back(t);
    AnalyticsMeta a;
    Mtd od;
    od.type = MtdType::ObjectDetection;
    od.label = "person";
    od.x = 10;
    od.y = 20;
    od.w = 30;
    od.h = 40;
    od.rotation = 0.25f;
    od.confidence = 0.9f;
    a.mtds.push_back(od);
    od.label = "dog";
    od.rotation = 0;
    a.mtds.push_back(od);
    Mtd cls;
    cls.type = MtdType::Classification;
    cls.classes = {{"person", 0.9f}, {"child", 0.4f}};
    a.mtds.push_back(cls);
    Mtd trk;
    trk.type = MtdType::Tracking;
    trk.tracking_id = 7;
    trk.first_seen = 1000;
    trk.last_seen = 5000;
    trk.lost = true;
    a.mtds.push_back(trk);
    a.relations.push_back({0, 2, 1u << 3});               // RELATE_TO
    a.relations.push_back({3, 0, (1u << 1) | (1u << 3)}); // IS_PART_OF | RELATE_TO
    m.analytics.push_back(a);
    return m;
}

std::vector<uint8_t> frame_with(const FrameMetas& metas, FrameHead head = {})
{
    auto meta = encode_metas(metas);
    EXPECT_TRUE(meta) << (meta ? "" : meta.error().message());
    head.seq = 1;
    head.n_meta_fds = uint32_t(metas.fds.size());
    const MemoryRecord rec = flat_record(4096);
    auto f = encode_frame(head, std::span(&rec, 1), meta ? *meta : std::vector<uint8_t>{});
    EXPECT_TRUE(f) << (f ? "" : f.error().message());
    return f ? *f : std::vector<uint8_t>{};
}

std::vector<UniqueFd> fds_for(size_t meta_fds)
{
    std::vector<UniqueFd> v;
    v.push_back(sealed_memfd(4096));
    for (size_t i = 0; i < meta_fds; ++i)
        v.push_back(sealed_memfd(4096));
    return v;
}

TEST(IpcMeta, TensorAndAnalyticsMetasRoundTripWithTheFrame)
{
    const FrameMetas sent = ssd_metas();
    auto m = parse(frame_with(sent), fds_for(1), false);
    ASSERT_TRUE(m) << m.error().message();
    Frame& f = m->frame;
    EXPECT_TRUE(f.fds[0]);
    ASSERT_TRUE(f.meta_fds[0]);
    EXPECT_TRUE(check_frame_fds(f)) << check_frame_fds(f).error().message();
    ASSERT_EQ(f.metas.fds.size(), 1u);
    EXPECT_EQ(f.metas.fds[0].size, 4096u);
    ASSERT_EQ(f.metas.tensors.size(), 1u);
    const auto& tensors = f.metas.tensors[0].tensors;
    ASSERT_EQ(tensors.size(), 4u);
    EXPECT_EQ(tensors[0].id, "detection_boxes");
    EXPECT_EQ(tensors[0].dims, (std::vector<uint64_t>{1, 10, 4}));
    EXPECT_EQ(tensors[3].offset, 240u);
    EXPECT_EQ(tensors[3].size, 4u);
    ASSERT_EQ(f.metas.analytics.size(), 1u);
    const AnalyticsMeta& a = f.metas.analytics[0];
    ASSERT_EQ(a.mtds.size(), 4u);
    EXPECT_EQ(a.mtds[0].label, "person");
    EXPECT_EQ(a.mtds[0].h, 40);
    EXPECT_EQ(a.mtds[0].rotation, 0.25f);
    EXPECT_EQ(a.mtds[1].label, "dog");
    ASSERT_EQ(a.mtds[2].classes.size(), 2u);
    EXPECT_EQ(a.mtds[2].classes[1].label, "child");
    EXPECT_EQ(a.mtds[2].classes[1].confidence, 0.4f);
    EXPECT_EQ(a.mtds[3].tracking_id, 7u);
    EXPECT_EQ(a.mtds[3].last_seen, 5000u);
    EXPECT_TRUE(a.mtds[3].lost);
    ASSERT_EQ(a.relations.size(), 2u);
    EXPECT_EQ(a.relations[1].from, 3u);
    EXPECT_EQ(a.relations[1].types, (1u << 1) | (1u << 3));
}

TEST(IpcMeta, AFrameWithoutMetasIsAsBefore)
{
    FrameMetas none;
    auto m = parse(frame_with(none), fds_for(0), false);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_TRUE(m->frame.metas.empty());
    EXPECT_EQ(m->frame.head.meta_bytes, 0u);
    EXPECT_FALSE(m->frame.meta_fds[0]);
}

TEST(IpcMeta, StringTensorsNeedNoSizeAndFourBitOnesHalfAByte)
{
    FrameMetas m;
    m.fds.push_back({EDGETENSOR_KIND_HOST, 4096});
    TensorsMeta t;
    t.tensors.push_back({"labels", kTensorTypeString, 0, 0, {3}, 0, 0, 0});
    t.tensors.push_back({"int4", 0, 0, 0, {3, 3}, 0, 0, 5}); // 9 x 4 bits: 5 bytes
    m.tensors.push_back(t);
    EXPECT_TRUE(encode_metas(m));
    m.tensors[0].tensors[1].size = 4;
    auto r = encode_metas(m);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("4 bytes, its dimensions need 5"), std::string::npos)
        << r.error().message();
}

struct Spoiled {
    const char* name;
    std::function<void(FrameMetas&)> spoil;
    const char* says;
};

// A test name from the case's ("too many fds" -> too_many_fds).
std::string spoiled_name(const ::testing::TestParamInfo<Spoiled>& info)
{
    std::string n = info.param.name;
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c)))
            c = '_';
    return n;
}

class IpcMetaRefuses : public ::testing::TestWithParam<Spoiled>
{
};

// The sender refuses to encode what a reader would refuse; a peer that writes it anyway is
// refused by parse() (the record, with its fds closed).
TEST_P(IpcMetaRefuses, WithAReasonNamingTheField_Negative)
{
    FrameMetas m = ssd_metas();
    GetParam().spoil(m);
    auto enc = encode_metas(m);
    ASSERT_FALSE(enc) << GetParam().name << " was encoded";
    EXPECT_NE(enc.error().message().find(GetParam().says), std::string::npos)
        << enc.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, IpcMetaRefuses,
    ::testing::Values(
        Spoiled{"fd kind", [](FrameMetas& m) { m.fds[0].kind = 3; }, "meta fd 0: kind 3"},
        Spoiled{"fd size", [](FrameMetas& m) { m.fds[0].size = 0; }, "meta fd 0: size 0"},
        Spoiled{"too many fds", [](FrameMetas& m) { m.fds.resize(5, m.fds[0]); }, "5 meta fds"},
        Spoiled{"too many metas", [](FrameMetas& m) { m.analytics.resize(8, m.analytics[0]); },
                "9 metas"},
        Spoiled{"no tensors", [](FrameMetas& m) { m.tensors[0].tensors.clear(); }, "0 tensors"},
        Spoiled{"too many tensors",
                [](FrameMetas& m) { m.tensors[0].tensors.resize(17, m.tensors[0].tensors[3]); },
                "17 tensors"},
        Spoiled{"tensor type", [](FrameMetas& m) { m.tensors[0].tensors[0].data_type = 22; },
                "data type 22 is unknown"},
        Spoiled{"tensor order", [](FrameMetas& m) { m.tensors[0].tensors[0].dims_order = 2; },
                "dimension order 2"},
        Spoiled{"tensor layout", [](FrameMetas& m) { m.tensors[0].tensors[0].layout = 1; },
                "layout 1"},
        Spoiled{"no dims", [](FrameMetas& m) { m.tensors[0].tensors[0].dims.clear(); },
                "0 dimensions"},
        Spoiled{"too many dims", [](FrameMetas& m) { m.tensors[0].tensors[0].dims.resize(17, 1); },
                "17 dimensions"},
        Spoiled{"fd index", [](FrameMetas& m) { m.tensors[0].tensors[0].fd_index = 1; },
                "meta fd 1 of 1"},
        Spoiled{"window", [](FrameMetas& m) { m.tensors[0].tensors[3].offset = 4093; },
                "beyond meta fd 0"},
        Spoiled{"window overflow",
                [](FrameMetas& m) {
                    m.tensors[0].tensors[3].offset = 8;
                    m.tensors[0].tensors[3].size = ~uint64_t(0);
                },
                "beyond meta fd 0"},
        Spoiled{"short data", [](FrameMetas& m) { m.tensors[0].tensors[0].size = 159; },
                "159 bytes, its dimensions need 160"},
        Spoiled{"dims overflow",
                [](FrameMetas& m) {
                    m.tensors[0].tensors[0].dims = {uint64_t(1) << 62, 8};
                },
                "overflow"},
        Spoiled{"id with a NUL",
                [](FrameMetas& m) { m.tensors[0].tensors[0].id = std::string("a\0b", 3); },
                "id holds a NUL"},
        Spoiled{"long id",
                [](FrameMetas& m) { m.tensors[0].tensors[0].id = std::string(257, 'x'); },
                "id of 257 bytes"},
        Spoiled{"too many mtds",
                [](FrameMetas& m) { m.analytics[0].mtds.resize(257, m.analytics[0].mtds[3]); },
                "257 metadata"},
        Spoiled{"negative box", [](FrameMetas& m) { m.analytics[0].mtds[0].w = -1; },
                "a box of -1x40"},
        Spoiled{"NaN confidence",
                [](FrameMetas& m) {
                    m.analytics[0].mtds[0].confidence = std::numeric_limits<float>::quiet_NaN();
                },
                "confidence is not a finite number"},
        Spoiled{"infinite rotation",
                [](FrameMetas& m) {
                    m.analytics[0].mtds[1].rotation = std::numeric_limits<float>::infinity();
                },
                "rotation is not a finite number"},
        Spoiled{"no classes", [](FrameMetas& m) { m.analytics[0].mtds[2].classes.clear(); },
                "0 classes"},
        Spoiled{"relation beyond", [](FrameMetas& m) { m.analytics[0].relations[0].to = 4; },
                "between metadata 0 and 4 of 4"},
        Spoiled{"relation to itself", [](FrameMetas& m) { m.analytics[0].relations[0].to = 0; },
                "with itself"},
        Spoiled{"relation types", [](FrameMetas& m) { m.analytics[0].relations[0].types = 1; },
                "relation types 1"},
        Spoiled{"no relation types", [](FrameMetas& m) { m.analytics[0].relations[0].types = 0; },
                "relation types 0"}),
    spoiled_name);

// Bytes a peer wrote by hand: each spoils the valid section in one field the encoder never
// writes wrong.
TEST(IpcMeta, HandWrittenSectionsAreRefusedAndTheirFdsClosed_Negative)
{
    const auto before = open_fds();
    const auto good = encode_metas(ssd_metas());
    ASSERT_TRUE(good);
    const auto frame = [&](std::vector<uint8_t> meta, uint32_t n_meta_fds) {
        FrameHead head;
        head.seq = 1;
        head.n_meta_fds = n_meta_fds;
        const MemoryRecord rec = flat_record(4096);
        auto f = encode_frame(head, std::span(&rec, 1), meta);
        EXPECT_TRUE(f);
        return f ? *f : std::vector<uint8_t>{};
    };
    const auto refused = [&](std::vector<uint8_t> meta, uint32_t n_meta_fds, size_t fds,
                             const std::string& says) {
        auto all = fds_for(fds);
        std::vector<int> raw;
        for (auto& f : all)
            raw.push_back(f.get());
        auto r = parse(frame(std::move(meta), n_meta_fds), std::move(all), false);
        ASSERT_FALSE(r) << "accepted; should say " << says;
        EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
        for (int fd : raw)
            EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "fd of a refused record left open";
    };
    const size_t first_record = 8 + 16; // counts, one fd entry
    {
        auto b = *good;
        b[first_record + 2] = kTensorsVersion + 1;
        refused(b, 1, 1, "meta 0 (tensors): version 2, this side reads 1");
    }
    {
        auto b = *good;
        b[first_record] = 9;
        refused(b, 1, 1, "meta 0: kind 9 is unknown");
    }
    {
        auto b = *good;
        b[first_record + 3] = 1;
        refused(b, 1, 1, "meta 0: reserved field is set");
    }
    {
        auto b = *good;
        b[first_record + 4] = 0xff; // a length beyond the section
        b[first_record + 5] = 0xff;
        refused(b, 1, 1, "the section holds");
    }
    {
        auto b = *good;
        b.push_back(0);
        refused(b, 1, 1, "1 bytes left over");
    }
    {
        auto b = *good;
        b.resize(b.size() - 3); // the last record's body is cut short
        refused(b, 1, 1, "172 bytes, the section holds 169 more");
    }
    refused(*good, 0, 1, "carries 2 fds"); // a meta fd the head does not name
    refused(*good, 1, 0, "carries 1 fds"); // a meta fd named but not sent
    refused({}, 1, 1, "no meta section for 1 meta fds");
    {
        auto b = *good;
        b[0] = 2; // the section names 2 fds, the head 1
        refused(b, 1, 1, "meta section names 2 fds, the frame carries 1");
    }
    {
        std::vector<uint8_t> b(8, 0); // no fds, no records
        refused(b, 0, 0, "a meta section without metas");
    }
    refused(*good, 5, 6, "5 meta fds");
    EXPECT_EQ(open_fds(), before) << test::describe_fds(open_fds());
}

TEST(IpcMeta, MetaFdsAreCheckedLikeMemoryFds_Negative)
{
    const auto before = open_fds();
    {
        // Shorter than the section says.
        auto fds = fds_for(0);
        fds.push_back(sealed_memfd(1024));
        auto m = parse(frame_with(ssd_metas()), std::move(fds), false);
        ASSERT_TRUE(m) << m.error().message();
        auto c = check_frame_fds(m->frame);
        ASSERT_FALSE(c);
        EXPECT_NE(c.error().message().find("meta fd 0: the memfd holds 1024 bytes"),
                  std::string::npos)
            << c.error().message();
    }
    {
        // Not sealed against shrinking.
        auto fds = fds_for(0);
        UniqueFd unsealed(::memfd_create("meta", MFD_CLOEXEC));
        ASSERT_EQ(::ftruncate(unsealed.get(), 4096), 0);
        fds.push_back(std::move(unsealed));
        auto m = parse(frame_with(ssd_metas()), std::move(fds), false);
        ASSERT_TRUE(m) << m.error().message();
        auto c = check_frame_fds(m->frame);
        ASSERT_FALSE(c);
        EXPECT_NE(c.error().message().find("meta fd 0"), std::string::npos);
        EXPECT_NE(c.error().message().find("F_SEAL_SHRINK"), std::string::npos)
            << c.error().message();
    }
    {
        // A pipe.
        auto fds = fds_for(0);
        int p[2];
        ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
        ::close(p[1]);
        fds.push_back(UniqueFd(p[0]));
        auto m = parse(frame_with(ssd_metas()), std::move(fds), false);
        ASSERT_TRUE(m) << m.error().message();
        auto c = check_frame_fds(m->frame);
        ASSERT_FALSE(c);
        EXPECT_NE(c.error().message().find("neither a DMA-BUF nor a memfd"), std::string::npos)
            << c.error().message();
    }
    EXPECT_EQ(open_fds(), before) << test::describe_fds(open_fds());
}

TEST(IpcMeta, MetasTooLargeForAMessageAreRefusedByTheEncoder_Negative)
{
    FrameMetas m;
    AnalyticsMeta a;
    Mtd cls;
    cls.type = MtdType::Classification;
    cls.classes.resize(kMaxClasses, {std::string(200, 'c'), 0.5f});
    a.mtds.resize(2, cls);
    m.analytics.push_back(a);
    auto meta = encode_metas(m);
    ASSERT_TRUE(meta) << meta.error().message();
    FrameHead head;
    const MemoryRecord rec = flat_record(4096);
    auto f = encode_frame(head, std::span(&rec, 1), *meta);
    ASSERT_FALSE(f);
    EXPECT_NE(f.error().message().find("exceeds the 65536-byte limit"), std::string::npos)
        << f.error().message();
}

// The memfd the sink copies tensor bytes into: what it holds, what a receiver's check says of
// it, and that nobody can change it any more.
TEST(IpcMeta, AMetaBlobHoldsItsBytesSealedAndPassesTheReceiversCheck)
{
    const auto before = open_fds();
    {
        std::vector<uint8_t> bytes(5000);
        for (size_t i = 0; i < bytes.size(); ++i)
            bytes[i] = uint8_t(i * 7);
        auto blob = make_meta_blob(bytes);
        ASSERT_TRUE(blob) << blob.error().message();
        auto d = describe_meta_fd(blob->get());
        ASSERT_TRUE(d) << d.error().message();
        EXPECT_EQ(d->kind, EDGETENSOR_KIND_HOST);
        EXPECT_EQ(d->size, 5000u);
        MemoryRecord rec;
        rec.desc.kind = d->kind;
        rec.desc.capacity = d->size;
        rec.maxsize = d->size;
        EXPECT_TRUE(check_fd(blob->get(), rec));
        void* p = ::mmap(nullptr, 5000, PROT_READ, MAP_SHARED, blob->get(), 0);
        ASSERT_NE(p, MAP_FAILED);
        EXPECT_EQ(std::memcmp(p, bytes.data(), bytes.size()), 0);
        ::munmap(p, 5000);
        EXPECT_EQ(::mmap(nullptr, 5000, PROT_READ | PROT_WRITE, MAP_SHARED, blob->get(), 0),
                  MAP_FAILED)
            << "sealed against writing";
        EXPECT_NE(::ftruncate(blob->get(), 100), 0) << "sealed against shrinking";
        EXPECT_FALSE(make_meta_blob({}));
    }
    EXPECT_EQ(open_fds(), before) << test::describe_fds(open_fds());
}

TEST(IpcMeta, OnlyFdsAReceiverAcceptsAreDescribedAsMetaFds_Negative)
{
    UniqueFd sealed = sealed_memfd(4096);
    auto ok = describe_meta_fd(sealed.get());
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(ok->size, 4096u);
    UniqueFd unsealed(::memfd_create("meta", MFD_CLOEXEC));
    ASSERT_EQ(::ftruncate(unsealed.get(), 4096), 0);
    auto u = describe_meta_fd(unsealed.get());
    ASSERT_FALSE(u);
    EXPECT_NE(u.error().message().find("F_SEAL_SHRINK"), std::string::npos);
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    UniqueFd pr(p[0]), pw(p[1]);
    auto q = describe_meta_fd(pr.get());
    ASSERT_FALSE(q);
    EXPECT_EQ(q.error().code(), ErrorCode::UnknownBufferType);
}

// tensorbatch's provenance of a batch of three: a letterboxed whole frame, a ROI with its label,
// and an empty slot (pts none, roi_id -1, as the element leaves it).
BatchMeta three_slots()
{
    BatchMeta b;
    b.slot_width = 640;
    b.slot_height = 640;
    BatchSlot frame;
    frame.filled = true;
    frame.pad_index = 2;
    frame.pts = 1234567890;
    frame.source_width = 1920;
    frame.source_height = 1080;
    frame.crop_width = 1920;
    frame.crop_height = 1080;
    frame.scale_x = frame.scale_y = 640.0 / 1920.0;
    frame.pad_top = 140;
    frame.pad_bottom = 140;
    frame.applied_colorimetry = 0x01020304;
    BatchSlot roi = frame;
    roi.pad_index = 0;
    roi.crop_x = 100;
    roi.crop_y = 50;
    roi.crop_width = 300;
    roi.crop_height = 200;
    roi.scale_x = 640.0 / 300.0;
    roi.scale_y = 0.5;
    roi.pad_top = roi.pad_bottom = 0;
    roi.pad_left = 7;
    roi.pad_right = 9;
    roi.roi_kind = 2;
    roi.roi_id = 41;
    roi.roi_label = "person";
    b.slots = {frame, roi, BatchSlot{}};
    return b;
}

TEST(IpcMeta, ABatchsProvenanceRoundTripsWithEveryField)
{
    for (bool with_others : {true, false}) {
        SCOPED_TRACE(with_others);
        FrameMetas sent = with_others ? ssd_metas() : FrameMetas{};
        sent.batch = three_slots();
        auto m = parse(frame_with(sent), fds_for(sent.fds.size()), false);
        ASSERT_TRUE(m) << m.error().message();
        const FrameMetas& got = m->frame.metas;
        EXPECT_EQ(got.tensors.size(), with_others ? 1u : 0u);
        ASSERT_TRUE(got.batch);
        EXPECT_EQ(got.batch->slot_width, 640u);
        EXPECT_EQ(got.batch->slot_height, 640u);
        ASSERT_EQ(got.batch->slots.size(), 3u);
        for (size_t i = 0; i < 3; ++i) {
            SCOPED_TRACE(i);
            const BatchSlot& a = sent.batch->slots[i];
            const BatchSlot& b = got.batch->slots[i];
            EXPECT_EQ(a.filled, b.filled);
            EXPECT_EQ(a.pad_index, b.pad_index);
            EXPECT_EQ(a.pts, b.pts);
            EXPECT_EQ(a.source_width, b.source_width);
            EXPECT_EQ(a.source_height, b.source_height);
            EXPECT_EQ(a.crop_x, b.crop_x);
            EXPECT_EQ(a.crop_y, b.crop_y);
            EXPECT_EQ(a.crop_width, b.crop_width);
            EXPECT_EQ(a.crop_height, b.crop_height);
            EXPECT_EQ(a.scale_x, b.scale_x) << "bit for bit: a double on the wire";
            EXPECT_EQ(a.scale_y, b.scale_y);
            EXPECT_EQ(a.pad_left, b.pad_left);
            EXPECT_EQ(a.pad_top, b.pad_top);
            EXPECT_EQ(a.pad_right, b.pad_right);
            EXPECT_EQ(a.pad_bottom, b.pad_bottom);
            EXPECT_EQ(a.roi_kind, b.roi_kind);
            EXPECT_EQ(a.roi_id, b.roi_id);
            EXPECT_EQ(a.roi_label, b.roi_label);
            EXPECT_EQ(a.applied_colorimetry, b.applied_colorimetry);
        }
    }
}

class IpcBatchRefuses : public ::testing::TestWithParam<Spoiled>
{
};

// A batch record a receiver could not map back from is neither sent nor read.
TEST_P(IpcBatchRefuses, WithAReasonNamingTheSlotAndField_Negative)
{
    FrameMetas m;
    m.batch = three_slots();
    GetParam().spoil(m);
    auto enc = encode_metas(m);
    ASSERT_FALSE(enc) << GetParam().name << " was encoded";
    EXPECT_NE(enc.error().message().find(GetParam().says), std::string::npos)
        << enc.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, IpcBatchRefuses,
    ::testing::Values(
        Spoiled{"no slots", [](FrameMetas& m) { m.batch->slots.clear(); }, "(batch): 0 slots"},
        Spoiled{"too many slots", [](FrameMetas& m) { m.batch->slots.resize(kMaxBatchSlots + 1); },
                "1025 slots"},
        Spoiled{"empty slot size", [](FrameMetas& m) { m.batch->slot_width = 0; },
                "slots of 0x640"},
        Spoiled{"roi kind", [](FrameMetas& m) { m.batch->slots[2].roi_kind = 3; },
                "slot 2: ROI kind 3 is unknown"},
        Spoiled{"no source", [](FrameMetas& m) { m.batch->slots[0].source_height = 0; },
                "slot 0: a source of 1920x0"},
        Spoiled{"crop outside", [](FrameMetas& m) { m.batch->slots[1].crop_x = 1700; },
                "slot 1: crop 1700,50 300x200 is not inside its 1920x1080 source"},
        Spoiled{"crop overflow",
                [](FrameMetas& m) {
                    m.batch->slots[1].crop_y = UINT32_MAX;
                    m.batch->slots[1].crop_height = 2;
                },
                "is not inside its"},
        Spoiled{"empty crop", [](FrameMetas& m) { m.batch->slots[0].crop_width = 0; },
                "slot 0: crop 0,0 0x1080"},
        Spoiled{"NaN scale",
                [](FrameMetas& m) {
                    m.batch->slots[0].scale_x = std::numeric_limits<double>::quiet_NaN();
                },
                "slot 0: scale"},
        Spoiled{"zero scale", [](FrameMetas& m) { m.batch->slots[1].scale_y = 0; },
                "(finite and positive)"},
        Spoiled{"label with a NUL",
                [](FrameMetas& m) { m.batch->slots[1].roi_label = std::string("a\0b", 3); },
                "slot 1 ROI label holds a NUL"},
        Spoiled{"long label",
                [](FrameMetas& m) { m.batch->slots[1].roi_label = std::string(257, 'x'); },
                "slot 1 ROI label of 257 bytes"}),
    spoiled_name);

// What the encoder never writes: a slot whose filled flag is neither 0 nor 1, a batch record
// of another version, a second batch record.
TEST(IpcMeta, HandWrittenBatchRecordsAreRefused_Negative)
{
    FrameMetas m;
    m.batch = three_slots();
    auto enc = encode_metas(m);
    ASSERT_TRUE(enc) << enc.error().message();
    // No meta fds: the section header (8 bytes), the record head (8), slot size and count (12).
    constexpr size_t kFilled = 8 + 8 + 12;
    constexpr size_t kVersionAt = 8 + 2;
    const auto refused = [](std::vector<uint8_t> bytes, const std::string& says) {
        auto r = parse_metas(bytes, 0);
        ASSERT_FALSE(r) << says;
        EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
    };
    std::vector<uint8_t> b = *enc;
    b[kFilled] = 2;
    refused(b, "meta 0 (batch) slot 0: filled is 2 (0 or 1)");
    b = *enc;
    b[kVersionAt] = 2;
    refused(b, "meta 0 (batch): version 2, this side reads 1");
    b = *enc;
    b[4] = 2; // records
    b.insert(b.end(), enc->begin() + 8, enc->end());
    refused(b, "meta 1 (batch): a second batch record");
    b = *enc;
    b.resize(b.size() - 3);
    refused(b, "meta 0: ");
}

} // namespace
} // namespace edgetensor::ipc
