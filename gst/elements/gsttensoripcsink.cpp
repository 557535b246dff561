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
 * dies frees at once everything held for it.
 *
 * Memory without an fd (system memory) is copied into a pooled DMA-BUF or memfd tensor when
 * #GstTensorIpcSink:copy-mode is `auto` (counted in #GstTensorIpcSink:copies, warned once), or
 * refused with an element error when it is `never`. In the ALLOCATION query the element
 * proposes an edgetensor pool, so upstream elements that honour it write into fd memory.
 *
 * The socket gets the permissions of #GstTensorIpcSink:socket-mode before anyone can
 * connect; #GstTensorIpcSink:allowed-uid additionally refuses receivers of any other user
 * (SO_PEERCRED). At EOS the element posts an element message `tensoripcsink-stats` (sent,
 * dropped, copies, clients, peak-clients).
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

#include "glib_raii.hpp"
#include "internal.hpp"
#include "ipc_socket.hpp"
#include "ipc_wire.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/video/gstvideopool.h>
#include <gst/video/video.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

GST_DEBUG_CATEGORY_STATIC(gst_tensor_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_tensor_ipc_sink_debug

namespace
{

namespace eg = edgetensor::gst;
namespace ipc = edgetensor::ipc;
using edgetensor::UniqueFd;

constexpr guint DEFAULT_SOCKET_MODE = 0600;
constexpr guint DEFAULT_MAX_PENDING = 2;
constexpr guint MAX_MAX_PENDING = 1024;
constexpr gint DEFAULT_ALLOWED_UID = -1;
constexpr gboolean DEFAULT_WAIT_FOR_CONNECTION = FALSE;
constexpr gboolean DEFAULT_BLOCK = FALSE;
constexpr GstTensorIpcSinkCopyMode DEFAULT_COPY_MODE = GST_TENSOR_IPC_SINK_COPY_AUTO;
constexpr guint COPY_POOL_MIN_BUFFERS = 2;
constexpr guint PROPOSED_MIN_BUFFERS = 2;
constexpr guint32 DMA_BUF_FS_MAGIC = 0x444d4142u;

enum {
    PROP_0,
    PROP_SOCKET_PATH,
    PROP_SOCKET_MODE,
    PROP_MAX_PENDING,
    PROP_ALLOWED_UID,
    PROP_COPY_MODE,
    PROP_WAIT_FOR_CONNECTION,
    PROP_BLOCK,
    PROP_CLIENTS,
    PROP_SENT,
    PROP_DROPPED,
    PROP_COPIES,
    PROP_HELD,
};

#define TEMPLATE_CAPS                                                                              \
    "video/x-raw; video/x-raw(memory:DMABuf); "                                                    \
    "other/tensors, num_tensors = (int) 1, format = (string) static"

GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(TEMPLATE_CAPS));

struct Settings {
    std::string socket_path;
    guint socket_mode = DEFAULT_SOCKET_MODE;
    guint max_pending = DEFAULT_MAX_PENDING;
    gint allowed_uid = DEFAULT_ALLOWED_UID;
    GstTensorIpcSinkCopyMode copy_mode = DEFAULT_COPY_MODE;
    gboolean wait_for_connection = DEFAULT_WAIT_FOR_CONNECTION;
    gboolean block = DEFAULT_BLOCK;
};

struct Client {
    UniqueFd fd;
    ipc::PeerCredentials cred;
    std::set<guint64> pending; ///< frames sent and not yet released
    guint32 caps_seq = 0;      ///< the caps this receiver has; 0 = none yet
    bool dead = false;
    std::string name;
};

// A buffer held for the receivers it was sent to.
struct Held {
    eg::MiniObjectPtr<GstBuffer> buffer;
    guint holders = 0;
};

// What the serving thread and render() share, under mu.
struct Server {
    std::mutex mu;
    UniqueFd listen_fd;
    UniqueFd wake_r, wake_w;
    std::thread thread;
    std::list<Client> clients;
    std::unordered_map<guint64, Held> held;
    guint64 next_seq = 1;
    std::string caps;
    guint32 caps_seq = 0;
    guint max_pending = DEFAULT_MAX_PENDING;
    gint allowed_uid = DEFAULT_ALLOWED_UID;
    std::string path;
    dev_t path_dev = 0;
    ino_t path_ino = 0;
    guint peak_clients = 0;
    std::condition_variable connected; ///< a receiver arrived, or unlock() was called
    std::condition_variable released;  ///< a receiver released frames or left, or unlock()
    bool unlocked = false;
};

struct Streaming {
    eg::MiniObjectPtr<GstCaps> caps;
    bool video = false;
    GstVideoInfo vinfo{};
    eg::GstObjectPtr<GstBufferPool> copy_pool;
    bool warned_copy = false;
};

// One C++ state object per element: settings under the object lock, streaming state under
// mu, the server under its own lock; counters are atomics so property reads never block.
struct State {
    Settings settings;
    std::mutex mu;
    Streaming streaming;
    Server server;
    std::atomic<guint> clients{0};
    std::atomic<guint64> sent{0};
    std::atomic<guint64> dropped{0};
    std::atomic<guint64> copies{0};
    std::atomic<guint> held{0};
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
    if (g_once_init_enter(&type)) {
        GType t = g_enum_register_static("GstTensorIpcSinkCopyMode", values);
        g_once_init_leave(&type, t);
    }
    return GType(type);
}

namespace
{

State& state_of(gpointer self)
{
    return *GST_TENSOR_IPC_SINK(self)->state;
}

void wake(Server& sv)
{
    if (sv.wake_w) {
        const char c = 1;
        [[maybe_unused]] ssize_t n = ::write(sv.wake_w.get(), &c, 1);
    }
}

// Takes everything `c` held; the buffers go to `graveyard` (unreffed outside the lock).
void release_all_locked(State& st, Client& c, std::vector<eg::MiniObjectPtr<GstBuffer>>& graveyard)
{
    Server& sv = st.server;
    for (guint64 seq : c.pending) {
        auto it = sv.held.find(seq);
        if (it == sv.held.end())
            continue;
        if (--it->second.holders == 0) {
            graveyard.push_back(std::move(it->second.buffer));
            sv.held.erase(it);
        }
    }
    c.pending.clear();
    st.held = guint(sv.held.size());
}

void reap_dead_locked(GstTensorIpcSink* self, std::vector<eg::MiniObjectPtr<GstBuffer>>& graveyard)
{
    State& st = state_of(self);
    Server& sv = st.server;
    for (auto it = sv.clients.begin(); it != sv.clients.end();) {
        if (!it->dead) {
            ++it;
            continue;
        }
        GST_INFO_OBJECT(self, "receiver %s gone; releasing the %zu frames held for it",
                        it->name.c_str(), it->pending.size());
        release_all_locked(st, *it, graveyard);
        it = sv.clients.erase(it);
    }
    st.clients = guint(sv.clients.size());
}

// Sends the current caps to `c` if it does not have them. False when the receiver is gone.
bool send_caps_locked(GstTensorIpcSink* self, Server& sv, Client& c)
{
    if (sv.caps_seq == 0 || c.caps_seq == sv.caps_seq)
        return true;
    auto msg = ipc::encode_caps(sv.caps_seq, sv.caps);
    if (!msg) {
        GST_ERROR_OBJECT(self, "%s", msg.error().message().c_str());
        return false;
    }
    auto r = ipc::send_record(c.fd.get(), *msg);
    if (!r) {
        GST_INFO_OBJECT(self, "sending caps to %s failed: %s", c.name.c_str(),
                        r.error().message().c_str());
        return false;
    }
    c.caps_seq = sv.caps_seq;
    return true;
}

void accept_clients(GstTensorIpcSink* self)
{
    State& st = state_of(self);
    Server& sv = st.server;
    for (;;) {
        auto fd = ipc::accept_on(sv.listen_fd.get());
        if (!fd)
            return; // EAGAIN: none left (or a transient error, retried on the next wakeup)
        auto cred = ipc::peer_credentials(fd->get());
        if (!cred) {
            GST_WARNING_OBJECT(self, "refusing a receiver: %s", cred.error().message().c_str());
            continue;
        }
        Client c;
        c.fd = std::move(*fd);
        c.cred = *cred;
        c.name = "pid " + std::to_string(cred->pid) + " (uid " + std::to_string(cred->uid) + ")";
        gint allowed;
        std::string path;
        {
            std::lock_guard<std::mutex> lock(sv.mu);
            allowed = sv.allowed_uid;
            path = sv.path;
        }
        if (allowed >= 0 && cred->uid != uid_t(allowed)) {
            // Posted outside the lock: bus handlers may call back into the element.
            GST_ELEMENT_WARNING(
                self, RESOURCE, OPEN_READ_WRITE,
                ("Refused a receiver of uid %u: allowed-uid is %d.", guint(cred->uid), allowed),
                ("receiver %s on %s", c.name.c_str(), path.c_str()));
            continue; // closes the socket
        }
        std::lock_guard<std::mutex> lock(sv.mu);
        ipc::Hello hello;
        hello.max_pending = sv.max_pending;
        hello.sink_pid = guint64(::getpid());
        if (!ipc::send_record(c.fd.get(), ipc::encode_hello(hello)) ||
            !send_caps_locked(self, sv, c)) {
            GST_INFO_OBJECT(self, "receiver %s left before the greeting", c.name.c_str());
            continue;
        }
        GST_INFO_OBJECT(self, "receiver %s connected", c.name.c_str());
        sv.clients.push_back(std::move(c));
        st.clients = guint(sv.clients.size());
        sv.peak_clients = std::max<guint>(sv.peak_clients, st.clients);
        sv.connected.notify_all();
    }
}

// Reads what one receiver sent: RELEASE records, or its hangup.
void read_client_locked(GstTensorIpcSink* self, Client& c,
                        std::vector<eg::MiniObjectPtr<GstBuffer>>& graveyard)
{
    State& st = state_of(self);
    Server& sv = st.server;
    for (int budget = 0; budget < 256; ++budget) {
        auto rec = ipc::receive_record(c.fd.get());
        if (!rec) {
            if (rec.error().sys_errno() == EAGAIN)
                return;
            c.dead = true;
            return;
        }
        if (rec->eof) {
            c.dead = true;
            return;
        }
        auto msg = ipc::parse(rec->bytes, std::move(rec->fds), rec->truncated);
        if (!msg || msg->type != ipc::MsgType::Release) {
            // Receivers send releases only; anything else is a broken or hostile peer. Its
            // fds (if any) are already closed.
            GST_WARNING_OBJECT(self, "disconnecting receiver %s: %s", c.name.c_str(),
                               msg ? "it sent something other than RELEASE"
                                   : msg.error().message().c_str());
            c.dead = true;
            return;
        }
        for (guint64 seq : msg->releases) {
            if (c.pending.erase(seq) == 0) {
                GST_DEBUG_OBJECT(
                    self, "receiver %s released frame %" G_GUINT64_FORMAT ", which it did not hold",
                    c.name.c_str(), seq);
                continue;
            }
            auto it = sv.held.find(seq);
            if (it != sv.held.end() && --it->second.holders == 0) {
                graveyard.push_back(std::move(it->second.buffer));
                sv.held.erase(it);
            }
        }
        st.held = guint(sv.held.size());
    }
}

void serve(GstTensorIpcSink* self)
{
    State& st = state_of(self);
    Server& sv = st.server;
    std::vector<pollfd> fds;
    std::vector<Client*> owners;
    for (;;) {
        fds.clear();
        owners.clear();
        fds.push_back({sv.wake_r.get(), POLLIN, 0});
        fds.push_back({sv.listen_fd.get(), POLLIN, 0});
        {
            std::lock_guard<std::mutex> lock(sv.mu);
            for (Client& c : sv.clients) {
                fds.push_back({c.fd.get(), POLLIN, 0});
                owners.push_back(&c);
            }
        }
        const int n = ::poll(fds.data(), fds.size(), -1);
        if (n < 0 && errno != EINTR) {
            GST_ERROR_OBJECT(self, "poll failed: %s", g_strerror(errno));
            return;
        }
        if (fds[0].revents) {
            char buf[64];
            const ssize_t r = ::read(sv.wake_r.get(), buf, sizeof(buf));
            if (r == 0 || (r > 0 && std::memchr(buf, 0, size_t(r))))
                return; // a 0 byte asks the thread to stop
        }
        if (fds[1].revents & POLLIN)
            accept_clients(self);
        std::vector<eg::MiniObjectPtr<GstBuffer>> graveyard;
        {
            std::lock_guard<std::mutex> lock(sv.mu);
            // Clients are only removed on this thread, so the pointers are still valid.
            for (size_t i = 0; i < owners.size(); ++i) {
                if (fds[i + 2].revents & POLLIN)
                    read_client_locked(self, *owners[i], graveyard);
                if (fds[i + 2].revents & (POLLHUP | POLLERR | POLLNVAL))
                    owners[i]->dead = true;
            }
            reap_dead_locked(self, graveyard);
        }
        sv.released.notify_all();
        // graveyard dies here, outside the lock: buffers go back to their pool.
    }
}

// ---- copy fallback -------------------------------------------------------------------------

eg::GstObjectPtr<GstBufferPool> make_pool(GstTensorIpcSink* self, GstCaps* caps, bool video,
                                          guint min, guint* size)
{
    eg::GstObjectPtr<GstBufferPool> pool(gst_edge_tensor_buffer_pool_new());
    GstStructure* config = gst_buffer_pool_get_config(pool.get());
    gst_buffer_pool_config_set_params(config, caps, 0, min, 0);
    gst_edge_tensor_buffer_pool_config_set_memory_kind(config, GST_EDGE_TENSOR_MEMORY_AUTO);
    if (video)
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool.get(), config)) {
        config = gst_buffer_pool_get_config(pool.get());
        if (!gst_buffer_pool_set_config(pool.get(), config)) {
            GST_WARNING_OBJECT(self, "the edgetensor pool refused %" GST_PTR_FORMAT, caps);
            return {};
        }
    }
    config = gst_buffer_pool_get_config(pool.get());
    guint sz = 0;
    gst_buffer_pool_config_get_params(config, nullptr, &sz, nullptr, nullptr);
    gst_structure_free(config);
    if (size)
        *size = sz;
    return pool;
}

