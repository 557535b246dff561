// SPDX-License-Identifier: MIT
//
// Small value types shared by every part of the library.

#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace edgetensor
{

/// Element type. The numeric values are wire codes (TensorDesc.dtype) and never change.
enum class DType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    U64 = 6,
    I64 = 7,
    F16 = 8,
    F32 = 9,
    F64 = 10,
};

inline constexpr uint32_t kDTypeCount = 11;

/// Size of one element in bytes.
constexpr size_t dtype_size(DType t) noexcept
{
    switch (t) {
    case DType::U8:
    case DType::I8:
        return 1;
    case DType::U16:
    case DType::I16:
    case DType::F16:
        return 2;
    case DType::U32:
    case DType::I32:
    case DType::F32:
        return 4;
    case DType::U64:
    case DType::I64:
    case DType::F64:
        return 8;
    }
    return 0;
}

/// "u8", "f32", ...
std::string_view dtype_name(DType t) noexcept;
/// True when `code` is a known DType wire code.
constexpr bool dtype_from_code(uint32_t code, DType* out) noexcept
{
    if (code >= kDTypeCount)
        return false;
    if (out)
        *out = static_cast<DType>(code);
    return true;
}

/// IEEE 754 binary16 storage type (no arithmetic; conversions live in the convert engine).
struct Float16 {
    uint16_t bits;
};

template <typename T> struct dtype_of;
template <> struct dtype_of<uint8_t> {
    static constexpr DType value = DType::U8;
};
template <> struct dtype_of<int8_t> {
    static constexpr DType value = DType::I8;
};
template <> struct dtype_of<uint16_t> {
    static constexpr DType value = DType::U16;
};
template <> struct dtype_of<int16_t> {
    static constexpr DType value = DType::I16;
};
template <> struct dtype_of<uint32_t> {
    static constexpr DType value = DType::U32;
};
template <> struct dtype_of<int32_t> {
    static constexpr DType value = DType::I32;
};
template <> struct dtype_of<uint64_t> {
    static constexpr DType value = DType::U64;
};
template <> struct dtype_of<int64_t> {
    static constexpr DType value = DType::I64;
};
template <> struct dtype_of<Float16> {
    static constexpr DType value = DType::F16;
};
template <> struct dtype_of<float> {
    static constexpr DType value = DType::F32;
};
template <> struct dtype_of<double> {
    static constexpr DType value = DType::F64;
};
template <typename T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

/// Where a tensor's bytes live. Dma is the platform buffer (Linux DMA-BUF).
enum class TensorMemory : uint32_t {
    Mem = 0,
    Dma = 1,
    Shm = 2,
    Pbo = 3,
};

/// "mem", "dma", "shm", "pbo"
std::string_view memory_name(TensorMemory m) noexcept;

/// What the CPU will do with a buffer. Hardware access needs no declaration.
enum class CpuAccess : uint32_t {
    None = 0,
    Read = 1,
    Write = 2,
    ReadWrite = 3,
};

constexpr bool access_reads(CpuAccess a) noexcept
{
    return (static_cast<uint32_t>(a) & 1u) != 0;
}
constexpr bool access_writes(CpuAccess a) noexcept
{
    return (static_cast<uint32_t>(a) & 2u) != 0;
}
/// True when `wanted` asks for nothing that `declared` did not declare.
constexpr bool access_covers(CpuAccess declared, CpuAccess wanted) noexcept
{
    return (static_cast<uint32_t>(wanted) & ~static_cast<uint32_t>(declared)) == 0;
}
std::string_view access_name(CpuAccess a) noexcept;

/// A rectangle in pixels of a tensor's leading spatial frame.
struct Region {
    size_t x = 0;
    size_t y = 0;
    size_t width = 0;
    size_t height = 0;

    friend bool operator==(const Region&, const Region&) = default;
};

} // namespace edgetensor
