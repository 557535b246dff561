// SPDX-License-Identifier: MIT
//
// What the session tests (ipc::Server, ipc::Receiver) share: a socket path in a fresh
// directory, the next message on a socket, waiting for a condition, a hand-written sink, a
// full fd table, and the fd check every test ends with (every fd it opened is closed again).

#pragma once

#include "fd_count.hpp"
#include "ipc_socket.hpp"
#include "ipc_wire.hpp"

#include <edgetensor/unique_fd.hpp>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace edgetensor::test
{

inline std::string temp_socket_path()
{
    char tmpl[] = "/tmp/et-ipc-test-XXXXXX";
    EXPECT_TRUE(::mkdtemp(tmpl));
    return std::string(tmpl) + "/s";
}

/// The next message on `fd`, parsed (fails the test after 5 s).
inline ipc::Message next_message(int fd)
{
    pollfd p{fd, POLLIN, 0};
    EXPECT_GT(::poll(&p, 1, 5000), 0) << "nothing arrived";
    auto rec = ipc::receive_record(fd);
    EXPECT_TRUE(rec) << rec.error().message();
    if (!rec)
        return {};
    auto m = ipc::parse(rec->bytes, std::move(rec->fds), rec->truncated);
    EXPECT_TRUE(m) << m.error().message();
    return m ? std::move(*m) : ipc::Message{};
}

/// Polls `pred` until it holds; false after 5 s (a hang, not a timing assertion).
template <typename Pred> bool eventually(Pred pred)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

/// A socket path in a fresh directory and, at the end, the directory removed and every fd
/// the test opened closed again. A derived fixture stops what it started before calling
/// this TearDown().
class FdCheckedTest : public ::testing::Test
{
protected:
    void TearDown() override
    {
        ::rmdir(path.substr(0, path.rfind('/')).c_str());
        EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
    }
    const std::set<int> before = open_fds();
    const std::string path = temp_socket_path();
};

// A sink written by hand: it accepts one receiver on a thread of its own and runs `script`
// on the connection, so the receiver's next() (which connects, then blocks) can run on the
// test's thread. The socket file goes with it.
class FakeSink
{
public:
    explicit FakeSink(std::string path) : path_(std::move(path))
    {
        auto l = ipc::listen_on(path_, 0600);
        EXPECT_TRUE(l) << l.error().message();
        if (l)
            listen_ = std::move(*l);
    }
    ~FakeSink()
    {
        join();
        ::unlink(path_.c_str());
    }
    void serve(std::function<void(UniqueFd&)> script)
    {
        thread_ = std::thread([this, script = std::move(script)] {
            pollfd p{listen_.get(), POLLIN, 0};
            if (::poll(&p, 1, 5000) <= 0)
                return;
            auto c = ipc::accept_on(listen_.get());
            if (!c)
                return;
            client_ = std::move(*c);
            script(client_);
        });
    }
    /// Waits for the script to end; the connection is the test's from then on.
    void join()
    {
        if (thread_.joinable())
            thread_.join();
    }
    int client() const { return client_.get(); }
    void hang_up() { client_.reset(); }
    /// True when nothing is waiting on the connection (releases are sent synchronously).
    bool nothing_pending() const
    {
        pollfd p{client_.get(), POLLIN, 0};
        return ::poll(&p, 1, 0) == 0;
    }

private:
    std::string path_;
    UniqueFd listen_;
    UniqueFd client_;
    std::thread thread_;
};

// A table of this process's fds filled up to `free_slots` left, restored when it dies.
class FullFdTable
{
public:
    explicit FullFdTable(size_t free_slots = 0)
    {
        EXPECT_EQ(::getrlimit(RLIMIT_NOFILE, &old_), 0);
        rlimit low = old_;
        low.rlim_cur = std::min<rlim_t>(old_.rlim_cur, 512);
        EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
        for (;;) {
            UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
            if (!fd)
                break;
            filler_.push_back(std::move(fd));
        }
        EXPECT_FALSE(filler_.empty());
        for (size_t i = 0; i < free_slots && !filler_.empty(); ++i)
            filler_.pop_back();
    }
    ~FullFdTable()
    {
        filler_.clear();
        ::setrlimit(RLIMIT_NOFILE, &old_);
    }
    void free_one() { filler_.pop_back(); }

private:
    rlimit old_{};
    std::vector<UniqueFd> filler_;
};

} // namespace edgetensor::test
