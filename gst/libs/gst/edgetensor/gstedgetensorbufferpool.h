/* SPDX-License-Identifier: MIT */
/*
 * GstEdgeTensorBufferPool: a GstBufferPool of edgetensor tensors for video/x-raw and
 * other/tensors caps.
 *
 * Every buffer holds one memory from the edgetensor allocator and carries a
 * #GstEdgeTensorMeta (and a GstVideoMeta for video when GST_BUFFER_POOL_OPTION_VIDEO_META is
 * set). The same tensors are recycled for the life of the pool: a buffer's BufferIdentity, fd
 * inode and layout repeat frame after frame.
 *
 * Layout rule (docs/gstreamer.md): DMA-BUF pools give every plane a 64-byte-aligned row
 * stride; so do pools configured with VIDEO_META + VIDEO_ALIGNMENT whatever their memory;
 * other host pools use GStreamer's default layout for the caps.
 */

#ifndef GST_EDGE_TENSOR_BUFFER_POOL_H
#define GST_EDGE_TENSOR_BUFFER_POOL_H

#include <gst/edgetensor/edgetensor-prelude.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_EDGE_TENSOR_BUFFER_POOL (gst_edge_tensor_buffer_pool_get_type())
#define GST_EDGE_TENSOR_BUFFER_POOL(obj)                                                           \
    (G_TYPE_CHECK_INSTANCE_CAST((obj), GST_TYPE_EDGE_TENSOR_BUFFER_POOL, GstEdgeTensorBufferPool))
#define GST_IS_EDGE_TENSOR_BUFFER_POOL(obj)                                                        \
    (G_TYPE_CHECK_INSTANCE_TYPE((obj), GST_TYPE_EDGE_TENSOR_BUFFER_POOL))

typedef struct _GstEdgeTensorBufferPool GstEdgeTensorBufferPool;
typedef struct _GstEdgeTensorBufferPoolClass GstEdgeTensorBufferPoolClass;

struct _GstEdgeTensorBufferPool {
    GstBufferPool parent;
    /*< private >*/
    gpointer priv;
    gpointer _gst_reserved[GST_PADDING];
};

struct _GstEdgeTensorBufferPoolClass {
    GstBufferPoolClass parent_class;
    /*< private >*/
    gpointer _gst_reserved[GST_PADDING];
};

GST_EDGE_TENSOR_API
GType gst_edge_tensor_buffer_pool_get_type(void);

/**
 * gst_edge_tensor_buffer_pool_new:
 *
 * Returns: (transfer full): a new, unconfigured pool.
 */
GST_EDGE_TENSOR_API
GstBufferPool* gst_edge_tensor_buffer_pool_new(void);

/**
 * gst_edge_tensor_buffer_pool_config_set_memory_kind:
 * @config: a pool config (gst_buffer_pool_get_config())
 * @kind: which memory the pool's tensors live in (default AUTO: DMA -> SHM -> SYSTEM)
 *
 * A pool asked for DMA on a host without a DMA-BUF provider corrects the config to SHM
 * (set_config returns %FALSE).
 */
GST_EDGE_TENSOR_API
void gst_edge_tensor_buffer_pool_config_set_memory_kind(GstStructure* config,
                                                        GstEdgeTensorMemoryKind kind);
/**
 * gst_edge_tensor_buffer_pool_config_get_memory_kind:
 * @config: a pool config
 *
 * Returns: the kind set on @config, AUTO when none.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorMemoryKind gst_edge_tensor_buffer_pool_config_get_memory_kind(GstStructure* config);

/**
 * gst_edge_tensor_buffer_pool_config_set_cpu_access:
 * @config: a pool config
 * @access: what the CPU will do with the buffers (default READ_WRITE)
 */
GST_EDGE_TENSOR_API
void gst_edge_tensor_buffer_pool_config_set_cpu_access(GstStructure* config,
                                                       GstEdgeTensorCpuAccess access);
/**
 * gst_edge_tensor_buffer_pool_config_get_cpu_access:
 * @config: a pool config
 *
 * Returns: the access set on @config, READ_WRITE when none.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorCpuAccess gst_edge_tensor_buffer_pool_config_get_cpu_access(GstStructure* config);

/**
 * gst_edge_tensor_buffer_pool_get_memory_kind:
 * @pool: a configured #GstEdgeTensorBufferPool
 *
 * Returns: the memory kind the pool resolved at set_config (DMA, SHM or SYSTEM), or AUTO when
 * it is not configured.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorMemoryKind gst_edge_tensor_buffer_pool_get_memory_kind(GstBufferPool* pool);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GstEdgeTensorBufferPool, gst_object_unref)

G_END_DECLS

#endif /* GST_EDGE_TENSOR_BUFFER_POOL_H */
