// SPDX-License-Identifier: MIT
//
// tensorbatch's request pads and the slots they fill: a slot taken when a pad is requested
// (refused with a warning when every slot is held, or when mode=roi has its one pad already),
// freed when the pad is released; start() gives them again by pad number (take_slot()).

#pragma once

#include "gsttensorbatch.h"
#include "tensorbatch_element.hpp"

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

#include <optional>

namespace edgetensor::gst::tensorbatch
{

/// The first free slot, now held; nullopt when every slot is held.
std::optional<guint> take_slot(Streaming& st);

/// GstAggregator's create_new_pad: the parent's pad with its stream and, in mode=streams, a slot.
GstAggregatorPad* create_new_pad(GstAggregator* agg, GstPadTemplate* templ, const gchar* req_name,
                                 const GstCaps* caps);
/// GstElement's release_pad: the pad's slot freed, then the parent's.
void release_pad(GstElement* element, GstPad* pad);

} // namespace edgetensor::gst::tensorbatch
