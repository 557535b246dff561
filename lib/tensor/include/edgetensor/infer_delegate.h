/* SPDX-License-Identifier: MIT */
/*
 * The DMA-BUF hand-off between edgetensor and a TensorFlow Lite external delegate: what a
 * delegate library exports so that an NPU reads a DMA-BUF tensor itself, with no CPU mapping
 * and no copy. Usable from C99 and C++; needs no TensorFlow Lite header (the delegate is a
 * `void *` here: the TfLiteDelegate the library's tflite_plugin_create_delegate returned).
 *
 * edgetensor loads a delegate library as TensorFlow Lite's external delegate does: it must
 * export
 *
 *   TfLiteDelegate *tflite_plugin_create_delegate(char **keys, char **values, size_t count,
 *                                                 void (*report_error)(const char *));
 *   void tflite_plugin_destroy_delegate(TfLiteDelegate *delegate);
 *
 * (the ABI of the i.MX VX, Ethos-U and Neutron delegates). A delegate that can take a DMA-BUF
 * also exports EDGETENSOR_DELEGATE_IMPORT_DMABUF, of type EdgeTensorDelegateImportDmabuf.
 * For every run, for every model input that is a DMA-BUF tensor (one buffer) and that only
 * nodes this delegate took (ReplaceNodeSubsetsWithDelegateKernels) read, edgetensor calls
 *
 *   int handle = edgetensor_delegate_import_dmabuf_v1(delegate, tensor_index, &buffer,
 *                                                     why, why_size);
 *
 * A handle >= 0 (a TfLiteBufferHandle of the delegate's choosing) is bound with
 * Interpreter::SetBufferHandle(tensor_index, handle, delegate): the delegate's kernel finds it
 * in the tensor's buffer_handle and reads the buffer itself; edgetensor neither maps the tensor
 * for the CPU nor copies it. After the run (a failed one too) edgetensor sets the tensor's handle
 * back to kTfLiteNullBufferHandle, through which TensorFlow Lite calls the delegate's
 * FreeBufferHandle(handle).
 * Return -1 to decline a buffer (with a reason in `why` when it is not NULL): edgetensor then
 * binds the CPU mapping of the tensor as for any other input.
 *
 * Ownership and synchronisation: `buffer->desc.handle` (the fd) is borrowed: it stays open and
 * the tensor alive until FreeBufferHandle of the handle returns; dup() it to keep it longer (a
 * delegate that caches imports keys them on fstat()'s st_dev and st_ino, never on the fd
 * number, which is reused). edgetensor holds no CPU access to the buffer during the run: the
 * writer finished before the run started, and device access needs no DMA_BUF_IOCTL_SYNC
 * bracket from the CPU side.
 *
 * docs/inference.md shows the whole sequence and the fake delegate the tests build.
 */

#ifndef EDGETENSOR_INFER_DELEGATE_H
#define EDGETENSOR_INFER_DELEGATE_H

#include "edgetensor/tensor_desc.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The symbol a delegate library exports to take DMA-BUF inputs. */
#define EDGETENSOR_DELEGATE_IMPORT_DMABUF "edgetensor_delegate_import_dmabuf_v1"
/* EdgeTensorDelegateBuffer.version; a delegate refuses (returns -1) any other value. */
#define EDGETENSOR_DELEGATE_BUFFER_VERSION 1u

/* One input tensor in a DMA-BUF. */
typedef struct EdgeTensorDelegateBuffer {
    uint32_t version;  /* EDGETENSOR_DELEGATE_BUFFER_VERSION */
    uint32_t reserved; /* 0 */
    /* Bytes from the start of the DMA-BUF to the tensor's first element (a batch slot or a view
     * starts past 0; the descriptor itself has no offset field). */
    uint64_t offset;
    /* Bytes of the tensor's elements from `offset`: contiguous, row-major, exactly what the
     * model's input takes. */
    uint64_t size;
    /* kind EDGETENSOR_KIND_DMABUF, handle = the fd (borrowed), ptr = NULL, the runtime shape
     * (the model's rank), byte strides, dtype, image format and colorimetry when the tensor is
     * an image, capacity = bytes available from `offset`. */
    EdgeTensorDesc desc;
} EdgeTensorDelegateBuffer;

/* Returns a buffer handle (>= 0) the delegate reads tensor `tensor_index` from in the next run,
 * or -1 to decline, writing a NUL-terminated reason into `why` (`why_size` bytes) when `why`
 * is not NULL. Called on the thread that runs the model, never concurrently for one delegate. */
typedef int (*EdgeTensorDelegateImportDmabuf)(void* delegate, int tensor_index,
                                              const EdgeTensorDelegateBuffer* buffer, char* why,
                                              size_t why_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EDGETENSOR_INFER_DELEGATE_H */
