// SPDX-License-Identifier: MIT
//
// SOCK_SEQPACKET Unix sockets for the IPC elements: listen/connect by path, peer credentials,
// and one record (with fds) in or out. Every fd made here is CLOEXEC and owned by a UniqueFd;
// received fds are adopted the moment recvmsg() returns, so an early return cannot leak one.

#pragma once

#include "ipc_wire.hpp"

#include <edgetensor/error.hpp>
#include <edgetensor/unique_fd.hpp>

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace edgetensor::ipc
{

/// Binds and listens on `path` (non-blocking), with permissions `mode` applied before
/// listen() so nobody can connect under looser ones. A stale socket file (nobody accepts on
/// it) is replaced; a live one, or any other file, is an error naming the path.
Result<UniqueFd> listen_on(const std::string& path, unsigned mode);

/// Connects to `path` (the returned socket is non-blocking). Errors are Io with errno:
/// ENOENT / ECONNREFUSED mean no sink listens there (yet). InvalidArgument: `path` is a file
/// or directory that is not a socket, where none will.
Result<UniqueFd> connect_to(const std::string& path);

/// Accepts one pending connection (non-blocking, CLOEXEC); Io(EAGAIN) when none is pending.
Result<UniqueFd> accept_on(int listen_fd);

/// An fd held in reserve (/dev/null): closed to free a slot in a full fd table, so that
/// accept_on() can still take a connection off the backlog and refuse it. Empty on failure.
UniqueFd open_spare_fd() noexcept;

struct PeerCredentials {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
};
/// SO_PEERCRED of a connected socket: who is at the other end, as the kernel saw it connect.
Result<PeerCredentials> peer_credentials(int fd);

/// Sends one record with `fds` (borrowed) as SCM_RIGHTS, without blocking and without
/// SIGPIPE. Io(EAGAIN) when the socket buffer is full; Io(EPIPE/ECONNRESET) when the peer is
/// gone.
Result<void> send_record(int fd, std::span<const uint8_t> bytes, std::span<const int> fds = {});

struct Received {
    std::vector<uint8_t> bytes;
    std::vector<UniqueFd> fds;
    bool truncated = false; ///< MSG_TRUNC or MSG_CTRUNC
    bool eof = false;       ///< orderly shutdown: the peer closed
};
/// Receives one record without blocking (Io(EAGAIN) when none is queued). Records up to
/// kMaxMessage bytes and kMaxFdsReceived fds are taken whole; anything beyond is reported as
/// truncated, with every fd that did arrive owned by the result.
Result<Received> receive_record(int fd);

} // namespace edgetensor::ipc
