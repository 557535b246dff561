// SPDX-License-Identifier: MIT
//
// tensorbatch: many streams, or many regions of one stream's frames, into one batch tensor.

// Launch lines stay one per line, as users paste them.
// clang-format off
/**
 * SECTION:element-tensorbatch
 * @title: tensorbatch
 *
 * Batches pictures for an NPU or GPU that runs a model on `[N, C, H, W]` (or `[N, H, W, C]`):
 * each input frame is converted by the engine tensorconvert uses (colour conversion with the
 * frame's colorimetry, resize, letterbox, layout, dtype, mean/std, quantization) straight into
 * its slot of one pooled batch tensor (DMA-BUF where the host has a provider): no intermediate
 * buffer, no copy (`copies` stays 0).
 *
 * `mode=streams` (the default): request sink pads `sink_%u`, one slot each, any of
 * tensorconvert's 16 input formats, each pad its own size and colorimetry. A batch goes out when
 * every stream has a frame, or `batched-push-timeout` after the oldest waiting frame with the
 * missing slots empty (all-zero bytes, marked in the provenance). A stream's EOS empties its
 * slot; the element sends EOS when every stream has ended. Pads may be requested and released
 * while playing; a caps change on one pad rebuilds that pad's converter only.
 *
 * `mode=roi`: one sink pad; the slots hold the regions of interest of each frame
 * (GstVideoRegionOfInterestMeta, and object detections of GstAnalyticsRelationMeta on
 * GStreamer 1.24+), filtered by `roi-labels` and `roi-min-size`; a frame with more regions
 * than `batch-size` gives several batches. A region outside the frame is refused with a
 * warning naming it.
 *
 * Every batch carries a #GstEdgeTensorMeta (the whole `[N, ...]` tensor, with its quantization)
 * and a #GstEdgeTensorBatchMeta saying, per slot, the source pad, PTS, source size, the
 * rectangle read, the scale and letterbox padding into the slot, whether it is filled and the
 * region's id, so a detection maps back to its frame (gst_edge_tensor_batch_slot_to_source()).
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 tensorbatch name=b batch-size=2 width=640 height=640 letterbox=true layout=chw dtype=float32 std=255 ! fakesink tensortestsrc num-buffers=30 ! video/x-raw,format=NV12,width=1920,height=1080 ! b.sink_0 tensortestsrc num-buffers=30 ! video/x-raw,format=YUY2,width=1280,height=720 ! b.sink_1
 * ]|
 */
// clang-format on

#include "gsttensorbatch.h"

#include "glib_raii.hpp"
#include "internal.hpp"
#include "tensorbatch_aggregate.hpp"
#include "tensorbatch_caps.hpp"
#include "tensorbatch_early.hpp"
#include "tensorbatch_element.hpp"
#include "tensorbatch_lifecycle.hpp"
#include "tensorbatch_pad.hpp"
#include "tensorbatch_pool.hpp"
#include "tensorbatch_properties.hpp"
#include "tensorbatch_slots.hpp"
#include "tensorbatch_stats.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/video/video.h>

#include <edgetensor/convert.hpp>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

GST_DEBUG_CATEGORY(gst_tensor_batch_debug);
#define GST_CAT_DEFAULT gst_tensor_batch_debug

namespace
{

namespace eg = edgetensor::gst;
namespace et = edgetensor;
namespace tb = edgetensor::gst::tensorbatch;
namespace tc = edgetensor::gst::tensorconvert;

using tb::aggregate_rois;
using tb::aggregate_streams;
using tb::Deferred;
using tb::end_of_stream;
using tb::Output;
using tb::PadPtr;
using tb::running_time;
using tb::settings_snapshot;
using tb::sink_pads;
using tb::state_of;
using tb::Streaming;

} // namespace

G_DEFINE_TYPE(GstTensorBatchPad, gst_tensor_batch_pad, GST_TYPE_AGGREGATOR_PAD)
G_DEFINE_TYPE(GstTensorBatch, gst_tensor_batch, GST_TYPE_AGGREGATOR)
GST_ELEMENT_REGISTER_DEFINE(tensorbatch, "tensorbatch", GST_RANK_NONE, GST_TYPE_TENSOR_BATCH)

