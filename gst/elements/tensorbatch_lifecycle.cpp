// SPDX-License-Identifier: MIT
//
// tensorbatch's start and stop (tensorbatch_lifecycle.hpp).

#include "tensorbatch_lifecycle.hpp"

#include "glib_raii.hpp"
#include "tensorbatch_caps.hpp"
#include "tensorbatch_element.hpp"
#include "tensorbatch_properties.hpp"
#include "tensorbatch_slots.hpp"
#include "tensorbatch_stats.hpp"
#include "vfunc_guard.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_batch_debug);
#define GST_CAT_DEFAULT gst_tensor_batch_debug

namespace edgetensor::gst::tensorbatch
{

namespace
{

namespace tc = edgetensor::gst::tensorconvert;

// What start() refuses, with the element error naming it.
bool check_settings(GstTensorBatch* self, const Settings& s, guint n_pads)
{
    if (!s.refused.empty()) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("Invalid property values: %s. tensorbatch does not run with settings "
                           "other than those asked for: fix or remove them.",
                           s.refused.describe().c_str()),
                          ("%s", describe_settings(s).c_str()));
        return false;
    }
    std::string why;
    if (!tc::normalisation_is_finite(s.mean, s.stdev, tc::channels_of(s), &why)) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("mean=\"%s\" std=\"%s\" cannot be applied: %s.", s.mean_str.c_str(),
                           s.std_str.c_str(), why.c_str()),
                          (nullptr));
        return false;
    }
    if (s.mode == GST_TENSOR_BATCH_MODE_ROI && (s.width == 0 || s.height == 0)) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("mode=roi needs width and height: regions of every size go into "
                           "slots of one size."),
                          ("%s", describe_settings(s).c_str()));
        return false;
    }
    if (s.mode == GST_TENSOR_BATCH_MODE_ROI && n_pads > 1) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("mode=roi batches the regions of one stream, but %u sink pads are "
                           "requested.",
                           n_pads),
                          (nullptr));
        return false;
    }
    if (s.mode == GST_TENSOR_BATCH_MODE_STREAMS && n_pads > s.batch_size) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("%u sink pads are requested but batch-size=%u: each stream needs a "
                           "slot. Raise batch-size or release pads.",
                           n_pads, s.batch_size),
                          (nullptr));
        return false;
    }
    return true;
}

gboolean start_impl(GstTensorBatch* self)
{
    {
        const Settings s = settings_snapshot(self);
        std::vector<PadPtr> pads = sink_pads(self);
        if (!check_settings(self, s, guint(pads.size())))
            return FALSE;
        // Slots by pad number, so sink_0 fills slot 0 when the pads were requested in order.
        std::sort(pads.begin(), pads.end(), [](const PadPtr& a, const PadPtr& b) {
            return a->stream->index() < b->stream->index();
        });
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            Streaming& st = state_of(self).st;
            // A named fresh state swapped in, not `st = Streaming{}`: GCC 12 at -O3 warns that
            // the temporary's moved-from strings may be uninitialised (a false positive).
            Streaming fresh;
            std::swap(st, fresh);
            state_of(self).early = s.convert_on_arrival &&
                                   s.mode == GST_TENSOR_BATCH_MODE_STREAMS &&
                                   s.ordering == GST_TENSOR_BATCH_ORDERING_FIFO;
            st.slots.assign(s.batch_size, false);
            for (const PadPtr& p : pads)
                p->stream->slot = take_slot(st);
        }
        const GstClockTime latency = s.timeout == GST_CLOCK_TIME_NONE ? 0 : GstClockTime(s.timeout);
        gst_aggregator_set_latency(GST_AGGREGATOR(self), latency, latency);
        return TRUE;
    }
}

gboolean stop_impl(GstTensorBatch* self)
{
    {
        std::vector<PadPtr> pads = sink_pads(self);
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            std::vector<GstEdgeTensorImportCache*> caches;
            for (const PadPtr& p : pads)
                caches.push_back(p->stream ? p->stream->cache() : nullptr);
            GstStructure* stats = stats_structure(state_of(self).st.counters, caches);
            GST_INFO_OBJECT(self, "stopping: %" GST_PTR_FORMAT, stats);
            gst_structure_free(stats);
        }
        for (const PadPtr& p : pads)
            if (p->stream) {
                // A pad's converter lock comes before mu, as in its thread.
                std::lock_guard<std::mutex> conv(p->stream->conv_mu);
                std::lock_guard<std::mutex> lock(state_of(self).mu);
                p->stream->reset();
                p->stream->clear_cache("stop");
            }
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        Output& out = state_of(self).st.out;
        out = Output{};
        // The open batches go back to their pool (no pad thread runs now).
        state_of(self).st.ring.clear();
        return TRUE;
    }
}
} // namespace

gboolean start(GstAggregator* agg)
{
    return guarded(agg, "start", FALSE, [&] { return start_impl(GST_TENSOR_BATCH(agg)); });
}

gboolean stop(GstAggregator* agg)
{
    return guarded(agg, "stop", FALSE, [&] { return stop_impl(GST_TENSOR_BATCH(agg)); });
}

} // namespace edgetensor::gst::tensorbatch
