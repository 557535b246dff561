// SPDX-License-Identifier: MIT
//
// tensorimport's per-buffer steps (tensorimport_frame.hpp).

#include "tensorimport_frame.hpp"

#include "frame_check.hpp"
#include "glib_raii.hpp"
#include "memory_identity.hpp"

#include <gst/edgetensor/edgetensor.h>

namespace edgetensor::gst::tensorimport
{

bool matches_caps(const StreamLayout* layout, GstBuffer* inbuf, std::string* why)
{
    if (!layout)
        return true;
    if (layout->video)
        return check_video_frame(inbuf, &layout->vinfo, why);
    const gsize size = gst_buffer_get_size(inbuf);
    if (gst_buffer_n_memory(inbuf) == 1 && size != layout->frame_bytes) {
        *why = "it holds " + std::to_string(size) + " bytes, but the other/tensors caps describe " +
               std::to_string(layout->frame_bytes) + " (tensors are never padded or cut)";
        return false;
    }
    return true;
}

Located locate(const StreamLayout* layout, GstBuffer* inbuf)
{
    Located l;
    l.tensor_bytes = layout && !layout->video ? layout->frame_bytes : 0;
    // An other/tensors tensor in several memories (located on inbuf: a copy forgets the pool
    // the buffer came from).
    if (l.tensor_bytes > 0 && gst_buffer_n_memory(inbuf) > 1) {
        l.where = locate_tensor(inbuf, l.tensor_bytes);
        if (l.usable())
            l.sent = describe_sent_memory(inbuf, l.where);
        return l;
    }
    l.sent =
        std::string("memory of type \"") +
        (gst_buffer_n_memory(inbuf) == 0 ? "(none)"
                                         : memory_type_name(gst_buffer_peek_memory(inbuf, 0))) +
        "\"";
    return l;
}

Attached attach(GstEdgeTensorImportCache* cache, GstBuffer* inbuf, const Located& located)
{
    Attached a;
    a.unusable.sent = located.sent;
    // In place: the input itself when writable, else a copy sharing its memory.
    MiniObjectPtr<GstBuffer> copy(gst_buffer_is_writable(inbuf) ? nullptr : gst_buffer_copy(inbuf));
    GstBuffer* work = copy ? copy.get() : inbuf;
    // The tensor becomes the buffer's one memory when it can without a copy.
    if (!make_single_memory(work, located.where, &a.unusable.why))
        return a;
    gchar* why = nullptr;
    GstEdgeTensorMeta* meta =
        gst_edge_tensor_import_cache_attach_meta(cache, work, &a.result, &why);
    GCharPtr owned_why(why);
    a.unusable.failed = a.result == GST_EDGE_TENSOR_IMPORT_FAILED;
    if (!meta) {
        a.unusable.why = why ? why : "";
        return a;
    }
    a.identity = meta->identity;
    a.buffer = copy ? copy.release() : inbuf;
    return a;
}

} // namespace edgetensor::gst::tensorimport
