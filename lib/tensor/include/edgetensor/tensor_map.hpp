// SPDX-License-Identifier: MIT
//
// CPU maps: RAII, access-typed. A map keeps the storage alive and brackets the CPU access
// (DMA_BUF_IOCTL_SYNC START/END for DMA-BUF) until it is destroyed or reset().

#pragma once

#include "edgetensor/types.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

namespace edgetensor
{

namespace detail
{
/// Ends the CPU access of every storage a map covers when destroyed.
class MapGuard
{
public:
    virtual ~MapGuard() = default;
};
void warn_mutable_access_through_read_map() noexcept;
} // namespace detail

/// One plane of a map: its first byte, its extent and its row pitch (0 when not an image).
struct MappedPlane {
    uint8_t* data = nullptr;
    size_t size_bytes = 0;
    size_t row_stride = 0;
};

/// The untyped core of a map. Move-only; a moved-from map is inert.
class RawMap
{
public:
    static constexpr size_t kMaxPlanes = 2;

    RawMap() = default;
    RawMap(std::unique_ptr<detail::MapGuard> guard, CpuAccess access, uint8_t* data, size_t bytes,
           std::array<MappedPlane, kMaxPlanes> planes, size_t plane_count) noexcept
        : guard_(std::move(guard)), access_(access), data_(data), bytes_(bytes), planes_(planes),
          plane_count_(plane_count)
    {
    }
    RawMap(RawMap&& o) noexcept { *this = std::move(o); }
    RawMap& operator=(RawMap&& o) noexcept
    {
        if (this != &o) {
            guard_ = std::move(o.guard_);
            access_ = std::exchange(o.access_, CpuAccess::None);
            data_ = std::exchange(o.data_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
            planes_ = std::exchange(o.planes_, {});
            plane_count_ = std::exchange(o.plane_count_, 0);
        }
        return *this;
    }
    RawMap(const RawMap&) = delete;
    RawMap& operator=(const RawMap&) = delete;

    /// True while the map holds an access bracket.
    bool is_mapped() const noexcept { return guard_ != nullptr; }
    CpuAccess access() const noexcept { return access_; }
    bool writable() const noexcept { return access_writes(access_); }
    uint8_t* bytes() const noexcept { return data_; }
    size_t size_bytes() const noexcept { return bytes_; }
    size_t plane_count() const noexcept { return plane_count_; }
    const MappedPlane& plane(size_t i) const noexcept { return planes_[i < plane_count_ ? i : 0]; }

    /// Ends the CPU access now (syncs DMA-BUFs); the map becomes inert.
    void reset() noexcept { *this = RawMap(); }

private:
    std::unique_ptr<detail::MapGuard> guard_;
    CpuAccess access_ = CpuAccess::None;
    uint8_t* data_ = nullptr;
    size_t bytes_ = 0;
    std::array<MappedPlane, kMaxPlanes> planes_{};
    size_t plane_count_ = 0;
};

/// A typed map. `T` const (TensorMap<const U>, what map_read() returns) exposes only const
/// data. A TensorMap<U> obtained with CpuAccess::Read refuses mutable access: its non-const
/// data() returns an empty span and logs an error; use cdata() to read.
template <typename T> class TensorMap
{
    using Elem = std::remove_const_t<T>;

public:
    using element_type = T;

    TensorMap() = default;
    explicit TensorMap(RawMap raw) noexcept : raw_(std::move(raw)) {}

    /// The window's elements (strided images: from the first pixel to the last addressed byte).
    std::span<T> data() noexcept
    {
        if constexpr (!std::is_const_v<T>) {
            if (raw_.is_mapped() && !raw_.writable()) {
                detail::warn_mutable_access_through_read_map();
                return {};
            }
        }
        return {reinterpret_cast<T*>(raw_.bytes()), raw_.size_bytes() / sizeof(Elem)};
    }
    std::span<const Elem> data() const noexcept { return cdata(); }
    std::span<const Elem> cdata() const noexcept
    {
        return {reinterpret_cast<const Elem*>(raw_.bytes()), raw_.size_bytes() / sizeof(Elem)};
    }

    /// Plane `i` (semi-planar images have two): bytes from its first pixel, and its pitch.
    const MappedPlane& plane(size_t i) const noexcept { return raw_.plane(i); }
    size_t plane_count() const noexcept { return raw_.plane_count(); }

    size_t len() const noexcept { return raw_.size_bytes() / sizeof(Elem); }
    bool writable() const noexcept { return raw_.writable(); }
    bool is_mapped() const noexcept { return raw_.is_mapped(); }
    CpuAccess access() const noexcept { return raw_.access(); }
    /// Ends the CPU access early; the map becomes inert.
    void reset() noexcept { raw_.reset(); }

private:
    RawMap raw_;
};

/// Process-wide count of maps that went beyond the CpuAccess a buffer was declared with.
uint64_t unplanned_cpu_access_count() noexcept;

} // namespace edgetensor
