// SPDX-License-Identifier: MIT
//
// tensorimport's side of the ALLOCATION query and its pools: for video/x-raw an edgetensor
// pool upstream writes into (DMA-BUF where the host has it), for other/tensors the edgetensor
// allocator and no pool (NNStreamer's elements append their output to, or refuse, a full
// buffer). Pool negotiation itself is gst/libs/pool_negotiation.hpp.

#pragma once

#include "pool_negotiation.hpp"

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

namespace edgetensor::gst::tensorimport
{

/// The pools tensorimport makes, of at least `min` buffers: the one it proposes and the one it
/// copies into.
PoolPolicy pool_policy(guint min);

/// GstBaseTransform::propose_allocation (in place: it asks downstream first). Never throws.
gboolean propose_allocation(GstBaseTransform* self, GstQuery* decide_query, GstQuery* query);

/// Puts the edgetensor allocator first among `query`'s allocation params (upstream uses the
/// first), keeping the others after it: what tensorimport proposes for other/tensors instead of
/// a pool, whose full buffers break the elements above.
void propose_allocator_first(GstQuery* query);

} // namespace edgetensor::gst::tensorimport
