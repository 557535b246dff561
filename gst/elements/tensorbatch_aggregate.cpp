// SPDX-License-Identifier: MIT
//
// tensorbatch's batches (tensorbatch_aggregate.hpp).

#include "tensorbatch_aggregate.hpp"

#include "glib_raii.hpp"
#include "gst_tensor_meta.hpp"
#include "tensorbatch_element.hpp"
#include "tensorbatch_fill.hpp"
#include "tensorbatch_pool.hpp"
#include "tensorbatch_provenance.hpp"
#include "tensorbatch_roi.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/video/video.h>

#include <edgetensor/convert.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_batch_debug);
#define GST_CAT_DEFAULT gst_tensor_batch_debug

namespace edgetensor::gst::tensorbatch
{

namespace
{

namespace et = edgetensor;
namespace eg = edgetensor::gst;
namespace tb = edgetensor::gst::tensorbatch;

/// Refused ROIs warned about one by one per start; later ones are counted (rois-refused).
constexpr guint kRoiWarnings = 10;

bool is_gap(GstBuffer* buf)
{
    return GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_GAP) && gst_buffer_get_size(buf) == 0;
}

// The quantization every slot carries (the settings'), for the output meta.
et::ConvertConfig quant_record(const tb::Settings& s)
{
    et::ConvertConfig c;
    if (s.quant_scale)
        c.quant = et::Quantization{*s.quant_scale, s.quant_zero_point};
    return c;
}

// The next frame of `pad` by the ordering policy (transfer full), or null; `dropped` counts the
// frames the policy passed over.
GstBuffer* take_frame(GstAggregatorPad* pad, GstTensorBatchOrdering ordering, guint64* dropped)
{
    GstBuffer* buf = gst_aggregator_pad_pop_buffer(pad);
    if (buf && ordering == GST_TENSOR_BATCH_ORDERING_LATEST) {
        while (gst_aggregator_pad_has_buffer(pad)) {
            GstBuffer* next = gst_aggregator_pad_pop_buffer(pad);
            if (!next)
                break;
            gst_buffer_unref(buf);
            buf = next;
            ++*dropped;
        }
    }
    return buf;
}

struct Take {
    PadPtr pad;
    eg::MiniObjectPtr<GstBuffer> buf;
    GstClockTime running = GST_CLOCK_TIME_NONE;
    /// Converted early into the front batch (its ticket's batch), not by the aggregator.
    bool early = false;
};

// Fills `slot` of `b` from `take` (a region `roi` of it, in ROI mode). False after an error in
// `msgs`. Under mu.
bool fill_take(Streaming& st, const Take& take, const tb::Roi* roi, OpenBatch& b, guint slot,
               Deferred* msgs)
{
    tb::PadStream& ps = *take.pad->stream;
    auto view = b.tensor.batch(slot);
    if (!view) {
        msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                    "Cannot address slot " + std::to_string(slot) +
                        " of the batch: " + view.error().message());
        return false;
    }
    auto o = convert_slot(ps, take.buf.get(), roi, *view);
    if (!account(st, GST_PAD_NAME(take.pad.get()), o, msgs))
        return false;
    place(b, slot, ps.index(), *o);
    return true;
}

// Fills `slot` of `b`, the batch being closed, from `take`, a frame its pad's thread did not
// convert: outside mu, with the pad's converter to itself. False after an error in `msgs`.
bool fill_plain(State& state, const Take& take, OpenBatch& b, guint slot, Deferred* msgs)
{
    if (slot >= b.state.size())
        return true;
    tb::PadStream& ps = *take.pad->stream;
    auto view = b.tensor.batch(slot);
    if (!view) {
        msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                    "Cannot address slot " + std::to_string(slot) +
                        " of the batch: " + view.error().message());
        return false;
    }
    {
        // The batch is the aggregator's alone now; a slot not free holds a newer frame of the
        // pad (this one's batch left without it) or of a pad that took over the slot.
        std::lock_guard<std::mutex> lock(state.mu);
        if (b.state[slot] != SlotState::Free) {
            ++state.st.counters.dropped;
            return true;
        }
    }
    std::lock_guard<std::mutex> conv(ps.conv_mu);
    auto o = convert_slot(ps, take.buf.get(), nullptr, *view);
    std::lock_guard<std::mutex> lock(state.mu);
    if (!account(state.st, GST_PAD_NAME(take.pad.get()), o, msgs))
        return false;
    place(b, slot, ps.index(), *o);
    return true;
}

