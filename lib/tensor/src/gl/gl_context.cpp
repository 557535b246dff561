// SPDX-License-Identifier: MIT
//
// The public face of the GL backend: GlContext handles and PBO tensor creation.

#include "edgetensor/gl.hpp"

#include "gl/gl_worker.hpp"
#include "gl/pbo_storage.hpp"
#include "tensor_internal.hpp"

#include <limits>
#include <mutex>

namespace edgetensor
{

using detail::gl::PboStorage;
using detail::gl::Worker;

bool gl_built() noexcept
{
    return true;
}

Result<GlContext> GlContext::create()
{
    auto w = Worker::start();
    if (!w)
        return unexpected(std::move(w).error());
    return GlContext(std::move(*w));
}

Result<GlContext> GlContext::shared()
{
    auto w = detail::gl::shared_worker();
    if (!w)
        return unexpected(std::move(w).error());
    return GlContext(std::move(*w));
}

Result<GlInfo> GlContext::probe()
{
    static std::once_flag once;
    static std::optional<Result<GlInfo>> result;
    std::call_once(once, [] {
        auto c = shared();
        if (c)
            result.emplace(c->info());
        else
            result.emplace(std::move(c).error());
    });
    return *result;
}

const GlInfo& GlContext::info() const noexcept
{
    return worker_->info();
}

bool GlContext::owns(const TensorDyn& tensor) const noexcept
{
    if (!worker_ || tensor.memory() != TensorMemory::Pbo)
        return false;
    const auto& s = detail::TensorAccess::storage(tensor);
    const auto* pbo = static_cast<const PboStorage*>(s.get());
    return pbo->owner_serial() == worker_->serial();
}

Result<TensorDyn> GlContext::create_pbo(DType dtype, const Shape& shape,
                                        std::string_view name) const
{
    if (!worker_)
        return make_error(ErrorCode::InvalidArgument, "create_pbo on an empty GlContext handle");
    const auto n = detail::checked_len(shape);
    const size_t elem = dtype_size(dtype);
    if (!n || *n > std::numeric_limits<size_t>::max() / elem)
        return make_error(ErrorCode::InvalidShape,
                          "PBO tensor shape " + detail::shape_string(shape) +
                              " is invalid: it must be non-empty, without zero dimensions");
    auto s = PboStorage::create(worker_, *n * elem, CpuAccess::ReadWrite,
                                name.empty() ? std::string("pbo") : std::string(name));
    if (!s)
        return unexpected(std::move(s).error());
    return detail::TensorAccess::wrap(std::move(*s), dtype, shape, {}, 0, name);
}

Result<TensorDyn> GlContext::create_pbo_image(size_t width, size_t height, PixelFormat format,
                                              DType dtype, CpuAccess access,
                                              std::string_view name) const
{
    const auto info = pixel_format_info(format);
    if (!info)
        return make_error(ErrorCode::InvalidArgument, "pixel format code " +
                                                          std::to_string(uint32_t(format)) +
                                                          " is not an image format");
    if (width == 0 || height == 0 || width > (1u << 24) || height > (1u << 24))
        return make_error(ErrorCode::InvalidShape, "image size " + std::to_string(width) + "x" +
                                                       std::to_string(height) + " is invalid");
    const size_t elem = dtype_size(dtype);
    const size_t bytes = image_row_stride(format, width, StridePolicy::Host, elem) *
                         image_total_rows(format, height);
    auto flat = create_pbo(dtype, {bytes / elem}, name);
    if (!flat)
        return unexpected(std::move(flat).error());
    return flat->as_image(width, height, format, {}, access);
}

} // namespace edgetensor
