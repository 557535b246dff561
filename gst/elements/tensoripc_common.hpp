// SPDX-License-Identifier: MIT
//
// What tensoripcsink and tensoripcsrc must agree on beyond the wire format: the caps one can
// send are the caps the other produces, and the buffer flags one carries are the ones the
// other restores.

#pragma once

#include "dma_drm.hpp"

#include <gst/gst.h>

namespace edgetensor::gst::tensoripc
{

// From GStreamer 1.24 the pad templates add DMA_DRM with every linear drm-format
// (dma_drm_caps_any_linear()): the frames' bytes travel, nobody here reads them.
#define EDGETENSOR_TENSOR_IPC_CAPS                                                                 \
    "video/x-raw; " EDGETENSOR_DMABUF_CAPS "; "                                                    \
    "other/tensors, num_tensors = (int) 1, format = (string) static"

/// The flags that describe the frame itself, which a receiver can act on; the sender's
/// other flags (TAG_MEMORY, ...) are about how its own process holds the buffer.
inline constexpr guint kCarriedBufferFlags = GST_BUFFER_FLAG_DISCONT | GST_BUFFER_FLAG_RESYNC |
                                             GST_BUFFER_FLAG_GAP | GST_BUFFER_FLAG_DROPPABLE |
                                             GST_BUFFER_FLAG_DELTA_UNIT | GST_BUFFER_FLAG_HEADER |
                                             GST_BUFFER_FLAG_MARKER;

} // namespace edgetensor::gst::tensoripc
