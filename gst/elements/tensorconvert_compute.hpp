// SPDX-License-Identifier: MIT
//
// tensorconvert's compute backend choice (the `compute` property) and the GL backend's
// counters (the `gl-stats` property): the engine decides (edgetensor::ConvertCompute), the
// element only maps its enum and reports.

#pragma once

#include "gsttensorconvert.h"

#include <edgetensor/convert.hpp>

#include <gst/gst.h>

namespace edgetensor::gst
{

ConvertCompute convert_compute(GstTensorConvertCompute c) noexcept;
GstTensorConvertCompute element_compute(ConvertCompute c) noexcept;

/// a + b, counter by counter (entries: b's, the live cache's).
GlImportStats add_gl_stats(const GlImportStats& a, const GlImportStats& b) noexcept;

/// "edgetensor-gl-stats, hits=(guint64)..., misses, evictions, swept, entries, uploads,
/// zero-copy-declines, readbacks". Caller owns it.
GstStructure* gl_stats_structure(const GlImportStats& s);

} // namespace edgetensor::gst
