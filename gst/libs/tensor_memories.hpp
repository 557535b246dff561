// SPDX-License-Identifier: MIT
//
// other/tensors buffers made of several memories, as NNStreamer elements send them (what
// tensorimport imports and what the copy fallback copies). An other/tensors buffer with
// num_tensors=1 holds one tensor of a size the caps fix; upstream elements may still hand it over
// in several memories:
//
//  - split: the memories add up to exactly one tensor (a writer that fills a buffer memory by
//    memory). Imported when the parts are one contiguous range of one fd object (joined into
//    one fd memory over that object, no copy), copied otherwise.
//  - appended: a buffer from a pool, the pool's own memory first and, after it, memories that
//    add up to exactly one tensor (NNStreamer's tensor_transform and tensor_filter append their
//    output to whatever buffer BaseTransform hands them, a pool's buffer included). The
//    appended memories are the tensor; the pool's untouched memory is dropped.
//
// Anything else (memories that add up to less than the tensor, or more with no pool to explain
// the rest) cannot be told apart and is refused, naming what arrived. Element helpers, compiled
// into the plugin; not installed.

#pragma once

#include <gst/gst.h>

#include <cstddef>
#include <string>

namespace edgetensor::gst
{

struct TensorMemories {
    enum class Layout {
        Single,   ///< one memory (the usual case; sizes are checked by the import)
        Split,    ///< `count` memories from `first`, adding up to the tensor
        Appended, ///< the tensor is memories [first, first + count) after a pool's own
        Unusable, ///< no run of memories is the tensor: `why` says what arrived
    };
    Layout layout = Layout::Single;
    guint first = 0;
    guint count = 1;
    /// "2 memories (602112 + 602112 bytes)", for messages.
    std::string memories;
    /// Unusable: what is wrong with the buffer.
    std::string why;
};

/// Which memories of `buffer` hold its one tensor of `tensor_bytes` bytes. Only reads.
TensorMemories locate_tensor(GstBuffer* buffer, size_t tensor_bytes);

/// Makes the tensor `where` locates `buffer`'s only memory (writable buffer): drops the
/// memories before it and joins split parts that are one contiguous range of one fd object
/// into one fd memory over that object (a duplicate of its fd; no bytes are copied). False,
/// with `buffer` unchanged and `why` saying why, when the parts cannot become one memory
/// without a copy.
bool make_single_memory(GstBuffer* buffer, const TensorMemories& where, std::string* why);

/// Copies the bytes of `src`'s one tensor of `tensor_bytes` bytes (wherever locate_tensor()
/// finds it) to `dst`. False when `dst_size` is too small or no run of memories is the tensor.
bool copy_tensor_bytes(GstBuffer* src, size_t tensor_bytes, guint8* dst, size_t dst_size);

/// What upstream sent, for a message: `memory of type "SystemMemory"`, or for several memories
/// `buffers of 2 memories (602112 + 602112 bytes), the tensor appended after the pool's own
/// memory, in memory of type "SystemMemory"`.
std::string describe_sent_memory(GstBuffer* buffer, const TensorMemories& where);

} // namespace edgetensor::gst
