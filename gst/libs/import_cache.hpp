// SPDX-License-Identifier: MIT
//
// The import cache's C++ entry for elements that parsed the caps already: the cache reads the
// element's own stream-layout snapshot instead of parsing the caps again. Not installed.

#pragma once

#include "internal_api.hpp"

#include "stream_layout.hpp"

#include <gst/edgetensor/gstedgetensorimportcache.h>

namespace edgetensor::gst
{

/// gst_edge_tensor_import_cache_set_caps() with the caps already parsed: a layout of other
/// caps than the current ones clears the cache (an invalidation); null means no caps (nothing
/// is imported until the next layout).
EDGETENSOR_GST_INTERNAL void import_cache_set_layout(GstEdgeTensorImportCache* cache,
                                                     StreamLayoutPtr layout) noexcept;

} // namespace edgetensor::gst
