// SPDX-License-Identifier: MIT
//
// Builds configured with -Dgl=disabled (or without EGL/GLES headers): the GL API reports
// NotSupported, compute=auto runs on the CPU and compute=gl fails at create().

#include "edgetensor/convert.hpp"
#include "edgetensor/gl.hpp"

#include "gl/convert_hook.hpp"

namespace edgetensor
{
namespace
{
Unexpected not_built()
{
    return make_error(ErrorCode::NotSupported,
                      "this edgetensor was built without the GL backend (meson -Dgl=disabled, or "
                      "no EGL/GLES headers: install libegl-dev and libgles-dev)");
}
} // namespace

namespace detail::gl
{
// Never instantiated here: converters get no GL backend in this build.
class ConvertBackend
{
};

Result<void> ConverterHook::attach(Converter& conv)
{
    switch (conv.config().compute) {
    case ConvertCompute::Cpu:
        conv.compute_ = ConvertCompute::Cpu;
        conv.compute_reason_ = "requested";
        return {};
    case ConvertCompute::Auto:
        conv.compute_ = ConvertCompute::Cpu;
        conv.compute_reason_ = "built without the GL backend";
        return {};
    case ConvertCompute::Gl:
        return make_error(ErrorCode::NotSupported, "compute=gl: " + not_built().error.message());
    }
    return make_error(ErrorCode::InvalidArgument, "unknown compute backend code");
}

Result<void> ConverterHook::run(Converter&, const SourceFrame&, const DestFrame&)
{
    return not_built();
}

Result<void> ConverterHook::run(Converter&, const TensorDyn&, const TensorDyn&, const DestFrame&)
{
    return not_built();
}

Result<void> ConverterHook::set_source_modifier(Converter&, uint64_t modifier)
{
    if (modifier == 0)
        return {};
    return make_error(ErrorCode::InvalidArgument,
                      "a tiled or compressed DRM format modifier: the CPU engine reads linear "
                      "rows only, and this build has no GL backend to import such frames");
}
} // namespace detail::gl

void Converter::GlDeleter::operator()(detail::gl::ConvertBackend* b) const noexcept
{
    delete b;
}

GlImportStats Converter::gl_stats() const noexcept
{
    return {};
}

bool gl_built() noexcept
{
    return false;
}

Result<GlContext> GlContext::create()
{
    return not_built();
}

Result<GlContext> GlContext::shared()
{
    return not_built();
}

Result<GlInfo> GlContext::probe()
{
    return not_built();
}

const GlInfo& GlContext::info() const noexcept
{
    static const GlInfo none;
    return none;
}

Result<TensorDyn> GlContext::create_pbo(DType, const Shape&, std::string_view) const
{
    return not_built();
}

Result<TensorDyn> GlContext::create_pbo_image(size_t, size_t, PixelFormat, DType, CpuAccess,
                                              std::string_view) const
{
    return not_built();
}

bool GlContext::owns(const TensorDyn&) const noexcept
{
    return false;
}

GlDmaBufFormats GlContext::shared_dma_buf_formats()
{
    GlDmaBufFormats none;
    none.note = "built without the GL backend";
    return none;
}

GlDmaBufFormats GlContext::dma_buf_formats() const
{
    GlDmaBufFormats none;
    none.note = "built without the GL backend";
    return none;
}

Result<void> gl_set_source_modifier(Converter& conv, uint64_t modifier)
{
    return detail::gl::ConverterHook::set_source_modifier(conv, modifier);
}

} // namespace edgetensor
