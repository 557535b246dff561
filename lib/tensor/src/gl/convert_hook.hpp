// SPDX-License-Identifier: MIT
//
// The converter's one seam to its compute backends: create() calls attach(), which resolves
// ConvertConfig::compute and, for GL, gives the Converter its GL backend; the run() overloads
// hand over to the backend when one is attached, after the Converter has checked the arguments
// (the tensor overload passes the destination's strides it worked out). Implemented in
// convert_gl.cpp (or gl_none.cpp in builds without GL).

#pragma once

#include "edgetensor/convert.hpp"

namespace edgetensor::detail::gl
{

struct ConverterHook {
    static Result<void> attach(Converter& conv);
    static Result<void> run(Converter& conv, const SourceFrame& src, const DestFrame& dst);
    static Result<void> run(Converter& conv, const TensorDyn& src, const TensorDyn& dst,
                            const DestFrame& layout);
    /// gl_set_source_modifier() (dma_buf_formats.cpp; gl_none.cpp without GL).
    static Result<void> set_source_modifier(Converter& conv, uint64_t modifier);
};

} // namespace edgetensor::detail::gl
