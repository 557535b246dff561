// SPDX-License-Identifier: MIT
//
// A self-pipe that interrupts a poll() on an IPC socket. Both elements need one: the sink's
// serving thread must notice a dead receiver found by render() and its own shutdown, the
// source's streaming thread must leave a blocking receive when GstBaseSrc unlocks it. A pipe
// (not an eventfd) so a 0 byte can mean "stop" apart from a plain wakeup.

#pragma once

#include <edgetensor/error.hpp>
#include <edgetensor/unique_fd.hpp>

namespace edgetensor::ipc
{

class WakePipe
{
public:
    /// Both ends non-blocking and CLOEXEC. Errors are Io with errno.
    Result<void> open();
    void close() noexcept;
    bool is_open() const noexcept { return bool(write_); }
    /// For poll(): readable after wake() or request_stop().
    int read_fd() const noexcept { return read_.get(); }

    void wake() noexcept;
    void request_stop() noexcept;
    /// Empties the pipe; true when a stop was requested, or the write end is closed.
    bool drain() noexcept;

private:
    void put(char byte) noexcept;

    UniqueFd read_, write_;
};

} // namespace edgetensor::ipc
