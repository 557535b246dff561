// SPDX-License-Identifier: MIT
//
// tensorbatch's start and stop: the settings checked (an element error naming what start()
// refuses), the streaming state reset and the slots given by pad number, the latency bound set;
// at stop the statistics logged and every pad's converter and import cache dropped.

#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

namespace edgetensor::gst::tensorbatch
{

gboolean start(GstAggregator* agg);
gboolean stop(GstAggregator* agg);

} // namespace edgetensor::gst::tensorbatch
