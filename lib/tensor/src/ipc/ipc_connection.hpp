// SPDX-License-Identifier: MIT
//
// The receiving side's socket as tensoripcsrc's frames in flight see it: a frame dropped
// downstream, on any thread and possibly after the element moved on to another connection,
// sends its RELEASE through the Connection it came from. Releases (and the DONE that says the
// element reads no more) that find the socket full are kept and sent with the next ones, so a
// busy sink never loses one.

#pragma once

#include <edgetensor/unique_fd.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace edgetensor::ipc
{

class Connection
{
public:
    explicit Connection(UniqueFd fd) : fd_(std::move(fd)) {}

    int fd() const noexcept { return fd_.get(); }

    /// A frame of this connection was handed to the element (its FrameRelease made).
    void hold() noexcept { held_.fetch_add(1, std::memory_order_relaxed); }
    /// Frames handed over and not yet released: what the sink counts against max-pending.
    uint32_t held() const noexcept { return held_.load(std::memory_order_relaxed); }
    /// Sends (or queues, when the socket is full) the RELEASE of frame `seq`, held no more:
    /// one per hold() (FrameRelease pairs them).
    void release(uint64_t seq) noexcept;
    /// Sends DONE (no frame after `last_seq` will be read), after the releases queued before
    /// it; waits up to `wait_ms` for room in a full socket, then keeps it for the next flush.
    /// True once it is sent.
    bool done(uint64_t last_seq, int wait_ms) noexcept;
    /// Sends what could not be sent before.
    void flush() noexcept;
    /// The element is done with this connection; releases after this are dropped (the sink
    /// frees everything it held for us when the socket closes).
    void close() noexcept;

private:
    void flush_locked() noexcept;

    std::mutex mu_;
    UniqueFd fd_;
    std::vector<uint64_t> unsent_;
    std::optional<uint64_t> unsent_done_;
    std::atomic<uint32_t> held_{0};
};

/// Releases one frame when the last memory of it dies (each memory holds a shared_ptr to it).
struct FrameRelease {
    FrameRelease(std::shared_ptr<Connection> c, uint64_t s) : conn(std::move(c)), seq(s)
    {
        if (conn)
            conn->hold();
    }
    FrameRelease(const FrameRelease&) = delete;
    FrameRelease& operator=(const FrameRelease&) = delete;
    std::shared_ptr<Connection> conn;
    uint64_t seq = 0;
    ~FrameRelease()
    {
        if (conn)
            conn->release(seq);
    }
};

} // namespace edgetensor::ipc