// Row by row, each plane's full pitch where both have it: the bytes a reader of either
// layout may look at (gst_video_frame_copy drops the last bytes of odd-width packed rows).
bool copy_video(GstVideoFrame* dst, const GstVideoFrame* src)
{
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(src); ++p) {
        const guint8* s = static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(src, p));
        guint8* d = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(dst, p));
        const gint ss = GST_VIDEO_FRAME_PLANE_STRIDE(src, p);
        const gint ds = GST_VIDEO_FRAME_PLANE_STRIDE(dst, p);
        const gsize row = gsize(std::min(ss, ds));
        gint comp[GST_VIDEO_MAX_COMPONENTS];
        gst_video_format_info_component(src->info.finfo, p, comp);
        const gint rows = GST_VIDEO_FRAME_COMP_HEIGHT(src, comp[0] >= 0 ? comp[0] : 0);
        for (gint y = 0; y < rows; ++y)
            std::memcpy(d + gsize(y) * gsize(ds), s + gsize(y) * gsize(ss), row);
    }
    return true;
}

GstFlowReturn copy_into_pool(GstTensorIpcSink* self, GstBuffer* inbuf, GstBuffer** out)
{
    State& st = state_of(self);
    eg::GstObjectPtr<GstBufferPool> pool;
    bool video;
    GstVideoInfo vinfo;
    eg::MiniObjectPtr<GstCaps> caps;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        if (!st.streaming.caps) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("tensoripcsink received data before caps."),
                              (nullptr));
            return GST_FLOW_NOT_NEGOTIATED;
        }
        video = st.streaming.video;
        vinfo = st.streaming.vinfo;
        caps.reset(gst_caps_ref(st.streaming.caps.get()));
        if (st.streaming.copy_pool)
            pool.reset(GST_BUFFER_POOL(gst_object_ref(st.streaming.copy_pool.get())));
    }
    if (!pool) {
        pool = make_pool(self, caps.get(), video, COPY_POOL_MIN_BUFFERS, nullptr);
        if (!pool || !gst_buffer_pool_set_active(pool.get(), TRUE)) {
            GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                              ("Cannot create a buffer pool to copy into."),
                              ("caps %" GST_PTR_FORMAT, caps.get()));
            return GST_FLOW_ERROR;
        }
        std::lock_guard<std::mutex> lock(st.mu);
        st.streaming.copy_pool.reset(GST_BUFFER_POOL(gst_object_ref(pool.get())));
    }
    GstBuffer* dst = nullptr;
    GstFlowReturn ret = gst_buffer_pool_acquire_buffer(pool.get(), &dst, nullptr);
    if (ret != GST_FLOW_OK)
        return ret;
    eg::MiniObjectPtr<GstBuffer> owned(dst);
    bool ok = false;
    if (video) {
        GstVideoFrame in, o;
        if (gst_video_frame_map(&in, &vinfo, inbuf, GST_MAP_READ)) {
            if (gst_video_frame_map(&o, &vinfo, dst, GST_MAP_WRITE)) {
                ok = copy_video(&o, &in);
                gst_video_frame_unmap(&o);
            }
            gst_video_frame_unmap(&in);
        }
    } else {
        GstMapInfo in, o;
        if (gst_buffer_map(inbuf, &in, GST_MAP_READ)) {
            if (gst_buffer_map(dst, &o, GST_MAP_WRITE)) {
                ok = in.size <= o.size;
                if (ok)
                    std::memcpy(o.data, in.data, in.size);
                gst_buffer_unmap(dst, &o);
            }
            gst_buffer_unmap(inbuf, &in);
        }
    }
    if (!ok) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot copy the input frame."),
                          ("mapping or copying %" GST_PTR_FORMAT " failed", inbuf));
        return GST_FLOW_ERROR;
    }
    gst_buffer_copy_into(dst, inbuf, GstBufferCopyFlags(GST_BUFFER_COPY_TIMESTAMPS), 0, -1);
    *out = owned.release();
    return GST_FLOW_OK;
}

