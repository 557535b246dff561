// SPDX-License-Identifier: MIT
//
// Helpers for the tensoripcsink/tensoripcsrc suites: pipelines from launch strings, bus waits,
// a private socket directory, and gst-launch-1.0 peers in child processes.

#pragma once

#include "gst_test_util.hpp"

#include <gst/app/gstappsink.h>
#include <gst/edgetensor/edgetensor.h>
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace edgetensor::test
{

using namespace std::chrono_literals;

/// Loads system plugins by file: the test environment has no system plugin path (only the
/// build's), and the IPC tests need appsrc/appsink and the core elements.
inline void load_system_plugins()
{
    for (const char* name : {"libgstapp.so", "libgstcoreelements.so"}) {
        const std::string path = std::string(ET_GST_PLUGINS_DIR) + "/" + name;
        GError* err = nullptr;
        GstPlugin* p = gst_plugin_load_file(path.c_str(), &err);
        if (!p) {
            ADD_FAILURE() << "cannot load " << path << ": " << (err ? err->message : "");
            g_clear_error(&err);
            continue;
        }
        gst_object_unref(p);
    }
}

/// Whether the whole slot picture (0, top, w, h) of a letterboxed `slot` maps back onto the
/// whole of its `src_w` x `src_h` source frame (a batch received from another process).
inline ::testing::AssertionResult picture_maps_onto_frame(const GstEdgeTensorBatchSlot* slot,
                                                          double top, double w, double h,
                                                          double src_w, double src_h)
{
    gdouble x, y, sw, sh;
    if (!gst_edge_tensor_batch_slot_box_to_source(slot, 0, top, w, h, &x, &y, &sw, &sh))
        return ::testing::AssertionFailure() << "the slot maps nothing back";
    if (std::abs(x) > 1e-9 || std::abs(y) > 1e-9 || std::abs(sw - src_w) > 1e-9 ||
        std::abs(sh - src_h) > 1e-9)
        return ::testing::AssertionFailure() << "mapped onto " << x << "," << y << " " << sw << "x"
                                             << sh << ", not 0,0 " << src_w << "x" << src_h;
    return ::testing::AssertionSuccess();
}

/// An unsigned property of an element (the sinks' counters).
inline guint64 u64_property(GstElement* e, const char* name)
{
    guint64 v = 0;
    g_object_get(e, name, &v, nullptr);
    return v;
}

inline guint uint_property(GstElement* e, const char* name)
{
    guint v = 0;
    g_object_get(e, name, &v, nullptr);
    return v;
}

/// Which identity each received frame's file (by inode) arrived as. The receiver names a
/// sender buffer by one identity for as long as it streams; how many of the sender's pool
/// buffers come round depends on what the receiver holds (pools hand out the newest free one).
class SenderBuffers
{
public:
    void note(GstBuffer* buf)
    {
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(buf);
        GstMemory* mem = gst_buffer_n_memory(buf) ? gst_buffer_peek_memory(buf, 0) : nullptr;
        const ino_t ino = mem && gst_is_fd_memory(mem) ? inode_of(gst_fd_memory_get_fd(mem)) : 0;
        if (!m || ino == 0) {
            ++unnamed_;
            return;
        }
        identities_of_[ino].insert(m->identity);
        all_ids_.insert(m->identity);
    }

    /// One identity per inode, and no more files than the sender's pool has buffers.
    ::testing::AssertionResult one_identity_each(size_t pool_buffers) const
    {
        if (unnamed_)
            return ::testing::AssertionFailure()
                   << unnamed_ << " frames without a GstEdgeTensorMeta on an fd memory";
        if (identities_of_.empty())
            return ::testing::AssertionFailure() << "no frame arrived";
        for (const auto& [ino, ids] : identities_of_)
            if (ids.size() != 1)
                return ::testing::AssertionFailure()
                       << "inode " << ino << " arrived as " << ids.size() << " identities";
        if (all_ids_.size() != identities_of_.size())
            return ::testing::AssertionFailure()
                   << all_ids_.size() << " identities for " << identities_of_.size() << " inodes";
        if (identities_of_.size() > pool_buffers)
            return ::testing::AssertionFailure()
                   << identities_of_.size() << " sender files, more than its pool's "
                   << pool_buffers << " buffers";
        return ::testing::AssertionSuccess();
    }

private:
    std::map<ino_t, std::set<guint64>> identities_of_;
    std::set<guint64> all_ids_;
    int unnamed_ = 0;
};

/// Every byte of frame n holds n % 256 (tensortestsrc pattern=frame-counter).
inline ::testing::AssertionResult frame_counter_content(GstBuffer* buf)
{
    GstMapInfo map;
    if (!gst_buffer_map(buf, &map, GST_MAP_READ))
        return ::testing::AssertionFailure() << "cannot map";
    const guint8 want = guint8(GST_BUFFER_OFFSET(buf));
    gsize bad = map.size;
    for (gsize i = 0; i < map.size && bad == map.size; ++i)
        if (map.data[i] != want)
            bad = i;
    const gsize size = map.size;
    gst_buffer_unmap(buf, &map);
    if (bad != size)
        return ::testing::AssertionFailure()
               << "frame " << GST_BUFFER_OFFSET(buf) << " differs at byte " << bad;
    return ::testing::AssertionSuccess();
}

/// A pipeline from a launch string, set to NULL and freed on destruction.
class Pipeline
{
public:
    explicit Pipeline(const std::string& launch)
    {
        GError* err = nullptr;
        p_ = gst_parse_launch(launch.c_str(), &err);
        if (err) {
            ADD_FAILURE() << "cannot parse \"" << launch << "\": " << err->message;
            g_error_free(err);
        }
    }
    ~Pipeline()
    {
        if (p_) {
            gst_element_set_state(p_, GST_STATE_NULL);
            // The tests count fds once their pipelines are gone.
            EXPECT_TRUE(unref_and_wait_finalized(p_)) << "the pipeline outlives its last reference";
        }
    }
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    GstElement* get() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }
    GstElement* by_name(const char* name) const
    {
        GstElement* e = gst_bin_get_by_name(GST_BIN(p_), name);
        if (e)
            gst_object_unref(e); // the bin keeps it
        return e;
    }
    GstStateChangeReturn play() const { return gst_element_set_state(p_, GST_STATE_PLAYING); }
    void stop() const { gst_element_set_state(p_, GST_STATE_NULL); }

    /// The first message of `types` within `timeout` (nullptr on timeout).
    MiniObjectPtr<GstMessage> wait(GstMessageType types, std::chrono::milliseconds timeout) const
    {
        GstBus* bus = gst_element_get_bus(p_);
        GstMessage* m =
            gst_bus_timed_pop_filtered(bus, GstClockTime(timeout.count()) * GST_MSECOND, types);
        gst_object_unref(bus);
        return MiniObjectPtr<GstMessage>(m);
    }

private:
    GstElement* p_ = nullptr;
};

