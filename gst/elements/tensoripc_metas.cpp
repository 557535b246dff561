// SPDX-License-Identifier: MIT
//
// GStreamer's tensor and analytics metas, and tensorbatch's provenance, to and from a FRAME's
// meta section (tensoripc_metas.hpp).

#include "tensoripc_metas.hpp"

#include "batch_meta_record.hpp"
#include "glib_raii.hpp"
#include "tensoripcsrc_frame.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>

#if EDGETENSOR_HAVE_GST_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

#include <algorithm>
#include <cstring>
#include <map>

namespace edgetensor::gst::tensoripc
{

#if EDGETENSOR_HAVE_GST_ANALYTICS && GST_CHECK_VERSION(1, 26, 0)
#define ET_TENSOR_META 1
#else
#define ET_TENSOR_META 0
#endif

namespace
{

// Where tensor bytes go on the sender's side: the fds passed as they are, and the bytes of
// the others, copied one after another (64-byte aligned) into one blob.
struct Placement {
    ipc::FrameMetas metas;
    std::vector<int> fds;
    std::vector<uint8_t> blob;
    bool uses_blob = false;
    std::string skipped;

    void skip(const std::string& what)
    {
        if (!skipped.empty())
            skipped += "; ";
        skipped += what;
    }
};

#if ET_TENSOR_META

// The blob is the last meta fd; its index is known once every passed fd is.
constexpr uint32_t kBlobIndex = UINT32_MAX;

// Where tensor `t`'s bytes travel: its own fd when it has one a receiver accepts and there is
// room for one more fd, else the blob (copied; false when it cannot be mapped).
bool place_tensor(Placement& p, GstBuffer* data, ipc::TensorRecord* r)
{
    const gsize size = gst_buffer_get_size(data);
    if (gst_buffer_n_memory(data) == 1) {
        GstMemory* mem = gst_buffer_peek_memory(data, 0);
        const int fd = gst_is_fd_memory(mem) ? gst_fd_memory_get_fd(mem) : -1;
        if (fd >= 0) {
            gsize offset = 0;
            gst_memory_get_sizes(mem, &offset, nullptr);
            auto it = std::find(p.fds.begin(), p.fds.end(), fd);
            // One fd slot stays free for the blob.
            if (it == p.fds.end() && p.fds.size() + 1 < ipc::kMaxMetaFds) {
                if (auto d = ipc::describe_meta_fd(fd)) {
                    p.fds.push_back(fd);
                    p.metas.fds.push_back(*d);
                    it = p.fds.end() - 1;
                }
            }
            if (it != p.fds.end()) {
                r->fd_index = uint32_t(it - p.fds.begin());
                r->offset = offset;
                r->size = size;
                return true;
            }
        }
    }
    GstMapInfo map;
    if (!gst_buffer_map(data, &map, GST_MAP_READ))
        return false;
    const size_t at = (p.blob.size() + 63) & ~size_t(63);
    p.blob.resize(at + map.size);
    if (map.size > 0)
        std::memcpy(p.blob.data() + at, map.data, map.size);
    gst_buffer_unmap(data, &map);
    p.uses_blob = true;
    r->fd_index = kBlobIndex;
    r->offset = at;
    r->size = size;
    return true;
}

void collect_tensor_metas(GstBuffer* buffer, Placement& p)
{
    gpointer state = nullptr;
    while (GstMeta* meta =
               gst_buffer_iterate_meta_filtered(buffer, &state, GST_TENSOR_META_API_TYPE)) {
        auto* tm = reinterpret_cast<GstTensorMeta*>(meta);
        if (tm->num_tensors == 0)
            continue;
        if (tm->num_tensors > ipc::kMaxTensors) {
            p.skip("a tensor meta of " + std::to_string(tm->num_tensors) + " tensors (at most " +
                   std::to_string(ipc::kMaxTensors) + ")");
            continue;
        }
        ipc::TensorsMeta out;
        bool ok = true;
        for (gsize i = 0; i < tm->num_tensors && ok; ++i) {
            const GstTensor* t = tm->tensors[i];
            if (!t || !t->data || t->num_dims < 1 || t->num_dims > ipc::kMaxTensorDims) {
                p.skip("a tensor without data or of " + std::to_string(t ? t->num_dims : 0) +
                       " dimensions");
                ok = false;
                break;
            }
            ipc::TensorRecord r;
            const gchar* id = t->id ? g_quark_to_string(t->id) : "";
            r.id = id ? id : "";
            r.data_type = guint32(t->data_type);
            r.dims_order = guint32(t->dims_order);
            r.layout = guint32(t->layout);
            r.dims.assign(t->dims, t->dims + t->num_dims);
            if (!place_tensor(p, t->data, &r)) {
                p.skip("tensor \"" + r.id + "\", whose data cannot be mapped");
                ok = false;
                break;
            }
            out.tensors.push_back(std::move(r));
        }
        if (ok)
            p.metas.tensors.push_back(std::move(out));
    }
}

#endif // ET_TENSOR_META

#if EDGETENSOR_HAVE_GST_ANALYTICS

std::string label_of(GQuark q)
{
    const gchar* s = q ? g_quark_to_string(q) : nullptr;
    std::string l = s ? s : "";
    if (l.size() > ipc::kMaxLabelBytes)
        l.resize(ipc::kMaxLabelBytes);
    return l;
}

void collect_analytics(GstBuffer* buffer, Placement& p)
{
    gpointer state = nullptr;
    while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state,
                                                            GST_ANALYTICS_RELATION_META_API_TYPE)) {
        auto* rm = reinterpret_cast<GstAnalyticsRelationMeta*>(meta);
        ipc::AnalyticsMeta out;
        std::vector<guint> ids; // the sender's mtd id of each carried mtd
        gpointer it = nullptr;
        GstAnalyticsMtd mtd;
        guint others = 0;
        while (gst_analytics_relation_meta_iterate(rm, &it, GST_ANALYTICS_MTD_TYPE_ANY, &mtd)) {
            const GstAnalyticsMtdType type = gst_analytics_mtd_get_mtd_type(&mtd);
            ipc::Mtd m;
            if (out.mtds.size() >= ipc::kMaxMtds) {
                ++others;
                continue;
            }
            if (type == gst_analytics_od_mtd_get_mtd_type()) {
                m.type = ipc::MtdType::ObjectDetection;
                gint x = 0, y = 0, w = 0, h = 0;
                gfloat r = 0, conf = 0;
#if GST_CHECK_VERSION(1, 26, 0)
                gst_analytics_od_mtd_get_oriented_location(&mtd, &x, &y, &w, &h, &r, &conf);
#else
                gst_analytics_od_mtd_get_location(&mtd, &x, &y, &w, &h, &conf);
#endif
                m.label = label_of(gst_analytics_od_mtd_get_obj_type(&mtd));
                m.x = x;
                m.y = y;
                m.w = w;
                m.h = h;
                m.rotation = r;
                m.confidence = conf;
            } else if (type == gst_analytics_cls_mtd_get_mtd_type()) {
                m.type = ipc::MtdType::Classification;
                const gsize n =
                    std::min<gsize>(gst_analytics_cls_mtd_get_length(&mtd), ipc::kMaxClasses);
                for (gsize i = 0; i < n; ++i)
                    m.classes.push_back({label_of(gst_analytics_cls_mtd_get_quark(&mtd, i)),
                                         gst_analytics_cls_mtd_get_level(&mtd, i)});
                if (m.classes.empty()) {
                    ++others;
                    continue;
                }
            } else if (type == gst_analytics_tracking_mtd_get_mtd_type()) {
                m.type = ipc::MtdType::Tracking;
                guint64 id = 0;
                GstClockTime first = 0, last = 0;
                gboolean lost = FALSE;
                gst_analytics_tracking_mtd_get_info(&mtd, &id, &first, &last, &lost);
                m.tracking_id = id;
                m.first_seen = first;
                m.last_seen = last;
                m.lost = lost != FALSE;
            } else {
                ++others;
                continue;
            }
            ids.push_back(gst_analytics_mtd_get_id(&mtd));
            out.mtds.push_back(std::move(m));
        }
        if (others > 0)
            p.skip(std::to_string(others) + " analytics metadata of types not carried (only "
                                            "object detection, classification and tracking)");
        for (guint32 a = 0; a < ids.size(); ++a)
            for (guint32 b = 0; b < ids.size(); ++b) {
                if (a == b || out.relations.size() >= ipc::kMaxRelations)
                    continue;
                const guint32 types =
                    guint32(gst_analytics_relation_meta_get_relation(rm, ids[a], ids[b])) &
                    ipc::kKnownRelationTypes;
                if (types != 0)
                    out.relations.push_back({a, b, types});
            }
        if (!out.mtds.empty())
            p.metas.analytics.push_back(std::move(out));
    }
}

