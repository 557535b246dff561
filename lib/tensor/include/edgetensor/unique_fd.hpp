// SPDX-License-Identifier: MIT
//
// Owned file descriptors. A function that creates an fd returns a UniqueFd;
// a function that lends one returns a plain int documented as borrowed.

#pragma once

#include <utility>

namespace edgetensor
{

class UniqueFd
{
public:
    UniqueFd() noexcept = default;
    /// Adopts `fd` (closed on destruction). A negative value makes an empty UniqueFd.
    explicit UniqueFd(int fd) noexcept : fd_(fd < 0 ? -1 : fd) {}
    ~UniqueFd() { reset(); }

    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept
    {
        if (this != &other)
            reset(other.release());
        return *this;
    }

    /// The fd, borrowed: valid while this object owns it. -1 when empty.
    int get() const noexcept { return fd_; }
    bool is_valid() const noexcept { return fd_ >= 0; }
    explicit operator bool() const noexcept { return is_valid(); }

    /// Gives up ownership without closing; the caller now owns the returned fd.
    int release() noexcept { return std::exchange(fd_, -1); }
    /// Closes the owned fd (if any) and adopts `fd`.
    void reset(int fd = -1) noexcept;

    /// A CLOEXEC duplicate of a borrowed fd; empty (and errno set) on failure.
    static UniqueFd dup(int fd) noexcept;

private:
    int fd_ = -1;
};

} // namespace edgetensor