inline std::string message_text(GstMessage* m)
{
    if (!m)
        return "(none)";
    GError* err = nullptr;
    gchar* dbg = nullptr;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR)
        gst_message_parse_error(m, &err, &dbg);
    else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING)
        gst_message_parse_warning(m, &err, &dbg);
    else
        return GST_MESSAGE_TYPE_NAME(m);
    std::string s = std::string(err ? err->message : "") + " (" + (dbg ? dbg : "") + ")";
    if (err)
        g_error_free(err);
    g_free(dbg);
    return s;
}

/// The next sample of the appsink named "out" in `p`, or null after `timeout`.
inline MiniObjectPtr<GstSample> pull(const Pipeline& p, std::chrono::milliseconds timeout = 5s)
{
    return MiniObjectPtr<GstSample>(gst_app_sink_try_pull_sample(
        GST_APP_SINK(p.by_name("out")), GstClockTime(timeout.count()) * GST_MSECOND));
}

/// A private directory for sockets, removed with what is in it.
class SocketDir
{
public:
    SocketDir()
    {
        char tmpl[] = "/tmp/et-ipc-test-XXXXXX";
        if (::mkdtemp(tmpl))
            dir_ = tmpl;
    }
    ~SocketDir()
    {
        const std::string plugins = dir_ + "/system-plugins";
        if (DIR* d = ::opendir(plugins.c_str())) {
            while (dirent* e = ::readdir(d))
                if (e->d_name[0] != '.')
                    ::unlink((plugins + "/" + e->d_name).c_str());
            ::closedir(d);
            ::rmdir(plugins.c_str());
        }
        if (DIR* d = ::opendir(dir_.c_str())) {
            while (dirent* e = ::readdir(d))
                if (e->d_name[0] != '.')
                    ::unlink((dir_ + "/" + e->d_name).c_str());
            ::closedir(d);
        }
        ::rmdir(dir_.c_str());
    }
    std::string path(const std::string& name = "s") const { return dir_ + "/" + name; }
    const std::string& dir() const { return dir_; }

private:
    std::string dir_;
};

/// Waits until `pred` holds or `timeout` passes.
template <typename Pred> bool eventually(Pred pred, std::chrono::milliseconds timeout)
{
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
        if (pred())
            return true;
        std::this_thread::sleep_for(5ms);
    }
    return pred();
}

