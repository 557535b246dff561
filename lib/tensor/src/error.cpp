// SPDX-License-Identifier: MIT
#include "edgetensor/error.hpp"

#include <cstdio>
#include <cstring>

namespace edgetensor
{

std::string_view error_code_name(ErrorCode code) noexcept
{
    switch (code) {
    case ErrorCode::InvalidArgument:
        return "InvalidArgument";
    case ErrorCode::InvalidShape:
        return "InvalidShape";
    case ErrorCode::UnknownBufferType:
        return "UnknownBufferType";
    case ErrorCode::RegionOutOfBounds:
        return "RegionOutOfBounds";
    case ErrorCode::BatchIndexOutOfBounds:
        return "BatchIndexOutOfBounds";
    case ErrorCode::InsufficientCapacity:
        return "InsufficientCapacity";
    case ErrorCode::NotSupported:
        return "NotSupported";
    case ErrorCode::AllocationFailed:
        return "AllocationFailed";
    case ErrorCode::Io:
        return "Io";
    case ErrorCode::DTypeMismatch:
        return "DTypeMismatch";
    case ErrorCode::Unavailable:
        return "Unavailable";
    case ErrorCode::InvalidDescriptor:
        return "InvalidDescriptor";
    case ErrorCode::Disconnected:
        return "Disconnected";
    }
    return "Unknown";
}

Error Error::unknown_buffer_type(uint32_t magic, std::string message)
{
    Error e(ErrorCode::UnknownBufferType, std::move(message));
    e.fs_magic_ = magic;
    return e;
}

Error Error::io(int err, std::string_view what)
{
    std::string msg(what);
    msg += ": ";
    msg += std::strerror(err);
    Error e(ErrorCode::Io, std::move(msg));
    e.errno_ = err;
    return e;
}

} // namespace edgetensor
