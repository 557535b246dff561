// SPDX-License-Identifier: MIT
//
// tensoripcsink: the fds behind every buffer, with an EdgeTensorDesc each, to every connected
// tensoripcsrc. The wire protocol lives in lib/tensor/src/ipc (no GStreamer there).

// The launch lines below are one line each, so they can be pasted: keep the formatter off.
// clang-format off
/**
 * SECTION:element-tensoripcsink
 * @title: tensoripcsink
 * @see_also: tensoripcsrc, shmsink
 *
 * Shares buffers with other processes without copying them: it listens on a
 * `SOCK_SEQPACKET` Unix socket (#GstTensorIpcSink:socket-path) and sends every connected
 * tensoripcsrc, per buffer, the caps (when they changed), the timestamps, and for every
 * memory an EdgeTensorDesc with the memory's DMA-BUF or memfd fd attached (`SCM_RIGHTS`).
 *
 * Each buffer is kept alive until every receiver it was sent to has released it, so an
 * upstream pool recycles only buffers nobody reads any more. A receiver that already holds
 * #GstTensorIpcSink:max-pending frames is skipped for new frames (counted in
 * #GstTensorIpcSink:dropped) rather than stalling the pipeline; a receiver that disconnects or
 * dies frees at once everything held for it. What all receivers together may pin is bounded in
 * bytes too (#GstTensorIpcSink:max-held-bytes, 256 MiB by default): past it a buffer waits for
 * releases with #GstTensorIpcSink:block, or is dropped for every receiver without it. With
 * block, #GstTensorIpcSink:block-timeout bounds how long a receiver that releases nothing holds
 * the stream back: past it its frames are dropped until it releases one.
 *
 * Memory without an fd (system memory) is copied into a pooled DMA-BUF or memfd tensor when
 * #GstTensorIpcSink:copy-mode is `auto` (counted in #GstTensorIpcSink:copies, warned once), or
 * refused with an element error when it is `never`. In the ALLOCATION query the element
 * proposes an edgetensor pool, so upstream elements that honour it write into fd memory.
 *
 * The socket gets the permissions of #GstTensorIpcSink:socket-mode before anyone can
 * connect; #GstTensorIpcSink:allowed-uid additionally refuses receivers of any other user
 * (SO_PEERCRED). At EOS the element posts an element message `tensoripcsink-stats` (sent,
 * dropped, copies, clients, peak-clients, peak-held-bytes).
 *
 * ## Example launch lines
 *
 * Serve a camera's DMA-BUFs:
 * |[
 * gst-launch-1.0 v4l2src io-mode=dmabuf num-buffers=300 ! tensorimport ! tensoripcsink socket-path=/tmp/cam.sock
 * ]|
 *
 * Serve test frames:
 * |[
 * gst-launch-1.0 tensortestsrc is-live=true num-buffers=300 ! video/x-raw,format=NV12,width=1920,height=1080 ! tensoripcsink socket-path=/tmp/cam.sock
 * ]|
 */
// clang-format on

#include "gsttensoripcsink.h"

#include "copy_fallback.hpp"
#include "enum_type.hpp"
#include "glib_raii.hpp"
#include "internal.hpp"
#include "ipc_server.hpp"
#include "ipc_wire.hpp"
#include "tensoripc_common.hpp"
#include "tensoripc_metas.hpp"
#include "tensoripcsink_allocation.hpp"
#include "tensoripcsink_frame.hpp"
#include "tensoripcsink_observer.hpp"
#include "tensoripcsink_properties.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <span>
#include <string>
#include <utility>

GST_DEBUG_CATEGORY(gst_tensor_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_tensor_ipc_sink_debug

namespace
{

namespace eg = edgetensor::gst;
namespace ipc = edgetensor::ipc;
using namespace edgetensor::gst::tensoripcsink;

GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(EDGETENSOR_TENSOR_IPC_CAPS));

struct Streaming {
    eg::StreamLayoutPtr layout; // null before caps
};

// One C++ state object per element: settings under the object lock, streaming state under
// mu, the receivers in the server (its own lock; counters atomic so property reads never
// block).
struct State {
    explicit State(GstTensorIpcSink* self)
        : observer(self), server(observer), fallback(copy_policy())
    {
    }
    Settings settings;
    std::mutex mu;
    Streaming streaming;
    Observer observer;
    ipc::Server server;
    eg::CopyFallback fallback;
    std::atomic<bool> skipped_metas_reported{false}; ///< since start()
};

} // namespace

