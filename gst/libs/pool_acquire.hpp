// SPDX-License-Identifier: MIT
//
// Acquiring from an edgetensor pool inside an element, and saying why it failed: the pool
// keeps the reason of its last failed allocation, and the element turns it into an error a
// user can act on ("too many open files (EMFILE) ... ulimit -n") instead of GStreamer's
// "Internal data stream error". Element helpers, compiled into the plugin; not installed.

#pragma once

#include "glib_raii.hpp"

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

#include <string>

namespace edgetensor::gst
{

/// The qdata (a GstStructure with a string "message" and an int "errno") under which a
/// GstEdgeTensorBufferPool keeps why its last allocation failed, until an element takes it.
inline constexpr const char* kPoolFailureQuark = "GstEdgeTensorBufferPool.failure";

/// Why the last allocation of the edgetensor pool `pool` failed ("" when none did since the
/// last call), and its errno when the library kept one. Clears what it returns.
std::string take_pool_error(GstBufferPool* pool, int* err);

/// Posts the element error for a failed acquire of `what` ("an output buffer") from `pool`,
/// with the pool's reason; an exhausted fd table says "too many open files (EMFILE)".
void post_acquire_error(GstElement* element, GstBufferPool* pool, GstFlowReturn ret,
                        const char* what);

/// Activates `pool` unless it is active; when that fails, posts post_acquire_error() for
/// `what` ("the buffers to copy into") and returns false.
bool activate_pool(GstElement* element, GstBufferPool* pool, const char* what);

/// GstBaseTransform's own prepare_output_buffer (`parent`'s), with the output pool activated
/// first and both failures reported through post_acquire_error(): the base class says only
/// "failed to activate bufferpool", or nothing, and the source ends on "Internal data stream
/// error".
GstFlowReturn prepare_output_from_pool(GstBaseTransform* trans, GstBaseTransformClass* parent,
                                       GstBuffer* inbuf, GstBuffer** outbuf);

} // namespace edgetensor::gst