#endif // EDGETENSOR_HAVE_GST_ANALYTICS

// tensorbatch's provenance (ours: every version has it). A record the receiver would refuse
// (a producer's crop outside its source) is left out alone; the other metas still go.
void collect_batch(GstBuffer* buffer, Placement& p)
{
    const GstEdgeTensorBatchMeta* m = gst_buffer_get_edge_tensor_batch_meta(buffer);
    if (!m || m->n_slots == 0)
        return;
    ipc::BatchMeta record = batch_record_of(*m);
    // The record's own check, apart from the section's, which would refuse every meta with it.
    if (auto checked = ipc::encode_batch_body(record); !checked) {
        p.skip("the batch provenance (" + checked.error().message() + ")");
        return;
    }
    p.metas.batch = std::move(record);
}

} // namespace

bool carries_tensor_meta() noexcept
{
    return ET_TENSOR_META != 0;
}

bool carries_analytics_meta() noexcept
{
#if EDGETENSOR_HAVE_GST_ANALYTICS
    return true;
#else
    return false;
#endif
}

Result<OutgoingMetas> collect_metas(GstBuffer* buffer)
{
    OutgoingMetas out;
    Placement p;
#if ET_TENSOR_META
    collect_tensor_metas(buffer, p);
#endif
#if EDGETENSOR_HAVE_GST_ANALYTICS
    collect_analytics(buffer, p);
#endif
    collect_batch(buffer, p);
    out.skipped = std::move(p.skipped);
    if (p.metas.empty())
        return out;
    while (p.metas.records() > ipc::kMaxMetaRecords) {
        out.skipped += std::string(out.skipped.empty() ? "" : "; ") + "metas beyond " +
                       std::to_string(ipc::kMaxMetaRecords) + " a buffer";
        if (!p.metas.analytics.empty())
            p.metas.analytics.pop_back();
        else
            p.metas.tensors.pop_back();
    }
    if (p.uses_blob) {
        if (p.blob.empty())
            p.blob.resize(1); // empty tensors still name a window of a real fd
        auto blob = ipc::make_meta_blob(p.blob);
        if (!blob)
            return unexpected(std::move(blob).error());
        const uint32_t index = uint32_t(p.fds.size());
        for (ipc::TensorsMeta& t : p.metas.tensors)
            for (ipc::TensorRecord& r : t.tensors)
                if (r.fd_index == UINT32_MAX)
                    r.fd_index = index;
        p.metas.fds.push_back({EDGETENSOR_KIND_HOST, p.blob.size()});
        out.blob = std::move(*blob);
        p.fds.push_back(out.blob.get());
    }
    auto section = ipc::encode_metas(p.metas);
    const size_t room =
        ipc::kMaxMessage - ipc::kFrameFixedSize - ipc::kMaxMemories * sizeof(ipc::MemoryRecord);
    if (!section || section->size() > room) {
        out.skipped += std::string(out.skipped.empty() ? "" : "; ") + "every meta: " +
                       (section ? "the meta section of " + std::to_string(section->size()) +
                                      " bytes would not fit one message"
                                : section.error().message());
        out.blob.reset();
        return out;
    }
    out.section = std::move(*section);
    out.fds = std::move(p.fds);
    return out;
}

