/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Minimal subset of the Linux UAPI <linux/dma-buf.h> (v6.12): only what edgetensor uses,
 * vendored so the build does not depend on the age of the host's kernel headers.
 * The guard matches the kernel's so the two headers can coexist in one translation unit.
 */
#ifndef _DMA_BUF_UAPI_H_
#define _DMA_BUF_UAPI_H_

#include <linux/ioctl.h>
#include <linux/types.h>

struct dma_buf_sync {
	__u64 flags;
};

#define DMA_BUF_SYNC_READ (1 << 0)
#define DMA_BUF_SYNC_WRITE (2 << 0)
#define DMA_BUF_SYNC_RW (DMA_BUF_SYNC_READ | DMA_BUF_SYNC_WRITE)
#define DMA_BUF_SYNC_START (0 << 2)
#define DMA_BUF_SYNC_END (1 << 2)
#define DMA_BUF_SYNC_VALID_FLAGS_MASK (DMA_BUF_SYNC_RW | DMA_BUF_SYNC_END)

#define DMA_BUF_NAME_LEN 32

#define DMA_BUF_BASE 'b'
#define DMA_BUF_IOCTL_SYNC _IOW(DMA_BUF_BASE, 0, struct dma_buf_sync)

/* 32/64-bitness of this uapi was botched in android, there's no difference between them in
 * actual uapi, they're just different numbers. */
#define DMA_BUF_SET_NAME _IOW(DMA_BUF_BASE, 1, const char *)
#define DMA_BUF_SET_NAME_A _IOW(DMA_BUF_BASE, 1, __u32)
#define DMA_BUF_SET_NAME_B _IOW(DMA_BUF_BASE, 1, __u64)

/* The magic reported by fstatfs() for a DMA-BUF fd (<linux/magic.h>). */
#define DMA_BUF_MAGIC 0x444d4142

#endif /* _DMA_BUF_UAPI_H_ */