// Why `buf` cannot be sent as it is (empty when it can).
std::string unsendable(GstBuffer* buf)
{
    const guint n = gst_buffer_n_memory(buf);
    if (n == 0)
        return "the buffer holds no memory";
    if (n > ipc::kMaxMemories)
        return "the buffer holds " + std::to_string(n) + " memories (at most " +
               std::to_string(ipc::kMaxMemories) + " are passed)";
    for (guint i = 0; i < n; ++i) {
        GstMemory* mem = gst_buffer_peek_memory(buf, i);
        if (!gst_is_fd_memory(mem) || gst_fd_memory_get_fd(mem) < 0) {
            const char* type = mem->allocator && mem->allocator->mem_type ? mem->allocator->mem_type
                                                                          : "(no allocator)";
            return std::string("memory ") + std::to_string(i) + " is of type \"" + type +
                   "\", which has no fd to pass";
        }
    }
    return {};
}

// The record for one fd memory: the tensor behind it, or the memory's bytes as a flat u8.
edgetensor::Result<ipc::MemoryRecord> describe_memory(GstMemory* mem, guint index)
{
    const int fd = gst_fd_memory_get_fd(mem);
    ipc::MemoryRecord r;
    gsize offset = 0, maxsize = 0;
    const gsize size = gst_memory_get_sizes(mem, &offset, &maxsize);
    r.offset = offset;
    r.size = size;
    r.maxsize = maxsize;
    struct statfs sfs {
    };
    if (::fstatfs(fd, &sfs) != 0)
        return edgetensor::unexpected(edgetensor::Error::io(errno, "fstatfs of a memory's fd"));
    const bool dma = guint32(sfs.f_type) == DMA_BUF_FS_MAGIC;
    if (auto t = eg::tensor_from_memory(mem); t && t->offset() == 0) {
        auto d = t->describe();
        if (d && d->capacity >= maxsize) {
            r.desc = *d;
            r.remote_identity = t->buffer_identity().id();
        }
    }
    if (r.desc.version == 0) {
        r.desc = edgetensor_desc_init();
        r.desc.dtype = EDGETENSOR_DTYPE_U8;
        r.desc.ndim = 1;
        r.desc.shape[0] = maxsize;
        r.desc.strides[0] = 1;
        r.desc.capacity = maxsize;
    }
    r.desc.kind = dma ? EDGETENSOR_KIND_DMABUF : EDGETENSOR_KIND_HOST;
    r.desc.handle = index;
    r.desc.ptr = nullptr;
    r.desc.flags = 0;
    r.desc.sync = 0;
    return r;
}