/// A launch line split into gst-launch-1.0 arguments, as a shell would split it.
inline std::vector<std::string> split_launch(const std::string& s)
{
    std::vector<std::string> v;
    gchar** argv = nullptr;
    if (g_shell_parse_argv(s.c_str(), nullptr, &argv, nullptr)) {
        for (gchar** a = argv; *a; ++a)
            v.emplace_back(*a);
        g_strfreev(argv);
    }
    return v;
}

/// A gst-launch-1.0 in a child process, stdout and stderr to a file; killed on destruction.
class Peer
{
public:
    Peer(const std::string& launch_dir, const std::vector<std::string>& args)
    {
        out_ = launch_dir + "/peer-" + std::to_string(counter()++) + ".log";
        std::vector<std::string> argv_s{"gst-launch-1.0"};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& a : argv_s)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        // The peer sees the build's plugins and the system's (fakesink, imagefreeze, ...), with
        // a registry of its own.
        std::vector<std::string> env_s;
        for (char** e = environ; *e; ++e) {
            const std::string kv = *e;
            if (kv.rfind("GST_PLUGIN_SYSTEM_PATH", 0) == 0 || kv.rfind("GST_REGISTRY", 0) == 0)
                continue;
            env_s.push_back(kv);
        }
        // Only the system plugins the peers use, linked into a directory of their own: a
        // registry scan of every system plugin takes tens of seconds under TCG (the VM lane).
        const std::string plugins = launch_dir + "/system-plugins";
        ::mkdir(plugins.c_str(), 0700);
        for (const char* name : {"libgstcoreelements.so", "libgstapp.so", "libgstimagefreeze.so",
                                 "libgstvideo4linux2.so", "libgstdebugutilsbad.so",
                                 "libgstunixfd.so", "libgstvideotestsrc.so"}) {
            const std::string target = std::string(ET_GST_PLUGINS_DIR) + "/" + name;
            if (::access(target.c_str(), R_OK) == 0)
                (void)::symlink(target.c_str(), (plugins + "/" + name).c_str());
        }
        env_s.push_back("GST_PLUGIN_SYSTEM_PATH_1_0=" + plugins);
        env_s.push_back("GST_REGISTRY_1_0=" + launch_dir + "/peer-registry.bin");
        std::vector<char*> envp;
        for (auto& e : env_s)
            envp.push_back(e.data());
        envp.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (posix_spawnp(&pid_, "gst-launch-1.0", &fa, nullptr, argv.data(), envp.data()) != 0)
            pid_ = -1;
        posix_spawn_file_actions_destroy(&fa);
        EXPECT_GT(pid_, 0) << "cannot start gst-launch-1.0";
    }
    ~Peer()
    {
        if (pid_ > 0 && !status_) {
            ::kill(pid_, SIGKILL);
            int st;
            ::waitpid(pid_, &st, 0);
        }
    }
    Peer(const Peer&) = delete;
    Peer& operator=(const Peer&) = delete;

    pid_t pid() const { return pid_; }
    void kill9()
    {
        if (pid_ > 0 && !status_)
            ::kill(pid_, SIGKILL);
    }
    /// The exit status (waitpid form) once the child ended within `timeout`.
    std::optional<int> wait(std::chrono::milliseconds timeout)
    {
        if (status_)
            return status_;
        const auto until = std::chrono::steady_clock::now() + timeout;
        do {
            int st = 0;
            if (::waitpid(pid_, &st, WNOHANG) == pid_) {
                status_ = st;
                return status_;
            }
            std::this_thread::sleep_for(5ms);
        } while (std::chrono::steady_clock::now() < until);
        return std::nullopt;
    }
    std::string output() const
    {
        std::ifstream f(out_);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
    /// fds the child has open now (-1 when it is gone).
    int fd_count() const
    {
        DIR* d = ::opendir(("/proc/" + std::to_string(pid_) + "/fd").c_str());
        if (!d)
            return -1;
        int n = 0;
        while (dirent* e = ::readdir(d))
            n += e->d_name[0] != '.';
        ::closedir(d);
        return n;
    }
    /// (st_dev, st_ino) of every fd the child has open now.
    std::vector<std::pair<dev_t, ino_t>> fd_inodes() const
    {
        std::vector<std::pair<dev_t, ino_t>> v;
        const std::string dir = "/proc/" + std::to_string(pid_) + "/fd";
        DIR* d = ::opendir(dir.c_str());
        if (!d)
            return v;
        while (dirent* e = ::readdir(d)) {
            struct stat st {
            };
            if (e->d_name[0] != '.' && ::stat((dir + "/" + e->d_name).c_str(), &st) == 0)
                v.emplace_back(st.st_dev, st.st_ino);
        }
        ::closedir(d);
        return v;
    }

private:
    static int& counter()
    {
        static int n = 0;
        return n;
    }
    pid_t pid_ = -1;
    std::optional<int> status_;
    std::string out_;
};

} // namespace edgetensor::test
