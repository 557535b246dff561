// SPDX-License-Identifier: MIT
//
// Errors are values: every fallible call returns Result<T>, and nothing the
// library does throws across its boundary.

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace edgetensor
{

enum class ErrorCode : uint32_t {
    InvalidArgument = 1,
    InvalidShape,
    /// The fd's filesystem is neither dma_buf nor tmpfs; Error::fs_magic() holds the magic.
    UnknownBufferType,
    RegionOutOfBounds,
    BatchIndexOutOfBounds,
    InsufficientCapacity,
    NotSupported,
    AllocationFailed,
    /// A system call failed; Error::sys_errno() holds errno.
    Io,
    DTypeMismatch,
    /// No provider could satisfy the request (e.g. no DMA-BUF exporter on this host).
    Unavailable,
    /// A descriptor or foreign handle failed validation.
    InvalidDescriptor,
    /// The owner a handle depends on has gone (a PBO tensor whose GL context shut down).
    Disconnected,
    /// A device runtime (CUDA, GL/EGL) refused a call; the message names the call and the
    /// runtime's own error. Not a system call: there is no errno.
    Device,
};

/// Human-readable name of an error code ("InvalidShape", ...).
std::string_view error_code_name(ErrorCode code) noexcept;

class Error
{
public:
    Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

    static Error unknown_buffer_type(uint32_t magic, std::string message);
    static Error io(int err, std::string_view what);

    ErrorCode code() const noexcept { return code_; }
    /// The normalised (u32) fstatfs magic for ErrorCode::UnknownBufferType, else 0.
    uint32_t fs_magic() const noexcept { return fs_magic_; }
    /// errno for ErrorCode::Io, else 0.
    int sys_errno() const noexcept { return errno_; }
    /// A sentence a user can act on.
    const std::string& message() const noexcept { return message_; }
    /// The same error (code, errno, magic) with "`context`: " put before its message, for a
    /// caller that knows what the failed step was for.
    Error with_context(std::string_view context) const;

private:
    ErrorCode code_;
    std::string message_;
    uint32_t fs_magic_ = 0;
    int errno_ = 0;
};

/// Tag used to build a failed Result: `return unexpected(Error{...});`
struct Unexpected {
    Error error;
};
inline Unexpected unexpected(Error e)
{
    return Unexpected{std::move(e)};
}
inline Unexpected make_error(ErrorCode code, std::string message)
{
    return Unexpected{Error(code, std::move(message))};
}

/// A value or an Error, with the interface of std::expected<T, Error>.
/// Accessing the wrong alternative is a programming error (it aborts in debug builds
/// through std::get's checks; never UB in release because std::get checks the index).
template <typename T> class [[nodiscard]] Result
{
public:
    using value_type = T;

    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}
    Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}
    template <typename U>
    requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
             !std::is_same_v<std::decay_t<U>, Unexpected> &&
             !std::is_same_v<std::decay_t<U>, Error> && !std::is_same_v<std::decay_t<U>, Result>)
        Result(U&& value)
        : v_(std::in_place_index<0>, T(std::forward<U>(value)))
    {
    }

    bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }

    const Error& error() const& { return std::get<1>(v_); }
    Error&& error() && { return std::get<1>(std::move(v_)); }

    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    template <typename U> T value_or(U&& other) const&
    {
        return has_value() ? value() : static_cast<T>(std::forward<U>(other));
    }

private:
    std::variant<T, Error> v_;
};

template <> class [[nodiscard]] Result<void>
{
public:
    using value_type = void;

    Result() = default;
    Result(Unexpected u) : err_(std::move(u.error)) {}
    Result(Error e) : err_(std::move(e)) {}

    bool has_value() const noexcept { return !err_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }
    void value() const {}
    void operator*() const {}
    const Error& error() const& { return *err_; }
    Error&& error() && { return std::move(*err_); }

private:
    std::optional<Error> err_;
};

} // namespace edgetensor

/// Propagate an error from an expression returning Result<...>.
#define EDGETENSOR_TRY(expr)                                                                       \
    do {                                                                                           \
        auto&& et_try_r_ = (expr);                                                                 \
        if (!et_try_r_)                                                                            \
            return ::edgetensor::unexpected(std::move(et_try_r_).error());                         \
    } while (0)