GstFlowReturn render_impl(GstTensorIpcSink* self, GstBuffer* buffer)
{
    State& st = state_of(self);
    eg::MiniObjectPtr<GstBuffer> copied;
    GstBuffer* buf = buffer;
    const std::string why = unsendable(buffer);
    if (!why.empty()) {
        GstTensorIpcSinkCopyMode mode;
        {
            eg::ObjectLockGuard lock(self);
            mode = st.settings.copy_mode;
        }
        if (mode == GST_TENSOR_IPC_SINK_COPY_NEVER) {
            GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                              ("Cannot pass this buffer without a copy, and copy-mode is "
                               "\"never\": %s.",
                               why.c_str()),
                              ("Set copy-mode=auto to copy (every copy is counted), or have "
                               "upstream use the edgetensor pool tensoripcsink proposes."));
            return GST_FLOW_ERROR;
        }
        bool warn;
        {
            std::lock_guard<std::mutex> lock(st.mu);
            warn = !std::exchange(st.streaming.warned_copy, true);
        }
        if (warn)
            GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                                ("Copying frames: %s; every copy is counted (property "
                                 "\"copies\").",
                                 why.c_str()),
                                (nullptr));
        GstBuffer* c = nullptr;
        const GstFlowReturn ret = copy_into_pool(self, buffer, &c);
        if (ret != GST_FLOW_OK)
            return ret;
        copied.reset(c);
        buf = c;
        st.copies++;
        const std::string still = unsendable(buf);
        if (!still.empty()) {
            GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT,
                              ("The copy has no fd to pass: %s.", still.c_str()),
                              ("is EDGETENSOR_FORCE_MEM=1 set?"));
            return GST_FLOW_ERROR;
        }
    }

    ipc::FrameHead head;
    head.pts = GST_BUFFER_PTS(buf);
    head.dts = GST_BUFFER_DTS(buf);
    head.duration = GST_BUFFER_DURATION(buf);
    head.offset = GST_BUFFER_OFFSET(buf);
    head.offset_end = GST_BUFFER_OFFSET_END(buf);
    head.flags = GST_BUFFER_FLAGS(buf) &
                 (GST_BUFFER_FLAG_DISCONT | GST_BUFFER_FLAG_RESYNC | GST_BUFFER_FLAG_GAP |
                  GST_BUFFER_FLAG_DROPPABLE | GST_BUFFER_FLAG_DELTA_UNIT | GST_BUFFER_FLAG_HEADER |
                  GST_BUFFER_FLAG_MARKER);
    bool video;
    GstVideoInfo vinfo;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        video = st.streaming.video;
        vinfo = st.streaming.vinfo;
    }
    if (video) {
        if (GstVideoMeta* vm = gst_buffer_get_video_meta(buf)) {
            head.n_planes = std::min<guint>(vm->n_planes, ipc::kMaxPlanes);
            for (guint i = 0; i < head.n_planes; ++i) {
                head.plane_offset[i] = vm->offset[i];
                head.plane_stride[i] = vm->stride[i];
            }
        } else {
            head.n_planes = std::min<guint>(GST_VIDEO_INFO_N_PLANES(&vinfo), ipc::kMaxPlanes);
            for (guint i = 0; i < head.n_planes; ++i) {
                head.plane_offset[i] = GST_VIDEO_INFO_PLANE_OFFSET(&vinfo, i);
                head.plane_stride[i] = GST_VIDEO_INFO_PLANE_STRIDE(&vinfo, i);
            }
        }
    }
    const guint n = gst_buffer_n_memory(buf);
    std::array<ipc::MemoryRecord, ipc::kMaxMemories> records;
    std::array<int, ipc::kMaxMemories> fds{};
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

    gboolean wait_for_connection, block;
    {
        eg::ObjectLockGuard lock(self);
        wait_for_connection = st.settings.wait_for_connection;
        block = st.settings.block;
    }
    bool notify = false;
    {
        Server& sv = st.server;
        std::unique_lock<std::mutex> lock(sv.mu);
        if (wait_for_connection && sv.clients.empty()) {
            GST_DEBUG_OBJECT(self, "waiting for a receiver");
            sv.connected.wait(lock, [&sv] { return sv.unlocked || !sv.clients.empty(); });
            if (sv.unlocked)
                return GST_FLOW_FLUSHING;
        }
        if (sv.clients.empty())
            return GST_FLOW_OK;
        if (block) {
            // Back-pressure instead of drops: every receiver gets every frame.
            sv.released.wait(lock, [&sv] {
                if (sv.unlocked)
                    return true;
                for (const Client& c : sv.clients)
                    if (!c.dead && c.pending.size() >= sv.max_pending)
                        return false;
                return true;
            });
            if (sv.unlocked)
                return GST_FLOW_FLUSHING;
        }
        head.seq = sv.next_seq++;
        head.caps_seq = sv.caps_seq;
        auto msg = ipc::encode_frame(head, std::span(records.data(), n));
        if (!msg) {
            GST_ELEMENT_ERROR(self, RESOURCE, FAILED, (nullptr),
                              ("%s", msg.error().message().c_str()));
            return GST_FLOW_ERROR;
        }
        guint holders = 0;
        for (Client& c : sv.clients) {
            if (c.dead)
                continue;
            if (c.pending.size() >= sv.max_pending) {
                st.dropped++;
                GST_LOG_OBJECT(self,
                               "receiver %s holds %zu frames: frame %" G_GUINT64_FORMAT
                               " dropped for it",
                               c.name.c_str(), c.pending.size(), head.seq);
                continue;
            }
            if (!send_caps_locked(self, sv, c)) {
                c.dead = true;
                continue;
            }
            auto r = ipc::send_record(c.fd.get(), *msg, std::span(fds.data(), n));
            if (!r) {
                if (r.error().sys_errno() == EAGAIN || r.error().sys_errno() == ENOBUFS) {
                    st.dropped++;
                    continue;
                }
                GST_INFO_OBJECT(self, "sending to %s failed: %s", c.name.c_str(),
                                r.error().message().c_str());
                c.dead = true;
                notify = true;
                continue;
            }
            c.pending.insert(head.seq);
            ++holders;
            st.sent++;
        }
        if (holders > 0) {
            Held h;
            h.buffer.reset(gst_buffer_ref(buf));
            h.holders = holders;
            sv.held.emplace(head.seq, std::move(h));
            st.held = guint(sv.held.size());
        }
        // The serving thread removes dead receivers (and frees what they held).
        if (notify)
            wake(sv);
    }
    return GST_FLOW_OK;
}

