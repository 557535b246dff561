// SPDX-License-Identifier: MIT
//
// tensoripcsrc: frames from a tensoripcsink in another process, imported without a copy.
// Every record from the socket is untrusted: the protocol module (lib/tensor/src/ipc) parses
// and checks it, this element checks it against the caps, and whatever fails is dropped with
// its fds closed and the reason logged and counted.

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
 *
 * Nothing the sender sends is trusted: a message of the wrong version, truncated, oversized,
 * with the wrong fd count, an fd that is neither a DMA-BUF nor a sealed memfd, or shapes and
 * strides beyond the buffer is dropped, its fds closed, the reason logged and counted in
 * #GstTensorIpcSrc:rejected; with #GstTensorIpcSrc:on-invalid=error it stops the stream
 * instead. #GstTensorIpcSrc:allowed-uid refuses a sink of another user (SO_PEERCRED).
 *
 * When the sender goes away without EOS (it stopped, crashed, was killed),
 * #GstTensorIpcSrc:on-disconnect decides: EOS (default) or an element error; never a hang.
 * Like shmsrc the element is not live unless #GstTensorIpcSrc:is-live is set; with
 * do-timestamp=true the buffers get this pipeline's running time instead of the sender's
 * timestamps.
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
#include "internal.hpp"
#include "ipc_connection.hpp"
#include "ipc_socket.hpp"
#include "ipc_wake.hpp"
#include "ipc_wire.hpp"
#include "tensoripc_common.hpp"
#include "tensoripcsrc_frame.hpp"
#include "tensoripcsrc_properties.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/video/video.h>

#include <poll.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

GST_DEBUG_CATEGORY_STATIC(gst_tensor_ipc_src_debug);
#define GST_CAT_DEFAULT gst_tensor_ipc_src_debug

namespace
{

namespace eg = edgetensor::gst;
namespace ipc = edgetensor::ipc;
using namespace edgetensor::gst::tensoripcsrc;

constexpr auto kRetryInterval = std::chrono::milliseconds(20);
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

struct Streaming {
    std::shared_ptr<ipc::Connection> conn;
    bool eos = false;
    bool greeted = false;            ///< the sink's HELLO arrived on this connection
    eg::MiniObjectPtr<GstCaps> caps; ///< the sender's current caps
    guint32 caps_seq = 0;
    bool caps_pushed = false;
    FrameFormat format;
    guint64 sink_pid = 0;
    std::string last_rejection;
};

// One C++ state object per element: settings under the object lock; streaming state is
// touched by the streaming thread only (and by start/stop when it is not running), with
// `flushing` and the wake pipe as the only cross-thread signals.
struct State {
    Settings settings;
    std::mutex mu;
    Streaming streaming;
    std::unique_ptr<GstEdgeTensorImportCache, CacheFree> cache{
        gst_edge_tensor_import_cache_new(DEFAULT_CACHE_SIZE)};
    eg::GstObjectPtr<GstAllocator> dmabuf_alloc{gst_dmabuf_allocator_new()};
    eg::GstObjectPtr<GstAllocator> fd_alloc{gst_fd_allocator_new()};
    ipc::WakePipe wake;
    std::atomic<bool> flushing{false};
    std::atomic<guint64> received{0};
    std::atomic<guint64> rejected{0};
};

} // namespace

struct _GstTensorIpcSrc {
    GstPushSrc parent;
    State* state;
};

G_DEFINE_TYPE(GstTensorIpcSrc, gst_tensor_ipc_src, GST_TYPE_PUSH_SRC)
GST_ELEMENT_REGISTER_DEFINE(tensoripcsrc, "tensoripcsrc", GST_RANK_NONE, GST_TYPE_TENSOR_IPC_SRC)