struct _GstTensorIpcSink {
    GstBaseSink parent;
    State* state;
};

G_DEFINE_TYPE(GstTensorIpcSink, gst_tensor_ipc_sink, GST_TYPE_BASE_SINK)
GST_ELEMENT_REGISTER_DEFINE(tensoripcsink, "tensoripcsink", GST_RANK_NONE, GST_TYPE_TENSOR_IPC_SINK)

GType gst_tensor_ipc_sink_copy_mode_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_IPC_SINK_COPY_AUTO,
         "Copy memory without an fd into a pooled DMA-BUF/memfd tensor (counted, warned once)",
         "auto"},
        {GST_TENSOR_IPC_SINK_COPY_NEVER, "Refuse memory without an fd (element error)", "never"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstTensorIpcSinkCopyMode", values);
}

namespace
{

State& state_of(gpointer self)
{
    return *GST_TENSOR_IPC_SINK(self)->state;
}

// What a buffer's metas lost on the way: a warning the first time in a start, then debug logs.
void report_skipped_metas(GstTensorIpcSink* self, const std::string& what)
{
    State& st = state_of(self);
    if (!st.skipped_metas_reported.exchange(true))
        GST_WARNING_OBJECT(self, "not passed to receivers: %s (later ones are logged at DEBUG)",
                           what.c_str());
    else
        GST_DEBUG_OBJECT(self, "not passed to receivers: %s", what.c_str());
}

GstFlowReturn render_impl(GstTensorIpcSink* self, GstBuffer* buffer)
{
    State& st = state_of(self);
    eg::StreamLayoutPtr layout;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        layout = st.streaming.layout;
    }
    eg::MiniObjectPtr<GstBuffer> copied;
    GstBuffer* buf = buffer;
    if (const eg::Unusable what = unsendable(buffer); !what.why.empty()) {
        GstTensorIpcSinkCopyMode mode;
        {
            eg::ObjectLockGuard lock(self);
            mode = st.settings.copy_mode;
        }
        GstBuffer* c = nullptr;
        const GstFlowReturn ret =
            st.fallback.copy(GST_ELEMENT(self), eg::CopyMode(mode), layout, what, buffer, &c);
        if (ret != GST_FLOW_OK)
            return ret;
        copied.reset(c);
        gst_buffer_copy_into(c, buffer, GstBufferCopyFlags(GST_BUFFER_COPY_TIMESTAMPS), 0, -1);
        buf = c;
        if (const eg::Unusable still = unsendable(buf); !still.why.empty()) {
            GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                              ("The copy has no fd to pass: %s.", still.why.c_str()),
                              ("is EDGETENSOR_FORCE_MEM=1 set?"));
            return GST_FLOW_ERROR;
        }
    }

    ipc::FrameHead head = frame_head(buf, layout.get());
    head.capture = capture_time(GST_BASE_SINK(self), buf);
    const guint n = gst_buffer_n_memory(buf);
    std::array<ipc::MemoryRecord, ipc::kMaxMemories> records;
    std::array<int, ipc::kMaxMemories + ipc::kMaxMetaFds> fds{};
    for (guint i = 0; i < n; ++i) {
        GstMemory* mem = gst_buffer_peek_memory(buf, i);
        auto r = describe_memory(mem, i);
        if (!r) {
            GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Cannot describe memory %u.", i),
                              ("%s", r.error().message().c_str()));
            return GST_FLOW_ERROR;
        }
        records[i] = *r;
        fds[i] = gst_fd_memory_get_fd(mem);
    }

    // GStreamer's tensor and analytics metas travel with the frame (the original buffer's,
    // when its memory was copied: the copy keeps the original alive for their bytes).
    auto metas = eg::tensoripc::collect_metas(buffer);
    if (!metas) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Cannot pass the buffer's metas."),
                          ("%s", metas.error().message().c_str()));
        return GST_FLOW_ERROR;
    }
    if (!metas->skipped.empty())
        report_skipped_metas(self, metas->skipped);
    if (!metas->section.empty()) {
        if (copied)
            gst_buffer_add_parent_buffer_meta(copied.get(), buffer);
        head.n_meta_fds = guint32(metas->fds.size());
        std::copy(metas->fds.begin(), metas->fds.end(), fds.begin() + n);
    }

    gboolean wait_for_connection, block;
    {
        eg::ObjectLockGuard lock(self);
        wait_for_connection = st.settings.wait_for_connection;
        block = st.settings.block;
    }
    // The receivers hold the buffer, not this call: the server drops the reference when the
    // last of them released the frame.
    ipc::Keepalive keep(gst_buffer_ref(buf),
                        [](void* b) { gst_buffer_unref(static_cast<GstBuffer*>(b)); });
    auto sent = st.server.send_frame(head, std::span(records.data(), n),
                                     std::span(fds.data(), n + head.n_meta_fds), std::move(keep),
                                     wait_for_connection, block, metas->section);
    if (!sent) {
        if (sent.error().code() == edgetensor::ErrorCode::InsufficientCapacity)
            GST_ELEMENT_ERROR(
                self, RESOURCE, NO_SPACE_LEFT,
                ("A buffer is larger than max-held-bytes: no receiver could ever "
                 "hold it."),
                ("%s; raise max-held-bytes (0 = no bound)", sent.error().message().c_str()));
        else
            GST_ELEMENT_ERROR(self, RESOURCE, FAILED, (nullptr),
                              ("%s", sent.error().message().c_str()));
        return GST_FLOW_ERROR;
    }
    return *sent == ipc::SendOutcome::Flushing ? GST_FLOW_FLUSHING : GST_FLOW_OK;
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_ipc_sink_set_property(GObject* object, guint prop_id, const GValue* value,
                                      GParamSpec* pspec)
{
    State& st = state_of(object);
    eg::guarded(object, "set_property", [&] {
        if (!eg::store_setting(object, setting_fields(), st.settings, prop_id, value, pspec))
            return;
        // The settings the server serves by while running (outside the object lock).
        switch (prop_id) {
        case PROP_MAX_PENDING:
            st.server.set_max_pending(g_value_get_uint(value));
            break;
        case PROP_MAX_HELD_BYTES:
            st.server.set_max_held_bytes(g_value_get_uint64(value));
            break;
        case PROP_BLOCK_TIMEOUT:
            st.server.set_block_timeout_ms(block_timeout_ms(g_value_get_uint64(value)));
            break;
        default:
            break;
        }
    });
}