// ---- GObject -------------------------------------------------------------------------------

void gst_tensor_ipc_sink_set_property(GObject* object, guint prop_id, const GValue* value,
                                      GParamSpec* pspec)
{
    auto* self = GST_TENSOR_IPC_SINK(object);
    if (eg::refuse_unless_ready(GST_ELEMENT(self), pspec))
        return;
    State& st = state_of(self);
    eg::ObjectLockGuard lock(self);
    switch (prop_id) {
    case PROP_SOCKET_PATH: {
        const gchar* s = g_value_get_string(value);
        st.settings.socket_path = s ? s : "";
        break;
    }
    case PROP_SOCKET_MODE:
        st.settings.socket_mode = g_value_get_uint(value);
        break;
    case PROP_MAX_PENDING: {
        st.settings.max_pending = g_value_get_uint(value);
        std::lock_guard<std::mutex> l(st.server.mu);
        st.server.max_pending = st.settings.max_pending;
        break;
    }
    case PROP_ALLOWED_UID:
        st.settings.allowed_uid = g_value_get_int(value);
        break;
    case PROP_COPY_MODE:
        st.settings.copy_mode = GstTensorIpcSinkCopyMode(g_value_get_enum(value));
        break;
    case PROP_WAIT_FOR_CONNECTION:
        st.settings.wait_for_connection = g_value_get_boolean(value);
        break;
    case PROP_BLOCK:
        st.settings.block = g_value_get_boolean(value);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
}

void gst_tensor_ipc_sink_get_property(GObject* object, guint prop_id, GValue* value,
                                      GParamSpec* pspec)
{
    auto* self = GST_TENSOR_IPC_SINK(object);
    State& st = state_of(self);
    switch (prop_id) {
    case PROP_SOCKET_PATH: {
        eg::ObjectLockGuard lock(self);
        g_value_set_string(
            value, st.settings.socket_path.empty() ? nullptr : st.settings.socket_path.c_str());
        break;
    }
    case PROP_SOCKET_MODE: {
        eg::ObjectLockGuard lock(self);
        g_value_set_uint(value, st.settings.socket_mode);
        break;
    }
    case PROP_MAX_PENDING: {
        eg::ObjectLockGuard lock(self);
        g_value_set_uint(value, st.settings.max_pending);
        break;
    }
    case PROP_ALLOWED_UID: {
        eg::ObjectLockGuard lock(self);
        g_value_set_int(value, st.settings.allowed_uid);
        break;
    }
    case PROP_COPY_MODE: {
        eg::ObjectLockGuard lock(self);
        g_value_set_enum(value, st.settings.copy_mode);
        break;
    }
    case PROP_WAIT_FOR_CONNECTION: {
        eg::ObjectLockGuard lock(self);
        g_value_set_boolean(value, st.settings.wait_for_connection);
        break;
    }
    case PROP_BLOCK: {
        eg::ObjectLockGuard lock(self);
        g_value_set_boolean(value, st.settings.block);
        break;
    }
    case PROP_CLIENTS:
        g_value_set_uint(value, st.clients.load());
        break;
    case PROP_SENT:
        g_value_set_uint64(value, st.sent.load());
        break;
    case PROP_DROPPED:
        g_value_set_uint64(value, st.dropped.load());
        break;
    case PROP_COPIES:
        g_value_set_uint64(value, st.copies.load());
        break;
    case PROP_HELD:
        g_value_set_uint(value, st.held.load());
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
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
    auto listen = ipc::listen_on(s.socket_path, s.socket_mode);
    if (!listen) {
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ_WRITE,
                          ("Cannot listen on \"%s\": %s", s.socket_path.c_str(),
                           listen.error().message().c_str()),
                          (nullptr));
        return FALSE;
    }
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Cannot create a pipe: %s", g_strerror(errno)),
                          (nullptr));
        ::unlink(s.socket_path.c_str());
        return FALSE;
    }
    Server& sv = st.server;
    struct stat path_st {
    };
    ::stat(s.socket_path.c_str(), &path_st);
    {
        std::lock_guard<std::mutex> lock(sv.mu);
        sv.listen_fd = std::move(*listen);
        sv.wake_r.reset(p[0]);
        sv.wake_w.reset(p[1]);
        sv.path = s.socket_path;
        sv.path_dev = path_st.st_dev;
        sv.path_ino = path_st.st_ino;
        sv.max_pending = s.max_pending;
        sv.allowed_uid = s.allowed_uid;
        sv.caps.clear();
        sv.caps_seq = 0;
        sv.peak_clients = 0;
    }
    st.sent = 0;
    st.dropped = 0;
    st.copies = 0;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        st.streaming.warned_copy = false;
    }
    try {
        sv.thread = std::thread(serve, self);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Cannot start the serving thread: %s", e.what()),
                          (nullptr));
        ::unlink(s.socket_path.c_str());
        return FALSE;
    }
    GST_INFO_OBJECT(self, "listening on %s (mode 0%o)", s.socket_path.c_str(), s.socket_mode);
    return TRUE;
}

