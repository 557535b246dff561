// SPDX-License-Identifier: MIT
//
// tensoripcsrc: frames from a tensoripcsink in another process, imported without a copy.
// The session (connecting, the greeting, every record parsed and checked, releases, unlock)
// is ipc::Receiver in lib/tensor/src/ipc, without GStreamer; this file is the GstPushSrc
// adapter over it: it checks each frame against the caps, rebuilds it as a GstBuffer, imports
// it, and turns what the receiver reports into flow returns and element errors. Whatever is
// refused is dropped with its fds closed and the reason logged and counted.

// The launch lines below are one line each, so they can be pasted: keep the formatter off.
// clang-format off
/**
 * SECTION:element-tensoripcsrc
 * @title: tensoripcsrc
 * @see_also: tensoripcsink, shmsrc
 *
 * Connects to a tensoripcsink (#GstTensorIpcSrc:socket-path), waiting up to
 * #GstTensorIpcSrc:timeout for it to appear, and pushes the sender's buffers: its caps, its
 * timestamps, and its DMA-BUF or memfd fds themselves, wrapped as dmabuf or fd memory. Every
 * buffer is imported through a #GstEdgeTensorImportCache keyed by the kernel's inode of each
 * fd, so a remote buffer keeps one BufferIdentity (and one import) across frames although it
 * arrives as a new fd every time, and carries a #GstEdgeTensorMeta describing it. When
 * downstream drops the last memory of a frame, the frame is released back to the sender.
 * When the stream ends here while the pipeline stays up (#GstBaseSrc:num-buffers reached,
 * downstream at EOS, an EOS sent to the element), the sender is told that this receiver reads
 * no more: it sends it nothing further and a sender with block=true is not held back by it,
 * while the frames already taken stay valid until downstream drops them.
 *
 * Nothing the sender sends is trusted: a message of the wrong version, truncated, oversized,
 * with the wrong fd count, an fd that is neither a DMA-BUF nor a sealed memfd, or shapes and
 * strides beyond the buffer is dropped, its fds closed, the reason logged and counted in
 * #GstTensorIpcSrc:rejected; with #GstTensorIpcSrc:on-invalid=error it stops the stream
 * instead. #GstTensorIpcSrc:allowed-uid refuses a sink of another user (SO_PEERCRED).
 *
 * When the sender goes away without EOS (it stopped, crashed, was killed),
 * #GstTensorIpcSrc:on-disconnect decides: EOS (default), an element error, or reconnect: a
 * warning, a wait for a sender on the same path as at start (up to #GstTensorIpcSrc:timeout),
 * then its stream, renegotiated when its caps differ, the running time continuing; never a
 * hang. Nothing of a sender that left stays imported or mapped here.
 * Timestamps: the sender sends when each frame is due there on CLOCK_MONOTONIC. Not live
 * (the default), the buffers keep the sender's timestamps and the segment starts at the first,
 * so a synchronised sink plays them at the sender's pace from the first frame; with
 * #GstTensorIpcSrc:is-live each buffer's PTS is that time on this pipeline's clock, as
 * unixfdsrc gives it; with do-timestamp=true the running time when it arrived.
 *
 * ## Example launch lines
 *
 * Receive and convert for a model:
 * |[
 * gst-launch-1.0 tensoripcsrc socket-path=/tmp/cam.sock ! tensorconvert width=640 height=640 ! fakesink
 * ]|
 *
 * Receive live, timestamped here:
 * |[
 * gst-launch-1.0 tensoripcsrc socket-path=/tmp/cam.sock is-live=true do-timestamp=true ! fakesink
 * ]|
 */
// clang-format on

#include "gsttensoripcsrc.h"

#include "glib_raii.hpp"
#include "import_cache.hpp"
#include "internal.hpp"
#include "ipc_receiver.hpp"
#include "tensoripc_common.hpp"
#include "tensoripc_metas.hpp"
#include "tensoripcsrc_frame.hpp"
#include "tensoripcsrc_properties.hpp"
#include "tensoripcsrc_session.hpp"
#include "tensoripcsrc_timeline.hpp"
#include "vfunc_guard.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

GST_DEBUG_CATEGORY(gst_tensor_ipc_src_debug);
#define GST_CAT_DEFAULT gst_tensor_ipc_src_debug

