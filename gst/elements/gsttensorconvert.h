// SPDX-License-Identifier: MIT
//
// tensorconvert: a camera frame (video/x-raw, YUV or RGB family) to an NPU-ready tensor in one
// pass (edgetensor::Converter): colour conversion with the frame's colorimetry, crop, resize,
// letterbox, layout, dtype and per-channel normalisation, into edgetensor pool buffers.

#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_CONVERT (gst_tensor_convert_get_type())
G_DECLARE_FINAL_TYPE(GstTensorConvert, gst_tensor_convert, GST, TENSOR_CONVERT, GstBaseTransform)

/**
 * GstTensorConvertFormat:
 * @GST_TENSOR_CONVERT_FORMAT_RGB: R, G, B
 * @GST_TENSOR_CONVERT_FORMAT_BGR: B, G, R
 * @GST_TENSOR_CONVERT_FORMAT_RGBA: R, G, B, A (alpha from RGBA/BGRA sources, else opaque)
 * @GST_TENSOR_CONVERT_FORMAT_BGRA: B, G, R, A
 * @GST_TENSOR_CONVERT_FORMAT_GRAY: one full-range luma channel
 *
 * The channels of the output tensor, in memory order.
 */
typedef enum {
    GST_TENSOR_CONVERT_FORMAT_RGB = 0,
    GST_TENSOR_CONVERT_FORMAT_BGR = 1,
    GST_TENSOR_CONVERT_FORMAT_RGBA = 2,
    GST_TENSOR_CONVERT_FORMAT_BGRA = 3,
    GST_TENSOR_CONVERT_FORMAT_GRAY = 4,
} GstTensorConvertFormat;

/**
 * GstTensorConvertLayout:
 * @GST_TENSOR_CONVERT_LAYOUT_HWC: [H, W, C], channels interleaved (NNStreamer C:W:H:1)
 * @GST_TENSOR_CONVERT_LAYOUT_CHW: [C, H, W], one plane per channel (NNStreamer W:H:C:1)
 */
typedef enum {
    GST_TENSOR_CONVERT_LAYOUT_HWC = 0,
    GST_TENSOR_CONVERT_LAYOUT_CHW = 1,
} GstTensorConvertLayout;

/**
 * GstTensorConvertDType:
 * @GST_TENSOR_CONVERT_DTYPE_UINT8: 0..255
 * @GST_TENSOR_CONVERT_DTYPE_INT8: value - 128
 * @GST_TENSOR_CONVERT_DTYPE_FLOAT16: IEEE half, (value - mean) / std
 * @GST_TENSOR_CONVERT_DTYPE_FLOAT32: IEEE single, (value - mean) / std
 */
typedef enum {
    GST_TENSOR_CONVERT_DTYPE_UINT8 = 0,
    GST_TENSOR_CONVERT_DTYPE_INT8 = 1,
    GST_TENSOR_CONVERT_DTYPE_FLOAT16 = 2,
    GST_TENSOR_CONVERT_DTYPE_FLOAT32 = 3,
} GstTensorConvertDType;

/**
 * GstTensorConvertMethod:
 * @GST_TENSOR_CONVERT_METHOD_NEAREST: nearest neighbour
 * @GST_TENSOR_CONVERT_METHOD_BILINEAR: bilinear interpolation
 */
typedef enum {
    GST_TENSOR_CONVERT_METHOD_NEAREST = 0,
    GST_TENSOR_CONVERT_METHOD_BILINEAR = 1,
} GstTensorConvertMethod;

/**
 * GstTensorConvertCompute:
 * @GST_TENSOR_CONVERT_COMPUTE_AUTO: GL when a hardware GPU renderer is there, else the CPU
 * @GST_TENSOR_CONVERT_COMPUTE_CPU: the CPU conversion engine
 * @GST_TENSOR_CONVERT_COMPUTE_GL: OpenGL ES 3 shaders on a headless EGL context
 */
typedef enum {
    GST_TENSOR_CONVERT_COMPUTE_AUTO = 0,
    GST_TENSOR_CONVERT_COMPUTE_CPU = 1,
    GST_TENSOR_CONVERT_COMPUTE_GL = 2,
} GstTensorConvertCompute;

/**
 * GstTensorConvertOutputMode:
 * @GST_TENSOR_CONVERT_OUTPUT_MODE_TENSOR: the tensor is the output buffer
 * @GST_TENSOR_CONVERT_OUTPUT_MODE_META: the source frame is the output buffer, untouched, and the
 * tensor rides on it (edgetensor's attached-tensor meta and, on GStreamer 1.26+, GstTensorMeta)
 */
typedef enum {
    GST_TENSOR_CONVERT_OUTPUT_MODE_TENSOR = 0,
    GST_TENSOR_CONVERT_OUTPUT_MODE_META = 1,
} GstTensorConvertOutputMode;

#define GST_TYPE_TENSOR_CONVERT_FORMAT (gst_tensor_convert_format_get_type())
GType gst_tensor_convert_format_get_type(void);
#define GST_TYPE_TENSOR_CONVERT_LAYOUT (gst_tensor_convert_layout_get_type())
GType gst_tensor_convert_layout_get_type(void);
#define GST_TYPE_TENSOR_CONVERT_DTYPE (gst_tensor_convert_dtype_get_type())
GType gst_tensor_convert_dtype_get_type(void);
#define GST_TYPE_TENSOR_CONVERT_METHOD (gst_tensor_convert_method_get_type())
GType gst_tensor_convert_method_get_type(void);
#define GST_TYPE_TENSOR_CONVERT_COMPUTE (gst_tensor_convert_compute_get_type())
GType gst_tensor_convert_compute_get_type(void);
#define GST_TYPE_TENSOR_CONVERT_OUTPUT_MODE (gst_tensor_convert_output_mode_get_type())
GType gst_tensor_convert_output_mode_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(tensorconvert);

G_END_DECLS