gboolean gst_tensor_ipc_sink_start(GstBaseSink* sink)
{
    auto* self = GST_TENSOR_IPC_SINK(sink);
    try {
        return start_impl(self);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, (nullptr), ("%s", e.what()));
    }
    return FALSE;
}

gboolean gst_tensor_ipc_sink_stop(GstBaseSink* sink)
{
    auto* self = GST_TENSOR_IPC_SINK(sink);
    State& st = state_of(self);
    Server& sv = st.server;
    if (sv.thread.joinable()) {
        const char stop = 0;
        [[maybe_unused]] ssize_t n = ::write(sv.wake_w.get(), &stop, 1);
        sv.thread.join();
    }
    std::vector<eg::MiniObjectPtr<GstBuffer>> graveyard;
    std::list<Client> clients;
    eg::GstObjectPtr<GstBufferPool> pool;
    {
        std::lock_guard<std::mutex> lock(sv.mu);
        for (auto& [seq, h] : sv.held)
            graveyard.push_back(std::move(h.buffer));
        sv.held.clear();
        clients = std::move(sv.clients);
        sv.clients.clear();
        if (!sv.path.empty()) {
            // Only our own socket file: another sink may have replaced a stale one since.
            struct stat now {
            };
            if (::stat(sv.path.c_str(), &now) == 0 && now.st_dev == sv.path_dev &&
                now.st_ino == sv.path_ino)
                ::unlink(sv.path.c_str());
        }
        sv.listen_fd.reset();
        sv.wake_r.reset();
        sv.wake_w.reset();
        sv.path.clear();
        st.clients = 0;
        st.held = 0;
    }
    {
        std::lock_guard<std::mutex> lock(st.mu);
        pool = std::move(st.streaming.copy_pool);
        st.streaming.caps.reset();
    }
    graveyard.clear();
    if (pool)
        gst_buffer_pool_set_active(pool.get(), FALSE);
    return TRUE;
}