namespace
{

namespace eg = edgetensor::gst;
namespace ipc = edgetensor::ipc;
using namespace edgetensor::gst::tensoripcsrc;

// Element warnings for rejected messages: the first, then one per this many (all are logged).
constexpr guint64 kWarnEvery = 100;

GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(EDGETENSOR_TENSOR_IPC_CAPS));

struct CacheFree {
    void operator()(GstEdgeTensorImportCache* c) const noexcept
    {
        gst_edge_tensor_import_cache_free(c);
    }
};

// The receiver's log goes to this element's debug category.
class Observer final : public ipc::LogObserver
{
public:
    explicit Observer(GstTensorIpcSrc* self) : self_(self) {}

    bool log_enabled(edgetensor::LogLevel level) const noexcept override
    {
        return gst_debug_category_get_threshold(GST_CAT_DEFAULT) >= eg::gst_debug_level(level);
    }

    void log(edgetensor::LogLevel level, const std::string& message) noexcept override
    {
        GST_CAT_LEVEL_LOG(GST_CAT_DEFAULT, eg::gst_debug_level(level), self_, "%s",
                          message.c_str());
    }

private:
    GstTensorIpcSrc* self_;
};

// What the element itself knows of the stream; the session (connection, greeting, accepted
// caps_seq, counters) is the receiver's.
struct Streaming {
    eg::StreamLayoutPtr layout; ///< the sender's current caps, read once
    bool caps_pushed = false;
    /// When the last sender left, while on-disconnect=reconnect waits for the next.
    std::optional<std::chrono::steady_clock::time_point> gone_since;
};

// One C++ state object per element: settings under the object lock; streaming state under
// mu, touched by the streaming thread (and by start/stop when it is not running); the
// receiver's unlock() is the only cross-thread signal.
struct State {
    explicit State(GstTensorIpcSrc* self) : observer(self), receiver(observer, &files) {}
    Settings settings;
    std::mutex mu;
    Streaming streaming;
    Timeline timeline;
    std::unique_ptr<GstEdgeTensorImportCache, CacheFree> cache{
        gst_edge_tensor_import_cache_new(DEFAULT_CACHE_SIZE)};
    eg::GstObjectPtr<GstAllocator> dmabuf_alloc{gst_dmabuf_allocator_new()};
    eg::GstObjectPtr<GstAllocator> fd_alloc{gst_fd_allocator_new()};
    // The sender's memfds, each mapped once (the streaming thread's; cleared at stop).
    MappedFiles files;
    Observer observer;
    ipc::Receiver receiver;
    std::atomic<bool> dropped_metas_reported{false}; ///< since start()
};

} // namespace

struct _GstTensorIpcSrc {
    GstPushSrc parent;
    State* state;
};

G_DEFINE_TYPE(GstTensorIpcSrc, gst_tensor_ipc_src, GST_TYPE_PUSH_SRC)
GST_ELEMENT_REGISTER_DEFINE(tensoripcsrc, "tensoripcsrc", GST_RANK_NONE, GST_TYPE_TENSOR_IPC_SRC)

