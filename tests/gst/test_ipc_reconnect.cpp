// SPDX-License-Identifier: MIT
//
// tensoripcsrc on-disconnect=reconnect: a camera service that restarts (stopped without EOS,
// started again on the same socket-path, maybe with other caps) does not end its consumers'
// streams. The receiver warns, keeps nothing of the sender that left (no fd, no mapping, no
// import-cache entry: the dead sender's memory is not pinned), says when a sender is back,
// renegotiates when its caps differ and continues the running time; a sender that does not
// come back within timeout is an error naming the socket. A sender's EOS still ends the stream.

#include "fd_count.hpp"
#include "ipc_test_util.hpp"
#include "require.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gst/allocators/allocators.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace edgetensor::test
{
namespace
{

class GstIpcReconnect : public ::testing::Test
{
protected:
    static void SetUpTestSuite() { load_system_plugins(); }
};

// A camera service: frames until stopped, or `frames` and EOS.
std::string camera(const std::string& path, int width, int height, int frames = -1)
{
    return "tensortestsrc pattern=frame-counter min-buffers=4 max-buffers=4 num-buffers=" +
           std::to_string(frames) + " ! video/x-raw,format=NV12,width=" + std::to_string(width) +
           ",height=" + std::to_string(height) +
           ",framerate=30/1 ! tensoripcsink name=sink socket-path=" + path +
           " wait-for-connection=true block=true sync=false";
}

std::string consumer(const std::string& path, const std::string& extra)
{
    return "tensoripcsrc name=src socket-path=" + path + " on-disconnect=reconnect " + extra +
           " ! appsink name=out sync=false max-buffers=8 enable-last-sample=false";
}

int width_of(GstSample* s)
{
    gint w = 0;
    gst_structure_get_int(gst_caps_get_structure(gst_sample_get_caps(s), 0), "width", &w);
    return w;
}

GstClockTime running_time_of(GstSample* s)
{
    return gst_segment_to_running_time(gst_sample_get_segment(s), GST_FORMAT_TIME,
                                       GST_BUFFER_PTS(gst_sample_get_buffer(s)));
}

guint cache_entries(GstElement* src)
{
    GstStructure* stats = nullptr;
    g_object_get(src, "stats", &stats, nullptr);
    guint n = G_MAXUINT;
    if (stats) {
        gst_structure_get_uint(stats, "entries", &n);
        gst_structure_free(stats);
    }
    return n;
}

std::string fd_target(int fd)
{
    char link[256] = {};
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    return ::readlink(path.c_str(), link, sizeof link - 1) > 0 ? link : "";
}

// A sender's buffer as the kernel names its fd or mapping: a memfd, or a DMA-BUF (the VM lane).
bool is_buffer_file(const std::string& name)
{
    return name.rfind("/memfd:", 0) == 0 || name.rfind("/dmabuf:", 0) == 0 ||
           name.rfind("anon_inode:dmabuf", 0) == 0;
}

// The inodes of a sample's memories, to leave out of the counts below (a DMA-BUF's name is
// its pool's, the same for every buffer of it).
std::set<ino_t> inodes_of(GstSample* s)
{
    std::set<ino_t> inodes;
    GstBuffer* b = s ? gst_sample_get_buffer(s) : nullptr;
    for (guint i = 0; b && i < gst_buffer_n_memory(b); ++i) {
        struct stat st = {};
        GstMemory* m = gst_buffer_peek_memory(b, i);
        if (gst_is_fd_memory(m) && ::fstat(gst_fd_memory_get_fd(m), &st) == 0)
            inodes.insert(st.st_ino);
    }
    return inodes;
}

// The buffers this process has open, and its mappings of them (the senders' buffers), but
// those of `except`.
size_t buffers_open(const std::set<ino_t>& except)
{
    size_t n = 0;
    for (int fd : open_fds()) {
        struct stat st = {};
        n += is_buffer_file(fd_target(fd)) && ::fstat(fd, &st) == 0 && !except.count(st.st_ino);
    }
    return n;
}

size_t buffers_mapped(const std::set<ino_t>& except)
{
    std::ifstream maps("/proc/self/maps");
    size_t n = 0;
    for (std::string line; std::getline(maps, line);) {
        // address perms offset dev inode path
        std::istringstream fields(line);
        std::string skip, path;
        unsigned long inode = 0;
        fields >> skip >> skip >> skip >> skip >> inode;
        std::getline(fields >> std::ws, path);
        n += is_buffer_file(path) && !except.count(ino_t(inode));
    }
    return n;
}

TEST_F(GstIpcReconnect, ASenderThatComesBackIsFollowedWithItsCapsAndTheRunningTimeGoesOn)
{
    const auto before = open_fds();
    {
        SocketDir dir;
        Pipeline rx(consumer(dir.path(), "timeout=5000000000"));
        ASSERT_TRUE(rx);
        ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
        GstElement* src = rx.by_name("src");
        const size_t open_before = buffers_open({});
        const size_t mapped_before = buffers_mapped({});

        GstClockTime last_running = 0;
        guint64 first_frames = 0;
        // appsink keeps the buffer of the last sample pulled until the next pull (its sample
        // object is reused): the test's, not the element's, left out of the counts.
        std::set<ino_t> appsinks;
        {
            Pipeline first(camera(dir.path(), 64, 32));
            ASSERT_NE(first.play(), GST_STATE_CHANGE_FAILURE);
            for (int n = 0; n < 10; ++n) {
                auto s = pull(rx);
                ASSERT_TRUE(s) << "frame " << n;
                EXPECT_EQ(width_of(s.get()), 64);
                // In the VM lane the sender's pool is DMA-BUF: what is forgotten then.
                if (dma_required()) {
                    ASSERT_TRUE(gst_is_dmabuf_memory(
                        gst_buffer_peek_memory(gst_sample_get_buffer(s.get()), 0)));
                }
                last_running = running_time_of(s.get());
                appsinks = inodes_of(s.get());
                ++first_frames;
            }
            EXPECT_GT(cache_entries(src), 0u);
            first.stop(); // stopped, not ended: no EOS reaches the receiver
        }
        auto warning =
            rx.wait(GstMessageType(GST_MESSAGE_WARNING | GST_MESSAGE_ERROR | GST_MESSAGE_EOS), 5s);
        ASSERT_TRUE(warning);
        ASSERT_EQ(GST_MESSAGE_TYPE(warning.get()), GST_MESSAGE_WARNING)
            << message_text(warning.get());
        EXPECT_NE(message_text(warning.get()).find("went away without EOS; waiting for one"),
                  std::string::npos)
            << message_text(warning.get());
        // The frames appsink still queues are the last that hold the old sender's memory.
        while (auto s = pull(rx, 200ms)) {
            last_running = running_time_of(s.get());
            appsinks = inodes_of(s.get());
            ++first_frames;
        }
        EXPECT_EQ(cache_entries(src), 0u) << "the import cache forgot the sender that left";

        EXPECT_TRUE(eventually([&] { return buffers_open(appsinks) == open_before; }, 2s))
            << "fds kept of the sender that left: " << describe_fds(open_fds());
        EXPECT_TRUE(eventually([&] { return buffers_mapped(appsinks) == mapped_before; }, 2s))
            << "mappings kept of the sender that left: " << buffers_mapped(appsinks);

        // It comes back with other caps and, as a restarted pipeline does, timestamps from 0.
        Pipeline second(camera(dir.path(), 32, 16, 20));
        ASSERT_NE(second.play(), GST_STATE_CHANGE_FAILURE);
        auto info = rx.wait(GstMessageType(GST_MESSAGE_INFO | GST_MESSAGE_ERROR), 5s);
        ASSERT_TRUE(info);
        ASSERT_EQ(GST_MESSAGE_TYPE(info.get()), GST_MESSAGE_INFO);
        GError* err = nullptr;
        gst_message_parse_info(info.get(), &err, nullptr);
        ASSERT_TRUE(err);
        EXPECT_NE(std::string(err->message).find("A sender is back on"), std::string::npos)
            << err->message;
        g_error_free(err);
        for (int n = 0; n < 20; ++n) {
            auto s = pull(rx);
            ASSERT_TRUE(s) << "frame " << n << " of the second sender";
            EXPECT_EQ(width_of(s.get()), 32) << "its caps, renegotiated";
            EXPECT_EQ(GST_BUFFER_OFFSET(gst_sample_get_buffer(s.get())), guint64(n));
            const GstClockTime running = running_time_of(s.get());
            EXPECT_GE(running, last_running) << "the running time never goes back";
            last_running = running;
        }
        auto end = rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 5s);
        ASSERT_TRUE(end);
        EXPECT_EQ(GST_MESSAGE_TYPE(end.get()), GST_MESSAGE_EOS)
            << "the sender's EOS ends the stream: " << message_text(end.get());
        EXPECT_EQ(u64_property(src, "received"), first_frames + 20) << "none lost";
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

// Plays `rx`, lets a sender on `dir` deliver a frame to it and stops that sender without EOS:
// the receiver's warning follows.
void lose_the_sender(const Pipeline& rx, const SocketDir& dir)
{
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    {
        Pipeline first(camera(dir.path(), 64, 32));
        ASSERT_NE(first.play(), GST_STATE_CHANGE_FAILURE);
        ASSERT_TRUE(pull(rx));
    }
    auto warning = rx.wait(GstMessageType(GST_MESSAGE_WARNING | GST_MESSAGE_ERROR), 5s);
    ASSERT_TRUE(warning);
    EXPECT_EQ(GST_MESSAGE_TYPE(warning.get()), GST_MESSAGE_WARNING) << message_text(warning.get());
}

TEST_F(GstIpcReconnect, NoSenderBackWithinTheTimeoutIsAnErrorNamingTheSocket_Negative)
{
    SocketDir dir;
    Pipeline rx(consumer(dir.path(), "timeout=300000000"));
    ASSERT_NO_FATAL_FAILURE(lose_the_sender(rx, dir));
    const auto t0 = std::chrono::steady_clock::now();
    auto err = rx.wait(GST_MESSAGE_ERROR, 5s);
    ASSERT_TRUE(err) << "never a hang";
    EXPECT_NE(message_text(err.get()).find("No tensoripcsink listens on \"" + dir.path() + "\""),
              std::string::npos)
        << message_text(err.get());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
}

// timeout=0 waits for a sender forever, but a pipeline stopped meanwhile stops at once.
TEST_F(GstIpcReconnect, AReceiverWaitingForeverForItsSenderStopsAtOnce)
{
    const auto before = open_fds();
    {
        SocketDir dir;
        Pipeline rx(consumer(dir.path(), "timeout=0"));
        ASSERT_NO_FATAL_FAILURE(lose_the_sender(rx, dir));
        const auto t0 = std::chrono::steady_clock::now();
        rx.stop();
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

} // namespace
} // namespace edgetensor::test