GType gst_tensor_ipc_src_on_disconnect_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_IPC_SRC_ON_DISCONNECT_EOS, "End the stream (EOS)", "eos"},
        {GST_TENSOR_IPC_SRC_ON_DISCONNECT_ERROR, "Post an element error", "error"},
        {0, nullptr, nullptr},
    };
    if (g_once_init_enter(&type)) {
        GType t = g_enum_register_static("GstTensorIpcSrcOnDisconnect", values);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

GType gst_tensor_ipc_src_on_invalid_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_IPC_SRC_ON_INVALID_DROP,
         "Drop the message (fds closed, reason logged and counted) and go on", "drop"},
        {GST_TENSOR_IPC_SRC_ON_INVALID_ERROR, "Post an element error", "error"},
        {0, nullptr, nullptr},
    };
    if (g_once_init_enter(&type)) {
        GType t = g_enum_register_static("GstTensorIpcSrcOnInvalid", values);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

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

// Waits for `fd` to be readable or the element to be woken. Returns false when flushing.
bool wait_readable(State& st, int fd, int timeout_ms)
{
    pollfd fds[2] = {{st.wake.read_fd(), POLLIN, 0}, {fd, POLLIN, 0}};
    const int n = ::poll(fds, fd >= 0 ? 2 : 1, timeout_ms);
    if (n > 0 && fds[0].revents)
        st.wake.drain();
    return !st.flushing.load();
}

GstStructure* make_stats(GstTensorIpcSrc* self)
{
    State& st = state_of(self);
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(st.cache.get());
    std::string last;
    guint64 pid;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        last = st.streaming.last_rejection;
        pid = st.streaming.sink_pid;
    }
    gst_structure_set(s, "received", G_TYPE_UINT64, st.received.load(), "rejected", G_TYPE_UINT64,
                      st.rejected.load(), "last-rejection", G_TYPE_STRING, last.c_str(), "sink-pid",
                      G_TYPE_UINT64, pid, nullptr);
    return s;
}

// A message was refused: count, log, and either go on (drop) or stop (error).
GstFlowReturn reject(GstTensorIpcSrc* self, const std::string& why)
{
    State& st = state_of(self);
    const guint64 n = ++st.rejected;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        st.streaming.last_rejection = why;
    }
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

GstFlowReturn connect_impl(GstTensorIpcSrc* self)
{
    State& st = state_of(self);
    const Settings s = settings_of(self);
    if (s.socket_path.empty()) {
        GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No socket-path is set."),
                          ("set socket-path to the path tensoripcsink listens on"));
        return GST_FLOW_ERROR;
    }
    const auto t0 = std::chrono::steady_clock::now();
    bool logged = false;
    for (;;) {
        if (st.flushing)
            return GST_FLOW_FLUSHING;
        auto fd = ipc::connect_to(s.socket_path);
        if (fd) {
            auto cred = ipc::peer_credentials(fd->get());
            if (!cred) {
                GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Cannot identify the sender."),
                                  ("%s", cred.error().message().c_str()));
                return GST_FLOW_ERROR;
            }
            if (s.allowed_uid >= 0 && cred->uid != uid_t(s.allowed_uid)) {
                GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                                  ("The sink on \"%s\" runs as uid %u; allowed-uid is %d.",
                                   s.socket_path.c_str(), guint(cred->uid), s.allowed_uid),
                                  ("sink pid %d", int(cred->pid)));
                return GST_FLOW_ERROR;
            }
            GST_INFO_OBJECT(self, "connected to %s (pid %d, uid %u)", s.socket_path.c_str(),
                            int(cred->pid), guint(cred->uid));
            std::lock_guard<std::mutex> lock(st.mu);
            st.streaming.conn = std::make_shared<ipc::Connection>(std::move(*fd));
            st.streaming.eos = false;
            st.streaming.greeted = false;
            st.streaming.sink_pid = guint64(cred->pid);
            return GST_FLOW_OK;
        }
        const int err = fd.error().sys_errno();
        if (err != ENOENT && err != ECONNREFUSED && err != EAGAIN) {
            GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                              ("Cannot connect to \"%s\": %s", s.socket_path.c_str(),
                               fd.error().message().c_str()),
                              (nullptr));
            return GST_FLOW_ERROR;
        }
        const auto waited = std::chrono::steady_clock::now() - t0;
        if (s.timeout > 0 && waited >= std::chrono::nanoseconds(s.timeout)) {
            GST_ELEMENT_ERROR(
                self, RESOURCE, OPEN_READ,
                ("No tensoripcsink listens on \"%s\" (waited %.1f s).", s.socket_path.c_str(),
                 double(s.timeout) / GST_SECOND),
                ("%s; raise timeout (0 waits forever)", fd.error().message().c_str()));
            return GST_FLOW_ERROR;
        }
        if (!logged) {
            GST_INFO_OBJECT(self, "waiting for a sink on %s", s.socket_path.c_str());
            logged = true;
        }
        if (!wait_readable(st, -1, int(kRetryInterval.count())))
            return GST_FLOW_FLUSHING;
    }
}

