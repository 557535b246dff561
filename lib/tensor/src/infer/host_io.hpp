// SPDX-License-Identifier: MIT
//
// A tensor's bytes on the host for the length of one run, as backends bind them: the tensor's
// own mapping when the runtime can use it there (the zero-copy case), else a tight copy in a
// buffer of the session, with the reason. Shared by the backend modules (exported from
// libedgetensor, which they link).

#pragma once

#include "edgetensor/tensor_dyn.hpp"

#include <cstdlib>
#include <memory>
#include <string>

namespace edgetensor::detail::infer
{

/// What a runtime needs from a buffer it reads or writes in place.
struct HostRules {
    /// The first byte's address must be a multiple of this.
    size_t alignment = 1;
    /// Bytes past the end the runtime may read (XNNPACK's vector loads): they must be mapped.
    size_t readable_after = 0;
};

/// 64-byte aligned bytes of a session's own, kept across runs (grown when too small).
class ScratchBuffer
{
public:
    /// At least `bytes` (+ 64 spare for over-reads); null when out of memory.
    uint8_t* get(size_t bytes) noexcept;

private:
    struct Free {
        void operator()(uint8_t* p) const noexcept { std::free(p); }
    };
    std::unique_ptr<uint8_t, Free> data_;
    size_t size_ = 0;
};

/// One input's bytes for a run. Holds a read map of the tensor (DMA-BUF sync bracket included)
/// until destroyed.
class HostInput
{
public:
    /// In place when the tensor is contiguous and meets `rules`; else a tight copy into
    /// `scratch`. NotSupported for an image whose planes live in two buffers.
    static Result<HostInput> prepare(const TensorDyn& tensor, const HostRules& rules,
                                     ScratchBuffer& scratch);

    const uint8_t* data() const noexcept { return data_; }
    size_t bytes() const noexcept { return bytes_; }
    bool copied() const noexcept { return !reason_.empty(); }
    /// Why the bytes were copied ("" when in place).
    const std::string& reason() const noexcept { return reason_; }

private:
    RawMap map_;
    const uint8_t* data_ = nullptr;
    size_t bytes_ = 0;
    std::string reason_;
};

/// One output's bytes for a run: the tensor's write map when the runtime can write it in place,
/// else `scratch`, copied into the tensor by finish().
class HostOutput
{
public:
    static Result<HostOutput> prepare(const TensorDyn& tensor, const HostRules& rules,
                                      ScratchBuffer& scratch);

    uint8_t* data() const noexcept { return data_; }
    size_t bytes() const noexcept { return bytes_; }
    bool copied() const noexcept { return !reason_.empty(); }
    const std::string& reason() const noexcept { return reason_; }
    /// Copies the scratch bytes into the tensor (nothing when in place) and ends the map.
    void finish() noexcept;

private:
    RawMap map_;
    uint8_t* data_ = nullptr;
    size_t bytes_ = 0;
    std::string reason_;
    Shape shape_;
    std::vector<ptrdiff_t> strides_;
    size_t elem_ = 1;
};

/// Copies a tensor's elements between a strided layout and a tight one (row-major).
void copy_to_tight(const uint8_t* src, const Shape& shape, const std::vector<ptrdiff_t>& strides,
                   size_t elem, uint8_t* dst) noexcept;
void copy_from_tight(const uint8_t* src, const Shape& shape, const std::vector<ptrdiff_t>& strides,
                     size_t elem, uint8_t* dst) noexcept;

} // namespace edgetensor::detail::infer