gpointer edgetensor::gst::tensorbatch::parent_class()
{
    return gst_tensor_batch_parent_class;
}

static void gst_tensor_batch_pad_finalize(GObject* object)
{
    auto* pad = GST_TENSOR_BATCH_PAD(object);
    delete pad->stream;
    pad->stream = nullptr;
    G_OBJECT_CLASS(gst_tensor_batch_pad_parent_class)->finalize(object);
}

// GstAggregatorPad sets its chain function here; ours converts early, then calls it.
static void gst_tensor_batch_pad_constructed(GObject* object)
{
    G_OBJECT_CLASS(gst_tensor_batch_pad_parent_class)->constructed(object);
    auto* pad = GST_TENSOR_BATCH_PAD(object);
    if (!GST_PAD_IS_SINK(pad))
        return;
    pad->aggregator_chain = GST_PAD_CHAINFUNC(pad);
    gst_pad_set_chain_function(GST_PAD(pad), tb::early_chain);
}

static void gst_tensor_batch_pad_class_init(GstTensorBatchPadClass* klass)
{
    G_OBJECT_CLASS(klass)->finalize = gst_tensor_batch_pad_finalize;
    G_OBJECT_CLASS(klass)->constructed = gst_tensor_batch_pad_constructed;
}

static void gst_tensor_batch_pad_init(GstTensorBatchPad* pad)
{
    pad->stream = nullptr;
    pad->aggregator_chain = nullptr;
    // Caps that leave a field of the template out (a framerate) are taken, as stock video
    // elements take them.
    GST_PAD_SET_ACCEPT_INTERSECT(pad);
}

namespace
{

// The warning that a pad's colorimetry was assumed, once per pad and assumption.
void note_assumed_colorimetry(tb::PadStream& ps, GstPad* pad, const tb::PadInput& in, GstCaps* caps,
                              Deferred* msgs)
{
    if (in.assumed.empty() || in.assumed == ps.warned_colorimetry)
        return;
    ps.warned_colorimetry = in.assumed;
    eg::GCharPtr cs(gst_caps_to_string(caps));
    msgs->warning(GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                  std::string(GST_PAD_NAME(pad)) + ": the input (" + in.format_name + " " +
                      std::to_string(in.facts.width) + "x" + std::to_string(in.facts.height) +
                      ") does not say its colorimetry's " + in.colorimetry.assumed_axes +
                      "; assuming \"" + in.assumed +
                      "\", GStreamer's default for this frame. Add colorimetry=... to the caps "
                      "before tensorbatch to choose.",
                  std::string("input caps ") + cs.get());
}

// ---- caps ----------------------------------------------------------------------------------

gboolean handle_caps(GstTensorBatch* self, GstTensorBatchPad* pad, GstCaps* caps)
{
    const tb::Settings s = settings_snapshot(self);
    Deferred msgs;
    bool ok = false;
    bool reconfigure = false;
    std::string refusal; // the error's text, when the caps are refused
    auto in = tb::read_pad_caps(caps, s);
    if (!in) {
        eg::GCharPtr cs(gst_caps_to_string(caps));
        refusal = std::string(GST_PAD_NAME(pad)) + ": " + in.error().message() + ".";
        msgs.error(GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION, refusal,
                   std::string("caps ") + cs.get());
    } else {
        // The pad's thread may be converting a frame of the caps before these (a caps event
        // waits in the pad's queue until the aggregator takes it): the converter is its
        // until that frame is done.
        std::lock_guard<std::mutex> conv(pad->stream->conv_mu);
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        Streaming& st = state_of(self).st;
        // The slot size is the properties', else the first stream's: fixed until stop, so a
        // caps change on one pad renegotiates that pad's converter only.
        const size_t w = s.width ? s.width : st.out.width ? st.out.width : in->facts.width;
        const size_t h = s.height ? s.height : st.out.height ? st.out.height : in->facts.height;
        auto r = pad->stream->set_caps(*in, s, w, h);
        if (!r) {
            eg::GCharPtr cs(gst_caps_to_string(caps));
            refusal = std::string(GST_PAD_NAME(pad)) + ": cannot convert " + cs.get() + " with " +
                      tb::describe_settings(s) + ": " + r.error().message();
            msgs.error(GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION, refusal,
                       std::string("edgetensor error ") +
                           std::string(et::error_code_name(r.error().code())));
        } else {
            ok = true;
            pad->stream->set_caps_object(caps);
            if (!st.out.width) {
                st.out.width = w;
                st.out.height = h;
                reconfigure = true;
            }
            note_assumed_colorimetry(*pad->stream, GST_PAD(pad), *in, caps, &msgs);
            GST_INFO_OBJECT(pad, "%s %zux%zu (%s) into %zux%zu slots", in->format_name,
                            in->facts.width, in->facts.height,
                            in->colorimetry.applied.to_string().c_str(), w, h);
        }
    }
    // The pad is offered the same sticky caps again before its first buffer: a refusal is
    // said once per start.
    bool say = true;
    if (!refusal.empty()) {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        state_of(self).st.caps_refused = true;
        say = state_of(self).st.warned.insert("refused " + refusal).second;
    }
    if (say)
        msgs.post(GST_ELEMENT(self));
    else
        GST_DEBUG_OBJECT(pad, "refused again: %s", refusal.c_str());
    if (reconfigure)
        gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(self));
    return ok ? TRUE : FALSE;
}

