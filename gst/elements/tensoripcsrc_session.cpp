// SPDX-License-Identifier: MIT
//
// tensoripcsrc's session ends as element errors and flow returns (tensoripcsrc_session.hpp).

#include "tensoripcsrc_session.hpp"

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_ipc_src_debug);
#define GST_CAT_DEFAULT gst_tensor_ipc_src_debug

namespace edgetensor::gst::tensoripcsrc
{

GstFlowReturn connect_failed(GstElement* self, const Settings& s, const ipc::Event& e)
{
    const char* path = s.socket_path.c_str();
    switch (e.failure) {
    case ipc::ConnectFailure::NoPath:
        GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No socket-path is set."),
                          ("set socket-path to the path tensoripcsink listens on"));
        break;
    case ipc::ConnectFailure::Credentials:
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Cannot identify the sender."),
                          ("%s", e.why.c_str()));
        break;
    case ipc::ConnectFailure::WrongUid:
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                          ("The sink on \"%s\" runs as uid %u; allowed-uid is %d.", path,
                           guint(e.peer.uid), s.allowed_uid),
                          ("sink pid %d", int(e.peer.pid)));
        break;
    case ipc::ConnectFailure::Connect:
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                          ("Cannot connect to \"%s\": %s", path, e.why.c_str()), (nullptr));
        break;
    case ipc::ConnectFailure::Timeout:
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                          ("No tensoripcsink listens on \"%s\" (waited %.1f s).", path,
                           double(s.timeout) / GST_SECOND),
                          ("%s; raise timeout (0 waits forever)", e.why.c_str()));
        break;
    }
    return GST_FLOW_ERROR;
}

GstFlowReturn sender_gone(GstElement* self, const Settings& s, const ipc::Event& e)
{
    const char* path = s.socket_path.c_str();
    switch (e.departure) {
    case ipc::Departure::AfterEos:
        return GST_FLOW_EOS;
    case ipc::Departure::BeforeGreeting:
        // A sink closes a receiver before its greeting to refuse it (or because it stopped in
        // that instant): an error either way, since no stream ever began to end.
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                          ("The sink on \"%s\" closed the connection before its greeting: it "
                           "refused this receiver or stopped.",
                           path),
                          ("%s; a sink refuses receivers of another user than its allowed-uid "
                           "and receivers beyond its max-clients, and says which on its bus",
                           e.why.c_str()));
        return GST_FLOW_ERROR;
    case ipc::Departure::WithoutEos:
        break;
    }
    if (s.on_disconnect == GST_TENSOR_IPC_SRC_ON_DISCONNECT_ERROR) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ,
                          ("The sender on \"%s\" went away without EOS.", path),
                          ("%s", e.why.c_str()));
        return GST_FLOW_ERROR;
    }
    if (s.on_disconnect == GST_TENSOR_IPC_SRC_ON_DISCONNECT_RECONNECT) {
        GST_ELEMENT_WARNING(
            self, RESOURCE, READ,
            ("The sender on \"%s\" went away without EOS; waiting for one to "
             "come back.",
             path),
            ("%s; on-disconnect=reconnect waits up to timeout (0: forever)", e.why.c_str()));
        return GST_FLOW_OK;
    }
    GST_ELEMENT_WARNING(self, RESOURCE, READ,
                        ("The sender on \"%s\" went away without EOS; ending the stream.", path),
                        ("%s", e.why.c_str()));
    return GST_FLOW_EOS;
}

void sender_back(GstElement* self, const Settings& s, guint64 pid, double waited_s)
{
    GST_ELEMENT_INFO(self, RESOURCE, OPEN_READ,
                     ("A sender is back on \"%s\" (pid %" G_GUINT64_FORMAT
                      ") after %.1f s; the stream goes on.",
                      s.socket_path.c_str(), pid, waited_s),
                     // gst-launch-1.0 prints only this part of an info message.
                     ("a sender is back on \"%s\" (pid %" G_GUINT64_FORMAT
                      ") after %.1f s (on-disconnect=reconnect)",
                      s.socket_path.c_str(), pid, waited_s));
}

void receiving_stalled(GstElement* self, const ipc::Event& e)
{
    GST_ELEMENT_WARNING(
        self, STREAM, FAILED,
        ("No frame can arrive: downstream has kept, for a second, as many frames as the "
         "sender lets this receiver hold (%u, tensoripcsink max-pending=%u).",
         e.held, e.max_pending),
        ("A sink keeps its last buffer (enable-last-sample=true, the default), and queues and "
         "aggregators keep more: set tensoripcsink's max-pending above the frames downstream "
         "keeps, or enable-last-sample=false on the sink. With block=true the sender waits "
         "meanwhile; without it, it drops every frame for this receiver."));
}

} // namespace edgetensor::gst::tensoripcsrc
