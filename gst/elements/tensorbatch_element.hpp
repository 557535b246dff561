// SPDX-License-Identifier: MIT
//
// tensorbatch's instance and the state its files share: gsttensorbatch.cpp (the element's
// vfuncs: caps, properties), tensorbatch_slots.cpp (request pads and their slots),
// tensorbatch_lifecycle.cpp (start/stop), tensorbatch_aggregate.cpp (one batch) and
// tensorbatch_early.cpp (convert-on-arrival, in the pads' threads). Not installed.

#pragma once

#include "glib_raii.hpp"
#include "gsttensorbatch.h"
#include "tensorbatch_early.hpp"
#include "tensorbatch_pad.hpp"
#include "tensorbatch_properties.hpp"
#include "tensorbatch_stats.hpp"

#include <edgetensor/tensor_dyn.hpp>

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::gst::tensorbatch
{

/// Element messages decided under the streaming lock and posted after it is released: a bus
/// sync handler may read the element's properties, which take that lock.
class Deferred
{
public:
    void error(GQuark domain, gint code, std::string text, std::string debug = {})
    {
        msgs_.push_back({GST_MESSAGE_ERROR, domain, code, std::move(text), std::move(debug)});
    }
    void warning(GQuark domain, gint code, std::string text, std::string debug = {})
    {
        msgs_.push_back({GST_MESSAGE_WARNING, domain, code, std::move(text), std::move(debug)});
    }
    void post(GstElement* element)
    {
        for (Msg& m : msgs_)
            gst_element_message_full(element, m.type, m.domain, m.code, g_strdup(m.text.c_str()),
                                     m.debug.empty() ? nullptr : g_strdup(m.debug.c_str()),
                                     __FILE__, GST_FUNCTION, __LINE__);
        msgs_.clear();
    }

private:
    struct Msg {
        GstMessageType type;
        GQuark domain;
        gint code;
        std::string text;
        std::string debug;
    };
    std::vector<Msg> msgs_;
};

/// The batch the caps negotiated.
struct Output {
    size_t width = 0; ///< slot size: the properties', else the first stream's
    size_t height = 0;
    guint n = 0;
    edgetensor::Shape shape;
    /// The batch's id in its GstTensorMeta (1.26+): the element's name, as tensorconvert's.
    std::string tensor_id;
    bool negotiated = false;
};

struct Streaming {
    Output out;
    Counters counters;
    /// Which slots a pad holds (streams mode).
    std::vector<bool> slots;
    /// Warnings said once per start (per pad and kind).
    std::set<std::string> warned;
    /// A pad's caps were refused (with an error saying why) since start.
    bool caps_refused = false;
    guint roi_warnings = 0;
    /// The batches the pads' threads are filling (early conversion).
    Ring ring;
};

// One C++ state object per element: settings under the object lock, streaming state under mu.
struct State {
    Settings settings;
    std::mutex mu;
    /// Signalled under mu when a slot of an open batch stops being written.
    std::condition_variable written;
    Streaming st;
    /// Frames are converted on arrival (convert-on-arrival, streams mode, ordering=fifo; set
    /// at start). Atomic so the pads' chain function reads it without mu: a frame that is not
    /// converted on arrival takes no lock there, so a pad's thread does not wait for the
    /// aggregator converting that pad's previous frame.
    std::atomic<bool> early{false};
    // update_src_caps said why the output cannot be negotiated (the src task's only).
    bool negotiation_error = false;
};

} // namespace edgetensor::gst::tensorbatch

struct _GstTensorBatch {
    GstAggregator parent;
    edgetensor::gst::tensorbatch::State* state;
};

struct _GstTensorBatchPad {
    GstAggregatorPad parent;
    // Made when the element names the pad; the element's mu guards it.
    edgetensor::gst::tensorbatch::PadStream* stream;
    // GstAggregatorPad's chain function, which tensorbatch's early conversion calls.
    GstPadChainFunction aggregator_chain;
};

namespace edgetensor::gst::tensorbatch
{

/// GstAggregator's class, for the vfuncs outside gsttensorbatch.cpp that chain up
/// (G_DEFINE_TYPE keeps gst_tensor_batch_parent_class to that file).
gpointer parent_class();

inline State& state_of(gpointer self)
{
    return *GST_TENSOR_BATCH(self)->state;
}

inline Settings settings_snapshot(gpointer self)
{
    ObjectLockGuard lock(self);
    return state_of(self).settings;
}

using PadPtr = GstObjectPtr<GstTensorBatchPad>;

// The sink pads, referenced, in the element's order.
inline std::vector<PadPtr> sink_pads(GstTensorBatch* self)
{
    std::vector<PadPtr> pads;
    ObjectLockGuard lock(self);
    for (GList* l = GST_ELEMENT(self)->sinkpads; l; l = l->next)
        pads.emplace_back(GST_TENSOR_BATCH_PAD(gst_object_ref(l->data)));
    return pads;
}

/// The running time of `buf`'s PTS in `pad`'s segment; GST_CLOCK_TIME_NONE without one.
inline GstClockTime running_time(GstAggregatorPad* pad, GstBuffer* buf)
{
    const GstClockTime pts = GST_BUFFER_PTS(buf);
    if (!GST_CLOCK_TIME_IS_VALID(pts))
        return GST_CLOCK_TIME_NONE;
    ObjectLockGuard lock(pad);
    if (pad->segment.format != GST_FORMAT_TIME)
        return GST_CLOCK_TIME_NONE;
    return gst_segment_to_running_time(&pad->segment, GST_FORMAT_TIME, pts);
}

} // namespace edgetensor::gst::tensorbatch