gboolean gst_tensor_batch_sink_event(GstAggregator* agg, GstAggregatorPad* aggpad, GstEvent* event)
{
    auto* self = GST_TENSOR_BATCH(agg);
    auto* pad = GST_TENSOR_BATCH_PAD(aggpad);
    if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
        const gboolean ok = eg::guarded(agg, "sink_event", FALSE, [&] {
            GstCaps* caps = nullptr;
            gst_event_parse_caps(event, &caps);
            return handle_caps(self, pad, caps);
        });
        gst_event_unref(event);
        return ok;
    }
    if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
        eg::guarded(agg, "sink_event", [&] {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            pad->stream->clear_cache("flush-stop");
            // Its queued frames are gone, and with them their claims on open batches.
            tb::forget_pad(state_of(self).st.ring, pad->stream->index(), pad->stream->tickets,
                           pad->stream->last_seq);
        });
    }
    return GST_AGGREGATOR_CLASS(gst_tensor_batch_parent_class)->sink_event(agg, aggpad, event);
}

gboolean gst_tensor_batch_sink_query(GstAggregator* agg, GstAggregatorPad* aggpad, GstQuery* query)
{
    const gboolean res =
        GST_AGGREGATOR_CLASS(gst_tensor_batch_parent_class)->sink_query(agg, aggpad, query);
    if (GST_QUERY_TYPE(query) != GST_QUERY_ACCEPT_CAPS)
        return res;
    eg::guarded(agg, "sink_query", [&] {
        gboolean accepted = FALSE;
        gst_query_parse_accept_caps_result(query, &accepted);
        GstCaps* caps = nullptr;
        gst_query_parse_accept_caps(query, &caps);
        if (accepted || !caps || !gst_caps_is_fixed(caps))
            return;
        // Fixed caps refused: say why once per pad and caps, or the pipeline only hears
        // "not-negotiated" from upstream.
        const std::string why = tb::why_refused(caps, settings_snapshot(agg));
        eg::GCharPtr cs(gst_caps_to_string(caps));
        const std::string key = std::string(GST_PAD_NAME(aggpad)) + " " + cs.get();
        bool first;
        {
            std::lock_guard<std::mutex> lock(state_of(agg).mu);
            first = state_of(agg).st.warned.insert(key).second;
        }
        if (first && !why.empty())
            GST_ELEMENT_WARNING(
                agg, CORE, NEGOTIATION,
                ("%s cannot take %s: %s.", GST_PAD_NAME(aggpad), cs.get(), why.c_str()), (nullptr));
    });
    return res;
}

