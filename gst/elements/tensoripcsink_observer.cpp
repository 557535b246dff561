// SPDX-License-Identifier: MIT
//
// tensoripcsink's server reports on its debug category and bus (tensoripcsink_observer.hpp).

#include "tensoripcsink_observer.hpp"

#include "internal.hpp"

#include <sys/resource.h>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_ipc_sink_debug);
#define GST_CAT_DEFAULT gst_tensor_ipc_sink_debug

namespace edgetensor::gst::tensoripcsink
{

bool Observer::log_enabled(LogLevel level) const noexcept
{
    return gst_debug_category_get_threshold(GST_CAT_DEFAULT) >= gst_debug_level(level);
}

void Observer::log(LogLevel level, const std::string& message) noexcept
{
    GST_CAT_LEVEL_LOG(GST_CAT_DEFAULT, gst_debug_level(level), self_, "%s", message.c_str());
}

void Observer::refused_uid(const ipc::PeerCredentials& peer, int allowed_uid,
                           const std::string& receiver, const std::string& path) noexcept
{
    GST_ELEMENT_WARNING(
        self_, RESOURCE, OPEN_READ_WRITE,
        ("Refused a receiver of uid %u: allowed-uid is %d.", guint(peer.uid), allowed_uid),
        ("receiver %s on %s", receiver.c_str(), path.c_str()));
}

// Posted once per start and reason: a receiver that retries in a loop must not flood the
// bus. Later refusals are logged.
void Observer::refused(ipc::Refusal why, uint32_t max_clients, const std::string& receiver,
                       const std::string& path, bool first) noexcept
{
    const bool fds = why == ipc::Refusal::NoFds;
    if (!first) {
        GST_WARNING_OBJECT(self_, "refused receiver %s on %s: %s", receiver.c_str(), path.c_str(),
                           fds ? "out of file descriptors" : "max-clients are connected");
        return;
    }
    if (fds) {
        rlimit rl{};
        ::getrlimit(RLIMIT_NOFILE, &rl);
        GST_ELEMENT_WARNING(self_, RESOURCE, NO_SPACE_LEFT,
                            ("Refused a receiver: this process is out of file descriptors "
                             "(RLIMIT_NOFILE %llu).",
                             static_cast<unsigned long long>(rl.rlim_cur)),
                            ("receiver %s on %s; later refusals are logged only; raise the "
                             "limit (ulimit -n) or lower max-pending / max-clients",
                             receiver.c_str(), path.c_str()));
    } else {
        GST_ELEMENT_WARNING(
            self_, RESOURCE, OPEN_READ_WRITE,
            ("Refused a receiver: max-clients (%u) receivers are connected.", max_clients),
            ("receiver %s on %s; later refusals are logged only", receiver.c_str(), path.c_str()));
    }
}

// Posted once per start: a stream that keeps hitting the bound must not flood the bus.
// Later drops are logged.
void Observer::over_byte_bound(uint64_t frame_bytes, uint64_t held_bytes, uint64_t bound,
                               bool dropped, bool first) noexcept
{
    const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
    if (!first) {
        GST_INFO_OBJECT(self_,
                        "dropped a buffer of %llu bytes: receivers hold %llu of "
                        "max-held-bytes %llu",
                        u(frame_bytes), u(held_bytes), u(bound));
        return;
    }
    if (dropped)
        GST_ELEMENT_WARNING(self_, RESOURCE, NO_SPACE_LEFT,
                            ("Dropped a buffer: receivers hold %llu bytes, and %llu more "
                             "would pass max-held-bytes (%llu).",
                             u(held_bytes), u(frame_bytes), u(bound)),
                            ("later drops are counted in \"dropped\" and logged only; raise "
                             "max-held-bytes, lower max-pending, or set block=true to wait "
                             "for releases instead"));
    else
        GST_ELEMENT_WARNING(self_, RESOURCE, NO_SPACE_LEFT,
                            ("Waiting for receivers to release buffers: they hold %llu "
                             "bytes, and %llu more would pass max-held-bytes (%llu).",
                             u(held_bytes), u(frame_bytes), u(bound)),
                            ("block=true: the stream slows down to what receivers release; "
                             "later waits are not reported"));
}

void Observer::waiting_for_receiver(const ipc::HoldUp& h) noexcept
{
    if (h.by == ipc::HeldBackBy::MaxPending) {
        GST_ELEMENT_WARNING(self_, RESOURCE, BUSY,
                            ("Waiting for receiver %s: it has held every frame it may "
                             "(max-pending=%u) for %u ms without releasing one, and block=true "
                             "makes every frame wait for it.",
                             h.receiver.c_str(), unsigned(h.max_pending), unsigned(h.waited_ms)),
                            ("the stream goes on when it releases a frame or disconnects; "
                             "block=false drops frames for a receiver that holds max-pending "
                             "instead. A receiving pipeline whose own sink keeps the frames says "
                             "so (tensoripcsrc's warning). Reported once per receiver "
                             "connection; block-timeout bounds the wait"));
        return;
    }
    GST_ELEMENT_WARNING(self_, RESOURCE, NO_SPACE_LEFT,
                        ("Waiting for receiver %s: it has held %u frames (%llu bytes) for %u ms "
                         "without releasing one, and max-held-bytes (%llu) lets no buffer more "
                         "through until receivers release some.",
                         h.receiver.c_str(), unsigned(h.held),
                         static_cast<unsigned long long>(h.held_bytes), unsigned(h.waited_ms),
                         static_cast<unsigned long long>(h.max_held_bytes)),
                        ("the stream goes on when it releases a frame or disconnects; a lower "
                         "max-pending (%u) bounds what one receiver can pin. Reported once per "
                         "receiver connection; block-timeout bounds the wait",
                         unsigned(h.max_pending)));
}

void Observer::gave_up_on_receiver(const ipc::HoldUp& g) noexcept
{
    if (g.by == ipc::HeldBackBy::MaxPending) {
        GST_ELEMENT_WARNING(self_, RESOURCE, BUSY,
                            ("Gave up waiting for receiver %s: it held every frame it may "
                             "(max-pending=%u) for block-timeout (%u ms) without releasing one. "
                             "Frames are dropped for it until it releases one; the other "
                             "receivers get every frame.",
                             g.receiver.c_str(), unsigned(g.max_pending), unsigned(g.waited_ms)),
                            ("the drops are counted in \"dropped\"; reported once per receiver "
                             "connection; block-timeout=0 waits for it as long as it takes"));
        return;
    }
    // Below max-pending, but the oldest frames held are its, and they keep max-held-bytes from
    // letting a buffer through.
    GST_ELEMENT_WARNING(self_, RESOURCE, NO_SPACE_LEFT,
                        ("Gave up waiting for receiver %s: it held %u frames (%llu bytes), the "
                         "oldest held, for block-timeout (%u ms) without releasing one while "
                         "max-held-bytes (%llu) held buffers back. Until it releases one, a "
                         "buffer that would pass max-held-bytes is dropped at once instead of "
                         "waiting for it.",
                         g.receiver.c_str(), unsigned(g.held),
                         static_cast<unsigned long long>(g.held_bytes), unsigned(g.waited_ms),
                         static_cast<unsigned long long>(g.max_held_bytes)),
                        ("the drops are counted in \"dropped\"; reported once per receiver "
                         "connection; a lower max-pending (%u) bounds what one receiver can pin",
                         unsigned(g.max_pending)));
}

} // namespace edgetensor::gst::tensoripcsink
