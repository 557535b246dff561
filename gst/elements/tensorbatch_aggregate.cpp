// SPDX-License-Identifier: MIT
//
// tensorbatch's batches (tensorbatch_aggregate.hpp).

#include "tensorbatch_aggregate.hpp"

#include "glib_raii.hpp"
#include "gst_tensor_meta.hpp"
#include "tensorbatch_element.hpp"
#include "tensorbatch_pool.hpp"
#include "tensorbatch_provenance.hpp"
#include "tensorbatch_roi.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/video/video.h>

#include <edgetensor/convert.hpp>

#include <algorithm>
#include <cstring>
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

// Zero bytes: what an empty slot holds.
et::Result<void> clear_slot(const et::TensorDyn& view)
{
    auto map = view.map_raw(et::CpuAccess::Write);
    if (!map)
        return et::unexpected(std::move(map).error());
    size_t bytes = et::dtype_size(view.dtype());
    for (size_t d : view.shape())
        bytes *= d;
    std::memset(map->bytes(), 0, bytes);
    return {};
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
};

// Converts `take`'s frame (a region `roi` of it, in ROI mode) into slot `slot` of `batch`,
// filling its provenance. False after an error in `msgs`; a frame that does not match its caps
// is skipped (the slot stays empty) with a warning.
bool fill_one(Streaming& st, const Take& take, const tb::Roi* roi, const et::TensorDyn& batch,
              guint slot, GstEdgeTensorBatchSlot* record, Deferred* msgs)
{
    GstTensorBatchPad* pad = take.pad.get();
    tb::PadStream& ps = *pad->stream;
    const std::string name = GST_PAD_NAME(pad);
    auto view = batch.batch(slot);
    if (!view) {
        msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                    "Cannot address slot " + std::to_string(slot) +
                        " of the batch: " + view.error().message());
        return false;
    }
    std::string why;
    if (!ps.configured() || !ps.check(take.buf.get(), &why)) {
        // Dropped as stock converters drop what does not match the caps; the slot stays empty.
        ++st.counters.dropped;
        if (st.warned.insert(name + " mismatch").second)
            msgs->warning(GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                          name + ": a buffer does not match its caps (" +
                              (why.empty() ? std::string("no caps") : why) +
                              "); it is dropped and its slot left empty.");
        return true;
    }
    et::Converter* conv = nullptr;
    if (roi) {
        auto rc = ps.region_converter(roi->rect);
        if (!rc) {
            msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                        name + ": cannot convert region " + std::to_string(roi->id) + ": " +
                            rc.error().message());
            return false;
        }
        conv = *rc;
    } else {
        conv = ps.frame_converter();
    }
    auto r = ps.convert(*conv, take.buf.get(), *view);
    if (!r) {
        msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                    name + ": conversion into the batch failed: " + r.error().message(),
                    std::string("edgetensor error ") +
                        std::string(et::error_code_name(r.error().code())));
        return false;
    }
    ++st.counters.frames;
    if (r->copied) {
        ++st.counters.copies;
        if (st.warned.insert(name + " copy").second)
            msgs->warning(GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                          name + ": bottom-up frames (negative strides) are converted from a "
                                 "top-down copy; counted in copies.");
    }
    eg::SlotSource src;
    src.pad_index = ps.index();
    src.pts = GST_BUFFER_PTS(take.buf.get());
    src.applied_colorimetry = ps.input().colorimetry.applied.pack();
    if (roi) {
        src.roi_kind = roi->kind;
        src.roi_id = roi->id;
        src.roi_label = roi->label;
    }
    eg::fill_slot(record, src, conv->config(), conv->geometry());
    return true;
}

