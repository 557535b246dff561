// SPDX-License-Identifier: MIT
//
// tensoripcsink: serves the fds behind every buffer (DMA-BUF or memfd), with their
// EdgeTensorDesc, to any number of tensoripcsrc receivers over a SOCK_SEQPACKET Unix socket.

#pragma once

#include <gst/base/gstbasesink.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_IPC_SINK (gst_tensor_ipc_sink_get_type())
G_DECLARE_FINAL_TYPE(GstTensorIpcSink, gst_tensor_ipc_sink, GST, TENSOR_IPC_SINK, GstBaseSink)

/**
 * GstTensorIpcSinkCopyMode:
 * @GST_TENSOR_IPC_SINK_COPY_AUTO: copy memory without an fd (system memory) into a pooled
 *   DMA-BUF (or memfd) tensor, count every copy, warn once
 * @GST_TENSOR_IPC_SINK_COPY_NEVER: refuse such memory with an element error
 */
typedef enum {
    GST_TENSOR_IPC_SINK_COPY_AUTO = 0,
    GST_TENSOR_IPC_SINK_COPY_NEVER = 1,
} GstTensorIpcSinkCopyMode;

#define GST_TYPE_TENSOR_IPC_SINK_COPY_MODE (gst_tensor_ipc_sink_copy_mode_get_type())
GType gst_tensor_ipc_sink_copy_mode_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(tensoripcsink);

G_END_DECLS