gboolean gst_tensor_ipc_sink_unlock(GstBaseSink* sink)
{
    Server& sv = state_of(sink).server;
    std::lock_guard<std::mutex> lock(sv.mu);
    sv.unlocked = true;
    sv.connected.notify_all();
    sv.released.notify_all();
    return TRUE;
}

gboolean gst_tensor_ipc_sink_unlock_stop(GstBaseSink* sink)
{
    Server& sv = state_of(sink).server;
    std::lock_guard<std::mutex> lock(sv.mu);
    sv.unlocked = false;
    return TRUE;
}

gboolean gst_tensor_ipc_sink_set_caps(GstBaseSink* sink, GstCaps* caps)
{
    auto* self = GST_TENSOR_IPC_SINK(sink);
    State& st = state_of(self);
    try {
        const bool video = gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw");
        GstVideoInfo vinfo;
        gst_video_info_init(&vinfo);
        if (video && !gst_video_info_from_caps(&vinfo, caps)) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot parse %" GST_PTR_FORMAT, caps),
                              (nullptr));
            return FALSE;
        }
        if (!video && !eg::parse_tensor_caps(gst_caps_get_structure(caps, 0))) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Cannot parse %" GST_PTR_FORMAT, caps),
                              (nullptr));
            return FALSE;
        }
        eg::GstObjectPtr<GstBufferPool> old_pool;
        {
            std::lock_guard<std::mutex> lock(st.mu);
            if (!st.streaming.caps || !gst_caps_is_equal(st.streaming.caps.get(), caps))
                old_pool = std::move(st.streaming.copy_pool);
            st.streaming.caps.reset(gst_caps_ref(caps));
            st.streaming.video = video;
            st.streaming.vinfo = vinfo;
        }
        if (old_pool)
            gst_buffer_pool_set_active(old_pool.get(), FALSE);
        eg::GCharPtr str(gst_caps_to_string(caps));
        std::string s(str.get());
        if (s.size() > ipc::kMaxCaps) {
            GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                              ("Caps too long to pass (%zu bytes).", s.size()), (nullptr));
            return FALSE;
        }
        std::lock_guard<std::mutex> lock(st.server.mu);
        if (s != st.server.caps) {
            st.server.caps = std::move(s);
            ++st.server.caps_seq; // each receiver gets them before its next frame
        }
        return TRUE;
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("%s", e.what()));
    }
    return FALSE;
}

gboolean gst_tensor_ipc_sink_propose_allocation(GstBaseSink* sink, GstQuery* query)
{
    auto* self = GST_TENSOR_IPC_SINK(sink);
    try {
        GstCaps* caps = nullptr;
        gboolean need_pool = FALSE;
        gst_query_parse_allocation(query, &caps, &need_pool);
        if (!caps)
            return TRUE;
        const bool video = gst_structure_has_name(gst_caps_get_structure(caps, 0), "video/x-raw");
        if (video)
            gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
        if (gst_query_get_n_allocation_pools(query) > 0)
            return TRUE;
        guint size = 0;
        auto pool = make_pool(self, caps, video, PROPOSED_MIN_BUFFERS, &size);
        if (!pool)
            return TRUE;
        gst_query_add_allocation_pool(query, pool.get(), size, PROPOSED_MIN_BUFFERS, 0);
        if (GstAllocator* alloc = gst_edge_tensor_allocator_get()) {
            GstAllocationParams params;
            gst_allocation_params_init(&params);
            gst_query_add_allocation_param(query, alloc, &params);
            gst_object_unref(alloc);
        }
    } catch (const std::exception& e) {
        GST_ERROR_OBJECT(self, "propose_allocation failed: %s", e.what());
    }
    return TRUE;
}

GstFlowReturn gst_tensor_ipc_sink_render(GstBaseSink* sink, GstBuffer* buffer)
{
    auto* self = GST_TENSOR_IPC_SINK(sink);
    try {
        return render_impl(self, buffer);
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, (nullptr), ("%s", e.what()));
    }
    return GST_FLOW_ERROR;
}

