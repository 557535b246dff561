// SPDX-License-Identifier: MIT
//
// How tensoripcsrc's session with a sender can end or stall, told to the user: what
// ipc::Receiver reports when it cannot connect, when the sender leaves, and when downstream
// keeps every frame the sender lets it hold, as an element error (or warning) naming the socket
// or setting and the cure, and the flow return that ends the stream.

#pragma once

#include "ipc_receiver.hpp"
#include "tensoripcsrc_properties.hpp"

#include <gst/gst.h>

namespace edgetensor::gst::tensoripcsrc
{

/// No connection (no socket-path, no sink listening within `timeout`, a sink of another user
/// than allowed-uid, ...): an element error saying which. Always GST_FLOW_ERROR.
GstFlowReturn connect_failed(GstElement* self, const Settings& s, const ipc::Event& e);

/// The sender is gone: EOS after its EOS; an error when it closed before its greeting (it
/// refused this receiver) or, with on-disconnect=error, when it left without EOS; else a
/// warning and EOS, or with on-disconnect=reconnect a warning and GST_FLOW_OK: the receiver
/// connects again when next asked (see sender_back()).
GstFlowReturn sender_gone(GstElement* self, const Settings& s, const ipc::Event& e);

/// A sender is back after on-disconnect=reconnect: an element info message naming it and how
/// long the stream waited.
void sender_back(GstElement* self, const Settings& s, guint64 pid, double waited_s);

/// Downstream has kept every frame the sender lets this receiver hold (e.held of
/// e.max_pending) for a second, so none can arrive: an element warning naming tensoripcsink's
/// max-pending and the sink's enable-last-sample. The stream goes on (the receiver waits).
void receiving_stalled(GstElement* self, const ipc::Event& e);

} // namespace edgetensor::gst::tensoripcsrc
