/* SPDX-License-Identifier: MIT */
/*
 * npu-consumer: plays an NPU runtime at the end of a zero-copy chain.
 *
 * The runtime receives what edgetensor hands any foreign consumer: one EdgeTensorDesc and the
 * buffer's fd, here over a Unix socket with SCM_RIGHTS (the fd number in the descriptor is the
 * sender's and means nothing in this process). It validates the descriptor through
 * edgetensor_from_desc, maps the buffer, walks it with the descriptor's byte strides as an
 * accelerator's DMA engine would, and answers with a checksum.
 *
 *   npu-consumer --socket FD   consume one descriptor from socket FD; reply with the 8-byte
 *                              checksum on the socket and print it; exit 2 on a refused
 *                              descriptor
 *   npu-consumer               demo: fork a producer that allocates an image (DMA-BUF when the
 *                              host has a provider, else memfd), fill it, send it, and check
 *                              the consumer's answer
 */

#define _GNU_SOURCE

#include <edgetensor/edgetensor.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t dtype_bytes(uint32_t dtype)
{
    static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8};
    return dtype < sizeof(sizes) / sizeof(sizes[0]) ? sizes[dtype] : 0;
}

/* FNV-1a over every element's bytes in row-major index order, following byte strides, so
 * row padding never enters the sum. `base` is the first element. */
static uint64_t checksum(const uint8_t* base, uint32_t ndim, const uint64_t* shape,
                         const int64_t* strides, size_t elem)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t idx[EDGETENSOR_DESC_MAX_NDIM] = {0};
    uint32_t d;
    size_t b;
    for (;;) {
        int64_t off = 0;
        for (d = 0; d < ndim; ++d)
            off += (int64_t)idx[d] * strides[d];
        for (b = 0; b < elem; ++b) {
            h ^= base[off + (int64_t)b];
            h *= 1099511628211ull;
        }
        for (d = ndim; d-- > 0;) {
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
        if (d == (uint32_t)-1)
            return h;
    }
}

static int send_desc(int sock, const EdgeTensorDesc* desc, int fd)
{
    struct iovec iov = {(void*)desc, sizeof(*desc)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctrl;
    struct msghdr msg;
    memset(&msg, 0, sizeof(msg));
    memset(&ctrl, 0, sizeof(ctrl));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        struct cmsghdr* c;
        msg.msg_control = ctrl.buf;
        msg.msg_controllen = sizeof(ctrl.buf);
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(*desc) ? 0 : -errno;
}

/* Receives one descriptor and at most one fd (-1 when none came). */
static int recv_desc(int sock, EdgeTensorDesc* desc, int* fd)
{
    struct iovec iov = {desc, sizeof(*desc)};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } ctrl;
    struct msghdr msg;
    struct cmsghdr* c;
    ssize_t n;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctrl.buf;
    msg.msg_controllen = sizeof(ctrl.buf);
    *fd = -1;
    do
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            size_t i;
            for (i = 0; i < count; ++i) {
                int got;
                memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (*fd < 0)
                    *fd = got;
                else
                    close(got); /* one buffer per descriptor; never leak extras */
            }
        }
    }
    if (n != (ssize_t)sizeof(*desc) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return -EPROTO;
    }
    return 0;
}