// The sender is gone: EOS or error, as configured.
GstFlowReturn sender_gone(GstTensorIpcSrc* self, const std::string& why)
{
    State& st = state_of(self);
    std::shared_ptr<ipc::Connection> conn;
    bool eos, greeted;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        conn = std::move(st.streaming.conn);
        eos = st.streaming.eos;
        greeted = st.streaming.greeted;
    }
    if (conn)
        conn->close();
    if (eos)
        return GST_FLOW_EOS;
    const std::string path = settings_of(self).socket_path;
    // A sink closes a receiver before its greeting to refuse it (or because it stopped in that
    // instant): an error either way, since no stream ever began to end.
    if (!greeted) {
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                          ("The sink on \"%s\" closed the connection before its greeting: it "
                           "refused this receiver or stopped.",
                           path.c_str()),
                          ("%s; a sink refuses receivers of another user than its allowed-uid "
                           "and receivers beyond its max-clients, and says which on its bus",
                           why.c_str()));
        return GST_FLOW_ERROR;
    }
    if (settings_of(self).on_disconnect == GST_TENSOR_IPC_SRC_ON_DISCONNECT_ERROR) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ,
                          ("The sender on \"%s\" went away without EOS.", path.c_str()),
                          ("%s", why.c_str()));
        return GST_FLOW_ERROR;
    }
    GST_ELEMENT_WARNING(
        self, RESOURCE, READ,
        ("The sender on \"%s\" went away without EOS; ending the stream.", path.c_str()),
        ("%s", why.c_str()));
    return GST_FLOW_EOS;
}

GstFlowReturn handle_caps(GstTensorIpcSrc* self, ipc::Message& msg)
{
    State& st = state_of(self);
    eg::MiniObjectPtr<GstCaps> caps(gst_caps_from_string(msg.caps.c_str()));
    if (!caps || gst_caps_get_size(caps.get()) != 1 || !gst_caps_is_fixed(caps.get()))
        return reject(self, "CAPS \"" + msg.caps.substr(0, 200) + "\" are not fixed caps");
    eg::MiniObjectPtr<GstCaps> templ(gst_static_pad_template_get_caps(&src_template));
    if (!gst_caps_is_subset(caps.get(), templ.get()))
        return reject(self, "CAPS \"" + msg.caps.substr(0, 200) +
                                "\" are not caps this "
                                "element produces");
    const bool video = gst_structure_has_name(gst_caps_get_structure(caps.get(), 0), "video/x-raw");
    GstVideoInfo vinfo;
    gst_video_info_init(&vinfo);
    eg::TensorCaps tensor;
    if (video) {
        if (!gst_video_info_from_caps(&vinfo, caps.get()))
            return reject(self, "cannot parse video CAPS \"" + msg.caps.substr(0, 200) + "\"");
    } else {
        auto t = eg::parse_tensor_caps(gst_caps_get_structure(caps.get(), 0));
        if (!t)
            return reject(self, "CAPS: " + t.error().message());
        tensor = *t;
    }
    if (!gst_edge_tensor_import_cache_set_caps(st.cache.get(), caps.get()))
        return reject(self, "the import cache cannot use CAPS \"" + msg.caps.substr(0, 200) + "\"");
    std::lock_guard<std::mutex> lock(st.mu);
    Streaming& s = st.streaming;
    s.caps_pushed = s.caps && gst_caps_is_equal(s.caps.get(), caps.get()) && s.caps_pushed;
    s.caps = std::move(caps);
    s.caps_seq = msg.caps_seq;
    s.format.video = video;
    s.format.vinfo = vinfo;
    s.format.tensor = tensor;
    GST_DEBUG_OBJECT(self, "sender caps %u: %s", msg.caps_seq, msg.caps.c_str());
    return GST_FLOW_OK;
}