namespace
{

State& state_of(gpointer self)
{
    return *GST_TENSOR_IPC_SRC(self)->state;
}

Settings settings_of(GstTensorIpcSrc* self)
{
    eg::ObjectLockGuard lock(self);
    return state_of(self).settings;
}

ipc::ReceiverConfig receiver_config(const Settings& s)
{
    ipc::ReceiverConfig c;
    c.path = s.socket_path;
    c.timeout_ns = s.timeout;
    c.allowed_uid = s.allowed_uid;
    return c;
}

// The cache's figures plus the receiver's; NULL out of memory.
GstStructure* make_stats(GstTensorIpcSrc* self)
{
    State& st = state_of(self);
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(st.cache.get());
    if (!s)
        return nullptr;
    const ipc::ReceiverStats r = st.receiver.stats();
    gst_structure_set(s, "received", G_TYPE_UINT64, r.received, "rejected", G_TYPE_UINT64,
                      r.rejected, "last-rejection", G_TYPE_STRING, r.last_rejection.c_str(),
                      "sink-pid", G_TYPE_UINT64, r.sink_pid, nullptr);
    return s;
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

// The receiver's events until one ends this create(): a frame to push, or a flow return.
GstFlowReturn create_impl(GstTensorIpcSrc* self, GstBuffer** out)
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

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_ipc_src_set_property(GObject* object, guint prop_id, const GValue* value,
                                     GParamSpec* pspec)
{
    State& st = state_of(object);
    if (!eg::guarded(object, "set_property", false, [&] {
            return eg::store_setting(object, setting_fields(), st.settings, prop_id, value, pspec);
        }))
        return;
    // Outside the object lock: both take locks of their own.
    if (prop_id == PROP_IS_LIVE)
        gst_base_src_set_live(GST_BASE_SRC(object), g_value_get_boolean(value));
    if (prop_id == PROP_CACHE_SIZE && st.cache)
        gst_edge_tensor_import_cache_set_max_entries(st.cache.get(), g_value_get_uint(value));
}

void get_property_impl(GstTensorIpcSrc* self, guint prop_id, GValue* value, GParamSpec* pspec)
{
    GObject* object = G_OBJECT(self);
    State& st = state_of(self);
    if (eg::load_setting(object, setting_fields(), st.settings, prop_id, value))
        return;
    switch (prop_id) {
    case PROP_RECEIVED:
        g_value_set_uint64(value, st.receiver.received());
        break;
    case PROP_REJECTED:
        g_value_set_uint64(value, st.receiver.rejected());
        break;
    case PROP_STATS:
        if (st.cache)
            g_value_take_boxed(value, make_stats(self));
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
}

void gst_tensor_ipc_src_get_property(GObject* object, guint prop_id, GValue* value,
                                     GParamSpec* pspec)
{
    eg::guarded(object, "get_property",
                [&] { get_property_impl(GST_TENSOR_IPC_SRC(object), prop_id, value, pspec); });
}

void gst_tensor_ipc_src_finalize(GObject* object)
{
    auto* self = GST_TENSOR_IPC_SRC(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_ipc_src_parent_class)->finalize(object);
}

// ---- GstBaseSrc ----------------------------------------------------------------------------

gboolean start_impl(GstTensorIpcSrc* self)
{
    State& st = state_of(self);
    if (!st.cache || !st.dmabuf_alloc || !st.fd_alloc) {
        GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Cannot create the import cache."),
                          (nullptr));
        return FALSE;
    }
    if (auto r = st.receiver.start(); !r) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED,
                          ("Cannot create a pipe: %s", g_strerror(r.error().sys_errno())),
                          (nullptr));
        return FALSE;
    }
    gst_edge_tensor_import_cache_set_max_entries(st.cache.get(), settings_of(self).cache_size);
    gst_edge_tensor_import_cache_reset_stats(st.cache.get());
    st.dropped_metas_reported = false;
    st.timeline.reset();
    std::lock_guard<std::mutex> lock(st.mu);
    st.streaming = Streaming{};
    return TRUE;
}

gboolean gst_tensor_ipc_src_start(GstBaseSrc* src)
{
    return eg::guarded(src, "start", FALSE, [src] { return start_impl(GST_TENSOR_IPC_SRC(src)); });
}

gboolean stop_impl(GstTensorIpcSrc* self)
{
    State& st = state_of(self);
    {
        std::lock_guard<std::mutex> lock(st.mu);
        st.streaming = Streaming{};
    }
    st.timeline.reset();
    // Closes the socket; frames still downstream keep the Connection object, not the socket.
    st.receiver.stop();
    gst_edge_tensor_import_cache_clear(st.cache.get(), "stop");
    st.files.clear();
    if (GstStructure* s = make_stats(self)) {
        eg::GCharPtr str(gst_structure_to_string(s));
        GST_INFO_OBJECT(self, "%s", str.get());
        gst_structure_free(s);
    }
    return TRUE;
}

gboolean gst_tensor_ipc_src_stop(GstBaseSrc* src)
{
    return eg::guarded(src, "stop", FALSE, [src] { return stop_impl(GST_TENSOR_IPC_SRC(src)); });
}

gboolean gst_tensor_ipc_src_unlock(GstBaseSrc* src)
{
    state_of(src).receiver.unlock();
    return TRUE;
}