#if EDGETENSOR_HAVE_GST_ANALYTICS

namespace
{

void attach_analytics(GstBuffer* buffer, const ipc::AnalyticsMeta& a)
{
    GstAnalyticsRelationMeta* rm = gst_buffer_add_analytics_relation_meta(buffer);
    if (!rm)
        return;
    std::vector<guint> ids;
    for (const ipc::Mtd& m : a.mtds) {
        GstAnalyticsMtd mtd{};
        gboolean ok = FALSE;
        switch (m.type) {
        case ipc::MtdType::ObjectDetection: {
            const GQuark label = m.label.empty() ? 0 : g_quark_from_string(m.label.c_str());
#if GST_CHECK_VERSION(1, 26, 0)
            ok = gst_analytics_relation_meta_add_oriented_od_mtd(rm, label, m.x, m.y, m.w, m.h,
                                                                 m.rotation, m.confidence, &mtd);
#else
            ok = gst_analytics_relation_meta_add_od_mtd(rm, label, m.x, m.y, m.w, m.h, m.confidence,
                                                        &mtd);
#endif
            break;
        }
        case ipc::MtdType::Classification: {
            std::vector<gfloat> levels;
            std::vector<GQuark> quarks;
            for (const ipc::ClassEntry& c : m.classes) {
                levels.push_back(c.confidence);
                quarks.push_back(g_quark_from_string(c.label.c_str()));
            }
            ok = gst_analytics_relation_meta_add_cls_mtd(rm, levels.size(), levels.data(),
                                                         quarks.data(), &mtd);
            break;
        }
        case ipc::MtdType::Tracking:
            ok =
                gst_analytics_relation_meta_add_tracking_mtd(rm, m.tracking_id, m.first_seen, &mtd);
            if (ok) {
                gst_analytics_tracking_mtd_update_last_seen(&mtd, m.last_seen);
                if (m.lost)
                    gst_analytics_tracking_mtd_set_lost(&mtd);
            }
            break;
        }
        ids.push_back(ok ? gst_analytics_mtd_get_id(&mtd) : G_MAXUINT);
    }
    for (const ipc::Relation& r : a.relations)
        if (ids[r.from] != G_MAXUINT && ids[r.to] != G_MAXUINT)
            gst_analytics_relation_meta_set_relation(rm, GstAnalyticsRelTypes(r.types), ids[r.from],
                                                     ids[r.to]);
}

} // namespace

