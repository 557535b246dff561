// SPDX-License-Identifier: MIT

#include "interop/layout_check.hpp"

#include "edgetensor/pixel_format.hpp"
#include "tensor_access.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

namespace edgetensor::detail
{
namespace
{

template <typename T> std::string join_dims(std::span<const T> dims)
{
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i)
            s += ", ";
        s += std::to_string(dims[i]);
    }
    return s + "]";
}

Unexpected fail(ErrorCode code, std::string_view what, const std::string& msg)
{
    return make_error(code, std::string(what) + ": " + msg);
}

} // namespace

bool chroma_plane_is_contiguous(const TensorDyn& t)
{
    if (!t.is_image() || t.plane_count() < 2)
        return true;
    const auto info = pixel_format_info(t.format());
    const auto luma = t.plane_layout(0);
    const auto chroma = t.plane_layout(1);
    if (!info || !luma || !chroma || TensorAccess::chroma_storage(t) != TensorAccess::storage(t))
        return false;
    // Both planes share one pitch (see PixelLayout::SemiPlanar).
    const size_t pitch = luma->stride;
    return chroma->stride == pitch &&
           chroma->offset == luma->offset + image_plane0_rows(t.format(), t.height()) * pitch;
}

std::string format_dims(std::span<const uint64_t> dims)
{
    return join_dims(dims);
}
std::string format_dims(std::span<const int64_t> dims)
{
    return join_dims(dims);
}

Result<LayoutFacts> check_layout(std::span<const uint64_t> shape, std::span<const int64_t> strides,
                                 size_t elem, ErrorCode code, std::string_view what)
{
    if (shape.empty())
        return fail(code, what, "a tensor needs at least one dimension");
    if (strides.size() != shape.size())
        return fail(code, what, "shape and strides have different ranks");
    if (elem == 0)
        return fail(code, what, "element size is 0");

    LayoutFacts facts;
    facts.len = 1;
    size_t span_bytes = 0; // sum of (dim - 1) * stride
    for (size_t i = 0; i < shape.size(); ++i) {
        const uint64_t dim = shape[i];
        const int64_t stride = strides[i];
        if (dim == 0)
            return fail(code, what,
                        "dimension " + std::to_string(i) + " of shape " + format_dims(shape) +
                            " is 0 (empty tensors are refused)");
        if (dim > std::numeric_limits<size_t>::max() ||
            __builtin_mul_overflow(facts.len, size_t(dim), &facts.len))
            return fail(code, what, "shape " + format_dims(shape) + " overflows the element count");
        if (dim == 1)
            continue; // the stride of a unit dimension never moves the address
        if (stride < 0)
            return fail(code, what,
                        "stride " + std::to_string(i) + " is negative (" + std::to_string(stride) +
                            " bytes); edgetensor windows grow forward from their first byte");
        if (stride == 0)
            return fail(code, what,
                        "stride " + std::to_string(i) + " is 0 on a dimension of size " +
                            std::to_string(dim) +
                            " (broadcast layouts alias elements and are refused)");
        if (size_t(stride) % elem != 0)
            return fail(code, what,
                        "stride " + std::to_string(i) + " (" + std::to_string(stride) +
                            " bytes) is not a multiple of the element size (" +
                            std::to_string(elem) + " bytes)");
        size_t step = 0;
        if (__builtin_mul_overflow(size_t(dim - 1), size_t(stride), &step) ||
            __builtin_add_overflow(span_bytes, step, &span_bytes))
            return fail(code, what,
                        "shape " + format_dims(shape) + " with strides " + format_dims(strides) +
                            " addresses more bytes than fit in size_t (overflow)");
    }
    if (__builtin_add_overflow(span_bytes, elem, &facts.extent))
        return fail(code, what, "the addressed byte range overflows size_t");
    // Element bytes times the count must also be representable (size() of the tensor).
    size_t total = 0;
    if (__builtin_mul_overflow(facts.len, elem, &total))
        return fail(code, what, "shape " + format_dims(shape) + " overflows the byte count");

    // No two elements may share bytes: walking dimensions from the smallest stride up, each
    // stride must step past everything the smaller dimensions address.
    std::array<size_t, 64> order_buf{};
    std::vector<size_t> order_heap;
    std::span<size_t> order;
    if (shape.size() <= order_buf.size()) {
        order = std::span<size_t>(order_buf.data(), shape.size());
    } else {
        order_heap.resize(shape.size());
        order = order_heap;
    }
    size_t n = 0;
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i] > 1)
            order[n++] = i;
    order = order.first(n);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return strides[a] != strides[b] ? strides[a] < strides[b] : a > b;
    });
    size_t covered = elem;
    for (size_t i : order) {
        if (size_t(strides[i]) < covered)
            return fail(code, what,
                        "strides " + format_dims(strides) + " make elements of shape " +
                            format_dims(shape) + " overlap (dimension " + std::to_string(i) +
                            " steps " + std::to_string(strides[i]) +
                            " bytes, inner dimensions span " + std::to_string(covered) + ")");
        covered = size_t(strides[i]) * size_t(shape[i] - 1) + covered; // checked above
    }
    return facts;
}

} // namespace edgetensor::detail