gboolean gst_tensor_ipc_sink_event(GstBaseSink* sink, GstEvent* event)
{
    auto* self = GST_TENSOR_IPC_SINK(sink);
    State& st = state_of(self);
    if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) {
        guint peak;
        {
            Server& sv = st.server;
            std::lock_guard<std::mutex> lock(sv.mu);
            const auto eos = ipc::encode_eos();
            for (Client& c : sv.clients)
                if (!c.dead && !ipc::send_record(c.fd.get(), eos))
                    GST_INFO_OBJECT(self, "could not send EOS to %s", c.name.c_str());
            peak = sv.peak_clients;
        }
        GstStructure* s = gst_structure_new(
            "tensoripcsink-stats", "sent", G_TYPE_UINT64, st.sent.load(), "dropped", G_TYPE_UINT64,
            st.dropped.load(), "copies", G_TYPE_UINT64, st.copies.load(), "clients", G_TYPE_UINT,
            st.clients.load(), "peak-clients", G_TYPE_UINT, peak, nullptr);
        eg::GCharPtr str(gst_structure_to_string(s));
        GST_INFO_OBJECT(self, "%s", str.get());
        gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), s));
    }
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

    const auto ready =
        GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
    const auto ro = GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_property(
        gobject_class, PROP_SOCKET_PATH,
        g_param_spec_string("socket-path", "Socket path",
                            "Path of the SOCK_SEQPACKET Unix socket receivers connect to "
                            "(required; a stale socket file there is replaced, a live one is "
                            "an error)",
                            nullptr, ready));
    g_object_class_install_property(
        gobject_class, PROP_SOCKET_MODE,
        g_param_spec_uint("socket-mode", "Socket mode",
                          "Permissions of the socket file, applied before anyone can connect "
                          "(0 to 0777, default 0600: the sink's user only)",
                          0, 0777, DEFAULT_SOCKET_MODE, ready));
    g_object_class_install_property(
        gobject_class, PROP_MAX_PENDING,
        g_param_spec_uint("max-pending", "Max pending",
                          "Frames one receiver may hold unreleased; further frames skip it and "
                          "are counted in \"dropped\" (1 to 1024, default 2)",
                          1, MAX_MAX_PENDING, DEFAULT_MAX_PENDING, ready));
    g_object_class_install_property(
        gobject_class, PROP_ALLOWED_UID,
        g_param_spec_int("allowed-uid", "Allowed uid",
                         "Only receivers of this user id (SO_PEERCRED) are served; -1 = any "
                         "user the socket permissions let in (-1 to 2147483647, default -1)",
                         -1, G_MAXINT, DEFAULT_ALLOWED_UID, ready));
    g_object_class_install_property(
        gobject_class, PROP_COPY_MODE,
        g_param_spec_enum("copy-mode", "Copy mode",
                          "What to do with memory that has no fd (system memory): auto = copy "
                          "into a pooled DMA-BUF/memfd tensor, counted and warned once "
                          "(default); never = element error",
                          GST_TYPE_TENSOR_IPC_SINK_COPY_MODE, DEFAULT_COPY_MODE, ready));
    g_object_class_install_property(
        gobject_class, PROP_WAIT_FOR_CONNECTION,
        g_param_spec_boolean(
            "wait-for-connection", "Wait for connection",
            "Block rendering until a receiver is connected, as shmsink "
            "wait-for-connection does (default false: frames without receivers "
            "are discarded, which suits live cameras)",
            DEFAULT_WAIT_FOR_CONNECTION,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        gobject_class, PROP_BLOCK,
        g_param_spec_boolean(
            "block", "Block",
            "When a receiver holds max-pending frames, wait for it to release "
            "one instead of dropping the frame for it (default false: slow "
            "receivers drop frames, the pipeline never stalls)",
            DEFAULT_BLOCK,
            GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
    g_object_class_install_property(
        gobject_class, PROP_CLIENTS,
        g_param_spec_uint("clients", "Clients", "Receivers connected now", 0, G_MAXUINT, 0, ro));
    g_object_class_install_property(
        gobject_class, PROP_SENT,
        g_param_spec_uint64("sent", "Sent",
                            "Frames sent since start, one per receiver a frame reached", 0,
                            G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        gobject_class, PROP_DROPPED,
        g_param_spec_uint64("dropped", "Dropped",
                            "Frames not sent to a receiver since start because it held "
                            "max-pending frames or its socket was full, one per receiver",
                            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        gobject_class, PROP_COPIES,
        g_param_spec_uint64("copies", "Copies",
                            "Frames copied since start because their memory had no fd; 0 means "
                            "the stream was zero-copy",
                            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(
        gobject_class, PROP_HELD,
        g_param_spec_uint("held", "Held",
                          "Buffers kept alive now because a receiver has not released them", 0,
                          G_MAXUINT, 0, ro));

    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_set_static_metadata(
        element_class, "Tensor IPC sink", "Sink/Video",
        "Shares DMA-BUF/memfd buffers with tensoripcsrc receivers in other processes by "
        "passing their fds with an EdgeTensorDesc each (no copy). Example: gst-launch-1.0 "
        "tensortestsrc is-live=true num-buffers=300 ! tensoripcsink socket-path=/tmp/cam.sock",
        "edgetensor developers");

    bs->start = gst_tensor_ipc_sink_start;
    bs->stop = gst_tensor_ipc_sink_stop;
    bs->set_caps = gst_tensor_ipc_sink_set_caps;
    bs->propose_allocation = gst_tensor_ipc_sink_propose_allocation;
    bs->render = gst_tensor_ipc_sink_render;
    bs->unlock = gst_tensor_ipc_sink_unlock;
    bs->unlock_stop = gst_tensor_ipc_sink_unlock_stop;
    bs->event = gst_tensor_ipc_sink_event;

    gst_type_mark_as_plugin_api(GST_TYPE_TENSOR_IPC_SINK_COPY_MODE, GstPluginAPIFlags(0));
}

static void gst_tensor_ipc_sink_init(GstTensorIpcSink* self)
{
    self->state = new State();
}