#endif // EDGETENSOR_HAVE_GST_ANALYTICS

bool attach_metas(GstBuffer* buffer, ipc::Frame& frame,
                  const std::shared_ptr<ipc::FrameRelease>& release, GstAllocator* dmabuf_alloc,
                  GstAllocator* fd_alloc, std::string* why)
{
    const ipc::FrameMetas& metas = frame.metas;
    if (metas.empty())
        return true;
    if (metas.batch)
        add_batch_meta_from(buffer, *metas.batch);
    bool all = true;
    const auto lacking = [&](const std::string& what) {
        if (!why->empty())
            *why += "; ";
        *why += what;
        all = false;
    };
#if ET_TENSOR_META
    // One read-only memory per meta fd; a tensor's data is a window on one of them.
    std::vector<MiniObjectPtr<GstMemory>> base;
    for (size_t i = 0; i < metas.fds.size(); ++i) {
        const ipc::MetaFd& f = metas.fds[i];
        GstMemory* mem =
            f.kind == EDGETENSOR_KIND_DMABUF
                ? gst_dmabuf_allocator_alloc(dmabuf_alloc, frame.meta_fds[i].get(), f.size)
                : gst_fd_allocator_alloc(fd_alloc, frame.meta_fds[i].get(), f.size,
                                         GST_FD_MEMORY_FLAG_NONE);
        if (!mem) {
            lacking("cannot wrap meta fd " + std::to_string(i));
            return false;
        }
        frame.meta_fds[i].release(); // the memory owns it now
        GST_MINI_OBJECT_FLAG_SET(mem, GST_MEMORY_FLAG_READONLY);
        tensoripcsrc::hold_release(mem, release);
        base.emplace_back(mem);
    }
#if GST_CHECK_VERSION(1, 28, 0)
    constexpr guint32 kLastType = GST_TENSOR_DATA_TYPE_FLOAT8E5M2FNUZ;
#else
    constexpr guint32 kLastType = GST_TENSOR_DATA_TYPE_BFLOAT16;
#endif
    for (const ipc::TensorsMeta& t : metas.tensors) {
        const auto unknown = std::find_if(t.tensors.begin(), t.tensors.end(),
                                          [&](const auto& r) { return r.data_type > kLastType; });
        if (unknown != t.tensors.end()) {
            lacking("a tensor meta with tensor \"" + unknown->id + "\" of data type " +
                    std::to_string(unknown->data_type) + ", unknown to " + running_gst_version());
            continue;
        }
        auto** tensors = g_new0(GstTensor*, t.tensors.size());
        for (size_t i = 0; i < t.tensors.size(); ++i) {
            const ipc::TensorRecord& r = t.tensors[i];
            GstBuffer* data = gst_buffer_new();
            if (r.size > 0)
                gst_buffer_append_memory(data, gst_memory_share(base[r.fd_index].get(),
                                                                gssize(r.offset), gssize(r.size)));
            std::vector<gsize> dims(r.dims.begin(), r.dims.end());
            tensors[i] =
                gst_tensor_new_simple(r.id.empty() ? 0 : g_quark_from_string(r.id.c_str()),
                                      GstTensorDataType(r.data_type), data,
                                      GstTensorDimOrder(r.dims_order), dims.size(), dims.data());
        }
        if (std::find(tensors, tensors + t.tensors.size(), nullptr) != tensors + t.tensors.size()) {
            lacking("a tensor meta GStreamer would not rebuild (gst_tensor_new_simple refused a "
                    "tensor)");
            for (size_t i = 0; i < t.tensors.size(); ++i)
                if (tensors[i])
                    gst_tensor_free(tensors[i]);
            g_free(tensors);
            continue;
        }
        GstTensorMeta* tm = gst_buffer_add_tensor_meta(buffer);
        gst_tensor_meta_set(tm, guint(t.tensors.size()), tensors);
    }
#else
    (void)release;
    (void)dmabuf_alloc;
    (void)fd_alloc;
    if (!metas.tensors.empty())
        lacking("tensor metas (GstTensorMeta needs GStreamer 1.26 and its analytics library; "
                "this is " +
                running_gst_version() + ")");
#endif
#if EDGETENSOR_HAVE_GST_ANALYTICS
    for (const ipc::AnalyticsMeta& a : metas.analytics)
        attach_analytics(buffer, a);
#else
    if (!metas.analytics.empty())
        lacking("analytics metas (GstAnalyticsRelationMeta needs GStreamer 1.24 and its "
                "analytics library)");
#endif
    return all;
}

} // namespace edgetensor::gst::tensoripc
