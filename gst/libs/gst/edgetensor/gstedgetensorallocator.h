/* SPDX-License-Identifier: MIT */
/*
 * GstEdgeTensorAllocator: GstMemory backed by edgetensor tensors.
 *
 * gst_allocator_alloc() on it allocates a tensor through the core and returns a GstMemory
 * that keeps the tensor alive. Which kind of memory comes back depends on what the host has:
 *
 *  - DMA-BUF: the memory's allocator is the GstEdgeTensorAllocator itself (a
 *    GstDmaBufAllocator subclass), so gst_is_dmabuf_memory() is TRUE and
 *    gst_dmabuf_memory_get_fd() gives an fd of the tensor's DMA-BUF (same st_ino).
 *  - shared memory: the memory's allocator is the sibling GstEdgeTensorShmAllocator (a
 *    GstFdAllocator, memory type "edgetensor-shm"): fd-backed, never claiming to be dmabuf.
 *  - heap (only when asked for, or EDGETENSOR_FORCE_MEM=1): plain system memory.
 *
 * A memory's fd is the tensor's own, borrowed (GST_FD_MEMORY_FLAG_DONT_CLOSE): the memory
 * keeps the tensor, the tensor owns the fd, so one fd per buffer and one owner per fd.
 */

#ifndef GST_EDGE_TENSOR_ALLOCATOR_H
#define GST_EDGE_TENSOR_ALLOCATOR_H

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor-prelude.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/* The name the allocator is registered under (gst_allocator_find()). */
#define GST_EDGE_TENSOR_ALLOCATOR_NAME "edgetensor"
/* Memory type of shared-memory (non-DMA) edgetensor memories. */
#define GST_EDGE_TENSOR_MEMORY_TYPE_SHM "edgetensor-shm"
/* Memory type of AHardwareBuffer-backed memories (Android's Dma backend): no fd; every map
 * locks the buffer, every unmap unlocks it. */
#define GST_EDGE_TENSOR_MEMORY_TYPE_AHB "ahardwarebuffer"

#define GST_TYPE_EDGE_TENSOR_ALLOCATOR (gst_edge_tensor_allocator_get_type())
#define GST_EDGE_TENSOR_ALLOCATOR(obj)                                                             \
    (G_TYPE_CHECK_INSTANCE_CAST((obj), GST_TYPE_EDGE_TENSOR_ALLOCATOR, GstEdgeTensorAllocator))
#define GST_IS_EDGE_TENSOR_ALLOCATOR(obj)                                                          \
    (G_TYPE_CHECK_INSTANCE_TYPE((obj), GST_TYPE_EDGE_TENSOR_ALLOCATOR))

#define GST_TYPE_EDGE_TENSOR_SHM_ALLOCATOR (gst_edge_tensor_shm_allocator_get_type())
#define GST_IS_EDGE_TENSOR_SHM_ALLOCATOR(obj)                                                      \
    (G_TYPE_CHECK_INSTANCE_TYPE((obj), GST_TYPE_EDGE_TENSOR_SHM_ALLOCATOR))

typedef struct _GstEdgeTensorAllocator GstEdgeTensorAllocator;
typedef struct _GstEdgeTensorAllocatorClass GstEdgeTensorAllocatorClass;
typedef struct _GstEdgeTensorShmAllocator GstEdgeTensorShmAllocator;
typedef struct _GstEdgeTensorShmAllocatorClass GstEdgeTensorShmAllocatorClass;

struct _GstEdgeTensorAllocator {
    GstDmaBufAllocator parent;
    /*< private >*/
    gpointer priv;
    gpointer _gst_reserved[GST_PADDING];
};

struct _GstEdgeTensorAllocatorClass {
    GstDmaBufAllocatorClass parent_class;
    /*< private >*/
    gpointer _gst_reserved[GST_PADDING];
};

struct _GstEdgeTensorShmAllocator {
    GstFdAllocator parent;
    /*< private >*/
    gpointer _gst_reserved[GST_PADDING];
};

struct _GstEdgeTensorShmAllocatorClass {
    GstFdAllocatorClass parent_class;
    /*< private >*/
    gpointer _gst_reserved[GST_PADDING];
};

GST_EDGE_TENSOR_API
GType gst_edge_tensor_allocator_get_type(void);
GST_EDGE_TENSOR_API
GType gst_edge_tensor_shm_allocator_get_type(void);

/**
 * gst_edge_tensor_allocator_get:
 *
 * The process-wide allocator, also registered as "edgetensor".
 *
 * Returns: (transfer full): the shared #GstEdgeTensorAllocator; gst_object_unref() it.
 */
GST_EDGE_TENSOR_API
GstAllocator* gst_edge_tensor_allocator_get(void);

/**
 * gst_edge_tensor_allocator_new:
 * @kind: which memory gst_allocator_alloc() hands out (AUTO: DMA -> SHM -> SYSTEM)
 *
 * A private allocator, for code that wants a fixed memory kind or its own lifetime.
 *
 * Returns: (transfer full): a new allocator.
 */
GST_EDGE_TENSOR_API
GstAllocator* gst_edge_tensor_allocator_new(GstEdgeTensorMemoryKind kind);

