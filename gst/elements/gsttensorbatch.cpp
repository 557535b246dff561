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
#include "tensorbatch_caps.hpp"
#include "tensorbatch_pad.hpp"
#include "tensorbatch_pool.hpp"
#include "tensorbatch_properties.hpp"
#include "tensorbatch_provenance.hpp"
#include "tensorbatch_roi.hpp"
#include "tensorbatch_stats.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/video/video.h>

#include <edgetensor/convert.hpp>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
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

/// Refused ROIs warned about one by one per start; later ones are counted (rois-refused).
constexpr guint kRoiWarnings = 10;

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
    et::Shape shape;
    bool negotiated = false;
};

struct Streaming {
    Output out;
    tb::Counters counters;
    /// Which slots a pad holds (streams mode).
    std::vector<bool> slots;
    /// Warnings said once per start (per pad and kind).
    std::set<std::string> warned;
    guint roi_warnings = 0;
};

// One C++ state object per element: settings under the object lock, streaming state under mu.
struct State {
    tb::Settings settings;
    std::mutex mu;
    Streaming st;
    // update_src_caps said why the output cannot be negotiated (the src task's only).
    bool negotiation_error = false;
};

} // namespace

struct _GstTensorBatch {
    GstAggregator parent;
    State* state;
};

struct _GstTensorBatchPad {
    GstAggregatorPad parent;
    tb::PadStream* stream; // made when the element names the pad; the element's mu guards it
};

G_DEFINE_TYPE(GstTensorBatchPad, gst_tensor_batch_pad, GST_TYPE_AGGREGATOR_PAD)
G_DEFINE_TYPE(GstTensorBatch, gst_tensor_batch, GST_TYPE_AGGREGATOR)
GST_ELEMENT_REGISTER_DEFINE(tensorbatch, "tensorbatch", GST_RANK_NONE, GST_TYPE_TENSOR_BATCH)

static void gst_tensor_batch_pad_finalize(GObject* object)
{
    auto* pad = GST_TENSOR_BATCH_PAD(object);
    delete pad->stream;
    pad->stream = nullptr;
    G_OBJECT_CLASS(gst_tensor_batch_pad_parent_class)->finalize(object);
}

static void gst_tensor_batch_pad_class_init(GstTensorBatchPadClass* klass)
{
    G_OBJECT_CLASS(klass)->finalize = gst_tensor_batch_pad_finalize;
}

static void gst_tensor_batch_pad_init(GstTensorBatchPad* pad)
{
    pad->stream = nullptr;
    // Caps that leave a field of the template out (a framerate) are taken, as stock video
    // elements take them.
    GST_PAD_SET_ACCEPT_INTERSECT(pad);
}

