// SPDX-License-Identifier: MIT
//
// Socket plumbing for the IPC protocol (see ipc_socket.hpp).

#include "ipc_socket.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace edgetensor::ipc
{

namespace
{

Result<sockaddr_un> address_of(const std::string& path)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty())
        return make_error(ErrorCode::InvalidArgument, "the socket path is empty");
    if (path.size() >= sizeof(addr.sun_path))
        return make_error(ErrorCode::InvalidArgument,
                          "socket path \"" + path + "\" is longer than the " +
                              std::to_string(sizeof(addr.sun_path) - 1) +
                              " bytes a Unix socket address holds");
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    return addr;
}

Result<UniqueFd> new_socket()
{
    UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!s)
        return unexpected(Error::io(errno, "socket(AF_UNIX, SOCK_SEQPACKET)"));
    return s;
}

// Whether something accepts connections on `path` right now.
bool someone_listens(const sockaddr_un& addr)
{
    auto s = new_socket();
    if (!s)
        return false;
    // A non-blocking connect to a listening Unix socket completes or queues at once.
    const int r = ::connect(s->get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
    return r == 0 || errno == EAGAIN || errno == EINPROGRESS;
}

} // namespace

Result<UniqueFd> listen_on(const std::string& path, unsigned mode)
{
    auto addr = address_of(path);
    if (!addr)
        return unexpected(std::move(addr).error());
    auto s = new_socket();
    if (!s)
        return s;
    struct stat st {
    };
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return make_error(ErrorCode::InvalidArgument,
                              "\"" + path +
                                  "\" exists and is not a socket; refusing to replace it");
        if (someone_listens(*addr))
            return make_error(ErrorCode::Unavailable,
                              "another sink already listens on \"" + path + "\"");
        if (::unlink(path.c_str()) != 0 && errno != ENOENT)
            return unexpected(Error::io(errno, "unlink of the stale socket \"" + path + "\""));
    }
    if (::bind(s->get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0)
        return unexpected(Error::io(errno, "bind to \"" + path + "\""));
    if (::chmod(path.c_str(), mode_t(mode & 07777)) != 0) {
        const int err = errno;
        ::unlink(path.c_str());
        return unexpected(Error::io(err, "chmod of \"" + path + "\""));
    }
    if (::listen(s->get(), 16) != 0) {
        const int err = errno;
        ::unlink(path.c_str());
        return unexpected(Error::io(err, "listen on \"" + path + "\""));
    }
    return s;
}

Result<UniqueFd> connect_to(const std::string& path)
{
    auto addr = address_of(path);
    if (!addr)
        return unexpected(std::move(addr).error());
    auto s = new_socket();
    if (!s)
        return s;
    if (::connect(s->get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0 &&
        errno != EINPROGRESS) {
        const int err = errno;
        // A file that is no socket refuses every connection (ECONNREFUSED, which a caller
        // waits out), and no sink replaces it (listen_on() refuses to): say so now.
        struct stat st {
        };
        if (err == ECONNREFUSED && ::stat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode))
            return make_error(ErrorCode::InvalidArgument,
                              "\"" + path + "\" is " +
                                  (S_ISDIR(st.st_mode) ? "a directory" : "a file") +
                                  ", not a socket; a tensoripcsink listens on a path of its own");
        // EAGAIN: the sink's backlog is full; the caller retries like ECONNREFUSED.
        return unexpected(Error::io(err, "connect to \"" + path + "\""));
    }
    return s;
}

Result<UniqueFd> accept_on(int listen_fd)
{
    UniqueFd c(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!c)
        return unexpected(Error::io(errno, "accept"));
    return c;
}

UniqueFd open_spare_fd() noexcept
{
    return UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
}

Result<PeerCredentials> peer_credentials(int fd)
{
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return unexpected(Error::io(errno, "getsockopt(SO_PEERCRED)"));
    return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

Result<void> send_record(int fd, std::span<const uint8_t> bytes, std::span<const int> fds)
{
    if (fds.size() > kMaxFdsReceived)
        return make_error(ErrorCode::InvalidArgument, "too many fds for one record");
    iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsReceived)];
    if (!fds.empty()) {
        std::memset(control, 0, sizeof(control));
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    for (;;) {
        const ssize_t n = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n >= 0) {
            if (size_t(n) != bytes.size())
                return make_error(ErrorCode::Io, "short send on a SOCK_SEQPACKET socket");
            return {};
        }
        if (errno == EINTR)
            continue;
        return unexpected(Error::io(errno, "sendmsg"));
    }
}

Result<Received> receive_record(int fd)
{
    // Records are a few hundred bytes, but one of up to kMaxMessage must fit whole. The room
    // for the largest is kept per thread, allocated once and never cleared, rather than a
    // zeroed 64 KiB allocated for every call (twice a frame on the sink's serving thread: the
    // RELEASE, then the EAGAIN that ends its read).
    thread_local std::unique_ptr<uint8_t[]> room;
    if (!room)
        room = std::make_unique_for_overwrite<uint8_t[]>(kMaxMessage);
    Received r;
    iovec iov{room.get(), kMaxMessage};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsReceived)];
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n;
    for (;;) {
        n = ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n >= 0 || errno != EINTR)
            break;
    }
    if (n < 0)
        return unexpected(Error::io(errno, "recvmsg"));
    // Adopt every fd first, whatever else is wrong with the record.
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int received;
            std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            r.fds.emplace_back(received);
        }
    }
    r.truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    r.eof = n == 0 && r.fds.empty();
    r.bytes.assign(room.get(), room.get() + n);
    return r;
}

} // namespace edgetensor::ipc
