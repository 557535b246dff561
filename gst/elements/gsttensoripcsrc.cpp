// SPDX-License-Identifier: MIT
//
// tensoripcsrc: frames from a tensoripcsink in another process, imported without a copy.
// The session (connecting, the greeting, every record parsed and checked, releases, unlock)
// is ipc::Receiver in lib/tensor/src/ipc, without GStreamer; the element is a GstPushSrc
// adapter over it. This file holds its vfuncs (properties, start/stop, negotiation, latency);
// tensoripcsrc_events.cpp its create(): each frame checked against the caps, rebuilt as a
// GstBuffer and imported, and what the receiver reports turned into flow returns and element
// errors. Whatever is refused is dropped with its fds closed and the reason logged and counted.

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
#include "ipc_receiver.hpp"
#include "tensoripc_common.hpp"
#include "tensoripcsrc_element.hpp"
#include "tensoripcsrc_events.hpp"
#include "tensoripcsrc_properties.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <mutex>

GST_DEBUG_CATEGORY(gst_tensor_ipc_src_debug);
#define GST_CAT_DEFAULT gst_tensor_ipc_src_debug

namespace
{

namespace eg = edgetensor::gst;
namespace ipc = edgetensor::ipc;
using namespace edgetensor::gst::tensoripcsrc;

GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(EDGETENSOR_TENSOR_IPC_CAPS));

} // namespace

G_DEFINE_TYPE(GstTensorIpcSrc, gst_tensor_ipc_src, GST_TYPE_PUSH_SRC)
GST_ELEMENT_REGISTER_DEFINE(tensoripcsrc, "tensoripcsrc", GST_RANK_NONE, GST_TYPE_TENSOR_IPC_SRC)

namespace
{

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
                       [&] { return next_buffer(GST_TENSOR_IPC_SRC(psrc), out); });
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
