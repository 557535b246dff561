// SPDX-License-Identifier: MIT
//
// The umbrella header: `#include <edgetensor/tensor.hpp>` brings in the whole core API.
// Tensor<T> is the typed face of TensorDyn; both share storage when converted.

#pragma once

#include "edgetensor/colorimetry.hpp"
#include "edgetensor/cuda.hpp"
#include "edgetensor/element_format.hpp"
#include "edgetensor/error.hpp"
#include "edgetensor/identity.hpp"
#include "edgetensor/log.hpp"
#include "edgetensor/pixel_format.hpp"
#include "edgetensor/tensor_desc.h"
#include "edgetensor/tensor_dyn.hpp"
#include "edgetensor/tensor_map.hpp"
#include "edgetensor/types.hpp"
#include "edgetensor/unique_fd.hpp"

#include <utility>

namespace edgetensor
{

template <typename T> class Tensor
{
public:
    using value_type = T;
    static constexpr DType kDType = dtype_of_v<T>;

    Tensor() = default;

    /// See TensorDyn::create.
    static Result<Tensor> create(const Shape& shape, std::optional<TensorMemory> memory = {},
                                 std::string_view name = {})
    {
        return wrap(TensorDyn::create(kDType, shape, memory, name));
    }
    /// See TensorDyn::image.
    static Result<Tensor> image(size_t width, size_t height, PixelFormat format, CpuAccess access,
                                std::optional<TensorMemory> memory = {}, std::string_view name = {})
    {
        return wrap(TensorDyn::image(width, height, format, kDType, access, memory, name));
    }
    /// See TensorDyn::from_fd. Takes ownership of `fd`.
    static Result<Tensor> from_fd(UniqueFd fd, const Shape& shape, std::string_view name = {})
    {
        return wrap(TensorDyn::from_fd(std::move(fd), kDType, shape, name));
    }
    /// See TensorDyn::from_planes.
    static Result<Tensor> from_planes(const Tensor& luma, const Tensor& chroma, PixelFormat format)
    {
        return wrap(TensorDyn::from_planes(luma.dyn_, chroma.dyn_, format));
    }
    /// Adopts a TensorDyn of the same dtype; DTypeMismatch otherwise.
    static Result<Tensor> from_dyn(TensorDyn t)
    {
        if (t.dtype() != kDType)
            return make_error(ErrorCode::DTypeMismatch,
                              std::string("tensor holds ") + std::string(dtype_name(t.dtype())) +
                                  " elements, not " + std::string(dtype_name(kDType)));
        return Tensor(std::move(t));
    }

    /// The dtype-erased tensor (shares storage and identity).
    const TensorDyn& dyn() const noexcept { return dyn_; }
    operator const TensorDyn&() const noexcept { return dyn_; }

    bool is_valid() const noexcept { return dyn_.is_valid(); }
    TensorMemory memory() const noexcept { return dyn_.memory(); }
    std::string_view provider() const noexcept { return dyn_.provider(); }
    const std::string& name() const noexcept { return dyn_.name(); }
    const Shape& shape() const noexcept { return dyn_.shape(); }
    const std::vector<ptrdiff_t>& strides() const noexcept { return dyn_.strides(); }
    size_t size() const noexcept { return dyn_.size(); }
    size_t len() const noexcept { return dyn_.len(); }
    bool is_empty() const noexcept { return len() == 0; }
    size_t capacity_bytes() const noexcept { return dyn_.capacity_bytes(); }
    std::optional<size_t> row_stride() const noexcept { return dyn_.row_stride(); }
    PixelFormat format() const noexcept { return dyn_.format(); }
    size_t width() const noexcept { return dyn_.width(); }
    size_t height() const noexcept { return dyn_.height(); }
    const Colorimetry& colorimetry() const noexcept { return dyn_.colorimetry(); }
    void set_colorimetry(const Colorimetry& c) noexcept { dyn_.set_colorimetry(c); }
    BufferIdentity buffer_identity() const noexcept { return dyn_.buffer_identity(); }
    int fd() const noexcept { return dyn_.fd(); }
    Result<UniqueFd> clone_fd() const { return dyn_.clone_fd(); }

    Result<Tensor> view(const Region& region) const { return wrap(dyn_.view(region)); }
    Result<Tensor> batch(size_t n) const { return wrap(dyn_.batch(n)); }
    Result<void> reshape(const Shape& shape) { return dyn_.reshape(shape); }
    Result<void> set_logical_shape(const Shape& shape) { return dyn_.set_logical_shape(shape); }
    Result<void> configure_image(size_t width, size_t height, PixelFormat format)
    {
        return dyn_.configure_image(width, height, format);
    }

    Result<TensorMap<T>> map_with(CpuAccess access) const { return dyn_.map_as<T>(access); }
    Result<TensorMap<T>> map() const { return map_with(CpuAccess::ReadWrite); }
    Result<TensorMap<const T>> map_read() const { return dyn_.map_as<const T>(CpuAccess::Read); }
    Result<TensorMap<T>> map_write() const { return map_with(CpuAccess::Write); }
    Result<TensorMap<T>> map_mut() const { return map_with(CpuAccess::ReadWrite); }
    /// See TensorDyn::cuda_map.
    Result<CudaMap> cuda_map() const { return dyn_.cuda_map(); }

private:
    explicit Tensor(TensorDyn t) : dyn_(std::move(t)) {}
    static Result<Tensor> wrap(Result<TensorDyn> r)
    {
        if (!r)
            return unexpected(std::move(r).error());
        return Tensor(std::move(*r));
    }

    TensorDyn dyn_;
};

template <typename T> Result<Tensor<T>> TensorDyn::as() const
{
    return Tensor<T>::from_dyn(*this);
}

} // namespace edgetensor
