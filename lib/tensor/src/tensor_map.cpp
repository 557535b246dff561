// SPDX-License-Identifier: MIT
//
// CPU maps. A map pins every storage it covers (plane 0, and a separate chroma buffer for
// from_planes images) and brackets the access on each until the map is destroyed.

#include "edgetensor/tensor_dyn.hpp"

#include "log.hpp"
#include "tensor_internal.hpp"

#include <algorithm>
#include <array>
#include <atomic>

namespace edgetensor
{
namespace
{

std::atomic<uint64_t> g_unplanned{0};

class StorageMapGuard final : public detail::MapGuard
{
public:
    explicit StorageMapGuard(CpuAccess access) : access_(access) {}
    ~StorageMapGuard() override
    {
        while (count_ > 0)
            held_[--count_]->end_cpu_access(access_);
    }
    // A map covers at most two buffers (a from_planes image's luma and chroma); held inline so
    // a per-frame map costs one allocation, not two.
    Result<uint8_t*> add(const std::shared_ptr<detail::Storage>& s)
    {
        if (count_ == held_.size())
            return make_error(ErrorCode::InvalidArgument, "internal: a map covers two buffers");
        auto base = s->begin_cpu_access(access_);
        if (base)
            held_[count_++] = s;
        return base;
    }

private:
    CpuAccess access_;
    std::array<std::shared_ptr<detail::Storage>, RawMap::kMaxPlanes> held_;
    size_t count_ = 0;
};

} // namespace

namespace detail
{
void warn_mutable_access_through_read_map() noexcept
{
    ET_LOG_ERROR("map", "mutable access through a read map refused (map with CpuAccess::Write or "
                        "ReadWrite to write; use cdata() to read)");
}
} // namespace detail

uint64_t unplanned_cpu_access_count() noexcept
{
    return g_unplanned.load(std::memory_order_relaxed);
}

Result<void> TensorDyn::check_map(CpuAccess access) const
{
    if (access == CpuAccess::None)
        return make_error(ErrorCode::InvalidArgument,
                          "CpuAccess::None is not a mappable direction; map with Read, Write or "
                          "ReadWrite");
    if (!storage_)
        return make_error(ErrorCode::InvalidArgument, "map of an empty tensor");
    if (static_cast<uint32_t>(access) > 3)
        return make_error(ErrorCode::InvalidArgument, "unknown CpuAccess value");

    if (!access_covers(access_, access)) {
        // Best-effort, never silent: undeclared CPU access is a pipeline smell to surface.
        g_unplanned.fetch_add(1, std::memory_order_relaxed);
        if (storage_->first_unplanned_access())
            ET_LOG_WARNING("map",
                           "tensor '%s' declared CPU access '%.*s' but is mapped for '%.*s'; "
                           "this may be slow or unsupported on some platforms",
                           name_.c_str(), int(access_name(access_).size()),
                           access_name(access_).data(), int(access_name(access).size()),
                           access_name(access).data());
    }
    return {};
}

Result<RawMap> TensorDyn::map_allocation(CpuAccess access) const
{
    EDGETENSOR_TRY(check_map(access));
    auto guard = std::make_unique<StorageMapGuard>(access);
    auto base = guard->add(storage_);
    if (!base)
        return unexpected(std::move(base).error());
    const size_t bytes = storage_->capacity();
    std::array<MappedPlane, RawMap::kMaxPlanes> planes{};
    planes[0] = {*base, bytes, 0};
    return RawMap(std::move(guard), access, *base, bytes, planes, 1);
}

size_t TensorDyn::window_bytes() const noexcept
{
    if (!chroma_)
        return detail::strided_extent(shape_, strides_, dtype_size(dtype_));
    const auto info = pixel_format_info(format_);
    const size_t extent0 = (height_ - 1) * size_t(strides_[0]) + width_;
    if (chroma_->storage != storage_ || chroma_->offset < offset_)
        return extent0;
    const size_t crows = (height_ + info->chroma_v_sub - 1) / info->chroma_v_sub;
    const size_t crow = 2 * ((width_ + info->chroma_h_sub - 1) / info->chroma_h_sub);
    const size_t extent1 = (crows - 1) * chroma_->stride + crow;
    return std::max(extent0, chroma_->offset + extent1 - offset_);
}

Result<RawMap> TensorDyn::map_raw(CpuAccess access) const
{
    EDGETENSOR_TRY(check_map(access));

    auto guard = std::make_unique<StorageMapGuard>(access);
    auto base = guard->add(storage_);
    if (!base)
        return unexpected(std::move(base).error());

    const size_t elem = dtype_size(dtype_);
    std::array<MappedPlane, RawMap::kMaxPlanes> planes{};
    size_t nplanes = 1;
    size_t extent0;
    if (chroma_) {
        const auto info = pixel_format_info(format_);
        const size_t rs = size_t(strides_[0]);
        extent0 = (height_ - 1) * rs + width_;
        const size_t crows = (height_ + info->chroma_v_sub - 1) / info->chroma_v_sub;
        const size_t crow = 2 * ((width_ + info->chroma_h_sub - 1) / info->chroma_h_sub);
        const size_t extent1 = (crows - 1) * chroma_->stride + crow;
        uint8_t* cbase = *base;
        if (chroma_->storage != storage_) {
            auto b = guard->add(chroma_->storage);
            if (!b)
                return unexpected(std::move(b).error());
            cbase = *b;
        }
        planes[0] = {*base + offset_, extent0, rs};
        planes[1] = {cbase + chroma_->offset, extent1, chroma_->stride};
        nplanes = 2;
    } else {
        extent0 = detail::strided_extent(shape_, strides_, elem);
        planes[0] = {*base + offset_, extent0, row_stride().value_or(0)};
    }

    // data() spans the window; in one buffer it reaches the end of the chroma plane too.
    const size_t bytes = window_bytes();
    if (offset_ + bytes > storage_->capacity())
        return make_error(ErrorCode::InsufficientCapacity,
                          "internal: tensor window exceeds its storage");
    return RawMap(std::move(guard), access, *base + offset_, bytes, planes, nplanes);
}

Result<TensorMap<uint8_t>> TensorDyn::map_with(CpuAccess access) const
{
    auto raw = map_raw(access);
    if (!raw)
        return unexpected(std::move(raw).error());
    return TensorMap<uint8_t>(std::move(*raw));
}

Result<TensorMap<const uint8_t>> TensorDyn::map_read() const
{
    auto raw = map_raw(CpuAccess::Read);
    if (!raw)
        return unexpected(std::move(raw).error());
    return TensorMap<const uint8_t>(std::move(*raw));
}

} // namespace edgetensor
