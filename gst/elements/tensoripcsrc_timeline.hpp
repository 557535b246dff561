// SPDX-License-Identifier: MIT
//
// Where tensoripcsrc's frames sit on its own pipeline's timeline (each process has its own
// clock and base time, tensoripc_clock.hpp), and the latency it answers as a live source.

#pragma once

#include "tensoripc_clock.hpp"

#include <gst/base/gstbasesrc.h>
#include <gst/gst.h>

#include <mutex>
#include <optional>

namespace edgetensor::gst::tensoripcsrc
{

/// One per element; any thread.
class Timeline
{
public:
    /// Puts a frame captured (due at the sender) at `capture`, CLOCK_MONOTONIC ns, on `src`'s
    /// timeline. do-timestamp: GstBaseSrc stamps it on arrival. Live: the capture time on this
    /// pipeline's clock, as unixfdsrc does, DTS kept as far before it as the sender had it. Not
    /// live: the sender's timestamps, in a segment that starts at the first, so a synchronised
    /// sink does not wait for the sender's running time to come round here. Returns the
    /// segment to push before it, if one is due.
    std::optional<GstSegment> place(GstBaseSrc* src, GstBuffer* buf, GstClockTime capture);

    /// The sender lets this receiver hold `max_pending` frames (its HELLO; 0 before it) of a
    /// stream at `fps_n`/`fps_d` (its caps; 0/1 before them): sets the maximum latency
    /// (tensoripc_clock.hpp). True when it changed, so that the pipeline must ask again.
    bool set_sender(guint32 max_pending, int fps_n, int fps_d);
    GstClockTime max_latency() const;

    /// A live source's answer: minimum 0, since a frame arrives right after it was due at the
    /// sender (as unixfdsrc); maximum as set_sender() left it. GstBaseSrc's own answer,
    /// min = max = 0, leaves a synchronised sink no room for its processing deadline.
    void answer_latency(GstQuery* query) const;

    /// Forgets the stream (start, stop).
    void reset();
    /// Another sender's stream follows (on-disconnect=reconnect): not live, its first frame
    /// starts a segment that continues the running time reached (ReceiverSegment::restart()).
    void restart();

private:
    mutable std::mutex mu_;
    tensoripc::ReceiverSegment segment_;
    GstClockTime max_latency_ = GST_CLOCK_TIME_NONE;
};

} // namespace edgetensor::gst::tensoripcsrc
