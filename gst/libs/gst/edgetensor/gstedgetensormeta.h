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

/* Most planes a meta describes. */
#define GST_EDGE_TENSOR_META_MAX_PLANES 4
/* Row alignment DMA consumers (Mali, Vivante, NPUs) require. */
#define GST_EDGE_TENSOR_ROW_ALIGNMENT 64

/**
 * GstEdgeTensorMetaFlags:
 * @GST_EDGE_TENSOR_META_FLAG_NONE: nothing
 * @GST_EDGE_TENSOR_META_FLAG_STRIDES_ALIGNED: every plane's row stride is a multiple of 64 bytes
 * @GST_EDGE_TENSOR_META_FLAG_IMAGE: the tensor is an edgetensor image (desc.format != 0)
 * @GST_EDGE_TENSOR_META_FLAG_QUANTIZED: the int8/uint8 values are quantized with
 *   @quant_scale and @quant_zero_point (since 0.2)
 */
typedef enum {
    GST_EDGE_TENSOR_META_FLAG_NONE = 0,
    GST_EDGE_TENSOR_META_FLAG_STRIDES_ALIGNED = 1 << 0,
    GST_EDGE_TENSOR_META_FLAG_IMAGE = 1 << 1,
    GST_EDGE_TENSOR_META_FLAG_QUANTIZED = 1 << 2,
} GstEdgeTensorMetaFlags;

typedef struct _GstEdgeTensorMeta GstEdgeTensorMeta;

/**
 * GstEdgeTensorMeta:
 * @meta: parent
 * @identity: the tensor's BufferIdentity id (stable while the pool recycles the tensor)
 * @memory_kind: where the bytes live (DMA, SHM or SYSTEM)
 * @desc: the tensor's descriptor. `desc.handle` is the buffer memory's fd, borrowed (-1 for heap
 *   memory). `desc.ptr` is the host address of the tensor's first element when the tensor is in
 *   heap or shared memory from an edgetensor pool or allocator (and its CPU access is not NONE),
 *   valid while the buffer's memory lives; it is NULL for DMA-BUF tensors (CPU access needs a
 *   DMA_BUF_IOCTL_SYNC bracket: map the buffer) and for imported buffers. `desc.colorimetry`
 *   describes the values: from the caps' colorimetry field (0 when the caps have none: never
 *   guessed), or what a converter wrote (tensorconvert: see @applied_colorimetry).
 * @video_format: the caps' video format, GST_VIDEO_FORMAT_UNKNOWN for other/tensors
 * @width: frame width in pixels (video), 0 for other/tensors
 * @height: frame height in pixels (video), 0 for other/tensors
 * @n_planes: planes described by @plane_offsets / @plane_strides
 * @plane_offsets: byte offset of each plane in the memory
 * @plane_strides: row pitch of each plane in bytes
 * @flags: #GstEdgeTensorMetaFlags
 * @applied_colorimetry: for a tensor converted from a picture (tensorconvert), the source
 *   colorimetry the conversion applied, packed like `desc.colorimetry`: the YUV matrix and
 *   range the frame was decoded with, the transfer and primaries its values keep (every axis
 *   resolved, none left unspecified for a YUV source); 0 when the bytes are no conversion's
 *   output
 * @quant_scale: with %GST_EDGE_TENSOR_META_FLAG_QUANTIZED, the scale of the per-tensor affine
 *   quantization the int8/uint8 values carry: value = (q - @quant_zero_point) * @quant_scale,
 *   the value being the normalised one ((pixel - mean) / std); 0 without the flag (since 0.2)
 * @quant_zero_point: with %GST_EDGE_TENSOR_META_FLAG_QUANTIZED, the zero point; 0 without it
 *   (since 0.2)
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
    /* Fills the alignment hole before _gst_reserved: the struct's size and offsets are those of
     * 0.1.0. */
    guint32 applied_colorimetry;
    /* 0.2, 8 bytes taken from _gst_reserved (one pointer on LP64, two on ILP32), so the
     * struct's size and every older field's offset stay those of 0.1.0
     * (tests/gst/test_tensorbatch_meta.cpp pins them). */
    gfloat quant_scale;
    gint32 quant_zero_point;

    /*< private >*/
#if GLIB_SIZEOF_VOID_P == 8
    gpointer _gst_reserved[GST_PADDING_LARGE - 1];
#else
    gpointer _gst_reserved[GST_PADDING_LARGE - 2];
#endif
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

/*
 * Accessors, for bindings (GObject introspection: PyGObject cannot read the descriptor's
 * fixed-size arrays) and for C code that prefers them to the fields.
 */

/**
 * gst_edge_tensor_meta_get_n_dims:
 * @meta: a #GstEdgeTensorMeta
 *
 * Returns: the tensor's rank (`desc.ndim`, at most %EDGETENSOR_DESC_MAX_NDIM).
 */
GST_EDGE_TENSOR_API
guint gst_edge_tensor_meta_get_n_dims(const GstEdgeTensorMeta* meta);

/**
 * gst_edge_tensor_meta_get_shape:
 * @meta: a #GstEdgeTensorMeta
 * @n_dims: (out): the number of dimensions
 *
 * Returns: (transfer full) (array length=n_dims): the shape in elements, outermost first
 *   (`desc.shape`); g_free() it.
 */
GST_EDGE_TENSOR_API
guint64* gst_edge_tensor_meta_get_shape(const GstEdgeTensorMeta* meta, guint* n_dims);

/**
 * gst_edge_tensor_meta_get_strides:
 * @meta: a #GstEdgeTensorMeta
 * @n_dims: (out): the number of dimensions
 *
 * Returns: (transfer full) (array length=n_dims): the distance in BYTES between neighbours of
 *   each dimension, outermost first (`desc.strides`; numpy's convention); g_free() it.
 */