GstFlowReturn update_src_caps_impl(GstTensorBatch* self, GstCaps* downstream, GstCaps** ret)
{
    {
        const tb::Settings s = settings_snapshot(self);
        et::Shape shape;
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            const Output& out = state_of(self).st.out;
            if (!out.width || !out.height)
                return GST_AGGREGATOR_FLOW_NEED_DATA; // the first stream's size decides
            shape = tb::batch_shape(s, s.batch_size, out.width, out.height);
        }
        auto bytes = tb::batch_bytes(s, shape);
        state_of(self).negotiation_error = true; // until the caps are found
        if (!bytes) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("%s", bytes.error().message().c_str()),
                              ("%s", tb::describe_settings(s).c_str()));
            return GST_FLOW_NOT_NEGOTIATED;
        }
        eg::MiniObjectPtr<GstCaps> ours(tb::output_caps(s, shape));
        GstCaps* result = gst_caps_intersect_full(ours.get(), downstream, GST_CAPS_INTERSECT_FIRST);
        if (gst_caps_is_empty(result)) {
            gst_caps_unref(result);
            eg::GCharPtr o(gst_caps_to_string(ours.get()));
            eg::GCharPtr d(gst_caps_to_string(downstream));
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("tensorbatch's output does not match what downstream accepts. "
                               "With %s it produces %s; downstream accepts %s.",
                               tb::describe_settings(s).c_str(), o.get(), d.get()),
                              (nullptr));
            return GST_FLOW_NOT_NEGOTIATED;
        }
        *ret = result;
        state_of(self).negotiation_error = false;
        return GST_FLOW_OK;
    }
}

GstFlowReturn gst_tensor_batch_update_src_caps(GstAggregator* agg, GstCaps* downstream,
                                               GstCaps** ret)
{
    return eg::guarded(agg, "update_src_caps", GST_FLOW_NOT_NEGOTIATED, [&] {
        return update_src_caps_impl(GST_TENSOR_BATCH(agg), downstream, ret);
    });
}

// GstAggregator's negotiation, with an error that says why when it fails before asking us
// (downstream takes nothing our template could give).
gboolean gst_tensor_batch_negotiate(GstAggregator* agg)
{
    auto* self = GST_TENSOR_BATCH(agg);
    state_of(self).negotiation_error = false;
    const gboolean ok = GST_AGGREGATOR_CLASS(gst_tensor_batch_parent_class)->negotiate(agg);
    if (ok || state_of(self).negotiation_error || GST_PAD_IS_FLUSHING(GST_AGGREGATOR_SRC_PAD(agg)))
        return ok;
    eg::guarded(agg, "negotiate", [&] {
        eg::MiniObjectPtr<GstCaps> peer(
            gst_pad_peer_query_caps(GST_AGGREGATOR_SRC_PAD(agg), nullptr));
        eg::GCharPtr d(peer ? gst_caps_to_string(peer.get()) : g_strdup("nothing"));
        GST_ELEMENT_ERROR(
            self, CORE, NEGOTIATION,
            ("tensorbatch gives other/tensors batches; downstream accepts %s.", d.get()),
            ("%s", tb::describe_settings(settings_snapshot(self)).c_str()));
    });
    return ok;
}

gboolean negotiated_src_caps_impl(GstTensorBatch* self, GstCaps* caps)
{
    {
        const tb::Settings s = settings_snapshot(self);
        auto tcaps = eg::parse_tensor_caps(gst_caps_get_structure(caps, 0));
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        Output& out = state_of(self).st.out;
        const et::Shape shape = tb::batch_shape(s, s.batch_size, out.width, out.height);
        if (!tcaps || !eg::shapes_equal_padded(tcaps->shape, shape)) {
            GST_ERROR_OBJECT(self, "negotiated %" GST_PTR_FORMAT " is not the batch", caps);
            return FALSE;
        }
        out.n = s.batch_size;
        out.shape = shape;
        eg::GCharPtr name(gst_object_get_name(GST_OBJECT(self)));
        out.tensor_id = name ? name.get() : "tensorbatch";
        out.negotiated = true;
        GST_INFO_OBJECT(self, "batches of [%s] %s", eg::dimensions_string(shape).c_str(),
                        eg::tensor_type_name(tc::output_dtype(s.dtype)));
        return TRUE;
    }
}

gboolean gst_tensor_batch_negotiated_src_caps(GstAggregator* agg, GstCaps* caps)
{
    return eg::guarded(agg, "negotiated_src_caps", FALSE,
                       [&] { return negotiated_src_caps_impl(GST_TENSOR_BATCH(agg), caps); });
}

