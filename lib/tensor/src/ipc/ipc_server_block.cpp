// SPDX-License-Identifier: MIT
//
// tensoripcsink's back-pressure (block=true, see ipc_server.hpp): a frame waits until every
// receiver has room and the byte bound allows it; past report_wait_ms the receivers holding it
// up are named, and past block_timeout_ms the sender gives up on them until they release.

#include "ipc_server.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace edgetensor::ipc
{

// The wait is over: no receiver the frame must wait for holds max_pending frames, and the byte
// bound allows it, or no release it waits for could make it (send_frame() drops it then), or
// unlock() ends the wait.
bool Server::room_locked(uint64_t bytes) const noexcept
{
    if (unlocked_)
        return true;
    for (const Client& c : clients_list_)
        if (full_locked(c) && !c.given_up)
            return false;
    return fits_locked(bytes) || !fits_after_awaited_releases_locked(bytes);
}

// Whether the frame would fit once every receiver not given up on released all it holds. The
// frames a receiver given up on holds stay pinned however long the frame waits, so when they
// alone leave no room the wait is pointless: without this, one hung receiver pinning the bound
// would cost a block-timeout for every frame.
bool Server::fits_after_awaited_releases_locked(uint64_t bytes) const
{
    if (max_held_bytes_ == 0)
        return true;
    std::unordered_set<uint64_t> stuck;
    uint64_t stuck_bytes = 0;
    for (const Client& c : clients_list_)
        if (c.given_up)
            for (uint64_t seq : c.pending)
                if (auto it = held_map_.find(seq);
                    it != held_map_.end() && stuck.insert(seq).second)
                    stuck_bytes += it->second.bytes;
    return stuck_bytes + bytes <= max_held_bytes_;
}

uint64_t Server::pinned_by_locked(const Client& c) const noexcept
{
    uint64_t bytes = 0;
    for (uint64_t seq : c.pending)
        if (auto it = held_map_.find(seq); it != held_map_.end())
            bytes += it->second.bytes;
    return bytes;
}

void Server::wait_for_room_locked(std::unique_lock<std::mutex>& lock, uint64_t bytes)
{
    // The first time the byte bound (not max-pending) is what holds a frame back, the element
    // hears of it.
    if (!fits_locked(bytes) && !std::exchange(over_bound_once_, true)) {
        const uint64_t held = held_bytes_.load(), bound = max_held_bytes_;
        lock.unlock();
        observer_.over_byte_bound(bytes, held, bound, false, true);
        lock.lock();
    }
    const auto room = [this, bytes] { return room_locked(bytes); };
    if (room())
        return; // most frames: the clock is not even read
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t0 = Clock::now();
    const Clock::time_point report_at = t0 + std::chrono::milliseconds(report_wait_ms_);
    bool reported = false;
    for (;;) {
        // Read each turn: set_block_timeout_ms() may change it while the frame waits.
        const uint32_t timeout_ms = block_timeout_ms_;
        const std::optional<Clock::time_point> give_up_at =
            timeout_ms ? std::optional(t0 + std::chrono::milliseconds(timeout_ms)) : std::nullopt;
        if (!reported && (!give_up_at || report_at < *give_up_at)) {
            if (released_.wait_until(lock, report_at, room))
                return;
            report_waiting_locked(lock, bytes);
            reported = true;
            continue;
        }
        if (!give_up_at) {
            released_.wait(lock, room);
            return;
        }
        if (released_.wait_until(lock, *give_up_at, room))
            return;
        if (block_timeout_ms_ != timeout_ms)
            continue; // changed during the wait: wait by the new one
        give_up_locked(lock, timeout_ms, bytes);
        return; // the byte bound may still hold the frame: send_frame() drops it then
    }
}

// Whether `c` holds a blocked frame up: it holds all max_pending lets it or, when the byte
// bound holds the frame, it holds `oldest`, the oldest frame any receiver still waited for
// holds. Nothing is sent while a frame waits, so a receiver that holds a frame it has held it
// for the whole wait; but a sound one may keep the newest frame or two (its sink's last
// sample, a display's two buffers) until the next arrives, while the one that hung keeps the
// oldest. One that hung up is not named: the serving thread is about to let go of its frames.
bool Server::holds_up_locked(const Client& c, std::optional<uint64_t> oldest) const noexcept
{
    return !c.given_up && !c.dead && (full_locked(c) || (oldest && c.pending.count(*oldest)));
}

// With the byte bound holding a frame of `bytes`: the oldest frame a receiver not given up on
// holds; none when the bound does not hold it.
std::optional<uint64_t> Server::oldest_awaited_locked(uint64_t bytes) const noexcept
{
    if (fits_locked(bytes))
        return std::nullopt;
    std::optional<uint64_t> oldest;
    for (const Client& c : clients_list_)
        if (!c.given_up && !c.dead && !c.pending.empty() &&
            (!oldest || *c.pending.begin() < *oldest))
            oldest = *c.pending.begin();
    return oldest;
}

HoldUp Server::hold_up_locked(const Client& c, uint32_t waited_ms) const
{
    return HoldUp{c.name,
                  full_locked(c) ? HeldBackBy::MaxPending : HeldBackBy::MaxHeldBytes,
                  uint32_t(c.pending.size()),
                  pinned_by_locked(c),
                  max_pending_,
                  max_held_bytes_,
                  waited_ms};
}

// A blocked frame has waited report_wait_ms_: names each receiver that holds it up, once per
// connection. `lock` is released around the observer's calls.
void Server::report_waiting_locked(std::unique_lock<std::mutex>& lock, uint64_t bytes)
{
    const std::optional<uint64_t> oldest = oldest_awaited_locked(bytes);
    std::vector<HoldUp> holding;
    for (Client& c : clients_list_)
        if (holds_up_locked(c, oldest) && !std::exchange(c.wait_told, true))
            holding.push_back(hold_up_locked(c, report_wait_ms_));
    if (holding.empty())
        return; // receivers told before
    lock.unlock();
    for (const HoldUp& h : holding) {
        log(LogLevel::Info, "waited %u ms for %s, which holds %u frames", unsigned(h.waited_ms),
            h.receiver.c_str(), unsigned(h.held));
        observer_.waiting_for_receiver(h);
    }
    lock.lock();
}

// A blocked frame has waited block_timeout_ms_: the receivers still holding it up
// (holds_up_locked()) are not waited for until each releases one: one at max-pending is
// skipped (its frames dropped, as without block), and under the byte bound what each holds
// counts as pinned for good (fits_after_awaited_releases_locked()). Each is named once per
// connection. `lock` is released around the observer's calls.
void Server::give_up_locked(std::unique_lock<std::mutex>& lock, uint32_t waited_ms, uint64_t bytes)
{
    const std::optional<uint64_t> oldest = oldest_awaited_locked(bytes);
    std::vector<HoldUp> told;
    for (Client& c : clients_list_) {
        if (!holds_up_locked(c, oldest))
            continue;
        if (!std::exchange(c.give_up_told, true))
            told.push_back(hold_up_locked(c, waited_ms));
        c.given_up = true;
        log(LogLevel::Debug, "gave up on %s after %u ms: it holds %zu frames", c.name.c_str(),
            unsigned(waited_ms), c.pending.size());
    }
    if (told.empty())
        return;
    lock.unlock();
    for (const HoldUp& h : told) {
        log(LogLevel::Info,
            "gave up waiting for %s after %u ms; dropping its frames until it "
            "releases one",
            h.receiver.c_str(), unsigned(waited_ms));
        observer_.gave_up_on_receiver(h);
    }
    lock.lock();
}

} // namespace edgetensor::ipc
