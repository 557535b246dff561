// SPDX-License-Identifier: MIT
//
// Timestamps across the process boundary (tensoripc_clock.hpp).

#include "tensoripc_clock.hpp"

#include <time.h>

#include <algorithm>

namespace edgetensor::gst::tensoripc
{

namespace
{

// CLOCK_MONOTONIC minus `clock`'s time, read back to back; exactly 0 for the system clock on
// CLOCK_MONOTONIC (GStreamer's default pipeline clock), where the two are the same clock.
GstClockTimeDiff monotonic_offset(GstClock* clock) noexcept
{
    if (GST_IS_SYSTEM_CLOCK(clock)) {
        GstClockType type = GST_CLOCK_TYPE_REALTIME;
        g_object_get(clock, "clock-type", &type, nullptr);
        if (type == GST_CLOCK_TYPE_MONOTONIC)
            return 0;
    }
    const GstClockTime clock_now = gst_clock_get_time(clock);
    const GstClockTime mono_now = monotonic_now();
    return GST_CLOCK_DIFF(clock_now, mono_now);
}

} // namespace

GstClockTime monotonic_now() noexcept
{
    struct timespec ts {
    };
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return GST_TIMESPEC_TO_TIME(ts);
}

GstClockTime running_to_monotonic(GstElement* element, GstClockTime running,
                                  GstClockTime latency) noexcept
{
    if (!GST_CLOCK_TIME_IS_VALID(running))
        return GST_CLOCK_TIME_NONE;
    GstClock* clock = gst_element_get_clock(element);
    if (!clock)
        return GST_CLOCK_TIME_NONE;
    GstClockTime t = running + gst_element_get_base_time(element);
    if (GST_CLOCK_TIME_IS_VALID(latency))
        t += latency;
    const GstClockTimeDiff offset = monotonic_offset(clock);
    gst_object_unref(clock);
    if (offset < 0 && GstClockTime(-offset) > t)
        return 0;
    return GstClockTime(GstClockTimeDiff(t) + offset);
}

GstClockTime receiver_max_latency(guint32 max_pending, int fps_n, int fps_d) noexcept
{
    if (max_pending == 0 || fps_n <= 0 || fps_d <= 0)
        return GST_CLOCK_TIME_NONE;
    return gst_util_uint64_scale_int(GstClockTime(max_pending) * GST_SECOND, fps_d, fps_n);
}

GstClockTime monotonic_to_running(GstElement* element, GstClockTime mono) noexcept
{
    if (!GST_CLOCK_TIME_IS_VALID(mono))
        return GST_CLOCK_TIME_NONE;
    GstClock* clock = gst_element_get_clock(element);
    if (!clock)
        return GST_CLOCK_TIME_NONE;
    const GstClockTimeDiff offset = monotonic_offset(clock);
    gst_object_unref(clock);
    const GstClockTimeDiff on_clock = GstClockTimeDiff(mono) - offset;
    const GstClockTime base = gst_element_get_base_time(element);
    if (on_clock <= 0 || GstClockTime(on_clock) <= base)
        return 0;
    return GstClockTime(on_clock) - base;
}

std::optional<GstSegment> ReceiverSegment::before(GstClockTime pts, GstClockTime duration)
{
    if (!GST_CLOCK_TIME_IS_VALID(pts))
        return std::nullopt;
    std::optional<GstSegment> due;
    if (!current_ || restart_ || pts < current_->start) {
        restart_ = false;
        GstSegment seg;
        gst_segment_init(&seg, GST_FORMAT_TIME);
        seg.start = pts;
        seg.time = pts;
        seg.position = pts;
        seg.base = current_ ? reached_ : 0;
        current_ = seg;
        due = seg;
    }
    const GstClockTime running = pts - current_->start + current_->base;
    const GstClockTime end = GST_CLOCK_TIME_IS_VALID(duration) ? running + duration : running;
    reached_ = std::max(reached_, end);
    return due;
}

void ReceiverSegment::reset() noexcept
{
    current_.reset();
    restart_ = false;
    reached_ = 0;
}

} // namespace edgetensor::gst::tensoripc
