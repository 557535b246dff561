/* SPDX-License-Identifier: MIT */
/*
 * Export macro and the two small enums every libgstedgetensor-1.0 header shares.
 */

#ifndef GST_EDGE_TENSOR_PRELUDE_H
#define GST_EDGE_TENSOR_PRELUDE_H

#include <glib-object.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#ifndef GST_EDGE_TENSOR_API
#define GST_EDGE_TENSOR_API __attribute__((visibility("default"))) extern
#endif

/**
 * GstEdgeTensorMemoryKind:
 * @GST_EDGE_TENSOR_MEMORY_AUTO: DMA-BUF when a provider exists, else shared memory, else heap
 * @GST_EDGE_TENSOR_MEMORY_DMA: Linux DMA-BUF (dma-heap, udmabuf, DRM PRIME)
 * @GST_EDGE_TENSOR_MEMORY_SHM: memfd / shm_open shared memory (fd-backed, not a DMA-BUF)
 * @GST_EDGE_TENSOR_MEMORY_SYSTEM: process heap (no fd)
 *
 * Where the bytes of a tensor live. Pool configs ask for one; memories report theirs.
 */
typedef enum {
    GST_EDGE_TENSOR_MEMORY_AUTO = 0,
    GST_EDGE_TENSOR_MEMORY_DMA = 1,
    GST_EDGE_TENSOR_MEMORY_SHM = 2,
    GST_EDGE_TENSOR_MEMORY_SYSTEM = 3,
} GstEdgeTensorMemoryKind;

/**
 * GstEdgeTensorCpuAccess:
 * @GST_EDGE_TENSOR_CPU_ACCESS_NONE: the CPU never touches the bytes (hardware only)
 * @GST_EDGE_TENSOR_CPU_ACCESS_READ: the CPU reads
 * @GST_EDGE_TENSOR_CPU_ACCESS_WRITE: the CPU writes
 * @GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE: the CPU reads and writes
 *
 * What the CPU will do with pooled images (edgetensor::CpuAccess, same values).
 */
typedef enum {
    GST_EDGE_TENSOR_CPU_ACCESS_NONE = 0,
    GST_EDGE_TENSOR_CPU_ACCESS_READ = 1,
    GST_EDGE_TENSOR_CPU_ACCESS_WRITE = 2,
    GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE = 3,
} GstEdgeTensorCpuAccess;

#define GST_TYPE_EDGE_TENSOR_MEMORY_KIND (gst_edge_tensor_memory_kind_get_type())
#define GST_TYPE_EDGE_TENSOR_CPU_ACCESS (gst_edge_tensor_cpu_access_get_type())

GST_EDGE_TENSOR_API
GType gst_edge_tensor_memory_kind_get_type(void);
GST_EDGE_TENSOR_API
GType gst_edge_tensor_cpu_access_get_type(void);

/**
 * gst_edge_tensor_init:
 *
 * Initialises the library once (debug categories, forwarding of the core's log into the
 * "edgetensorcore" debug category, the metas registered). Every entry point calls it; calling
 * it again is free. GStreamer must be initialised first. An application that receives buffers
 * carrying edgetensor's metas from another process through unixfdsrc (GStreamer 1.24+), with no
 * edgetensor element in its pipeline, calls it before the first buffer:
 * GStreamer rebuilds only the metas a process has registered.
 */
GST_EDGE_TENSOR_API
void gst_edge_tensor_init(void);

G_END_DECLS

#endif /* GST_EDGE_TENSOR_PRELUDE_H */
