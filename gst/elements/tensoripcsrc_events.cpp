// SPDX-License-Identifier: MIT
//
// tensoripcsrc's create(): the receiver's events until one ends it. A frame checked against
// the caps, rebuilt as a buffer and imported; the sender's caps read once; refusals counted
// and reported (dropped, or an error with on-invalid=error); the sender leaving, coming back,
// or stalling told to the user (tensoripcsrc_session.hpp).

#include "tensoripcsrc_events.hpp"

#include "tensoripc_metas.hpp"
#include "tensoripcsrc_element.hpp"
#include "tensoripcsrc_session.hpp"

#include <gst/base/gstbasesrc.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#define GST_CAT_DEFAULT gst_tensor_ipc_src_debug

namespace edgetensor::gst::tensoripcsrc
{

namespace
{

namespace eg = edgetensor::gst;
namespace ipc = edgetensor::ipc;

// Element warnings for rejected messages: the first, then one per this many (all are logged).
constexpr guint64 kWarnEvery = 100;

ipc::ReceiverConfig receiver_config(const Settings& s)
{
    ipc::ReceiverConfig c;
    c.path = s.socket_path;
    c.timeout_ns = s.timeout;
    c.allowed_uid = s.allowed_uid;
    return c;
}

// The `n`th message was refused (counted by the receiver): log, and either go on (drop) or
// stop (error).
GstFlowReturn report_rejection(GstTensorIpcSrc* self, guint64 n, const std::string& why)
{
    GST_WARNING_OBJECT(self, "dropping a message from the sender: %s", why.c_str());
    if (settings_of(self).on_invalid == GST_TENSOR_IPC_SRC_ON_INVALID_ERROR) {
        GST_ELEMENT_ERROR(self, STREAM, DECODE,
                          ("Invalid message from the sender: %s", why.c_str()),
                          ("on-invalid=error"));
        return GST_FLOW_ERROR;
    }
    if (n == 1 || n % kWarnEvery == 0)
        GST_ELEMENT_WARNING(self, STREAM, DECODE,
                            ("Dropped an invalid message from the sender (%" G_GUINT64_FORMAT
                             " so far): %s",
                             n, why.c_str()),
                            ("every rejection is logged at WARNING level and counted in "
                             "\"rejected\""));
    return GST_FLOW_OK;
}

// A message the receiver handed over that this element cannot use.
GstFlowReturn reject(GstTensorIpcSrc* self, const std::string& why)
{
    return report_rejection(self, state_of(self).receiver.reject(why), why);
}

// Live: how far behind this receiver may fall now that the sender's HELLO and caps are known;
// when that changed, the pipeline is told to ask again (the first answer, at PLAYING, came
// before any sender).
void update_max_latency(GstTensorIpcSrc* self)
{
    if (!gst_base_src_is_live(GST_BASE_SRC(self)))
        return;
    State& st = state_of(self);
    const guint32 max_pending = st.receiver.stats().max_pending;
    eg::StreamLayoutPtr layout;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        layout = st.streaming.layout;
    }
    if (!st.timeline.set_sender(max_pending, layout ? layout->fps_n : 0,
                                layout ? layout->fps_d : 1))
        return;
    GST_INFO_OBJECT(self,
                    "the sender lets this receiver hold %u frames: max latency %" GST_TIME_FORMAT,
                    max_pending, GST_TIME_ARGS(st.timeline.max_latency()));
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_latency(GST_OBJECT(self)));
}

GstFlowReturn handle_caps(GstTensorIpcSrc* self, const ipc::Event& e)
{
    State& st = state_of(self);
    eg::MiniObjectPtr<GstCaps> templ(gst_pad_get_pad_template_caps(GST_BASE_SRC_PAD(self)));
    auto sender = read_sender_caps(e.caps, templ.get());
    if (!sender)
        return reject(self, sender.error().message());
    eg::import_cache_set_layout(st.cache.get(), *sender);
    bool same;
    std::optional<std::chrono::steady_clock::time_point> gone_since;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        Streaming& s = st.streaming;
        same = s.layout && s.layout->same_caps((*sender)->caps.get());
        s.caps_pushed = same && s.caps_pushed;
        s.layout = std::move(*sender);
        gone_since = std::exchange(s.gone_since, std::nullopt);
    }
    // As the import cache does: new caps, maybe a new pool. Outside st.mu: dropping the kept
    // memories unmaps and closes them, which the stats and queries need not wait for.
    if (!same)
        st.files.clear();
    st.receiver.accept_caps(e.caps_seq);
    GST_DEBUG_OBJECT(self, "sender caps %u: %s", e.caps_seq, e.caps.c_str());
    update_max_latency(self);
    if (gone_since) // the first caps of a sender that came back (on-disconnect=reconnect)
        sender_back(
            GST_ELEMENT(self), settings_of(self), st.receiver.stats().sink_pid,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - *gone_since).count());
    return GST_FLOW_OK;
}

// on-disconnect=reconnect, the sender gone: what was its goes with it. Its memfds stay mapped,
// and its buffers imported, only while frames downstream hold them (a dead sender's memory
// is not pinned by this element); the next sender's caps are compared with its (renegotiated
// when they differ) and its first frame starts a segment that continues the running time.
void forget_sender(GstTensorIpcSrc* self)
{
    State& st = state_of(self);
    st.files.clear();
    gst_edge_tensor_import_cache_clear(st.cache.get(), "the sender went away");
    st.timeline.restart();
    std::lock_guard<std::mutex> lock(st.mu);
    st.streaming.gone_since = std::chrono::steady_clock::now();
}