GstFlowReturn handle_frame(GstTensorIpcSrc* self, ipc::Message& msg, GstBuffer** out)
{
    State& st = state_of(self);
    ipc::Frame& f = msg.frame;
    auto release = std::make_shared<ipc::FrameRelease>();
    eg::MiniObjectPtr<GstCaps> caps;
    guint32 caps_seq;
    FrameFormat format;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        release->conn = st.streaming.conn;
        release->seq = f.head.seq;
        caps.reset(st.streaming.caps ? gst_caps_ref(st.streaming.caps.get()) : nullptr);
        caps_seq = st.streaming.caps_seq;
        format = st.streaming.format;
    }
    // From here on, every early return releases the frame (the token dies) and closes its fds.
    if (!caps || f.head.caps_seq != caps_seq)
        return reject(self, "FRAME " + std::to_string(f.head.seq) + " for caps " +
                                std::to_string(f.head.caps_seq) + " before those caps");
    if (auto r = ipc::check_frame_fds(f); !r)
        return reject(self, "FRAME " + std::to_string(f.head.seq) + ": " + r.error().message());
    if (const std::string why = check_layout(format, f); !why.empty())
        return reject(self, "FRAME " + std::to_string(f.head.seq) + ": " + why);

    std::string why_not;
    eg::MiniObjectPtr<GstBuffer> buf =
        assemble_buffer(f, format, release, st.dmabuf_alloc.get(), st.fd_alloc.get(), &why_not);
    if (!buf)
        return reject(self, why_not);
    release.reset(); // the memories hold it now
    GstEdgeTensorImportResult result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    gchar* why_c = nullptr;
    GstEdgeTensorMeta* meta =
        gst_edge_tensor_import_cache_attach_meta(st.cache.get(), buf.get(), &result, &why_c);
    eg::GCharPtr why(why_c);
    if (!meta)
        return reject(self, "FRAME " + std::to_string(f.head.seq) +
                                " cannot be imported: " + (why ? why.get() : "unknown reason"));
    if (gst_base_src_get_do_timestamp(GST_BASE_SRC(self))) {
        // GstBaseSrc stamps buffers without timestamps with the running time.
        GST_BUFFER_PTS(buf.get()) = GST_CLOCK_TIME_NONE;
        GST_BUFFER_DTS(buf.get()) = GST_CLOCK_TIME_NONE;
    }
    GST_LOG_OBJECT(self, "frame %" G_GUINT64_FORMAT ": %s, tensor %" G_GUINT64_FORMAT, f.head.seq,
                   result == GST_EDGE_TENSOR_IMPORT_HIT ? "hit" : "miss", meta->identity);

    bool push_caps = false;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        push_caps = !st.streaming.caps_pushed;
        st.streaming.caps_pushed = true;
    }
    if (push_caps && !gst_base_src_set_caps(GST_BASE_SRC(self), caps.get())) {
        {
            std::lock_guard<std::mutex> lock(st.mu);
            st.streaming.caps_pushed = false;
        }
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                          ("Downstream refuses the sender's caps %" GST_PTR_FORMAT, caps.get()),
                          (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    st.received++;
    *out = buf.release();
    return GST_FLOW_OK;
}

GstFlowReturn create_impl(GstTensorIpcSrc* self, GstBuffer** out)
{
    State& st = state_of(self);
    for (;;) {
        if (st.flushing)
            return GST_FLOW_FLUSHING;
        std::shared_ptr<ipc::Connection> conn;
        {
            std::lock_guard<std::mutex> lock(st.mu);
            conn = st.streaming.conn;
        }
        if (!conn) {
            const GstFlowReturn ret = connect_impl(self);
            if (ret != GST_FLOW_OK)
                return ret;
            continue;
        }
        conn->flush();
        if (!wait_readable(st, conn->fd(), -1))
            return GST_FLOW_FLUSHING;
        auto rec = ipc::receive_record(conn->fd());
        if (!rec) {
            if (rec.error().sys_errno() == EAGAIN)
                continue;
            return sender_gone(self, rec.error().message());
        }
        if (rec->eof)
            return sender_gone(self, "the socket was closed");
        auto msg = ipc::parse(rec->bytes, std::move(rec->fds), rec->truncated);
        if (!msg) {
            const GstFlowReturn ret = reject(self, msg.error().message());
            if (ret != GST_FLOW_OK)
                return ret;
            continue;
        }
        GstFlowReturn ret = GST_FLOW_OK;
        switch (msg->type) {
        case ipc::MsgType::Hello: {
            std::lock_guard<std::mutex> lock(st.mu);
            st.streaming.greeted = true;
            GST_DEBUG_OBJECT(self, "sink pid %" G_GUINT64_FORMAT " lets us hold %u frames",
                             msg->hello.sink_pid, msg->hello.max_pending);
            break;
        }
        case ipc::MsgType::Caps:
            ret = handle_caps(self, *msg);
            break;
        case ipc::MsgType::Frame:
            ret = handle_frame(self, *msg, out);
            if (ret == GST_FLOW_OK && *out)
                return GST_FLOW_OK;
            break;
        case ipc::MsgType::Eos: {
            {
                std::lock_guard<std::mutex> lock(st.mu);
                st.streaming.eos = true;
            }
            GST_INFO_OBJECT(self, "the sender sent EOS");
            return GST_FLOW_EOS;
        }
        case ipc::MsgType::Release:
            ret = reject(self, "a sink does not send RELEASE");
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
    auto* self = GST_TENSOR_IPC_SRC(object);
    if (eg::refuse_unless_ready(GST_ELEMENT(self), pspec))
        return;
    State& st = state_of(self);
    bool known;
    {
        eg::ObjectLockGuard lock(self);
        known = set_property(st.settings, prop_id, value);
    }
    if (!known) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        return;
    }
    // Outside the object lock: both take locks of their own.
    if (prop_id == PROP_IS_LIVE)
        gst_base_src_set_live(GST_BASE_SRC(self), g_value_get_boolean(value));
    if (prop_id == PROP_CACHE_SIZE && st.cache)
        gst_edge_tensor_import_cache_set_max_entries(st.cache.get(), g_value_get_uint(value));
}

void gst_tensor_ipc_src_get_property(GObject* object, guint prop_id, GValue* value,
                                     GParamSpec* pspec)
{
    auto* self = GST_TENSOR_IPC_SRC(object);
    State& st = state_of(self);
    {
        eg::ObjectLockGuard lock(self);
        if (get_property(st.settings, prop_id, value))
            return;
    }
    switch (prop_id) {
    case PROP_RECEIVED:
        g_value_set_uint64(value, st.received.load());
        break;
    case PROP_REJECTED:
        g_value_set_uint64(value, st.rejected.load());
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

void gst_tensor_ipc_src_finalize(GObject* object)
{
    auto* self = GST_TENSOR_IPC_SRC(object);
    delete self->state;
    self->state = nullptr;
    G_OBJECT_CLASS(gst_tensor_ipc_src_parent_class)->finalize(object);
}

// ---- GstBaseSrc ----------------------------------------------------------------------------

gboolean gst_tensor_ipc_src_start(GstBaseSrc* src)
{
    auto* self = GST_TENSOR_IPC_SRC(src);
    State& st = state_of(self);
    if (!st.cache || !st.dmabuf_alloc || !st.fd_alloc) {
        GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Cannot create the import cache."),
                          (nullptr));
        return FALSE;
    }
    if (auto r = st.wake.open(); !r) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED,
                          ("Cannot create a pipe: %s", g_strerror(r.error().sys_errno())),
                          (nullptr));
        return FALSE;
    }
    st.flushing = false;
    st.received = 0;
    st.rejected = 0;
    gst_edge_tensor_import_cache_set_max_entries(st.cache.get(), settings_of(self).cache_size);
    gst_edge_tensor_import_cache_reset_stats(st.cache.get());
    std::lock_guard<std::mutex> lock(st.mu);
    st.streaming = Streaming{};
    return TRUE;
}

gboolean gst_tensor_ipc_src_stop(GstBaseSrc* src)
{
    auto* self = GST_TENSOR_IPC_SRC(src);
    State& st = state_of(self);
    std::shared_ptr<ipc::Connection> conn;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        conn = std::move(st.streaming.conn);
        st.streaming = Streaming{};
    }
    // Frames still downstream keep the Connection object, not the socket.
    if (conn)
        conn->close();
    gst_edge_tensor_import_cache_clear(st.cache.get(), "stop");
    GstStructure* s = make_stats(self);
    eg::GCharPtr str(gst_structure_to_string(s));
    GST_INFO_OBJECT(self, "%s", str.get());
    gst_structure_free(s);
    st.wake.close();
    return TRUE;
}

