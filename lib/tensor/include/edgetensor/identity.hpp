// SPDX-License-Identifier: MIT

#pragma once

#include <cstdint>
#include <memory>

namespace edgetensor
{

namespace detail
{
struct IdentityToken;
}

/// Who a buffer is, for caches. Minted once per allocation or import; copies, views and
/// batches of a tensor share it. The id is process-unique and increases monotonically.
/// The identity holds no strong reference: is_alive() turns false once the last tensor
/// sharing it is gone, so caches can detect stale entries without keeping buffers alive.
class BufferIdentity
{
public:
    BufferIdentity() = default;

    uint64_t id() const noexcept { return id_; }
    bool is_alive() const noexcept { return !weak_.expired(); }
    /// A weak handle that expires with the last sharer.
    std::weak_ptr<const void> weak() const noexcept { return weak_; }

    friend bool operator==(const BufferIdentity& a, const BufferIdentity& b) noexcept
    {
        return a.id_ == b.id_;
    }

private:
    friend class TensorDyn;
    BufferIdentity(uint64_t id, std::weak_ptr<const void> weak) : id_(id), weak_(std::move(weak)) {}

    uint64_t id_ = 0;
    std::weak_ptr<const void> weak_;
};

} // namespace edgetensor
