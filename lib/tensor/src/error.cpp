// SPDX-License-Identifier: MIT
#include "edgetensor/error.hpp"

#include "errno_name.hpp"

#include <array>
#include <cerrno>
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
    case ErrorCode::Device:
        return "Device";
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
    msg += detail::errno_text(err);
    Error e(ErrorCode::Io, std::move(msg));
    e.errno_ = err;
    return e;
}

Error Error::with_context(std::string_view context) const
{
    Error e = *this;
    e.message_ = std::string(context) + ": " + message_;
    return e;
}

namespace detail
{
namespace
{

struct ErrnoName {
    int value;
    const char* name;
};

// The errnos our system calls report, and those a fault test may inject.
constexpr std::array<ErrnoName, 29> kErrnoNames{{
    {EPERM, "EPERM"},     {ENOENT, "ENOENT"},       {EINTR, "EINTR"},
    {EIO, "EIO"},         {ENXIO, "ENXIO"},         {EBADF, "EBADF"},
    {EAGAIN, "EAGAIN"},   {ENOMEM, "ENOMEM"},       {EACCES, "EACCES"},
    {EFAULT, "EFAULT"},   {EBUSY, "EBUSY"},         {EEXIST, "EEXIST"},
    {ENODEV, "ENODEV"},   {EINVAL, "EINVAL"},       {ENFILE, "ENFILE"},
    {EMFILE, "EMFILE"},   {ENOTTY, "ENOTTY"},       {EFBIG, "EFBIG"},
    {ENOSPC, "ENOSPC"},   {ESPIPE, "ESPIPE"},       {EROFS, "EROFS"},
    {ERANGE, "ERANGE"},   {ENOSYS, "ENOSYS"},       {EOVERFLOW, "EOVERFLOW"},
    {ENOTSUP, "ENOTSUP"}, {ETIMEDOUT, "ETIMEDOUT"}, {ECANCELED, "ECANCELED"},
    {EDEADLK, "EDEADLK"}, {kEnotsupp, "ENOTSUPP"},
}};

} // namespace

const char* errno_name(int err) noexcept
{
    for (const ErrnoName& e : kErrnoNames)
        if (e.value == err)
            return e.name;
    return nullptr;
}

std::optional<int> errno_from_name(std::string_view name) noexcept
{
    for (const ErrnoName& e : kErrnoNames)
        if (name == e.name)
            return e.value;
    return std::nullopt;
}

std::string errno_text(int err)
{
    // libc has no text for ENOTSUPP ("Unknown error 524").
    std::string s = err == kEnotsupp ? "Operation not supported by the driver" : std::strerror(err);
    if (const char* n = errno_name(err)) {
        s += " (";
        s += n;
        s += ')';
    } else {
        s += " (errno " + std::to_string(err) + ")";
    }
    return s;
}

} // namespace detail

} // namespace edgetensor