// Makes `b` a batch to push: its provenance meta from the slots' records, empty slots zeroed,
// the counters, the output meta and, on 1.26+, the GstTensorMeta. Under mu.
bool finish_batch(GstTensorBatch* self, const tb::Settings& s, OpenBatch& b, Deferred* msgs)
{
    Streaming& st = state_of(self).st;
    const Output& o = st.out;
    GstBuffer* out = b.buf.get();
    GstEdgeTensorBatchMeta* meta =
        gst_buffer_add_edge_tensor_batch_meta(out, o.n, guint(o.width), guint(o.height));
    if (!meta) {
        msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED, "Cannot attach the batch meta.");
        return false;
    }
    guint empty = 0;
    std::optional<guint32> colorimetry;
    bool same_colorimetry = true;
    for (guint slot = 0; slot < o.n && slot < b.state.size(); ++slot) {
        if (b.state[slot] != SlotState::Filled) {
            auto view = b.tensor.batch(slot);
            auto c = view ? clear_slot(*view) : et::Result<void>(view.error());
            if (!c) {
                msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                            "Cannot clear a batch slot: " + c.error().message());
                return false;
            }
            ++empty;
            continue;
        }
        meta->slots[slot] = b.records[slot];
        if (colorimetry && *colorimetry != b.colorimetry[slot])
            same_colorimetry = false;
        colorimetry = b.colorimetry[slot];
    }
    ++st.counters.batches;
    st.counters.empty_slots += empty;
    if (empty)
        ++st.counters.partial_batches;
    eg::record_output(out, quant_record(s), same_colorimetry && colorimetry ? *colorimetry : 0, 0);
    // Last: the GstTensorMeta shares the batch's memories, which no slot may write after.
    if (eg::have_gst_tensor_meta()) {
        auto described = b.tensor.is_contiguous()
                             ? eg::describe_buffer_as_gst_tensor(out, o.tensor_id, b.tensor.dtype(),
                                                                 b.tensor.shape())
                             : et::Result<void>(et::make_error(et::ErrorCode::InvalidArgument,
                                                               "the batch is not contiguous"));
        if (!described && st.warned.insert("gst tensor meta").second)
            msgs->warning(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                          "The batches go without a GstTensorMeta: " + described.error().message() +
                              ".");
    }
    return true;
}

// Pushes `batch` (its PTS `pts`), posting `msgs` first; `ok` false: drops it and errors.
GstFlowReturn push_batch(GstTensorBatch* self, eg::MiniObjectPtr<GstBuffer> batch, GstClockTime pts,
                         bool ok, Deferred* msgs)
{
    msgs->post(GST_ELEMENT(self));
    if (!ok)
        return GST_FLOW_ERROR;
    GstBuffer* out = batch.release();
    GST_BUFFER_PTS(out) = pts;
    GST_BUFFER_DTS(out) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(out) = GST_CLOCK_TIME_NONE;
    gst_aggregator_selected_samples(GST_AGGREGATOR(self), pts, GST_CLOCK_TIME_NONE,
                                    GST_CLOCK_TIME_NONE, nullptr);
    return gst_aggregator_finish_buffer(GST_AGGREGATOR(self), out);
}

// A fresh batch from the pool for the aggregator's own conversions.
GstFlowReturn new_batch(GstTensorBatch* self, std::unique_ptr<OpenBatch>* out)
{
    GstBuffer* acquired = nullptr;
    const GstFlowReturn ret = tb::acquire_batch(GST_AGGREGATOR(self), &acquired);
    if (ret != GST_FLOW_OK)
        return ret;
    auto b = std::make_unique<OpenBatch>();
    guint n;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        n = state_of(self).st.out.n;
    }
    if (!b->reset(acquired, n)) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED,
                          ("The batch buffer holds no [N, ...] tensor of the negotiated caps."),
                          (nullptr));
        return GST_FLOW_ERROR;
    }
    *out = std::move(b);
    return GST_FLOW_OK;
}

// Drops the oldest frames of `pad` whose batch has already left (stale tickets). True when
// that left the pad without a frame.
bool drop_gone(GstTensorBatch* self, GstAggregatorPad* pad, tb::PadStream& ps)
{
    bool dropped = false;
    for (;;) {
        eg::MiniObjectPtr<GstBuffer> head(gst_aggregator_pad_peek_buffer(pad));
        if (!head)
            return dropped;
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            const Ticket* t = find_ticket(ps.tickets, head.get());
            if (!t || !t->converted || !state_of(self).st.ring.gone(t->seq))
                return false;
        }
        eg::MiniObjectPtr<GstBuffer> popped(gst_aggregator_pad_pop_buffer(pad));
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        take_ticket(ps.tickets, popped.get());
        dropped = true;
    }
}

} // namespace

