// SPDX-License-Identifier: MIT
//
// tensoripcsrc's receiving side (see ipc_receiver.hpp).

#include "ipc_receiver.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

namespace edgetensor::ipc
{

namespace
{
// How often a receiver without a sink tries to connect again.
constexpr int kRetryIntervalMs = 20;
// How long finish() waits for room for its DONE in a full socket.
constexpr int kDoneWaitMs = 1000;
// How long next() waits, holding every frame the sink lets it hold, before it says so.
constexpr int kStallMs = 1000;

Event event_of(Event::Kind kind)
{
    Event e;
    e.kind = kind;
    return e;
}

Event failure(ConnectFailure what, std::string why = {})
{
    Event e = event_of(Event::Kind::Failed);
    e.failure = what;
    e.why = std::move(why);
    return e;
}
} // namespace

Result<void> Receiver::start()
{
    if (auto r = wake_.open(); !r)
        return r;
    flushing_ = false;
    received_ = 0;
    rejected_ = 0;
    std::lock_guard<std::mutex> lock(mu_);
    conn_.reset();
    eos_ = greeted_ = have_caps_ = finished_ = stall_told_ = false;
    stall_since_.reset();
    caps_seq_ = 0;
    last_seq_ = 0;
    sink_pid_ = 0;
    max_pending_ = 0;
    last_rejection_.clear();
    return {};
}

void Receiver::stop() noexcept
{
    std::shared_ptr<Connection> conn;
    {
        std::lock_guard<std::mutex> lock(mu_);
        conn = std::move(conn_);
        eos_ = greeted_ = have_caps_ = finished_ = false;
        caps_seq_ = 0;
        last_seq_ = 0;
        sink_pid_ = 0;
        max_pending_ = 0;
        last_rejection_.clear();
    }
    // Frames still downstream keep the Connection object, not the socket.
    if (conn)
        conn->close();
    wake_.close();
}

void Receiver::finish() noexcept
{
    std::shared_ptr<Connection> conn;
    uint64_t last_seq;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (finished_)
            return;
        finished_ = true;
        // After the sender's EOS it is ending anyway and reads nothing more.
        if (!eos_)
            conn = conn_;
        last_seq = last_seq_;
    }
    if (!conn)
        return;
    if (conn->done(last_seq, kDoneWaitMs))
        log_to(log_, LogLevel::Info, "told the sink: no more frames after frame %llu",
               static_cast<unsigned long long>(last_seq));
    else
        log_to(log_, LogLevel::Warning,
               "the sink's socket stayed full for %d ms: DONE goes with the next release",
               kDoneWaitMs);
}

void Receiver::unlock() noexcept
{
    flushing_ = true;
    wake_.wake();
}

void Receiver::unlock_stop() noexcept
{
    flushing_ = false;
    if (wake_.is_open())
        wake_.drain();
}

void Receiver::accept_caps(uint32_t caps_seq)
{
    std::lock_guard<std::mutex> lock(mu_);
    have_caps_ = true;
    caps_seq_ = caps_seq;
}

uint64_t Receiver::reject(std::string why)
{
    const uint64_t n = ++rejected_;
    std::lock_guard<std::mutex> lock(mu_);
    last_rejection_ = std::move(why);
    return n;
}

ReceiverStats Receiver::stats() const
{
    ReceiverStats s;
    s.received = received_.load();
    s.rejected = rejected_.load();
    std::lock_guard<std::mutex> lock(mu_);
    s.last_rejection = last_rejection_;
    s.sink_pid = sink_pid_;
    s.max_pending = max_pending_;
    return s;
}

std::shared_ptr<Connection> Receiver::connection()
{
    std::lock_guard<std::mutex> lock(mu_);
    return conn_;
}

// Waits for `fd` (none when negative) to be readable or for unlock(). False when flushing.
bool Receiver::wait_readable(int fd, int timeout_ms) noexcept
{
    pollfd fds[2] = {{wake_.read_fd(), POLLIN, 0}, {fd, POLLIN, 0}};
    const int n = ::poll(fds, fd >= 0 ? 2 : 1, timeout_ms);
    if (n > 0 && fds[0].revents)
        wake_.drain();
    return !flushing_.load();
}