gboolean gst_tensor_ipc_src_unlock(GstBaseSrc* src)
{
    State& st = state_of(src);
    st.flushing = true;
    st.wake.wake();
    return TRUE;
}

gboolean gst_tensor_ipc_src_unlock_stop(GstBaseSrc* src)
{
    State& st = state_of(src);
    st.flushing = false;
    if (st.wake.is_open())
        st.wake.drain();
    return TRUE;
}

gboolean gst_tensor_ipc_src_negotiate(GstBaseSrc* src)
{
    // The caps are the sender's: they are set when its first frame arrives (create()).
    State& st = state_of(src);
    eg::MiniObjectPtr<GstCaps> caps;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        if (!st.streaming.caps || !st.streaming.caps_pushed)
            return TRUE;
        caps.reset(gst_caps_ref(st.streaming.caps.get()));
    }
    return gst_base_src_set_caps(src, caps.get());
}

GstFlowReturn gst_tensor_ipc_src_create(GstPushSrc* psrc, GstBuffer** out)
{
    auto* self = GST_TENSOR_IPC_SRC(psrc);
    *out = nullptr;
    try {
        return create_impl(self, out);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, (nullptr), ("%s", e.what()));
    }
    return GST_FLOW_ERROR;
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

    gst_element_class_add_static_pad_template(element_class, &src_template);
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
    ps->create = gst_tensor_ipc_src_create;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_IPC_SRC_ON_DISCONNECT, GstPluginAPIFlags(0));
    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_IPC_SRC_ON_INVALID, GstPluginAPIFlags(0));
}

static void gst_tensor_ipc_src_init(GstTensorIpcSrc* self)
{
    self->state = new State();
    gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
    gst_base_src_set_live(GST_BASE_SRC(self), DEFAULT_IS_LIVE);
}