// Writes one batch into `out`: slot i from `takes[i]` (a frame, or in ROI mode `rois[i]` of
// one frame), the rest empty; records the provenance. Under mu.
bool write_batch(GstTensorBatch* self, const tb::Settings& s, GstBuffer* out,
                 const std::vector<const Take*>& takes, const std::vector<tb::Roi>* rois,
                 Deferred* msgs)
{
    Streaming& st = state_of(self).st;
    const Output& o = st.out;
    auto batch = eg::tensor_from_buffer(out);
    if (!batch || batch->ndim() < 2 || batch->shape()[0] != o.n) {
        msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                    "The batch buffer holds no [N, ...] tensor of the negotiated caps.");
        return false;
    }
    GstEdgeTensorBatchMeta* meta =
        gst_buffer_add_edge_tensor_batch_meta(out, o.n, guint(o.width), guint(o.height));
    if (!meta) {
        msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED, "Cannot attach the batch meta.");
        return false;
    }
    guint empty = 0;
    std::optional<guint32> colorimetry;
    bool same_colorimetry = true;
    for (guint slot = 0; slot < o.n; ++slot) {
        const Take* take = slot < takes.size() ? takes[slot] : nullptr;
        if (take) {
            const tb::Roi* roi = rois ? &(*rois)[slot] : nullptr;
            if (!fill_one(st, *take, roi, *batch, slot, &meta->slots[slot], msgs))
                return false;
        }
        if (!meta->slots[slot].filled) {
            auto view = batch->batch(slot);
            auto c = view ? clear_slot(*view) : et::Result<void>(view.error());
            if (!c) {
                msgs->error(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                            "Cannot clear a batch slot: " + c.error().message());
                return false;
            }
            ++empty;
            continue;
        }
        const guint32 out_c = take->pad->stream->input().colorimetry.output.pack();
        if (colorimetry && *colorimetry != out_c)
            same_colorimetry = false;
        colorimetry = out_c;
    }
    ++st.counters.batches;
    st.counters.empty_slots += empty;
    if (empty)
        ++st.counters.partial_batches;
    eg::record_output(out, quant_record(s), same_colorimetry && colorimetry ? *colorimetry : 0, 0);
    // Last: the GstTensorMeta shares the batch's memories, which no slot may write after.
    if (eg::have_gst_tensor_meta()) {
        auto described = batch->is_contiguous()
                             ? eg::describe_buffer_as_gst_tensor(out, o.tensor_id, batch->dtype(),
                                                                 batch->shape())
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

} // namespace

GstFlowReturn aggregate_streams(GstTensorBatch* self, const tb::Settings& s)
{
    // Which pad fills which slot, then a frame of each (the aggregator's own calls, outside
    // the streaming lock).
    std::vector<PadPtr> pads = sink_pads(self);
    std::vector<std::optional<guint>> slots;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        for (const PadPtr& p : pads)
            slots.push_back(p->stream ? p->stream->slot : std::nullopt);
    }
    std::vector<Take> takes;
    std::vector<guint> take_slots;
    guint64 dropped = 0;
    bool all_eos = true;
    for (size_t i = 0; i < pads.size(); ++i) {
        GstAggregatorPad* ap = GST_AGGREGATOR_PAD(pads[i].get());
        GstBuffer* buf = take_frame(ap, s.ordering, &dropped);
        if (!gst_aggregator_pad_is_eos(ap))
            all_eos = false;
        if (!buf)
            continue;
        if (is_gap(buf) || !slots[i]) {
            gst_buffer_unref(buf);
            continue;
        }
        Take t;
        t.running = running_time(ap, buf);
        t.buf.reset(buf);
        t.pad.reset(GST_TENSOR_BATCH_PAD(gst_object_ref(pads[i].get())));
        takes.push_back(std::move(t));
        take_slots.push_back(*slots[i]);
    }
    if (dropped) {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        state_of(self).st.counters.dropped += dropped;
    }
    if (takes.empty())
        return all_eos ? end_of_stream(self) : GST_FLOW_OK;

    GstBuffer* acquired_buf = nullptr;
    const GstFlowReturn acquired = tb::acquire_batch(GST_AGGREGATOR(self), &acquired_buf);
    if (acquired != GST_FLOW_OK)
        return acquired;
    eg::MiniObjectPtr<GstBuffer> out(acquired_buf);
    Deferred msgs;
    bool ok;
    GstClockTime pts = GST_CLOCK_TIME_NONE;
    {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        std::vector<const Take*> by_slot(state_of(self).st.out.n, nullptr);
        for (size_t i = 0; i < takes.size(); ++i) {
            if (take_slots[i] < by_slot.size())
                by_slot[take_slots[i]] = &takes[i];
            if (GST_CLOCK_TIME_IS_VALID(takes[i].running))
                pts = GST_CLOCK_TIME_IS_VALID(pts) ? std::min(pts, takes[i].running)
                                                   : takes[i].running;
        }
        ok = write_batch(self, s, out.get(), by_slot, nullptr, &msgs);
    }
    return push_batch(self, std::move(out), pts, ok, &msgs);
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
        GstBuffer* acquired_buf = nullptr;
        const GstFlowReturn acquired = tb::acquire_batch(GST_AGGREGATOR(self), &acquired_buf);
        if (acquired != GST_FLOW_OK) {
            msgs.post(GST_ELEMENT(self));
            return acquired;
        }
        eg::MiniObjectPtr<GstBuffer> out(acquired_buf);
        const std::vector<tb::Roi> chunk(rois.accepted.begin() + long(first),
                                         rois.accepted.begin() + long(first + count));
        bool ok;
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            const std::vector<const Take*> takes(count, &take);
            ok = write_batch(self, s, out.get(), takes, &chunk, &msgs);
            if (ok)
                state_of(self).st.counters.rois += count;
        }
        const GstFlowReturn ret = push_batch(self, std::move(out), take.running, ok, &msgs);
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
