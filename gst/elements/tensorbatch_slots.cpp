// SPDX-License-Identifier: MIT
//
// tensorbatch's request pads and their slots (tensorbatch_slots.hpp).

#include "tensorbatch_slots.hpp"

#include "glib_raii.hpp"
#include "tensorbatch_early.hpp"
#include "vfunc_guard.hpp"

#include <cstring>
#include <mutex>
#include <string>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_batch_debug);
#define GST_CAT_DEFAULT gst_tensor_batch_debug

namespace edgetensor::gst::tensorbatch
{

namespace
{

// The number in "sink_%u".
guint pad_number(GstPad* pad)
{
    const char* name = GST_PAD_NAME(pad);
    const char* digits = name ? std::strrchr(name, '_') : nullptr;
    return digits ? guint(g_ascii_strtoull(digits + 1, nullptr, 10)) : 0;
}

} // namespace

std::optional<guint> take_slot(Streaming& st)
{
    for (guint i = 0; i < st.slots.size(); ++i)
        if (!st.slots[i]) {
            st.slots[i] = true;
            return i;
        }
    return std::nullopt;
}

GstAggregatorPad* create_new_pad(GstAggregator* agg, GstPadTemplate* templ, const gchar* req_name,
                                 const GstCaps* caps)
{
    auto* self = GST_TENSOR_BATCH(agg);
    GstAggregatorPad* pad =
        GST_AGGREGATOR_CLASS(parent_class())->create_new_pad(agg, templ, req_name, caps);
    if (!pad)
        return nullptr;
    // A pad refused, or why (an exception's message from the guard).
    const std::string refused = guarded(
        agg, "create_new_pad", [](const char* what) { return std::string(what ? what : "?"); },
        [&]() -> std::string {
            std::string why;
            const Settings s = settings_snapshot(self);
            auto* bp = GST_TENSOR_BATCH_PAD(pad);
            bp->stream = new PadStream(pad_number(GST_PAD(pad)));
            guint existing;
            {
                ObjectLockGuard lock(self);
                existing = GST_ELEMENT(self)->numsinkpads;
            }
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            Streaming& st = state_of(self).st;
            if (s.mode == GST_TENSOR_BATCH_MODE_ROI && existing > 0) {
                why = "mode=roi batches the regions of one stream and has its sink pad already";
            } else {
                if (st.slots.empty())
                    st.slots.assign(s.batch_size, false);
                bp->stream->slot = take_slot(st);
                if (!bp->stream->slot)
                    why = "all " + std::to_string(st.slots.size()) +
                          " slots are taken (batch-size=" + std::to_string(st.slots.size()) +
                          "): release a pad first, or raise batch-size in READY";
            }
            return why;
        });
    if (!refused.empty()) {
        GST_ELEMENT_WARNING(self, CORE, PAD,
                            ("Cannot add %s: %s.", GST_PAD_NAME(pad), refused.c_str()), (nullptr));
        gst_object_ref_sink(pad);
        gst_object_unref(pad);
        return nullptr;
    }
    return pad;
}

void release_pad(GstElement* element, GstPad* pad)
{
    auto* self = GST_TENSOR_BATCH(element);
    // The pad goes whatever happens here: only freeing its slot is guarded.
    guarded(element, "release_pad", [&] {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        auto* bp = GST_TENSOR_BATCH_PAD(pad);
        Streaming& st = state_of(self).st;
        if (bp->stream && bp->stream->slot && *bp->stream->slot < st.slots.size())
            st.slots[*bp->stream->slot] = false;
        if (bp->stream) {
            // Its frames converted on arrival leave the open batches, as its queued ones go.
            forget_pad(st.ring, bp->stream->index(), bp->stream->tickets, bp->stream->last_seq);
            bp->stream->slot.reset();
        }
    });
    GST_ELEMENT_CLASS(parent_class())->release_pad(element, pad);
}

} // namespace edgetensor::gst::tensorbatch
