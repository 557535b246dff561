/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Minimal subset of the Linux UAPI <linux/dma-heap.h> (v6.12), vendored (see dma-buf.h).
 */
#ifndef _UAPI_LINUX_DMABUF_POOL_H
#define _UAPI_LINUX_DMABUF_POOL_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Valid fd_flags are O_CLOEXEC, O_RDONLY, O_WRONLY, O_RDWR. */
#define DMA_HEAP_VALID_FD_FLAGS (O_CLOEXEC | O_ACCMODE)

/* Currently no heap flags. */
#define DMA_HEAP_VALID_HEAP_FLAGS (0ULL)

/**
 * struct dma_heap_allocation_data - metadata passed from userspace for allocations
 * @len:        size of the allocation
 * @fd:         will be populated with a fd which provides the handle to the allocated dma-buf
 * @fd_flags:   file descriptor flags used when allocating
 * @heap_flags: flags passed to heap
 */
struct dma_heap_allocation_data {
	__u64 len;
	__u32 fd;
	__u32 fd_flags;
	__u64 heap_flags;
};

#define DMA_HEAP_IOC_MAGIC 'H'

#define DMA_HEAP_IOCTL_ALLOC _IOWR(DMA_HEAP_IOC_MAGIC, 0x0, struct dma_heap_allocation_data)

#endif /* _UAPI_LINUX_DMABUF_POOL_H */