static int consume(int sock)
{
    EdgeTensorDesc desc;
    edgetensor_tensor* t = NULL;
    edgetensor_mapping* m = NULL;
    uint64_t shape[EDGETENSOR_DESC_MAX_NDIM];
    int64_t strides[EDGETENSOR_DESC_MAX_NDIM];
    uint32_t ndim;
    uint64_t sum;
    int fd = -1;
    int rc = recv_desc(sock, &desc, &fd);
    if (rc != 0) {
        fprintf(stderr, "npu-consumer: no descriptor received: %s\n", strerror(-rc));
        return 1;
    }
    /* Untrusted input: edgetensor checks every field and the fd before we touch a byte. */
    rc = edgetensor_from_desc(&desc, fd, &t);
    if (rc != 0) {
        fprintf(stderr, "npu-consumer: rejected descriptor: %s\n", edgetensor_last_error());
        return 2;
    }
    rc = edgetensor_map(t, EDGETENSOR_ACCESS_READ, &m);
    if (rc != 0) {
        fprintf(stderr, "npu-consumer: map failed: %s\n", edgetensor_last_error());
        edgetensor_release(t);
        return 1;
    }
    ndim = edgetensor_ndim(t);
    edgetensor_shape(t, shape, strides, EDGETENSOR_DESC_MAX_NDIM);
    sum = checksum((const uint8_t*)edgetensor_map_data(m), ndim, shape, strides,
                   dtype_bytes(edgetensor_dtype(t)));
    edgetensor_unmap(m);
    edgetensor_release(t);

    printf("npu-consumer: kind=%s ndim=%" PRIu32 " dtype=%" PRIu32 " format=%" PRIu32
           " checksum=0x%016" PRIx64 "\n",
           desc.kind == EDGETENSOR_KIND_DMABUF ? "dmabuf" : "host", ndim, desc.dtype, desc.format,
           sum);
    fflush(stdout);
    if (write(sock, &sum, sizeof(sum)) != (ssize_t)sizeof(sum)) {
        fprintf(stderr, "npu-consumer: could not reply: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

static int produce_and_check(int sock, pid_t child)
{
    edgetensor_tensor* img = NULL;
    edgetensor_mapping* m = NULL;
    EdgeTensorDesc desc;
    uint64_t expected, got = 0;
    int fd = -1, status = 0;
    size_t i;
    int rc;

    /* A 321-pixel-wide RGBA frame: on DMA its rows get the 64-byte aligned pitch (1344, not
     * 1284), which the consumer has to follow through the descriptor's strides. */
    rc = edgetensor_image(321, 9, EDGETENSOR_FORMAT_RGBA, EDGETENSOR_DTYPE_U8,
                          EDGETENSOR_ACCESS_READ_WRITE, EDGETENSOR_MEMORY_DMA, "npu-input", &img);
    if (rc != 0)
        rc = edgetensor_image(321, 9, EDGETENSOR_FORMAT_RGBA, EDGETENSOR_DTYPE_U8,
                              EDGETENSOR_ACCESS_READ_WRITE, EDGETENSOR_MEMORY_SHM, "npu-input",
                              &img);
    if (rc == 0)
        rc = edgetensor_map(img, EDGETENSOR_ACCESS_WRITE, &m);
    if (rc != 0) {
        fprintf(stderr, "producer: %s\n", edgetensor_last_error());
        return 1;
    }
    for (i = 0; i < edgetensor_map_size(m); ++i)
        ((uint8_t*)edgetensor_map_data(m))[i] = (uint8_t)(i * 31 + 7);
    edgetensor_unmap(m);

    if (edgetensor_describe(img, &desc) != 0 || edgetensor_clone_fd(img, &fd) != 0 ||
        edgetensor_map(img, EDGETENSOR_ACCESS_READ, &m) != 0) {
        fprintf(stderr, "producer: %s\n", edgetensor_last_error());
        edgetensor_release(img);
        return 1;
    }
    expected =
        checksum((const uint8_t*)edgetensor_map_data(m), desc.ndim, desc.shape, desc.strides, 1);
    edgetensor_unmap(m);

    rc = send_desc(sock, &desc, fd);
    close(fd); /* the socket carried a duplicate; ours is no longer needed */
    if (rc == 0 && read(sock, &got, sizeof(got)) != (ssize_t)sizeof(got))
        rc = -EPROTO;
    waitpid(child, &status, 0);
    edgetensor_release(img);
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "producer: consumer failed (%s, status %d)\n", strerror(rc ? -rc : EIO),
                status);
        return 1;
    }
    if (got != expected) {
        fprintf(stderr,
                "producer: checksum mismatch: consumer 0x%016" PRIx64 ", producer 0x%016" PRIx64
                "\n",
                got, expected);
        return 1;
    }
    printf("producer: %s buffer with row pitch %" PRId64 " bytes; checksums agree\n",
           desc.kind == EDGETENSOR_KIND_DMABUF ? "DMA-BUF" : "memfd", desc.strides[0]);
    return 0;
}

int main(int argc, char** argv)
{
    int sv[2];
    pid_t pid;
    if (argc == 3 && strcmp(argv[1], "--socket") == 0) {
        char* end = NULL;
        long sock = strtol(argv[2], &end, 10);
        if (!end || *end != '\0' || sock < 0 || sock > 1 << 20) {
            fprintf(stderr, "npu-consumer: bad socket fd '%s'\n", argv[2]);
            return 1;
        }
        return consume((int)sock);
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--socket FD]\n", argv[0]);
        return 1;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        perror("socketpair");
        return 1;
    }
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        close(sv[0]);
        _exit(consume(sv[1]));
    }
    close(sv[1]);
    {
        int rc = produce_and_check(sv[0], pid);
        close(sv[0]);
        return rc;
    }
}
