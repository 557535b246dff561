// SPDX-License-Identifier: MIT
//
// tensorimport: imports upstream DMA-BUF/memfd buffers once (libgstedgetensor's import cache)
// and attaches a GstEdgeTensorMeta describing the cached tensor to every buffer.

#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_IMPORT (gst_tensor_import_get_type())
G_DECLARE_FINAL_TYPE(GstTensorImport, gst_tensor_import, GST, TENSOR_IMPORT, GstBaseTransform)

/**
 * GstTensorImportCopyMode:
 * @GST_TENSOR_IMPORT_COPY_AUTO: copy memory that cannot be imported into a pooled DMA-BUF
 *   tensor (shared memory where the host has no DMA-BUF), count every copy, warn once
 * @GST_TENSOR_IMPORT_COPY_NEVER: refuse such memory with an element error
 */
typedef enum {
    GST_TENSOR_IMPORT_COPY_AUTO = 0,
    GST_TENSOR_IMPORT_COPY_NEVER = 1,
} GstTensorImportCopyMode;

#define GST_TYPE_TENSOR_IMPORT_COPY_MODE (gst_tensor_import_copy_mode_get_type())
GType gst_tensor_import_copy_mode_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(tensorimport);

G_END_DECLS