void get_property_impl(GObject* object, guint prop_id, GValue* value, GParamSpec* pspec)
{
    State& st = state_of(object);
    if (eg::load_setting(object, setting_fields(), st.settings, prop_id, value))
        return;
    switch (prop_id) {
    case PROP_CLIENTS:
        g_value_set_uint(value, st.server.clients());
        break;
    case PROP_SENT:
        g_value_set_uint64(value, st.server.sent());
        break;
    case PROP_DROPPED:
        g_value_set_uint64(value, st.server.dropped());
        break;
    case PROP_COPIES:
        g_value_set_uint64(value, st.fallback.copies());
        break;
    case PROP_HELD:
        g_value_set_uint(value, st.server.held());
        break;
    case PROP_HELD_BYTES:
        g_value_set_uint64(value, st.server.held_bytes());
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
}

void gst_tensor_ipc_sink_get_property(GObject* object, guint prop_id, GValue* value,
                                      GParamSpec* pspec)
{
    eg::guarded(object, "get_property", [&] { get_property_impl(object, prop_id, value, pspec); });
}

void gst_tensor_ipc_sink_finalize(GObject* object)
{
    auto* self = GST_TENSOR_IPC_SINK(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_ipc_sink_parent_class)->finalize(object);
}

// ---- GstBaseSink ---------------------------------------------------------------------------

gboolean start_impl(GstTensorIpcSink* self)
{
    State& st = state_of(self);
    Settings s;
    {
        eg::ObjectLockGuard lock(self);
        s = st.settings;
    }
    if (s.socket_path.empty()) {
        GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No socket-path is set."),
                          ("set socket-path to where receivers connect, e.g. /tmp/cam.sock"));
        return FALSE;
    }
    ipc::ServerConfig config;
    config.path = s.socket_path;
    config.mode = s.socket_mode;
    config.max_pending = s.max_pending;
    config.allowed_uid = s.allowed_uid;
    config.max_clients = s.max_clients;
    config.max_held_bytes = s.max_held_bytes;
    config.block_timeout_ms = block_timeout_ms(s.block_timeout);
    ipc::StartError err{ipc::StartStep::Listen, edgetensor::Error(edgetensor::ErrorCode::Io, "")};
    if (!st.server.start(config, &err)) {
        switch (err.step) {
        case ipc::StartStep::Listen:
            GST_ELEMENT_ERROR(
                self, RESOURCE, OPEN_READ_WRITE,
                ("Cannot listen on \"%s\": %s", s.socket_path.c_str(), err.error.message().c_str()),
                (nullptr));
            break;
        case ipc::StartStep::Pipe:
            GST_ELEMENT_ERROR(self, RESOURCE, FAILED,
                              ("Cannot create a pipe: %s", g_strerror(err.error.sys_errno())),
                              (nullptr));
            break;
        case ipc::StartStep::Thread:
            GST_ELEMENT_ERROR(self, RESOURCE, FAILED,
                              ("Cannot start the serving thread: %s", err.error.message().c_str()),
                              (nullptr));
            break;
        }
        return FALSE;
    }
    // No render() can run before start() returns: the counters start afresh for it.
    st.fallback.start();
    st.skipped_metas_reported = false;
    GST_INFO_OBJECT(self, "listening on %s (mode 0%o)", s.socket_path.c_str(), s.socket_mode);
    return TRUE;
}

