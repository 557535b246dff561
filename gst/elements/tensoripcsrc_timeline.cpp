// SPDX-License-Identifier: MIT
//
// tensoripcsrc's timeline (tensoripcsrc_timeline.hpp).

#include "tensoripcsrc_timeline.hpp"

#include <algorithm>

namespace edgetensor::gst::tensoripcsrc
{

std::optional<GstSegment> Timeline::place(GstBaseSrc* src, GstBuffer* buf, GstClockTime capture)
{
    if (gst_base_src_get_do_timestamp(src)) {
        GST_BUFFER_PTS(buf) = GST_CLOCK_TIME_NONE;
        GST_BUFFER_DTS(buf) = GST_CLOCK_TIME_NONE;
        return std::nullopt;
    }
    if (gst_base_src_is_live(src)) {
        const GstClockTime pts = GST_BUFFER_PTS(buf);
        const GstClockTime dts = GST_BUFFER_DTS(buf);
        const GstClockTime running = tensoripc::monotonic_to_running(GST_ELEMENT(src), capture);
        GST_BUFFER_PTS(buf) = running;
        GST_BUFFER_DTS(buf) = GST_CLOCK_TIME_NONE;
        if (GST_CLOCK_TIME_IS_VALID(running) && GST_CLOCK_TIME_IS_VALID(pts) &&
            GST_CLOCK_TIME_IS_VALID(dts))
            GST_BUFFER_DTS(buf) =
                dts >= pts ? running + (dts - pts) : running - std::min(running, pts - dts);
        return std::nullopt;
    }
    std::lock_guard<std::mutex> lock(mu_);
    return segment_.before(GST_BUFFER_PTS(buf), GST_BUFFER_DURATION(buf));
}

bool Timeline::set_sender(guint32 max_pending, int fps_n, int fps_d)
{
    const GstClockTime max = tensoripc::receiver_max_latency(max_pending, fps_n, fps_d);
    std::lock_guard<std::mutex> lock(mu_);
    const bool changed = max != max_latency_;
    max_latency_ = max;
    return changed;
}

GstClockTime Timeline::max_latency() const
{
    std::lock_guard<std::mutex> lock(mu_);
    return max_latency_;
}

void Timeline::answer_latency(GstQuery* query) const
{
    gst_query_set_latency(query, TRUE, 0, max_latency());
}

void Timeline::restart()
{
    std::lock_guard<std::mutex> lock(mu_);
    segment_.restart();
}

void Timeline::reset()
{
    std::lock_guard<std::mutex> lock(mu_);
    segment_.reset();
    max_latency_ = GST_CLOCK_TIME_NONE;
}

} // namespace edgetensor::gst::tensoripcsrc
