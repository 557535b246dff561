// SPDX-License-Identifier: MIT
//
// tensorconvert's buffer pools: the output pool it decides on (an edgetensor pool, downstream's
// or its own, bounded, DMA-BUF where the layout allows) and the pool it proposes upstream so a
// producer writes straight into tensors. Both are GstBaseTransform vfuncs, exceptions caught.

#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

namespace edgetensor::gst::tensorconvert
{

gboolean decide_allocation(GstBaseTransform* self, GstQuery* query);
gboolean propose_allocation(GstBaseTransform* self, GstQuery* decide_query, GstQuery* query);

} // namespace edgetensor::gst::tensorconvert