gboolean gst_tensor_ipc_src_unlock_stop(GstBaseSrc* src)
{
    state_of(src).receiver.unlock_stop();
    return TRUE;
}

gboolean gst_tensor_ipc_src_negotiate(GstBaseSrc* src)
{
    // The caps are the sender's: they are set when its first frame arrives (create()).
    State& st = state_of(src);
    eg::MiniObjectPtr<GstCaps> caps;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        if (!st.streaming.layout || !st.streaming.caps_pushed)
            return TRUE;
        caps.reset(gst_caps_ref(st.streaming.layout->caps.get()));
    }
    return gst_base_src_set_caps(src, caps.get());
}

// Live: the timeline's answer (tensoripcsrc_timeline.hpp).
gboolean gst_tensor_ipc_src_query(GstBaseSrc* src, GstQuery* query)
{
    if (GST_QUERY_TYPE(query) != GST_QUERY_LATENCY || !gst_base_src_is_live(src))
        return GST_BASE_SRC_CLASS(gst_tensor_ipc_src_parent_class)->query(src, query);
    state_of(src).timeline.answer_latency(query);
    return TRUE;
}

// EOS leaving the element, whatever ended the stream here (num-buffers, downstream's EOS, an
// EOS sent to the element, an error): the sink hears that this receiver reads no more, so
// one that blocks is not held back by it and the frames it will never read are let go.
GstPadProbeReturn on_eos_leaving(GstPad*, GstPadProbeInfo* info, gpointer self)
{
    if (GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_EOS)
        state_of(self).receiver.finish();
    return GST_PAD_PROBE_OK;
}

GstFlowReturn gst_tensor_ipc_src_create(GstPushSrc* psrc, GstBuffer** out)
{
    *out = nullptr;
    return eg::guarded(psrc, "create", GST_FLOW_ERROR,
                       [&] { return create_impl(GST_TENSOR_IPC_SRC(psrc), out); });
}

} // namespace

static void gst_tensor_ipc_src_class_init(GstTensorIpcSrcClass* klass)
{
    gst_edge_tensor_init();
    GST_DEBUG_CATEGORY_INIT(gst_tensor_ipc_src_debug, "tensoripcsrc", 0,
                            "edgetensor cross-process source (fd passing)");

    GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    GstBaseSrcClass* bs = GST_BASE_SRC_CLASS(klass);
    GstPushSrcClass* ps = GST_PUSH_SRC_CLASS(klass);

    gobject_class->set_property = gst_tensor_ipc_src_set_property;
    gobject_class->get_property = gst_tensor_ipc_src_get_property;
    gobject_class->finalize = gst_tensor_ipc_src_finalize;

    install_properties(gobject_class);

    gst_element_class_add_pad_template(
        element_class, eg::pad_template_with_dma_drm(&src_template, eg::dma_drm_caps_any_linear()));
    gst_element_class_set_static_metadata(
        element_class, "Tensor IPC source", "Source/Video",
        "Receives DMA-BUF/memfd buffers from a tensoripcsink in another process without a "
        "copy, one identity per remote buffer. Example: gst-launch-1.0 tensoripcsrc "
        "socket-path=/tmp/cam.sock ! fakesink",
        "edgetensor developers");

    bs->start = gst_tensor_ipc_src_start;
    bs->stop = gst_tensor_ipc_src_stop;
    bs->unlock = gst_tensor_ipc_src_unlock;
    bs->unlock_stop = gst_tensor_ipc_src_unlock_stop;
    bs->negotiate = gst_tensor_ipc_src_negotiate;
    bs->query = gst_tensor_ipc_src_query;
    ps->create = gst_tensor_ipc_src_create;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_IPC_SRC_ON_DISCONNECT, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_IPC_SRC_ON_INVALID, GstPluginAPIFlags(0));
}

static void gst_tensor_ipc_src_init(GstTensorIpcSrc* self)
{
    self->state = new State(self);
    gst_pad_add_probe(GST_BASE_SRC_PAD(self), GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, on_eos_leaving,
                      self, nullptr);
    gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
    gst_base_src_set_live(GST_BASE_SRC(self), DEFAULT_IS_LIVE);
}