GstFlowReturn aggregate_streams(GstTensorBatch* self, const tb::Settings& s, bool timeout)
{
    State& state = state_of(self);
    // Which pad fills which slot, then a frame of each (the aggregator's own calls, outside
    // the streaming lock).
    std::vector<PadPtr> pads = sink_pads(self);
    std::vector<std::optional<guint>> slots;
    const bool early = state.early.load(std::memory_order_relaxed);
    {
        std::lock_guard<std::mutex> lock(state.mu);
        for (const PadPtr& p : pads)
            slots.push_back(p->stream ? p->stream->slot : std::nullopt);
    }
    if (early) {
        // Every batch leaves from the ring's front, so that the pads' threads, which keep a
        // batch free for each of their frames the aggregator converts, count the right ones.
        bool empty;
        {
            std::lock_guard<std::mutex> lock(state.mu);
            empty = state.st.ring.open.empty();
        }
        if (empty) {
            std::unique_ptr<OpenBatch> fresh;
            const GstFlowReturn made = new_batch(self, &fresh);
            if (made != GST_FLOW_OK)
                return made;
            std::lock_guard<std::mutex> lock(state.mu);
            Ring& ring = state.st.ring;
            if (ring.open.empty()) { // else a pad's thread opened one meanwhile: that is the front
                fresh->seq = ring.next_seq++;
                ring.open.push_back(std::move(fresh));
            }
        }
        // A frame that went out early in a partial batch is not this batch's; a pad left
        // without a frame by that holds this batch up as GstAggregator would have, unless its
        // next frame is already in the batch or this is the timeout.
        bool wait = false;
        for (size_t i = 0; i < pads.size(); ++i) {
            GstAggregatorPad* ap = GST_AGGREGATOR_PAD(pads[i].get());
            if (!pads[i]->stream || !drop_gone(self, ap, *pads[i]->stream) || timeout ||
                !slots[i] || gst_aggregator_pad_is_eos(ap) || gst_aggregator_pad_is_inactive(ap))
                continue;
            std::lock_guard<std::mutex> lock(state.mu);
            OpenBatch* front = state.st.ring.front();
            if (!gst_aggregator_pad_has_buffer(ap) &&
                (!front || front->state[*slots[i]] == SlotState::Free))
                wait = true;
        }
        if (wait)
            return GST_FLOW_OK;
    }
    std::vector<Take> takes;
    std::vector<guint> take_slots;
    guint64 dropped = 0;
    bool all_eos = true;
    for (size_t i = 0; i < pads.size(); ++i) {
        GstAggregatorPad* ap = GST_AGGREGATOR_PAD(pads[i].get());
        tb::PadStream* ps = pads[i]->stream;
        if (early && ps) {
            // A frame for a later batch than the front one waits for its batch.
            eg::MiniObjectPtr<GstBuffer> head(gst_aggregator_pad_peek_buffer(ap));
            std::lock_guard<std::mutex> lock(state.mu);
            const Ticket* t = head ? find_ticket(ps->tickets, head.get()) : nullptr;
            OpenBatch* front = state.st.ring.front();
            if (t && front && t->seq > front->seq) {
                all_eos = false;
                continue;
            }
        }
        GstBuffer* buf = take_frame(ap, s.ordering, &dropped);
        if (!gst_aggregator_pad_is_eos(ap))
            all_eos = false;
        if (!buf)
            continue;
        Take t;
        if (early && ps) {
            std::lock_guard<std::mutex> lock(state.mu);
            if (auto ticket = take_ticket(ps->tickets, buf))
                t.early = ticket->converted;
        }
        GST_LOG_OBJECT(pads[i].get(), "take %p early %d", (void*)buf, t.early);
        if (is_gap(buf) || !slots[i]) {
            gst_buffer_unref(buf);
            continue;
        }
        t.running = running_time(ap, buf);
        t.buf.reset(buf);
        t.pad.reset(GST_TENSOR_BATCH_PAD(gst_object_ref(pads[i].get())));
        takes.push_back(std::move(t));
        take_slots.push_back(*slots[i]);
    }
    std::unique_ptr<OpenBatch> batch;
    bool nothing = false;
    {
        std::unique_lock<std::mutex> lock(state.mu);
        state.st.counters.dropped += dropped;
        OpenBatch* front = state.st.ring.front();
        if (takes.empty() && !(front && front->any_claimed())) {
            // An open batch nobody claims (its pads flushed) would hold the ring up.
            if (front && !front->any_writing())
                state.st.ring.open.pop_front();
            nothing = true;
        } else if (front) {
            // No pad claims a slot of it from now on; frames being written into it are
            // waited for (they are in it).
            front->closed = true;
            state.written.wait(lock, [front] { return !front->any_writing(); });
            GST_LOG_OBJECT(self, "close %" G_GUINT64_FORMAT, front->seq);
            batch = std::move(state.st.ring.open.front());
            state.st.ring.open.pop_front();
        }
    }
    if (nothing)
        return all_eos ? end_of_stream(self) : GST_FLOW_OK;
    if (!batch) {
        const GstFlowReturn made = new_batch(self, &batch);
        if (made != GST_FLOW_OK)
            return made;
    }
    Deferred msgs;
    bool ok = true;
    GstClockTime pts = GST_CLOCK_TIME_NONE;
    for (size_t i = 0; i < takes.size(); ++i) {
        const Take& t = takes[i];
        if (GST_CLOCK_TIME_IS_VALID(t.running))
            pts = GST_CLOCK_TIME_IS_VALID(pts) ? std::min(pts, t.running) : t.running;
        if (ok && !t.early)
            ok = fill_plain(state, t, *batch, take_slots[i], &msgs);
    }
    {
        std::lock_guard<std::mutex> lock(state.mu);
        ok = ok && finish_batch(self, s, *batch, &msgs);
    }
    return push_batch(self, std::move(batch->buf), pts, ok, &msgs);
}

