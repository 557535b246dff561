// SPDX-License-Identifier: MIT
//
// tensoripcsrc: receives the fds a tensoripcsink serves, imports them through the import
// cache (one identity per remote buffer) and releases each frame when downstream drops it.

#pragma once

#include <gst/base/gstpushsrc.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_IPC_SRC (gst_tensor_ipc_src_get_type())
G_DECLARE_FINAL_TYPE(GstTensorIpcSrc, gst_tensor_ipc_src, GST, TENSOR_IPC_SRC, GstPushSrc)

/**
 * GstTensorIpcSrcOnDisconnect:
 * @GST_TENSOR_IPC_SRC_ON_DISCONNECT_EOS: end the stream (EOS) when the sender goes away
 * @GST_TENSOR_IPC_SRC_ON_DISCONNECT_ERROR: post an element error when the sender goes away
 *   without having sent EOS
 * @GST_TENSOR_IPC_SRC_ON_DISCONNECT_RECONNECT: post an element warning and wait, as at start,
 *   for a sender on the same socket-path (up to #GstTensorIpcSrc:timeout), then go on with its
 *   stream: its caps (renegotiated when they differ), the running time continuing
 */
typedef enum {
    GST_TENSOR_IPC_SRC_ON_DISCONNECT_EOS = 0,
    GST_TENSOR_IPC_SRC_ON_DISCONNECT_ERROR = 1,
    GST_TENSOR_IPC_SRC_ON_DISCONNECT_RECONNECT = 2,
} GstTensorIpcSrcOnDisconnect;

/**
 * GstTensorIpcSrcOnInvalid:
 * @GST_TENSOR_IPC_SRC_ON_INVALID_DROP: drop an invalid message (its fds closed, the reason
 *   logged and counted) and keep receiving
 * @GST_TENSOR_IPC_SRC_ON_INVALID_ERROR: post an element error and stop
 */
typedef enum {
    GST_TENSOR_IPC_SRC_ON_INVALID_DROP = 0,
    GST_TENSOR_IPC_SRC_ON_INVALID_ERROR = 1,
} GstTensorIpcSrcOnInvalid;

#define GST_TYPE_TENSOR_IPC_SRC_ON_DISCONNECT (gst_tensor_ipc_src_on_disconnect_get_type())
GType gst_tensor_ipc_src_on_disconnect_get_type(void);
#define GST_TYPE_TENSOR_IPC_SRC_ON_INVALID (gst_tensor_ipc_src_on_invalid_get_type())
GType gst_tensor_ipc_src_on_invalid_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(tensoripcsrc);

G_END_DECLS
