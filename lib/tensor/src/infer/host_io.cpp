// SPDX-License-Identifier: MIT

#include "infer/host_io.hpp"

#include "dma/dma_internal.hpp"

#include <cstring>

namespace edgetensor::detail::infer
{
namespace
{

constexpr size_t kScratchAlign = 64;
constexpr size_t kScratchSpare = 64;

template <bool ToTight>
void copy_dims(const uint8_t* src, uint8_t* dst, const Shape& shape,
               const std::vector<ptrdiff_t>& strides, size_t elem, size_t dim,
               size_t& tight_pos) noexcept
{
    const bool inner = dim + 1 == shape.size();
    if (inner && strides[dim] == ptrdiff_t(elem)) {
        const size_t run = shape[dim] * elem;
        if constexpr (ToTight)
            std::memcpy(dst + tight_pos, src, run);
        else
            std::memcpy(dst, src + tight_pos, run);
        tight_pos += run;
        return;
    }
    for (size_t i = 0; i < shape[dim]; ++i) {
        const ptrdiff_t off = ptrdiff_t(i) * strides[dim];
        if (inner) {
            if constexpr (ToTight)
                std::memcpy(dst + tight_pos, src + off, elem);
            else
                std::memcpy(dst + off, src + tight_pos, elem);
            tight_pos += elem;
        } else if constexpr (ToTight) {
            copy_dims<true>(src + off, dst, shape, strides, elem, dim + 1, tight_pos);
        } else {
            copy_dims<false>(src, dst + off, shape, strides, elem, dim + 1, tight_pos);
        }
    }
}

/// Bytes after [p, p + n) that can be read without a fault: the rest of the allocation, or of
/// the page that holds the last byte (a mapped page is mapped whole).
size_t readable_after(const TensorDyn& t, const uint8_t* p, size_t n) noexcept
{
    const size_t in_allocation = t.capacity_bytes() > n ? t.capacity_bytes() - n : 0;
    const size_t page = dma_page_size();
    const auto end = reinterpret_cast<uintptr_t>(p) + n;
    const size_t in_page = end % page ? page - end % page : 0;
    return in_allocation > in_page ? in_allocation : in_page;
}

std::string why_not_in_place(const TensorDyn& t, const uint8_t* p, size_t n, const HostRules& rules)
{
    if (!t.is_contiguous())
        return "the tensor is not contiguous (row padding or a view); the runtime takes "
               "tight row-major bytes";
    if (rules.alignment > 1 && reinterpret_cast<uintptr_t>(p) % rules.alignment != 0)
        return "the tensor's first byte is not " + std::to_string(rules.alignment) +
               "-byte aligned, which the runtime requires";
    if (rules.readable_after > 0 && readable_after(t, p, n) < rules.readable_after)
        return "the tensor ends within " + std::to_string(rules.readable_after) +
               " bytes of the end of its buffer, and the runtime may read that far past an "
               "input (allocate it with that much spare capacity)";
    return {};
}

} // namespace

uint8_t* ScratchBuffer::get(size_t bytes) noexcept
{
    const size_t want = bytes + kScratchSpare;
    if (size_ < want) {
        void* p = nullptr;
        const size_t rounded = (want + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
        if (posix_memalign(&p, kScratchAlign, rounded) != 0 || !p)
            return nullptr;
        std::memset(p, 0, rounded);
        data_.reset(static_cast<uint8_t*>(p));
        size_ = rounded;
    }
    return data_.get();
}

void copy_to_tight(const uint8_t* src, const Shape& shape, const std::vector<ptrdiff_t>& strides,
                   size_t elem, uint8_t* dst) noexcept
{
    if (shape.empty()) {
        std::memcpy(dst, src, elem);
        return;
    }
    size_t pos = 0;
    copy_dims<true>(src, dst, shape, strides, elem, 0, pos);
}

void copy_from_tight(const uint8_t* src, const Shape& shape, const std::vector<ptrdiff_t>& strides,
                     size_t elem, uint8_t* dst) noexcept
{
    if (shape.empty()) {
        std::memcpy(dst, src, elem);
        return;
    }
    size_t pos = 0;
    copy_dims<false>(src, dst, shape, strides, elem, 0, pos);
}

Result<HostInput> HostInput::prepare(const TensorDyn& tensor, const HostRules& rules,
                                     ScratchBuffer& scratch)
{
    if (tensor.plane_count() > 1)
        return make_error(ErrorCode::NotSupported,
                          "a two-plane image cannot be a model input; convert it to the model's "
                          "tensor first (tensorconvert)");
    auto map = tensor.map_raw(CpuAccess::Read);
    if (!map)
        return unexpected(std::move(map).error());
    HostInput in;
    in.bytes_ = tensor.size();
    std::string why = why_not_in_place(tensor, map->bytes(), in.bytes_, rules);
    if (why.empty()) {
        in.data_ = map->bytes();
        in.map_ = std::move(*map);
        return in;
    }
    uint8_t* dst = scratch.get(in.bytes_);
    if (!dst)
        return make_error(ErrorCode::AllocationFailed, "out of memory for a copy of an input (" +
                                                           std::to_string(in.bytes_) + " bytes)");
    copy_to_tight(map->bytes(), tensor.shape(), tensor.strides(), dtype_size(tensor.dtype()), dst);
    in.data_ = dst;
    in.reason_ = std::move(why);
    return in; // the map ends here: the copy is what the runtime reads
}

Result<HostOutput> HostOutput::prepare(const TensorDyn& tensor, const HostRules& rules,
                                       ScratchBuffer& scratch)
{
    if (tensor.plane_count() > 1)
        return make_error(ErrorCode::NotSupported, "a two-plane image cannot be a model output");
    auto map = tensor.map_raw(CpuAccess::Write);
    if (!map)
        return unexpected(std::move(map).error());
    HostOutput out;
    out.bytes_ = tensor.size();
    HostRules write_rules = rules;
    write_rules.readable_after = 0; // runtimes read past inputs, never write past outputs
    std::string why = why_not_in_place(tensor, map->bytes(), out.bytes_, write_rules);
    if (why.empty()) {
        out.data_ = map->bytes();
        out.map_ = std::move(*map);
        return out;
    }
    uint8_t* dst = scratch.get(out.bytes_);
    if (!dst)
        return make_error(ErrorCode::AllocationFailed, "out of memory for an output's buffer (" +
                                                           std::to_string(out.bytes_) + " bytes)");
    out.data_ = dst;
    out.reason_ = std::move(why);
    out.shape_ = tensor.shape();
    out.strides_ = tensor.strides();
    out.elem_ = dtype_size(tensor.dtype());
    out.map_ = std::move(*map);
    return out;
}

void HostOutput::finish() noexcept
{
    if (!reason_.empty() && map_.is_mapped())
        copy_from_tight(data_, shape_, strides_, elem_, map_.bytes());
    map_.reset();
}

} // namespace edgetensor::detail::infer
