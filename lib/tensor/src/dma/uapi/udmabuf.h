/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Minimal subset of the Linux UAPI <linux/udmabuf.h> (v6.12), vendored (see dma-buf.h).
 */
#ifndef _UAPI_LINUX_UDMABUF_H
#define _UAPI_LINUX_UDMABUF_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define UDMABUF_FLAGS_CLOEXEC 0x01

struct udmabuf_create {
	__u32 memfd;
	__u32 flags;
	__u64 offset;
	__u64 size;
};

#define UDMABUF_CREATE _IOW('u', 0x42, struct udmabuf_create)

#endif /* _UAPI_LINUX_UDMABUF_H */