// nullopt once connected; otherwise what stopped the attempt (a failure, or Flushing).
std::optional<Event> Receiver::connect(const ReceiverConfig& config)
{
    if (config.path.empty())
        return failure(ConnectFailure::NoPath);
    const auto t0 = std::chrono::steady_clock::now();
    bool logged = false;
    for (;;) {
        if (flushing_)
            return event_of(Event::Kind::Flushing);
        auto fd = connect_to(config.path);
        if (fd) {
            auto cred = peer_credentials(fd->get());
            if (!cred)
                return failure(ConnectFailure::Credentials, cred.error().message());
            if (config.allowed_uid >= 0 && cred->uid != uid_t(config.allowed_uid)) {
                Event e = failure(ConnectFailure::WrongUid);
                e.peer = *cred;
                return e;
            }
            log_to(log_, LogLevel::Info, "connected to %s (pid %d, uid %u)", config.path.c_str(),
                   int(cred->pid), unsigned(cred->uid));
            std::lock_guard<std::mutex> lock(mu_);
            conn_ = std::make_shared<Connection>(std::move(*fd));
            eos_ = false;
            greeted_ = false;
            stall_told_ = false;
            last_seq_ = 0;
            sink_pid_ = uint64_t(cred->pid);
            max_pending_ = 0;
            return std::nullopt;
        }
        // ENOENT / ECONNREFUSED: no sink (yet); EAGAIN: its backlog is full. Anything else
        // (EMFILE: this process is out of fds; EACCES) waiting does not cure.
        const int err = fd.error().sys_errno();
        if (err != ENOENT && err != ECONNREFUSED && err != EAGAIN)
            return failure(ConnectFailure::Connect, fd.error().message());
        const auto waited = std::chrono::steady_clock::now() - t0;
        if (config.timeout_ns > 0 && waited >= std::chrono::nanoseconds(config.timeout_ns))
            return failure(ConnectFailure::Timeout, fd.error().message());
        if (!logged) {
            log_to(log_, LogLevel::Info, "waiting for a sink on %s", config.path.c_str());
            logged = true;
        }
        if (!wait_readable(-1, kRetryIntervalMs))
            return event_of(Event::Kind::Flushing);
    }
}

Event Receiver::invalid(std::string why)
{
    Event e = event_of(Event::Kind::Invalid);
    e.rejections = reject(why);
    e.why = std::move(why);
    return e;
}

Event Receiver::depart(std::string why)
{
    std::shared_ptr<Connection> conn;
    Event e = event_of(Event::Kind::Gone);
    {
        std::lock_guard<std::mutex> lock(mu_);
        conn = std::move(conn_);
        e.departure = eos_       ? Departure::AfterEos
                      : greeted_ ? Departure::WithoutEos
                                 : Departure::BeforeGreeting;
    }
    if (conn)
        conn->close();
    e.why = std::move(why);
    return e;
}

Event Receiver::frame(Frame&& f, const std::shared_ptr<Connection>& conn)
{
    // Made first: whatever refuses the frame from here on releases it (the token dies with
    // the refusal) and closes its fds.
    auto release = std::make_shared<FrameRelease>(conn, f.head.seq);
    bool caps_ok;
    {
        std::lock_guard<std::mutex> lock(mu_);
        caps_ok = have_caps_ && f.head.caps_seq == caps_seq_;
    }
    const std::string name = "FRAME " + std::to_string(f.head.seq);
    if (!caps_ok)
        return invalid(name + " for caps " + std::to_string(f.head.caps_seq) +
                       " before those caps");
    if (auto r = check_frame_fds(f, kept_); !r)
        return invalid(name + ": " + r.error().message());
    Event e = event_of(Event::Kind::Frame);
    e.frame = std::move(f);
    e.release = std::move(release);
    return e;
}

