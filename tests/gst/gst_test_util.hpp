// SPDX-License-Identifier: MIT
//
// Helpers shared by the GStreamer tests: RAII handles and a configured-pool builder.

#pragma once

#include "glib_raii.hpp"
#include "internal.hpp"

#include <gst/edgetensor/edgetensor.hpp>
#include <gst/video/gstvideopool.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <atomic>
#include <string>
#include <vector>

namespace edgetensor::test
{

using gst::GstObjectPtr;
using gst::MiniObjectPtr;
using BufferPtr = MiniObjectPtr<GstBuffer>;
using MemoryPtr = MiniObjectPtr<GstMemory>;
using CapsPtr = MiniObjectPtr<GstCaps>;
using PoolPtr = GstObjectPtr<GstBufferPool>;
using AllocatorPtr = GstObjectPtr<GstAllocator>;

/// Drops the caller's reference to `pipeline` (in NULL) and waits, up to `timeout`, until it is
/// finalized; false if it is still alive then. A test that counts fds or live objects after a
/// pipeline must wait for this: GStreamer runs some of a pipeline's work in its async-call pool
/// (gst_element_call_async(); a bin continuing an asynchronous state change is one), whose
/// thread may drop the last reference a moment after the state change to NULL has returned, so
/// the pipeline, its elements and its bus (a socketpair) go after ours. Seen in the 1.28 lane
/// under load: two sockets "leaked" by a pipeline that was gone 300 ms later (docs/testing.md).
inline bool unref_and_wait_finalized(GstElement* pipeline, GstClockTime timeout = 10 * GST_SECOND)
{
    // Shared with the weak-ref callback, which may run after a wait that gave up: freed by
    // whichever of the two lets go last.
    struct Gone {
        std::atomic<bool> done{false};
        std::atomic<int> holders{2};
        void release()
        {
            if (holders.fetch_sub(1) == 1)
                delete this;
        }
    };
    auto* gone = new Gone;
    g_object_weak_ref(
        G_OBJECT(pipeline),
        [](gpointer data, GObject*) {
            auto* g = static_cast<Gone*>(data);
            g->done = true;
            g->release();
        },
        gone);
    gst_object_unref(pipeline);
    const gint64 until = g_get_monotonic_time() + gint64(timeout / GST_USECOND);
    while (!gone->done && g_get_monotonic_time() < until)
        g_usleep(1000);
    const bool done = gone->done;
    gone->release();
    return done;
}

/// An error message (GST_MESSAGE_ERROR) or a warning (any other) as "message | debug".
inline std::string bus_message_text(GstMessage* m)
{
    GError* err = nullptr;
    gchar* dbg = nullptr;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR)
        gst_message_parse_error(m, &err, &dbg);
    else
        gst_message_parse_warning(m, &err, &dbg);
    std::string out = std::string(err ? err->message : "") + " | " + (dbg ? dbg : "");
    g_clear_error(&err);
    g_free(dbg);
    return out;
}

/// The errors (`type` GST_MESSAGE_ERROR) or warnings (GST_MESSAGE_WARNING) on `bus` so far,
/// popped, each as "message | debug".
inline std::vector<std::string> bus_messages(GstBus* bus, GstMessageType type)
{
    std::vector<std::string> out;
    while (GstMessage* m = gst_bus_pop_filtered(bus, type)) {
        out.push_back(bus_message_text(m));
        gst_message_unref(m);
    }
    return out;
}

/// bus_messages() as one text, a line each.
inline std::string bus_messages_text(GstBus* bus, GstMessageType type)
{
    std::string out;
    for (const std::string& line : bus_messages(bus, type))
        out += line + "\n";
    return out;
}

/// Every byte of `b`, its memories in order (extracted: a buffer of several memories is not
/// merged).
inline std::vector<uint8_t> buffer_bytes(GstBuffer* b)
{
    std::vector<uint8_t> out(gst_buffer_get_size(b));
    out.resize(gst_buffer_extract(b, 0, out.data(), out.size()));
    return out;
}

inline CapsPtr caps_from(const std::string& s)
{
    return CapsPtr(gst_caps_from_string(s.c_str()));
}

struct PoolOptions {
    guint min = 2;
    guint max = 0;
    bool video_meta = false;
    bool alignment = false;
    GstEdgeTensorMemoryKind kind = GST_EDGE_TENSOR_MEMORY_AUTO;
};

/// A pool for `caps`, configured (corrections accepted once, as an element would) and active.
/// Empty on failure, with a gtest failure recorded.
inline PoolPtr make_active_pool(const std::string& caps_str, const PoolOptions& o = {})
{
    PoolPtr pool(gst_edge_tensor_buffer_pool_new());
    CapsPtr caps = caps_from(caps_str);
    if (!caps) {
        ADD_FAILURE() << "bad caps " << caps_str;
        return {};
    }
    GstStructure* config = gst_buffer_pool_get_config(pool.get());
    gst_buffer_pool_config_set_params(config, caps.get(), 0, o.min, o.max);
    gst_edge_tensor_buffer_pool_config_set_memory_kind(config, o.kind);
    if (o.video_meta)
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (o.alignment) {
        GstVideoAlignment a;
        gst_video_alignment_reset(&a);
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
        gst_buffer_pool_config_set_video_alignment(config, &a);
    }
    if (!gst_buffer_pool_set_config(pool.get(), config)) {
        config = gst_buffer_pool_get_config(pool.get());
        if (!gst_buffer_pool_set_config(pool.get(), config)) {
            ADD_FAILURE() << "pool refused " << caps_str << " even after corrections";
            return {};
        }
    }
    if (!gst_buffer_pool_set_active(pool.get(), TRUE)) {
        ADD_FAILURE() << "pool for " << caps_str << " did not activate";
        return {};
    }
    return pool;
}

inline BufferPtr acquire(GstBufferPool* pool)
{
    GstBuffer* buf = nullptr;
    const GstFlowReturn r = gst_buffer_pool_acquire_buffer(pool, &buf, nullptr);
    EXPECT_EQ(r, GST_FLOW_OK);
    return BufferPtr(buf);
}

// Messages of a log domain (nullptr: the default one, g_warning) at `levels` while alive.
class LogCapture
{
public:
    explicit LogCapture(const char* domain, GLogLevelFlags levels)
        : domain_(domain), id_(g_log_set_handler(domain, levels, &LogCapture::on, this))
    {
    }
    ~LogCapture() { g_log_remove_handler(domain_, id_); }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;
    const std::string& text() const { return text_; }

private:
    static void on(const gchar*, GLogLevelFlags, const gchar* message, gpointer self)
    {
        static_cast<LogCapture*>(self)->text_ += std::string(message) + "\n";
    }
    const char* domain_;
    guint id_;
    std::string text_;
};

// g_warning()s of the default log domain while alive.
class WarningCapture : public LogCapture
{
public:
    WarningCapture() : LogCapture(nullptr, G_LOG_LEVEL_WARNING) {}
};

/// The BufferIdentity of an edgetensor buffer's first memory.
inline guint64 identity_of(GstBuffer* buf)
{
    return gst_edge_tensor_memory_get_identity(gst_buffer_peek_memory(buf, 0));
}

inline ino_t inode_of(int fd)
{
    struct stat st {
    };
    if (fstat(fd, &st) != 0)
        return 0;
    return st.st_ino;
}

} // namespace edgetensor::test