namespace
{

State& state_of(gpointer self)
{
    return *GST_TENSOR_BATCH(self)->state;
}

tb::Settings settings_snapshot(gpointer self)
{
    eg::ObjectLockGuard lock(self);
    return state_of(self).settings;
}

using PadPtr = eg::GstObjectPtr<GstTensorBatchPad>;

// The sink pads, referenced, in the element's order.
std::vector<PadPtr> sink_pads(GstTensorBatch* self)
{
    std::vector<PadPtr> pads;
    eg::ObjectLockGuard lock(self);
    for (GList* l = GST_ELEMENT(self)->sinkpads; l; l = l->next)
        pads.emplace_back(GST_TENSOR_BATCH_PAD(gst_object_ref(l->data)));
    return pads;
}

// The number in "sink_%u".
guint pad_number(GstPad* pad)
{
    const char* name = GST_PAD_NAME(pad);
    const char* digits = name ? std::strrchr(name, '_') : nullptr;
    return digits ? guint(g_ascii_strtoull(digits + 1, nullptr, 10)) : 0;
}

std::optional<guint> take_slot(Streaming& st)
{
    for (guint i = 0; i < st.slots.size(); ++i)
        if (!st.slots[i]) {
            st.slots[i] = true;
            return i;
        }
    return std::nullopt;
}

GstClockTime running_time(GstAggregatorPad* pad, GstBuffer* buf)
{
    const GstClockTime pts = GST_BUFFER_PTS(buf);
    if (!GST_CLOCK_TIME_IS_VALID(pts))
        return GST_CLOCK_TIME_NONE;
    eg::ObjectLockGuard lock(pad);
    if (pad->segment.format != GST_FORMAT_TIME)
        return GST_CLOCK_TIME_NONE;
    return gst_segment_to_running_time(&pad->segment, GST_FORMAT_TIME, pts);
}

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
    auto in = tb::read_pad_caps(caps, s);
    if (!in) {
        eg::GCharPtr cs(gst_caps_to_string(caps));
        msgs.error(GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION,
                   std::string(GST_PAD_NAME(pad)) + ": " + in.error().message() + ".",
                   std::string("caps ") + cs.get());
    } else {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        Streaming& st = state_of(self).st;
        // The slot size is the properties', else the first stream's: fixed until stop, so a
        // caps change on one pad renegotiates that pad's converter only.
        const size_t w = s.width ? s.width : st.out.width ? st.out.width : in->facts.width;
        const size_t h = s.height ? s.height : st.out.height ? st.out.height : in->facts.height;
        auto r = pad->stream->set_caps(*in, s, w, h);
        if (!r) {
            eg::GCharPtr cs(gst_caps_to_string(caps));
            msgs.error(GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION,
                       std::string(GST_PAD_NAME(pad)) + ": cannot convert " + cs.get() + " with " +
                           tb::describe_settings(s) + ": " + r.error().message(),
                       std::string("edgetensor error ") +
                           std::string(et::error_code_name(r.error().code())));
        } else {
            ok = true;
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
    msgs.post(GST_ELEMENT(self));
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

// ---- batches -------------------------------------------------------------------------------

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

// The stats at EOS: logged and posted as an element message.
GstFlowReturn end_of_stream(GstTensorBatch* self);

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

GstFlowReturn aggregate_impl(GstTensorBatch* self, gboolean timeout)
{
    {
        const tb::Settings s = settings_snapshot(self);
        bool negotiated;
        {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            negotiated = state_of(self).st.out.negotiated;
        }
        if (!negotiated) {
            // Nothing to batch into yet: only EOS before any caps can end here.
            bool all_eos = true;
            for (const PadPtr& p : sink_pads(self))
                all_eos = all_eos && gst_aggregator_pad_is_eos(GST_AGGREGATOR_PAD(p.get()));
            if (all_eos)
                return end_of_stream(self);
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("tensorbatch received frames before its output was negotiated."),
                              (nullptr));
            return GST_FLOW_NOT_NEGOTIATED;
        }
        GST_LOG_OBJECT(self, "aggregate (timeout %d)", timeout);
        return s.mode == GST_TENSOR_BATCH_MODE_ROI ? aggregate_rois(self, s)
                                                   : aggregate_streams(self, s);
    }
}

GstFlowReturn gst_tensor_batch_aggregate(GstAggregator* agg, gboolean timeout)
{
    return eg::guarded(agg, "aggregate", GST_FLOW_ERROR,
                       [&] { return aggregate_impl(GST_TENSOR_BATCH(agg), timeout); });
}

// When a batch still missing frames goes out: batched-push-timeout (the subclass latency)
// after the running time of the oldest frame waiting. Nothing waiting: nothing to send.
GstClockTime gst_tensor_batch_get_next_time(GstAggregator* agg)
{
    GstClockTime earliest = GST_CLOCK_TIME_NONE;
    eg::ObjectLockGuard lock(agg);
    if (state_of(agg).settings.timeout == GST_CLOCK_TIME_NONE)
        return GST_CLOCK_TIME_NONE; // wait for every stream
    for (GList* l = GST_ELEMENT(agg)->sinkpads; l; l = l->next) {
        auto* pad = GST_AGGREGATOR_PAD(l->data);
        GstBuffer* buf = gst_aggregator_pad_peek_buffer(pad);
        if (!buf)
            continue;
        const GstClockTime rt = running_time(pad, buf);
        gst_buffer_unref(buf);
        if (GST_CLOCK_TIME_IS_VALID(rt) && (!GST_CLOCK_TIME_IS_VALID(earliest) || rt < earliest))
            earliest = rt;
    }
    return earliest;
}

// ---- pads ----------------------------------------------------------------------------------

GstAggregatorPad* gst_tensor_batch_create_new_pad(GstAggregator* agg, GstPadTemplate* templ,
                                                  const gchar* req_name, const GstCaps* caps)
{
    auto* self = GST_TENSOR_BATCH(agg);
    GstAggregatorPad* pad = GST_AGGREGATOR_CLASS(gst_tensor_batch_parent_class)
                                ->create_new_pad(agg, templ, req_name, caps);
    if (!pad)
        return nullptr;
    // A pad refused, or why (an exception's message from the guard).
    const std::string refused = eg::guarded(
        agg, "create_new_pad", [](const char* what) { return std::string(what ? what : "?"); },
        [&]() -> std::string {
            std::string why;
            const tb::Settings s = settings_snapshot(self);
            auto* bp = GST_TENSOR_BATCH_PAD(pad);
            bp->stream = new tb::PadStream(pad_number(GST_PAD(pad)));
            guint existing;
            {
                eg::ObjectLockGuard lock(self);
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

void gst_tensor_batch_release_pad(GstElement* element, GstPad* pad)
{
    auto* self = GST_TENSOR_BATCH(element);
    // The pad goes whatever happens here: only freeing its slot is guarded.
    eg::guarded(element, "release_pad", [&] {
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        auto* bp = GST_TENSOR_BATCH_PAD(pad);
        Streaming& st = state_of(self).st;
        if (bp->stream && bp->stream->slot && *bp->stream->slot < st.slots.size())
            st.slots[*bp->stream->slot] = false;
        if (bp->stream)
            bp->stream->slot.reset();
    });
    GST_ELEMENT_CLASS(gst_tensor_batch_parent_class)->release_pad(element, pad);
}

// ---- start / stop --------------------------------------------------------------------------

// What start() refuses, with the element error naming it.
bool check_settings(GstTensorBatch* self, const tb::Settings& s, guint n_pads)
{
    if (!s.refused.empty()) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                          ("Invalid property values: %s. tensorbatch does not run with settings "
                           "other than those asked for: fix or remove them.",
                           s.refused.describe().c_str()),
                          ("%s", tb::describe_settings(s).c_str()));
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
                          ("%s", tb::describe_settings(s).c_str()));
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
        const tb::Settings s = settings_snapshot(self);
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
            st = Streaming{};
            st.slots.assign(s.batch_size, false);
            for (const PadPtr& p : pads)
                p->stream->slot = take_slot(st);
        }
        const GstClockTime latency = s.timeout == GST_CLOCK_TIME_NONE ? 0 : GstClockTime(s.timeout);
        gst_aggregator_set_latency(GST_AGGREGATOR(self), latency, latency);
        return TRUE;
    }
}

gboolean gst_tensor_batch_start(GstAggregator* agg)
{
    return eg::guarded(agg, "start", FALSE, [&] { return start_impl(GST_TENSOR_BATCH(agg)); });
}

gboolean stop_impl(GstTensorBatch* self)
{
    {
        std::vector<PadPtr> pads = sink_pads(self);
        std::lock_guard<std::mutex> lock(state_of(self).mu);
        std::vector<GstEdgeTensorImportCache*> caches;
        for (const PadPtr& p : pads)
            caches.push_back(p->stream ? p->stream->cache() : nullptr);
        GstStructure* stats = tb::stats_structure(state_of(self).st.counters, caches);
        GST_INFO_OBJECT(self, "stopping: %" GST_PTR_FORMAT, stats);
        gst_structure_free(stats);
        for (const PadPtr& p : pads)
            if (p->stream) {
                p->stream->reset();
                p->stream->clear_cache("stop");
            }
        Output& out = state_of(self).st.out;
        out = Output{};
        return TRUE;
    }
}

gboolean gst_tensor_batch_stop(GstAggregator* agg)
{
    return eg::guarded(agg, "stop", FALSE, [&] { return stop_impl(GST_TENSOR_BATCH(agg)); });
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

    element_class->release_pad = gst_tensor_batch_release_pad;

    agg_class->aggregate = gst_tensor_batch_aggregate;
    agg_class->get_next_time = gst_tensor_batch_get_next_time;
    agg_class->sink_event = gst_tensor_batch_sink_event;
    agg_class->sink_query = gst_tensor_batch_sink_query;
    agg_class->update_src_caps = gst_tensor_batch_update_src_caps;
    agg_class->negotiated_src_caps = gst_tensor_batch_negotiated_src_caps;
    agg_class->negotiate = gst_tensor_batch_negotiate;
    agg_class->decide_allocation = tb::decide_allocation;
    agg_class->propose_allocation = tb::propose_allocation;
    agg_class->create_new_pad = gst_tensor_batch_create_new_pad;
    agg_class->start = gst_tensor_batch_start;
    agg_class->stop = gst_tensor_batch_stop;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_BATCH_PAD, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_BATCH_MODE, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_BATCH_ORDERING, GstPluginAPIFlags(0));
}

static void gst_tensor_batch_init(GstTensorBatch* self)
{
    self->state = new State();
    // Live whatever upstream is: batched-push-timeout bounds the wait in every pipeline, and
    // pads that never sent a frame (requested while playing) hold up no batch.
    gst_aggregator_set_force_live(GST_AGGREGATOR(self), TRUE);
    gst_aggregator_set_ignore_inactive_pads(GST_AGGREGATOR(self), TRUE);
}