/**
 * gst_edge_tensor_allocator_get_shm_allocator:
 * @allocator: a #GstEdgeTensorAllocator
 *
 * Returns: (transfer full): the sibling allocator that owns @allocator's shared-memory memories.
 */
GST_EDGE_TENSOR_API
GstAllocator* gst_edge_tensor_allocator_get_shm_allocator(GstAllocator* allocator);

/**
 * gst_is_edge_tensor_memory:
 * @mem: a #GstMemory
 *
 * Returns: %TRUE when a tensor stands behind @mem (or behind the memory it was shared from).
 */
GST_EDGE_TENSOR_API
gboolean gst_is_edge_tensor_memory(GstMemory* mem);

/**
 * gst_edge_tensor_memory_get_kind:
 * @mem: an edgetensor memory
 *
 * Returns: where the tensor's bytes live (never AUTO); AUTO when @mem is not an edgetensor memory.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorMemoryKind gst_edge_tensor_memory_get_kind(GstMemory* mem);

/**
 * gst_edge_tensor_memory_get_fd:
 * @mem: a #GstMemory
 *
 * Returns: the memory's fd, borrowed (valid while @mem lives; dup() it to keep it), or -1
 * for heap memory or memory that is not fd-backed.
 */
GST_EDGE_TENSOR_API
gint gst_edge_tensor_memory_get_fd(GstMemory* mem);

/**
 * gst_edge_tensor_memory_get_inode:
 * @mem: a #GstMemory with an fd
 * @dev: (out) (optional): st_dev of the buffer
 * @ino: (out) (optional): st_ino of the buffer, the kernel's stable identity of a DMA-BUF/memfd
 *
 * Returns: %TRUE on success; %FALSE when @mem has no fd or the kernel could not stat it.
 */
GST_EDGE_TENSOR_API
gboolean gst_edge_tensor_memory_get_inode(GstMemory* mem, guint64* dev, guint64* ino);

/**
 * gst_edge_tensor_memory_get_identity:
 * @mem: an edgetensor memory
 *
 * Returns: the tensor's BufferIdentity id (process-unique, never 0), or 0 when @mem is not an
 * edgetensor memory.
 */
GST_EDGE_TENSOR_API
guint64 gst_edge_tensor_memory_get_identity(GstMemory* mem);

/**
 * gst_edge_tensor_memory_get_plane_layout:
 * @mem: an edgetensor memory
 * @plane: plane index
 * @offset: (out) (optional): offset of the plane from the start of the buffer, bytes
 * @stride: (out) (optional): row pitch of the plane, bytes
 *
 * The tensor's own layout. Tensors that are not edgetensor images (other/tensors, or video
 * formats the core has no PixelFormat for) have one plane whose stride is the tensor's
 * outermost byte stride; the pool's #GstEdgeTensorMeta describes every video plane.
 *
 * Returns: %TRUE when @plane exists.
 */
GST_EDGE_TENSOR_API
gboolean gst_edge_tensor_memory_get_plane_layout(GstMemory* mem, guint plane, gsize* offset,
                                                 gint* stride);

/**
 * gst_edge_tensor_memory_get_hardware_buffer:
 * @mem: a #GstMemory
 *
 * Returns: (transfer none) (nullable): the AHardwareBuffer behind @mem (borrowed: valid while
 * @mem lives; AHardwareBuffer_acquire() it to keep it), or %NULL when @mem is not backed by one.
 */
GST_EDGE_TENSOR_API
gpointer gst_edge_tensor_memory_get_hardware_buffer(GstMemory* mem);

/**
 * gst_edge_tensor_memory_import_hardware_buffer:
 * @allocator: (nullable): a #GstEdgeTensorAllocator, %NULL for the shared one
 * @buffer: an AHardwareBuffer (the memory takes a reference of its own)
 *
 * Wraps a foreign AHardwareBuffer (BLOB, R8G8B8A8_UNORM or R16G16B16A16_FLOAT, one layer) as a
 * memory of type "ahardwarebuffer" spanning all a CPU lock of it spans. Wrapping the same
 * buffer again while a memory of it lives gives the same identity
 * (gst_edge_tensor_memory_get_identity(); interned on AHardwareBuffer_getId).
 *
 * Returns: (transfer full) (nullable): the memory, or %NULL (logged) when @buffer cannot be
 * imported or this edgetensor has no AHardwareBuffer backend.
 */
GST_EDGE_TENSOR_API
GstMemory* gst_edge_tensor_memory_import_hardware_buffer(GstAllocator* allocator, gpointer buffer);

/**
 * gst_edge_tensor_memory_get_compression:
 * @mem: a #GstMemory
 *
 * Returns: (transfer none) (nullable): the vendor tile compression recorded when @mem's tensor
 * was allocated ("ubwc", "afbc", "pvric", "dcc"), or %NULL for a linear layout.
 */
GST_EDGE_TENSOR_API
const gchar* gst_edge_tensor_memory_get_compression(GstMemory* mem);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GstEdgeTensorAllocator, gst_object_unref)

G_END_DECLS

#endif /* GST_EDGE_TENSOR_ALLOCATOR_H */
