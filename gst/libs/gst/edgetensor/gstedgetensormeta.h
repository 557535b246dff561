/* SPDX-License-Identifier: MIT */
/*
 * GstEdgeTensorMeta: what an NPU/GPU consumer needs to use a buffer without looking at
 * GStreamer caps: the tensor's identity, its EdgeTensorDesc (shape, byte strides, dtype,
 * PixelFormat, DRM FourCC, colorimetry, capacity), the plane layout and whether every row
 * stride is 64-byte aligned.
 *
 * Tags: "memory" and "video". The meta describes the bytes of the buffer's memory, so it is
 * copied by gst_buffer_copy() (which shares the memory) and dropped by copies that replace the
 * memory (gst_buffer_copy_deep(), transforms that write new memory).
 */

#ifndef GST_EDGE_TENSOR_META_H
#define GST_EDGE_TENSOR_META_H

#include <edgetensor/tensor_desc.h>
#include <gst/edgetensor/edgetensor-prelude.h>
#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_EDGE_TENSOR_META_API_TYPE (gst_edge_tensor_meta_api_get_type())
#define GST_EDGE_TENSOR_META_INFO (gst_edge_tensor_meta_get_info())

/** Most planes a meta describes. */
#define GST_EDGE_TENSOR_META_MAX_PLANES 4
/** Row alignment DMA consumers (Mali, Vivante, NPUs) require. */
#define GST_EDGE_TENSOR_ROW_ALIGNMENT 64

/**
 * GstEdgeTensorMetaFlags:
 * @GST_EDGE_TENSOR_META_FLAG_NONE: nothing
 * @GST_EDGE_TENSOR_META_FLAG_STRIDES_ALIGNED: every plane's row stride is a multiple of 64 bytes
 * @GST_EDGE_TENSOR_META_FLAG_IMAGE: the tensor is an edgetensor image (desc.format != 0)
 */
typedef enum {
    GST_EDGE_TENSOR_META_FLAG_NONE = 0,
    GST_EDGE_TENSOR_META_FLAG_STRIDES_ALIGNED = 1 << 0,
    GST_EDGE_TENSOR_META_FLAG_IMAGE = 1 << 1,
} GstEdgeTensorMetaFlags;

typedef struct _GstEdgeTensorMeta GstEdgeTensorMeta;

/**
 * GstEdgeTensorMeta:
 * @meta: parent
 * @identity: the tensor's BufferIdentity id (stable while the pool recycles the tensor)
 * @memory_kind: where the bytes live (DMA, SHM or SYSTEM)
 * @desc: the tensor's descriptor. `desc.handle` is the buffer memory's fd, borrowed (-1 for heap
 *   memory); `desc.ptr` is NULL. `desc.colorimetry` is set from the caps' colorimetry field
 *   (0 when the caps have none: never guessed).
 * @video_format: the caps' video format, GST_VIDEO_FORMAT_UNKNOWN for other/tensors
 * @width: frame width in pixels (video), 0 for other/tensors
 * @height: frame height in pixels (video), 0 for other/tensors
 * @n_planes: planes described by @plane_offsets / @plane_strides
 * @plane_offsets: byte offset of each plane in the memory
 * @plane_strides: row pitch of each plane in bytes
 * @flags: #GstEdgeTensorMetaFlags
 */
struct _GstEdgeTensorMeta {
    GstMeta meta;

    guint64 identity;
    GstEdgeTensorMemoryKind memory_kind;
    EdgeTensorDesc desc;

    GstVideoFormat video_format;
    guint width;
    guint height;
    guint n_planes;
    gsize plane_offsets[GST_EDGE_TENSOR_META_MAX_PLANES];
    gint plane_strides[GST_EDGE_TENSOR_META_MAX_PLANES];
    guint flags;

    /*< private >*/
    gpointer _gst_reserved[GST_PADDING_LARGE];
};

GST_EDGE_TENSOR_API
GType gst_edge_tensor_meta_api_get_type(void);
GST_EDGE_TENSOR_API
const GstMetaInfo* gst_edge_tensor_meta_get_info(void);

/**
 * gst_buffer_get_edge_tensor_meta:
 * @buffer: a #GstBuffer
 *
 * Returns: (transfer none) (nullable): the buffer's #GstEdgeTensorMeta.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorMeta* gst_buffer_get_edge_tensor_meta(GstBuffer* buffer);

/**
 * gst_buffer_add_edge_tensor_meta:
 * @buffer: a writable #GstBuffer whose first memory is an edgetensor memory
 * @info: (nullable): the video layout of the memory (plane offsets/strides, colorimetry),
 *   %NULL for a non-video tensor
 * @colorimetry_from_caps: whether @info's colorimetry came from the caps (when %FALSE the
 *   meta's colorimetry stays unspecified)
 *
 * Describes the tensor behind the buffer's first memory. This is what the pool (and importers)
 * attach; applications rarely need it.
 *
 * Returns: (transfer none) (nullable): the meta, or %NULL when the buffer holds no tensor.
 */
GST_EDGE_TENSOR_API
GstEdgeTensorMeta* gst_buffer_add_edge_tensor_meta(GstBuffer* buffer, const GstVideoInfo* info,
                                                   gboolean colorimetry_from_caps);

/**
 * gst_edge_tensor_colorimetry_from_gst:
 * @cinfo: a GStreamer colorimetry
 *
 * Maps to edgetensor::Colorimetry, packed (`space | transfer << 8 | encoding << 16 |
 * range << 24`). Axes GStreamer leaves unknown, or that edgetensor cannot express (e.g.
 * SMPTE 240M primaries), are 0 (unspecified). An RGB matrix is "no YUV matrix": encoding 0.
 *
 * Returns: the packed colorimetry.
 */
GST_EDGE_TENSOR_API
guint32 gst_edge_tensor_colorimetry_from_gst(const GstVideoColorimetry* cinfo);

/**
 * gst_edge_tensor_colorimetry_to_gst:
 * @packed: a packed edgetensor::Colorimetry
 * @format: the video format it applies to (RGB formats get the RGB matrix; 10-bit formats the
 *   BT.2020 10-bit transfer), or GST_VIDEO_FORMAT_UNKNOWN
 * @cinfo: (out): the GStreamer colorimetry
 *
 * Returns: %FALSE when @packed holds an unknown axis code.
 */
GST_EDGE_TENSOR_API
gboolean gst_edge_tensor_colorimetry_to_gst(guint32 packed, GstVideoFormat format,
                                            GstVideoColorimetry* cinfo);

G_END_DECLS

#endif /* GST_EDGE_TENSOR_META_H */