GstFlowReturn aggregate_impl(GstTensorBatch* self, gboolean timeout)
{
    {
        const tb::Settings s = settings_snapshot(self);
        bool negotiated, caps_refused;
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            negotiated = state_of(self).st.out.negotiated;
            caps_refused = state_of(self).st.caps_refused;
        }
        if (!negotiated) {
            // Nothing to batch into yet: only EOS before any caps can end here.
            bool all_eos = true;
            for (const PadPtr& p : sink_pads(self))
                all_eos = all_eos && gst_aggregator_pad_is_eos(GST_AGGREGATOR_PAD(p.get()));
            if (all_eos)
                return end_of_stream(self);
            // A pad's refused caps (said already) leave its frames queued without caps.
            if (caps_refused)
                GST_DEBUG_OBJECT(self, "frames of refused caps: not negotiated");
            else
                GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                                  ("tensorbatch received frames before its output was negotiated."),
                                  (nullptr));
            return GST_FLOW_NOT_NEGOTIATED;
        }
        GST_LOG_OBJECT(self, "aggregate (timeout %d)", timeout);
        return s.mode == GST_TENSOR_BATCH_MODE_ROI ? aggregate_rois(self, s)
                                                   : aggregate_streams(self, s, timeout != FALSE);
    }
}

GstFlowReturn gst_tensor_batch_aggregate(GstAggregator* agg, gboolean timeout)
{
    return eg::guarded(agg, "aggregate", GST_FLOW_ERROR,
                       [&] { return aggregate_impl(GST_TENSOR_BATCH(agg), timeout); });
}

// When a batch still missing frames goes out: batched-push-timeout (the subclass latency)
// after the running time of the oldest frame waiting. Nothing waiting: nothing to send. A frame
// converted on arrival into a batch that has left already is not waiting for one.
GstClockTime gst_tensor_batch_get_next_time(GstAggregator* agg)
{
    std::vector<std::pair<PadPtr, eg::MiniObjectPtr<GstBuffer>>> heads;
    {
        eg::ObjectLockGuard lock(agg);
        if (state_of(agg).settings.timeout == GST_CLOCK_TIME_NONE)
            return GST_CLOCK_TIME_NONE; // wait for every stream
        for (GList* l = GST_ELEMENT(agg)->sinkpads; l; l = l->next)
            if (GstBuffer* buf = gst_aggregator_pad_peek_buffer(GST_AGGREGATOR_PAD(l->data)))
                heads.emplace_back(PadPtr(GST_TENSOR_BATCH_PAD(gst_object_ref(l->data))),
                                   eg::MiniObjectPtr<GstBuffer>(buf));
    }
    GstClockTime earliest = GST_CLOCK_TIME_NONE;
    for (const auto& [pad, buf] : heads) {
        {
            std::lock_guard<std::mutex> lock(state_of(agg).mu);
            const tb::Ticket* t =
                pad->stream ? tb::find_ticket(pad->stream->tickets, buf.get()) : nullptr;
            if (t && t->converted && state_of(agg).st.ring.gone(t->seq))
                continue;
        }
        const GstClockTime rt = running_time(GST_AGGREGATOR_PAD(pad.get()), buf.get());
        if (GST_CLOCK_TIME_IS_VALID(rt) && (!GST_CLOCK_TIME_IS_VALID(earliest) || rt < earliest))
            earliest = rt;
    }
    return earliest;
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_batch_set_property(GObject* object, guint prop_id, const GValue* value,
                                   GParamSpec* pspec)
{
    auto* self = GST_TENSOR_BATCH(object);
    eg::guarded(object, "set_property", [&] {
        if (tb::set_property(GST_ELEMENT(self), &state_of(self).settings, prop_id, value, pspec)) {
            // The latency bound changed: the aggregator waits for it and reports it.
            const guint64 t = g_value_get_uint64(value);
            const GstClockTime latency = t == GST_CLOCK_TIME_NONE ? 0 : GstClockTime(t);
            gst_aggregator_set_latency(GST_AGGREGATOR(self), latency, latency);
        }
    });
}

void gst_tensor_batch_get_property(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec)
{
    auto* self = GST_TENSOR_BATCH(object);
    eg::guarded(object, "get_property", [&] {
        if (prop_id == tb::PROP_COPIES || prop_id == tb::PROP_STATS) {
            std::vector<PadPtr> pads = sink_pads(self);
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            const tb::Counters& c = state_of(self).st.counters;
            if (prop_id == tb::PROP_COPIES) {
                g_value_set_uint64(value, c.copies);
            } else {
                std::vector<GstEdgeTensorImportCache*> caches;
                for (const PadPtr& p : pads)
                    caches.push_back(p->stream ? p->stream->cache() : nullptr);
                g_value_take_boxed(value, tb::stats_structure(c, caches));
            }
            return;
        }
        eg::ObjectLockGuard lock(self);
        if (!tb::get_property(state_of(self).settings, prop_id, value))
            G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    });
}

void gst_tensor_batch_finalize(GObject* object)
{
    auto* self = GST_TENSOR_BATCH(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_batch_parent_class)->finalize(object);
}

} // namespace

