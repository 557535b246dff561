// SPDX-License-Identifier: MIT
//
// tensoripcsink's pools: the edgetensor pool it proposes in the ALLOCATION query (upstream
// elements that honour it write into fd memory) and the one it copies memory without an fd
// into. Pool negotiation itself is gst/libs/pool_negotiation.hpp.

#pragma once

#include "copy_fallback.hpp"
#include "pool_negotiation.hpp"

#include <gst/base/gstbasesink.h>
#include <gst/gst.h>

namespace edgetensor::gst::tensoripcsink
{

/// The pools tensoripcsink makes, of at least `min` buffers: the one it proposes and the one
/// it copies into.
PoolPolicy pool_policy(guint min);

/// What the copy fallback does with memory without an fd (copy-mode): copy it into a pool of
/// pool_policy()'s, or refuse it.
CopyPolicy copy_policy();

/// GstBaseSink::propose_allocation: an edgetensor pool. Never throws.
gboolean propose_allocation(GstBaseSink* sink, GstQuery* query);

} // namespace edgetensor::gst::tensoripcsink
