// SPDX-License-Identifier: MIT
//
// tensorconvert's compute backend choice (the `compute` property): the engine decides
// (edgetensor::ConvertCompute), the element only maps its enum. The GL backend's counters are
// in tensorconvert_stats.hpp.

#pragma once

#include "gsttensorconvert.h"

#include <edgetensor/convert.hpp>

#include <gst/gst.h>

namespace edgetensor::gst
{

ConvertCompute convert_compute(GstTensorConvertCompute c) noexcept;
GstTensorConvertCompute element_compute(ConvertCompute c) noexcept;

} // namespace edgetensor::gst