static void gst_tensor_batch_class_init(GstTensorBatchClass* klass)
{
    gst_edge_tensor_init();
    GST_DEBUG_CATEGORY_INIT(gst_tensor_batch_debug, "tensorbatch", 0,
                            "edgetensor batcher of streams and regions");

    GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    GstAggregatorClass* agg_class = GST_AGGREGATOR_CLASS(klass);

    gobject_class->set_property = gst_tensor_batch_set_property;
    gobject_class->get_property = gst_tensor_batch_get_property;
    gobject_class->finalize = gst_tensor_batch_finalize;

    tb::install_properties(gobject_class);

    gst_element_class_add_static_pad_template_with_gtype(element_class, &tb::sink_template,
                                                         GST_TYPE_TENSOR_BATCH_PAD);
    gst_element_class_add_static_pad_template_with_gtype(element_class, &tb::src_template,
                                                         GST_TYPE_AGGREGATOR_PAD);
    gst_element_class_set_static_metadata(
        element_class, "Tensor batcher", "Filter/Converter/Video/Scaler/Tensor",
        "Converts frames of many streams, or regions of interest of one stream, straight into "
        "the slots of one batch tensor [N, ...] (NNStreamer other/tensors, DMA-BUF where the "
        "host has a provider) with tensorconvert's output choices, a latency bound for partial "
        "batches and per-slot provenance. Example: gst-launch-1.0 tensorbatch name=b "
        "batch-size=2 width=640 height=640 layout=chw dtype=float32 std=255 ! fakesink "
        "tensortestsrc num-buffers=30 ! b.sink_0 tensortestsrc num-buffers=30 ! b.sink_1",
        "edgetensor developers");

    element_class->release_pad = tb::release_pad;

    agg_class->aggregate = gst_tensor_batch_aggregate;
    agg_class->get_next_time = gst_tensor_batch_get_next_time;
    agg_class->sink_event = gst_tensor_batch_sink_event;
    agg_class->sink_query = gst_tensor_batch_sink_query;
    agg_class->update_src_caps = gst_tensor_batch_update_src_caps;
    agg_class->negotiated_src_caps = gst_tensor_batch_negotiated_src_caps;
    agg_class->negotiate = gst_tensor_batch_negotiate;
    agg_class->decide_allocation = tb::decide_allocation;
    agg_class->propose_allocation = tb::propose_allocation;
    agg_class->create_new_pad = tb::create_new_pad;
    agg_class->start = tb::start;
    agg_class->stop = tb::stop;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_BATCH_PAD, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_BATCH_MODE, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_BATCH_ORDERING, GstPluginAPIFlags(0));
}

static void gst_tensor_batch_init(GstTensorBatch* self)
{
    self->state = new tb::State();
    // Live whatever upstream is: batched-push-timeout bounds the wait in every pipeline, and
    // pads that never sent a frame (requested while playing) hold up no batch.
    gst_aggregator_set_force_live(GST_AGGREGATOR(self), TRUE);
    gst_aggregator_set_ignore_inactive_pads(GST_AGGREGATOR(self), TRUE);
}