// A frame the receiver checked against the protocol and the kernel: checked here against the
// caps, rebuilt as a buffer, imported. Every early return releases the frame (its token dies
// with the event) and closes its fds.
GstFlowReturn handle_frame(GstTensorIpcSrc* self, ipc::Event& e, GstBuffer** out)
{
    State& st = state_of(self);
    ipc::Frame& f = e.frame;
    eg::StreamLayoutPtr layout;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        layout = st.streaming.layout;
    }
    if (!layout)
        return reject(self, "FRAME " + std::to_string(f.head.seq) + " before any CAPS");
    if (const std::string why = check_layout(*layout, f); !why.empty())
        return reject(self, "FRAME " + std::to_string(f.head.seq) + ": " + why);

    std::string why_not;
    eg::MiniObjectPtr<GstBuffer> buf =
        assemble_buffer(f, *layout, e.release, st.dmabuf_alloc.get(), st.fd_alloc.get(), st.files,
                        gst_edge_tensor_import_cache_get_max_entries(st.cache.get()), &why_not);
    if (!buf)
        return reject(self, why_not);
    std::string lacking;
    if (!eg::tensoripc::attach_metas(buf.get(), f, e.release, st.dmabuf_alloc.get(),
                                     st.fd_alloc.get(), &lacking)) {
        if (!st.dropped_metas_reported.exchange(true))
            GST_WARNING_OBJECT(self,
                               "FRAME %" G_GUINT64_FORMAT ": dropped %s (later ones are "
                               "logged at DEBUG)",
                               f.head.seq, lacking.c_str());
        else
            GST_DEBUG_OBJECT(self, "FRAME %" G_GUINT64_FORMAT ": dropped %s", f.head.seq,
                             lacking.c_str());
    }
    e.release.reset(); // the memories hold it now
    GstEdgeTensorImportResult result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    gchar* why_c = nullptr;
    GstEdgeTensorMeta* meta =
        gst_edge_tensor_import_cache_attach_meta(st.cache.get(), buf.get(), &result, &why_c);
    eg::GCharPtr why(why_c);
    if (!meta)
        return reject(self, "FRAME " + std::to_string(f.head.seq) +
                                " cannot be imported: " + (why ? why.get() : "unknown reason"));
    std::optional<GstSegment> segment =
        st.timeline.place(GST_BASE_SRC(self), buf.get(), f.head.capture);
    GST_LOG_OBJECT(self, "frame %" G_GUINT64_FORMAT ": %s, tensor %" G_GUINT64_FORMAT, f.head.seq,
                   result == GST_EDGE_TENSOR_IMPORT_HIT ? "hit" : "miss", meta->identity);

    bool push_caps = false;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        push_caps = !st.streaming.caps_pushed;
        st.streaming.caps_pushed = true;
    }
    GstCaps* caps = layout->caps.get();
    if (push_caps && !gst_base_src_set_caps(GST_BASE_SRC(self), caps)) {
        {
            std::lock_guard<std::mutex> lock(st.mu);
            st.streaming.caps_pushed = false;
        }
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("Downstream refuses the sender's caps %" GST_PTR_FORMAT, caps),
                          (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    if (segment && !gst_base_src_new_segment(GST_BASE_SRC(self), &*segment))
        GST_WARNING_OBJECT(self, "cannot start a segment at %" GST_TIME_FORMAT,
                           GST_TIME_ARGS(segment->start));
    st.receiver.count_received();
    *out = buf.release();
    return GST_FLOW_OK;
}

} // namespace

GstFlowReturn next_buffer(GstTensorIpcSrc* self, GstBuffer** out)
{
    State& st = state_of(self);
    const Settings s = settings_of(self);
    const ipc::ReceiverConfig config = receiver_config(s);
    for (;;) {
        ipc::Event e = st.receiver.next(config);
        GstFlowReturn ret = GST_FLOW_OK;
        switch (e.kind) {
        case ipc::Event::Kind::Flushing:
            return GST_FLOW_FLUSHING;
        case ipc::Event::Kind::Failed:
            return connect_failed(GST_ELEMENT(self), s, e);
        case ipc::Event::Kind::Gone:
            ret = sender_gone(GST_ELEMENT(self), s, e);
            if (ret != GST_FLOW_OK)
                return ret;
            forget_sender(self);
            break;
        case ipc::Event::Kind::Eos:
            return GST_FLOW_EOS;
        case ipc::Event::Kind::Invalid:
            ret = report_rejection(self, e.rejections, e.why);
            break;
        case ipc::Event::Kind::Stalled:
            receiving_stalled(GST_ELEMENT(self), e);
            break;
        case ipc::Event::Kind::Caps:
            ret = handle_caps(self, e);
            break;
        case ipc::Event::Kind::Frame:
            ret = handle_frame(self, e, out);
            if (ret == GST_FLOW_OK && *out)
                return GST_FLOW_OK;
            break;
        }
        if (ret != GST_FLOW_OK)
            return ret;
    }
}

} // namespace edgetensor::gst::tensoripcsrc