gboolean gst_tensor_ipc_sink_start(GstBaseSink* sink)
{
    return eg::guarded(sink, "start", FALSE,
                       [sink] { return start_impl(GST_TENSOR_IPC_SINK(sink)); });
}

gboolean gst_tensor_ipc_sink_stop(GstBaseSink* sink)
{
    return eg::guarded(sink, "stop", FALSE, [sink] {
        State& st = state_of(sink);
        st.server.stop();
        st.fallback.retire_pool_unless(nullptr);
        std::lock_guard<std::mutex> lock(st.mu);
        st.streaming.layout.reset();
        return TRUE;
    });
}

gboolean gst_tensor_ipc_sink_unlock(GstBaseSink* sink)
{
    state_of(sink).server.unlock();
    return TRUE;
}

gboolean gst_tensor_ipc_sink_unlock_stop(GstBaseSink* sink)
{
    state_of(sink).server.unlock_stop();
    return TRUE;
}

gboolean gst_tensor_ipc_sink_set_caps(GstBaseSink* sink, GstCaps* caps)
{
    auto* self = GST_TENSOR_IPC_SINK(sink);
    State& st = state_of(self);
    return eg::guarded(sink, "set_caps", FALSE, [&]() -> gboolean {
        auto layout = eg::stream_layout_from_caps(caps);
        if (!layout) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot parse %" GST_PTR_FORMAT, caps),
                              ("%s", layout.error().message().c_str()));
            return FALSE;
        }
        {
            std::lock_guard<std::mutex> lock(st.mu);
            st.streaming.layout = std::move(*layout);
        }
        st.fallback.retire_pool_unless(caps);
        eg::GCharPtr str(gst_caps_to_string(caps));
        std::string s(str.get());
        if (s.size() > ipc::kMaxCaps) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("Caps too long to pass (%zu bytes).", s.size()), (nullptr));
            return FALSE;
        }
        st.server.set_caps(std::move(s));
        return TRUE;
    });
}

