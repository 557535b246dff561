// SPDX-License-Identifier: MIT
//
// tensoripcsrc's instance and the state its files share: gsttensoripcsrc.cpp (the element's
// vfuncs: properties, start/stop, negotiation, queries) and tensoripcsrc_events.cpp (what the
// receiver hands over, turned into buffers, caps and flow returns). Not installed.

#pragma once

#include "glib_raii.hpp"
#include "gsttensoripcsrc.h"
#include "import_cache.hpp"
#include "internal.hpp"
#include "ipc_receiver.hpp"
#include "tensoripcsrc_frame.hpp"
#include "tensoripcsrc_properties.hpp"
#include "tensoripcsrc_timeline.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_ipc_src_debug);

namespace edgetensor::gst::tensoripcsrc
{

struct CacheFree {
    void operator()(GstEdgeTensorImportCache* c) const noexcept
    {
        gst_edge_tensor_import_cache_free(c);
    }
};

// The receiver's log goes to this element's debug category.
class Observer final : public edgetensor::ipc::LogObserver
{
public:
    explicit Observer(GstTensorIpcSrc* self) : self_(self) {}

    bool log_enabled(edgetensor::LogLevel level) const noexcept override
    {
        return gst_debug_category_get_threshold(gst_tensor_ipc_src_debug) >= gst_debug_level(level);
    }

    void log(edgetensor::LogLevel level, const std::string& message) noexcept override
    {
        GST_CAT_LEVEL_LOG(gst_tensor_ipc_src_debug, gst_debug_level(level), self_, "%s",
                          message.c_str());
    }

private:
    GstTensorIpcSrc* self_;
};

// What the element itself knows of the stream; the session (connection, greeting, accepted
// caps_seq, counters) is the receiver's.
struct Streaming {
    StreamLayoutPtr layout; ///< the sender's current caps, read once
    bool caps_pushed = false;
    /// When the last sender left, while on-disconnect=reconnect waits for the next.
    std::optional<std::chrono::steady_clock::time_point> gone_since;
};

// One C++ state object per element: settings under the object lock; streaming state under
// mu, touched by the streaming thread (and by start/stop when it is not running); the
// receiver's unlock() is the only cross-thread signal.
struct State {
    explicit State(GstTensorIpcSrc* self) : observer(self), receiver(observer, &files) {}
    Settings settings;
    std::mutex mu;
    Streaming streaming;
    Timeline timeline;
    std::unique_ptr<GstEdgeTensorImportCache, CacheFree> cache{
        gst_edge_tensor_import_cache_new(DEFAULT_CACHE_SIZE)};
    GstObjectPtr<GstAllocator> dmabuf_alloc{gst_dmabuf_allocator_new()};
    GstObjectPtr<GstAllocator> fd_alloc{gst_fd_allocator_new()};
    // The sender's memfds, each mapped once (the streaming thread's; cleared at stop).
    MappedFiles files;
    Observer observer;
    edgetensor::ipc::Receiver receiver;
    std::atomic<bool> dropped_metas_reported{false}; ///< since start()
};

} // namespace edgetensor::gst::tensoripcsrc

struct _GstTensorIpcSrc {
    GstPushSrc parent;
    edgetensor::gst::tensoripcsrc::State* state;
};

namespace edgetensor::gst::tensoripcsrc
{

/// The element's state (created in instance_init, deleted in finalize).
inline State& state_of(gpointer self)
{
    return *GST_TENSOR_IPC_SRC(self)->state;
}

/// A copy of the settings, taken under the object lock.
inline Settings settings_of(GstTensorIpcSrc* self)
{
    ObjectLockGuard lock(self);
    return state_of(self).settings;
}

} // namespace edgetensor::gst::tensoripcsrc
