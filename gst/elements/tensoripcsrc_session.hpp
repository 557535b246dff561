// SPDX-License-Identifier: MIT
//
// How tensoripcsrc's session with a sender can end, told to the user: what ipc::Receiver
// reports when it cannot connect, and when the sender leaves, as an element error (or
// warning) naming the socket and the cure, and the flow return that ends the stream.

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
/// warning and EOS.
GstFlowReturn sender_gone(GstElement* self, const Settings& s, const ipc::Event& e);

} // namespace edgetensor::gst::tensoripcsrc