// DMA_DRM caps it does not list (a tiled modifier) are refused naming the drm-format.
gboolean gst_tensor_ipc_sink_query(GstBaseSink* sink, GstQuery* query)
{
    if (GST_QUERY_TYPE(query) == GST_QUERY_ACCEPT_CAPS && eg::dma_drm_negotiated()) {
        const bool refused = eg::guarded(sink, "query", false, [&] {
            GstCaps* caps = nullptr;
            gst_query_parse_accept_caps(query, &caps);
            eg::MiniObjectPtr<GstCaps> templ(
                gst_pad_get_pad_template_caps(GST_BASE_SINK_PAD(sink)));
            return !eg::accept_dma_drm(GST_ELEMENT(sink), caps, templ.get());
        });
        if (refused) {
            gst_query_set_accept_caps_result(query, FALSE);
            return TRUE;
        }
    }
    return GST_BASE_SINK_CLASS(gst_tensor_ipc_sink_parent_class)->query(sink, query);
}

GstFlowReturn gst_tensor_ipc_sink_render(GstBaseSink* sink, GstBuffer* buffer)
{
    return eg::guarded(sink, "render", GST_FLOW_ERROR,
                       [&] { return render_impl(GST_TENSOR_IPC_SINK(sink), buffer); });
}

// EOS to the receivers, and the statistics on the bus.
void end_of_stream(GstTensorIpcSink* self)
{
    State& st = state_of(self);
    st.server.send_eos();
    const guint peak = st.server.peak_clients();
    GstStructure* s = gst_structure_new(
        "tensoripcsink-stats", "sent", G_TYPE_UINT64, st.server.sent(), "dropped", G_TYPE_UINT64,
        st.server.dropped(), "copies", G_TYPE_UINT64, st.fallback.copies(), "clients", G_TYPE_UINT,
        st.server.clients(), "peak-clients", G_TYPE_UINT, peak, "peak-held-bytes", G_TYPE_UINT64,
        st.server.peak_held_bytes(), nullptr);
    eg::GCharPtr str(gst_structure_to_string(s));
    GST_INFO_OBJECT(self, "%s", str.get());
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), s));
}

gboolean gst_tensor_ipc_sink_event(GstBaseSink* sink, GstEvent* event)
{
    if (GST_EVENT_TYPE(event) == GST_EVENT_EOS)
        eg::guarded(sink, "event", [sink] { end_of_stream(GST_TENSOR_IPC_SINK(sink)); });
    return GST_BASE_SINK_CLASS(gst_tensor_ipc_sink_parent_class)->event(sink, event);
}

} // namespace

static void gst_tensor_ipc_sink_class_init(GstTensorIpcSinkClass* klass)
{
    gst_edge_tensor_init();
    GST_DEBUG_CATEGORY_INIT(gst_tensor_ipc_sink_debug, "tensoripcsink", 0,
                            "edgetensor cross-process sink (fd passing)");

    GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
    GstBaseSinkClass* bs = GST_BASE_SINK_CLASS(klass);

    gobject_class->set_property = gst_tensor_ipc_sink_set_property;
    gobject_class->get_property = gst_tensor_ipc_sink_get_property;
    gobject_class->finalize = gst_tensor_ipc_sink_finalize;

    install_properties(gobject_class);

    gst_element_class_add_pad_template(
        element_class,
        eg::pad_template_with_dma_drm(&sink_template, eg::dma_drm_caps_any_linear()));
    gst_element_class_set_static_metadata(
        element_class, "Tensor IPC sink", "Sink/Video",
        "Shares DMA-BUF/memfd buffers with tensoripcsrc receivers in other processes by "
        "passing their fds with an EdgeTensorDesc each (no copy). Example: gst-launch-1.0 "
        "tensortestsrc is-live=true num-buffers=300 ! tensoripcsink socket-path=/tmp/cam.sock",
        "edgetensor developers");

    bs->start = gst_tensor_ipc_sink_start;
    bs->stop = gst_tensor_ipc_sink_stop;
    bs->set_caps = gst_tensor_ipc_sink_set_caps;
    bs->propose_allocation = propose_allocation;
    bs->render = gst_tensor_ipc_sink_render;
    bs->unlock = gst_tensor_ipc_sink_unlock;
    bs->unlock_stop = gst_tensor_ipc_sink_unlock_stop;
    bs->event = gst_tensor_ipc_sink_event;
    bs->query = gst_tensor_ipc_sink_query;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_IPC_SINK_COPY_MODE, GstPluginAPIFlags(0));
}

static void gst_tensor_ipc_sink_init(GstTensorIpcSink* self)
{
    self->state = new State(self);
}
