// SPDX-License-Identifier: MIT
//
// Timestamps across the process boundary of tensoripcsink / tensoripcsrc. Each process has its
// own pipeline clock and base time, so a sender's running time means nothing to a receiver. The
// sender puts each frame's time on CLOCK_MONOTONIC, which both processes read alike (as
// unixfdsink does); a live receiver maps it back onto its own running time (as unixfdsrc does).
// A non-live receiver keeps the sender's PTS and starts its segment at the first one, so that
// a clock-synchronised sink plays the frames as they come instead of waiting for the sender's
// running time to be reached here.

#pragma once

#include <gst/gst.h>

#include <optional>

namespace edgetensor::gst::tensoripc
{

/// CLOCK_MONOTONIC now, in ns.
GstClockTime monotonic_now() noexcept;

/// When a frame of running time `running` is due in `element`'s pipeline (its base time +
/// `running` + `latency`, `latency` NONE counting as 0), on CLOCK_MONOTONIC. NONE when
/// `running` is NONE or the element has no clock (it is not PLAYING in a pipeline).
GstClockTime running_to_monotonic(GstElement* element, GstClockTime running,
                                  GstClockTime latency) noexcept;

/// `mono` (CLOCK_MONOTONIC ns) as a running time of `element`'s pipeline, 0 when it lies
/// before the base time; NONE when `mono` is NONE or the element has no clock.
GstClockTime monotonic_to_running(GstElement* element, GstClockTime mono) noexcept;

/// The most a live receiver may fall behind before frames are lost to it: the frames the
/// sender lets it hold at once (`max_pending`, its HELLO), one frame interval each (the caps'
/// framerate `fps_n`/`fps_d`). A frame waits in the socket until read, and the sender drops
/// (or, with block=true, waits) only past that many. NONE while either is unknown (0, no caps
/// yet, a 0/1 framerate): nothing bounds it yet.
GstClockTime receiver_max_latency(guint32 max_pending, int fps_n, int fps_d) noexcept;

/// The TIME segments of a non-live receiver that keeps the sender's timestamps.
class ReceiverSegment
{
public:
    /// The segment to push before a frame of PTS `pts` and duration `duration`, when one is
    /// due. The first frame with a PTS starts a segment at it (start = time = pts), so its
    /// running time is 0 and its stream time its PTS. A frame before the current segment's
    /// start (the sender's timestamps went back: a loop or a restart upstream) starts a new
    /// one whose base continues the running time already reached, so running time never goes
    /// back. Frames without a PTS need none.
    std::optional<GstSegment> before(GstClockTime pts, GstClockTime duration);

    /// Forgets the stream (a new one starts with the next frame).
    void reset() noexcept;

    /// Another sender's stream follows (a reconnection): its first frame starts a new segment
    /// whatever its PTS, whose base continues the running time already reached.
    void restart() noexcept { restart_ = current_.has_value(); }

private:
    std::optional<GstSegment> current_;
    bool restart_ = false;
    GstClockTime reached_ = 0; ///< running time at the end of the last frame
};

} // namespace edgetensor::gst::tensoripc