GstFlowReturn aggregate_rois(GstTensorBatch* self, const tb::Settings& s)
{
    std::vector<PadPtr> pads = sink_pads(self);
    if (pads.empty())
        return GST_FLOW_OK;
    GstAggregatorPad* ap = GST_AGGREGATOR_PAD(pads.front().get());
    guint64 dropped = 0;
    GstBuffer* buf = take_frame(ap, s.ordering, &dropped);
    if (!buf)
        return gst_aggregator_pad_is_eos(ap) ? end_of_stream(self) : GST_FLOW_OK;
    Take take;
    take.running = running_time(ap, buf);
    take.buf.reset(buf);
    take.pad.reset(GST_TENSOR_BATCH_PAD(gst_object_ref(pads.front().get())));
    if (is_gap(buf))
        return GST_FLOW_OK;

    Deferred msgs;
    tb::FrameRois rois;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        Streaming& st = state_of(self).st;
        st.counters.dropped += dropped;
        tb::PadStream& ps = *take.pad->stream;
        if (ps.configured()) {
            const tb::RoiFilter filter{s.roi_labels, s.roi_min_size};
            rois = tb::select_rois(tb::rois_of(buf), guint(ps.input().facts.width),
                                   guint(ps.input().facts.height), filter);
            st.counters.rois_refused += rois.refused.size();
            st.counters.rois_filtered += rois.filtered;
            for (const std::string& r : rois.refused) {
                if (st.roi_warnings < kRoiWarnings)
                    msgs.warning(GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                                 std::string(GST_PAD_NAME(take.pad.get())) + ": " + r +
                                     ": refused (a region must lie inside the frame); the "
                                     "frame's other regions are batched." +
                                     (st.roi_warnings + 1 == kRoiWarnings
                                          ? " Further refused regions are counted in stats "
                                            "(rois-refused), not warned about."
                                          : ""));
                ++st.roi_warnings;
            }
        }
    }
    const std::vector<size_t> split = tb::batch_split(rois.accepted.size(), s.batch_size);
    size_t first = 0;
    for (size_t count : split) {
        std::unique_ptr<OpenBatch> batch;
        const GstFlowReturn made = new_batch(self, &batch);
        if (made != GST_FLOW_OK) {
            msgs.post(GST_ELEMENT(self));
            return made;
        }
        bool ok = true;
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            Streaming& st = state_of(self).st;
            for (size_t i = 0; i < count && ok; ++i)
                ok = fill_take(st, take, &rois.accepted[first + i], *batch, guint(i), &msgs);
            ok = ok && finish_batch(self, s, *batch, &msgs);
            if (ok)
                st.counters.rois += count;
        }
        const GstFlowReturn ret = push_batch(self, std::move(batch->buf), take.running, ok, &msgs);
        if (ret != GST_FLOW_OK)
            return ret;
        first += count;
    }
    msgs.post(GST_ELEMENT(self));
    return GST_FLOW_OK;
}

GstFlowReturn end_of_stream(GstTensorBatch* self)
{
    GstStructure* stats;
    const std::vector<PadPtr> pads = sink_pads(self);
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        std::vector<GstEdgeTensorImportCache*> caches;
        for (const PadPtr& p : pads)
            caches.push_back(p->stream ? p->stream->cache() : nullptr);
        stats = tb::stats_structure(state_of(self).st.counters, caches);
    }
    eg::GCharPtr str(gst_structure_to_string(stats));
    GST_INFO_OBJECT(self, "%s", str.get());
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), stats));
    return GST_FLOW_EOS;
}

} // namespace edgetensor::gst::tensorbatch
