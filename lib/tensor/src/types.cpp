// SPDX-License-Identifier: MIT
#include "edgetensor/types.hpp"

namespace edgetensor
{

std::string_view dtype_name(DType t) noexcept
{
    switch (t) {
    case DType::U8:
        return "u8";
    case DType::I8:
        return "i8";
    case DType::U16:
        return "u16";
    case DType::I16:
        return "i16";
    case DType::U32:
        return "u32";
    case DType::I32:
        return "i32";
    case DType::U64:
        return "u64";
    case DType::I64:
        return "i64";
    case DType::F16:
        return "f16";
    case DType::F32:
        return "f32";
    case DType::F64:
        return "f64";
    }
    return "unknown";
}

std::string_view memory_name(TensorMemory m) noexcept
{
    switch (m) {
    case TensorMemory::Mem:
        return "mem";
    case TensorMemory::Dma:
        return "dma";
    case TensorMemory::Shm:
        return "shm";
    case TensorMemory::Pbo:
        return "pbo";
    }
    return "unknown";
}

std::string_view access_name(CpuAccess a) noexcept
{
    switch (a) {
    case CpuAccess::None:
        return "none";
    case CpuAccess::Read:
        return "read";
    case CpuAccess::Write:
        return "write";
    case CpuAccess::ReadWrite:
        return "read-write";
    }
    return "unknown";
}

} // namespace edgetensor
