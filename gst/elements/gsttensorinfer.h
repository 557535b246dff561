// SPDX-License-Identifier: MIT
//
// tensorinfer: runs a model (ONNX Runtime or TensorFlow Lite, edgetensor/infer.hpp) on the
// tensors tensorconvert and tensorbatch make, bound where they lie, and hands the outputs on as
// other/tensors or, riding on the frame, as GstTensorMeta for upstream's tensor decoders.

#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_INFER (gst_tensor_infer_get_type())
G_DECLARE_FINAL_TYPE(GstTensorInfer, gst_tensor_infer, GST, TENSOR_INFER, GstBaseTransform)

/**
 * GstTensorInferBackend:
 * @GST_TENSOR_INFER_BACKEND_AUTO: by the model file (a TensorFlow Lite flatbuffer or .tflite;
 *   .onnx or an ONNX protobuf)
 * @GST_TENSOR_INFER_BACKEND_ONNXRUNTIME: ONNX Runtime
 * @GST_TENSOR_INFER_BACKEND_TFLITE: TensorFlow Lite
 *
 * The runtime that runs the model (the values of edgetensor::InferBackend).
 */
typedef enum {
    GST_TENSOR_INFER_BACKEND_AUTO = 0,
    GST_TENSOR_INFER_BACKEND_ONNXRUNTIME = 1,
    GST_TENSOR_INFER_BACKEND_TFLITE = 2,
} GstTensorInferBackend;

/**
 * GstTensorInferCopyMode:
 * @GST_TENSOR_INFER_COPY_AUTO: copy an input the runtime cannot read where it lies, count it and
 *   warn once
 * @GST_TENSOR_INFER_COPY_NEVER: refuse such an input with an element error
 */
typedef enum {
    GST_TENSOR_INFER_COPY_AUTO = 0,
    GST_TENSOR_INFER_COPY_NEVER = 1,
} GstTensorInferCopyMode;

#define GST_TYPE_TENSOR_INFER_BACKEND (gst_tensor_infer_backend_get_type())
GType gst_tensor_infer_backend_get_type(void);
#define GST_TYPE_TENSOR_INFER_COPY_MODE (gst_tensor_infer_copy_mode_get_type())
GType gst_tensor_infer_copy_mode_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(tensorinfer);

G_END_DECLS
