// SPDX-License-Identifier: MIT
//
// GstEdgeTensorAttachedMeta (attached_tensors.hpp).

#include "attached_tensors.hpp"

#include <algorithm>
#include <exception>
#include <utility>

namespace edgetensor::gst
{

namespace
{

struct AttachedMeta {
    GstMeta meta;
    std::vector<AttachedTensor>* tensors;
};

gboolean meta_init(GstMeta* meta, gpointer, GstBuffer*)
{
    auto* m = reinterpret_cast<AttachedMeta*>(meta);
    try {
        m->tensors = new std::vector<AttachedTensor>();
    } catch (const std::exception&) {
        m->tensors = nullptr;
        return FALSE;
    }
    return TRUE;
}

void meta_free(GstMeta* meta, GstBuffer*)
{
    auto* m = reinterpret_cast<AttachedMeta*>(meta);
    delete m->tensors;
    m->tensors = nullptr;
}

const GstMetaInfo* meta_info();

// Copies only: a transform that makes a new frame (scaling, conversion) would make the frame
// transforms untrue, so the tensors stay behind with the old frame.
gboolean meta_transform(GstBuffer* dest, GstMeta* meta, GstBuffer*, GQuark type, gpointer)
{
    if (!GST_META_TRANSFORM_IS_COPY(type))
        return FALSE;
    auto* src = reinterpret_cast<AttachedMeta*>(meta);
    auto* dst = reinterpret_cast<AttachedMeta*>(gst_buffer_add_meta(dest, meta_info(), nullptr));
    if (!dst || !dst->tensors || !src->tensors)
        return FALSE;
    try {
        dst->tensors->insert(dst->tensors->end(), src->tensors->begin(), src->tensors->end());
    } catch (const std::exception&) {
        return FALSE;
    }
    return TRUE;
}

// This file is linked into the plugin and into programs that also load the plugin (the tests):
// whichever copy comes first registers the meta, the other finds it by name (a GType name can
// be registered once per process).
constexpr const char* kMetaName = "GstEdgeTensorAttachedMeta";
constexpr const char* kApiName = "GstEdgeTensorAttachedMetaAPI";

const GstMetaInfo* meta_info()
{
    static const GstMetaInfo* info = nullptr;
    if (g_once_init_enter(&info)) {
        const GstMetaInfo* mi = gst_meta_get_info(kMetaName);
        if (!mi)
            mi = gst_meta_register(attached_tensors_meta_api_type(), kMetaName,
                                   sizeof(AttachedMeta), meta_init, meta_free, meta_transform);
        g_once_init_leave(&info, mi);
    }
    return info;
}

AttachedMeta* get_meta(GstBuffer* buffer)
{
    return reinterpret_cast<AttachedMeta*>(
        gst_buffer_get_meta(buffer, attached_tensors_meta_api_type()));
}

} // namespace

GType attached_tensors_meta_api_type()
{
    static gsize type = 0;
    static const gchar* tags[] = {nullptr};
    if (g_once_init_enter(&type)) {
        GType t = g_type_from_name(kApiName);
        if (!t)
            t = gst_meta_api_type_register(kApiName, tags);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

Result<void> attach_tensors(GstBuffer* buffer, std::vector<AttachedTensor> tensors,
                            bool with_gst_tensor_meta)
{
    Result<void> gst_result{};
    if (with_gst_tensor_meta && have_gst_tensor_meta() && !tensors.empty()) {
        std::vector<TensorRecord> records;
        records.reserve(tensors.size());
        for (const AttachedTensor& t : tensors)
            records.push_back(t.tensor);
        gst_result = add_gst_tensor_meta(buffer, records);
    }
    AttachedMeta* m = get_meta(buffer);
    if (!m)
        m = reinterpret_cast<AttachedMeta*>(gst_buffer_add_meta(buffer, meta_info(), nullptr));
    if (!m || !m->tensors)
        return make_error(ErrorCode::AllocationFailed, "cannot attach tensors to the buffer");
    for (AttachedTensor& t : tensors)
        m->tensors->push_back(std::move(t));
    return gst_result;
}

std::vector<AttachedTensor> attached_tensors(GstBuffer* buffer)
{
    const AttachedMeta* m = get_meta(buffer);
    if (!m || !m->tensors)
        return {};
    return *m->tensors;
}

size_t detach_tensor(GstBuffer* buffer, const std::string& id)
{
    size_t removed = 0;
    if (AttachedMeta* m = get_meta(buffer); m && m->tensors) {
        auto& v = *m->tensors;
        const auto end =
            std::remove_if(v.begin(), v.end(), [&](const auto& t) { return t.tensor.id == id; });
        removed += size_t(v.end() - end);
        v.erase(end, v.end());
        if (v.empty())
            gst_buffer_remove_meta(buffer, &m->meta);
    }
    return removed + remove_gst_tensor_metas_with(buffer, id);
}

} // namespace edgetensor::gst