GST_EDGE_TENSOR_API
gint64* gst_edge_tensor_meta_get_strides(const GstEdgeTensorMeta* meta, guint* n_dims);

/**
 * gst_edge_tensor_meta_get_dtype_name:
 * @meta: a #GstEdgeTensorMeta
 *
 * Returns: (transfer none): the element type as NNStreamer's caps spell it (and numpy's dtype
 *   names read it): "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
 *   "float16", "float32" or "float64"; "unknown" for a code outside them.
 */
GST_EDGE_TENSOR_API
const gchar* gst_edge_tensor_meta_get_dtype_name(const GstEdgeTensorMeta* meta);

/**
 * gst_edge_tensor_meta_get_element_format:
 * @meta: a #GstEdgeTensorMeta
 *
 * What one element of the tensor is, when it is an image: the edgetensor pixel format of
 * `desc.format` ("RGB", "RGBA", "BGRA", "GREY", "YUYV", "VYUY", "NV12", "NV16", "RGB_PLANAR",
 * "RGBA_PLANAR", "NV24"); for a video frame the core has no image format for, the GStreamer
 * video format name ("I420", ...); "none" for a plain tensor (other/tensors).
 *
 * Returns: (transfer none): the element format name.
 */
GST_EDGE_TENSOR_API
const gchar* gst_edge_tensor_meta_get_element_format(const GstEdgeTensorMeta* meta);

/**
 * gst_edge_tensor_meta_get_fd:
 * @meta: a #GstEdgeTensorMeta
 *
 * Returns: the buffer memory's fd (`desc.handle`), borrowed: valid while the buffer lives;
 *   dup() it to keep it. -1 for heap memory.
 */
GST_EDGE_TENSOR_API
gint gst_edge_tensor_meta_get_fd(const GstEdgeTensorMeta* meta);

/**
 * gst_edge_tensor_meta_get_identity:
 * @meta: a #GstEdgeTensorMeta
 *
 * Returns: the tensor's BufferIdentity id (process-unique, stable while a pool recycles the
 *   tensor or an import cache recognises its buffer).
 */
GST_EDGE_TENSOR_API
guint64 gst_edge_tensor_meta_get_identity(const GstEdgeTensorMeta* meta);

/**
 * gst_edge_tensor_meta_get_memory_kind:
 * @meta: a #GstEdgeTensorMeta
 *
 * Returns: where the tensor's bytes live (DMA, SHM or SYSTEM).
 */
GST_EDGE_TENSOR_API
GstEdgeTensorMemoryKind gst_edge_tensor_meta_get_memory_kind(const GstEdgeTensorMeta* meta);

/**
 * gst_edge_tensor_meta_get_colorimetry:
 * @meta: a #GstEdgeTensorMeta
 *
 * `desc.colorimetry` as a GStreamer colorimetry string ("bt709", "bt601", "sRGB",
 * "1:1:5:1", ...; see gst_video_colorimetry_to_string()), for the meta's video format.
 *
 * Returns: (transfer full) (nullable): the string, %NULL when the colorimetry is unspecified
 *   or holds an unknown axis code; g_free() it.
 */
GST_EDGE_TENSOR_API
gchar* gst_edge_tensor_meta_get_colorimetry(const GstEdgeTensorMeta* meta);

/**
 * gst_edge_tensor_meta_get_applied_colorimetry:
 * @meta: a #GstEdgeTensorMeta
 *
 * The meta's applied_colorimetry (what tensorconvert decoded its input with) as a GStreamer
 * colorimetry string of the source picture ("bt709", "bt601", "bt2020", ...).
 *
 * Returns: (transfer full) (nullable): the string, %NULL when the tensor is no conversion's
 *   output; g_free() it.
 */
GST_EDGE_TENSOR_API
gchar* gst_edge_tensor_meta_get_applied_colorimetry(const GstEdgeTensorMeta* meta);

/**
 * gst_edge_tensor_meta_get_quantization:
 * @meta: a #GstEdgeTensorMeta
 * @scale: (out) (optional): the quantization scale (0 when not quantized)
 * @zero_point: (out) (optional): the zero point (0 when not quantized)
 *
 * The per-tensor affine quantization of an int8/uint8 tensor (tensorconvert and tensorbatch
 * `quant-scale`, `quant-zero-point`): a value is `(q - zero_point) * scale`.
 *
 * Returns: %TRUE when the values are quantized (%GST_EDGE_TENSOR_META_FLAG_QUANTIZED).
 */
GST_EDGE_TENSOR_API
gboolean gst_edge_tensor_meta_get_quantization(const GstEdgeTensorMeta* meta, gfloat* scale,
                                               gint* zero_point);

/**
 * gst_edge_tensor_meta_get_offset:
 * @meta: a #GstEdgeTensorMeta
 * @buffer: the #GstBuffer @meta is attached to
 *
 * Where the tensor starts in what gst_buffer_map() of @buffer gives: the tensor's first
 * element is at `map.data + offset`, and `shape`/`strides` walk it from there (a numpy view:
 * `numpy.ndarray(shape, dtype, buffer=map.data, offset=offset, strides=strides)`).
 *
 * Returns: the byte offset, or -1 when @buffer holds no memory.
 */
GST_EDGE_TENSOR_API
gssize gst_edge_tensor_meta_get_offset(const GstEdgeTensorMeta* meta, GstBuffer* buffer);

G_END_DECLS

#endif /* GST_EDGE_TENSOR_META_H */