uint32_t Receiver::max_pending() const
{
    std::lock_guard<std::mutex> lock(mu_);
    return max_pending_;
}

// Holding as many frames as the sink allows, this receiver gets no more until downstream lets
// one go (a sink keeping its last buffer, with max-pending=1): how long the next wait may last
// before that is said, once per connection (-1: no limit).
int Receiver::stall_wait_ms(const Connection& conn)
{
    const uint32_t allowed = max_pending();
    if (stall_told_ || allowed == 0 || conn.held() < allowed) {
        stall_since_.reset();
        return -1;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!stall_since_)
        stall_since_ = now;
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *stall_since_).count();
    return int(std::max<int64_t>(0, kStallMs - waited));
}

// After a wait that brought nothing: Stalled once the receiver has held every frame allowed
// for kStallMs.
std::optional<Event> Receiver::stall(const Connection& conn)
{
    const uint32_t allowed = max_pending();
    if (!stall_since_ || conn.held() < allowed ||
        std::chrono::steady_clock::now() - *stall_since_ < std::chrono::milliseconds(kStallMs))
        return std::nullopt;
    stall_told_ = true;
    stall_since_.reset();
    Event e = event_of(Event::Kind::Stalled);
    e.held = conn.held();
    e.max_pending = allowed;
    return e;
}

Event Receiver::next(const ReceiverConfig& config)
{
    for (;;) {
        if (flushing_)
            return event_of(Event::Kind::Flushing);
        bool finished;
        {
            std::lock_guard<std::mutex> lock(mu_);
            finished = finished_;
        }
        if (finished)
            return event_of(Event::Kind::Eos);
        std::shared_ptr<Connection> conn = connection();
        if (!conn) {
            if (auto stopped = connect(config))
                return std::move(*stopped);
            continue;
        }
        conn->flush();
        if (!wait_readable(conn->fd(), stall_wait_ms(*conn)))
            return event_of(Event::Kind::Flushing);
        auto rec = receive_record(conn->fd());
        if (!rec) {
            if (rec.error().sys_errno() != EAGAIN)
                return depart(rec.error().message());
            if (auto stalled = stall(*conn))
                return std::move(*stalled);
            continue;
        }
        stall_since_.reset();
        if (rec->eof)
            return depart("the socket was closed");
        auto msg = parse(rec->bytes, std::move(rec->fds), rec->truncated);
        if (!msg)
            return invalid(msg.error().message());
        switch (msg->type) {
        case MsgType::Hello: {
            {
                std::lock_guard<std::mutex> lock(mu_);
                greeted_ = true;
                max_pending_ = msg->hello.max_pending;
            }
            log_to(log_, LogLevel::Debug, "sink pid %llu lets us hold %u frames",
                   static_cast<unsigned long long>(msg->hello.sink_pid),
                   unsigned(msg->hello.max_pending));
            continue;
        }
        case MsgType::Caps: {
            Event e = event_of(Event::Kind::Caps);
            e.caps_seq = msg->caps_seq;
            e.caps = std::move(msg->caps);
            return e;
        }
        case MsgType::Frame: {
            {
                std::lock_guard<std::mutex> lock(mu_);
                // finish() ran meanwhile: its DONE let this frame go, so it is not ours.
                if (finished_)
                    return event_of(Event::Kind::Eos);
                last_seq_ = std::max(last_seq_, msg->frame.head.seq);
            }
            return frame(std::move(msg->frame), conn);
        }
        case MsgType::Eos: {
            {
                std::lock_guard<std::mutex> lock(mu_);
                eos_ = true;
            }
            log_to(log_, LogLevel::Info, "the sender sent EOS");
            return event_of(Event::Kind::Eos);
        }
        case MsgType::Release:
            return invalid("a sink does not send RELEASE");
        case MsgType::Done:
            return invalid("a sink does not send DONE");
        }
        return invalid("unknown message type"); // parse() lets no other type through
    }
}

} // namespace edgetensor::ipc
