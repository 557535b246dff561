// SPDX-License-Identifier: MIT
//
// Where tensorinfer finds the tensor a run reads, and how it reaches it without a copy:
//  - an other/tensors buffer (tensorconvert, tensorbatch, NNStreamer): our pool's memory is the
//    tensor itself; another fd memory (a memfd, a DMA-BUF) is imported once through the import
//    cache; anything else (system memory) is copied into a pooled tensor, counted and warned
//    once, or refused (copy-mode=never);
//  - a frame with a tensor riding on it (tensorconvert output-mode=meta): our attached-tensor
//    meta (with the frame transform), else a GstTensorMeta tensor whose id is the model input's
//    name; its buffer is read as above.
// The copy pool allocates what the runtime needs to read in place (InferSession::input_rules()).

#pragma once

#include "attached_tensors.hpp"
#include "copy_fallback.hpp"
#include "glib_raii.hpp"
#include "stream_layout.hpp"

#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/gst.h>

#include <edgetensor/infer.hpp>

#include <memory>
#include <optional>
#include <string>

namespace edgetensor::gst::tensorinfer
{

/// One run's input.
struct Input {
    TensorDyn tensor;
    /// The buffer whose memory holds the tensor (kept until the run is over).
    MiniObjectPtr<GstBuffer> keep;
    /// Frame mode: where the tensor's picture came from in the frame, and the id it rode under.
    std::optional<FrameTransform> transform;
    std::string attached_id;
};

class InputSource
{
public:
    InputSource();
    ~InputSource();
    InputSource(const InputSource&) = delete;
    InputSource& operator=(const InputSource&) = delete;

    /// A new run: the copy pool allocates `rules.trailing_bytes` past each tensor; nothing is
    /// counted yet and the next copy warns again.
    void start(const InferBufferRules& rules);
    void stop();
    /// The caps of other/tensors input (null in frame mode).
    void set_layout(StreamLayoutPtr layout);

    /// The tensor of other/tensors buffer `inbuf` (under the layout set).
    GstFlowReturn from_tensor_buffer(GstElement* element, CopyMode mode, GstBuffer* inbuf,
                                     Input* out);
    /// The tensor riding on `frame` for input `input_name`. False (nothing posted) when none
    /// rides on it.
    GstFlowReturn from_frame(GstElement* element, CopyMode mode, GstBuffer* frame,
                             const std::string& input_name, Input* out, bool* found);

    /// Inputs copied by the element since start (the runtime's own copies are the session's).
    guint64 copies() const noexcept;

private:
    GstFlowReturn from_buffer(GstElement* element, CopyMode mode, const StreamLayoutPtr& layout,
                              GstBuffer* buf, bool importable, Input* out);

    struct CacheFree {
        void operator()(GstEdgeTensorImportCache* c) const noexcept
        {
            gst_edge_tensor_import_cache_free(c);
        }
    };
    std::unique_ptr<GstEdgeTensorImportCache, CacheFree> cache_;
    std::unique_ptr<CopyFallback> fallback_;
    StreamLayoutPtr layout_;
    // Frame mode: the layout of the last rider copied (its copy pool is made for it).
    StreamLayoutPtr rider_layout_;
};

} // namespace edgetensor::gst::tensorinfer
