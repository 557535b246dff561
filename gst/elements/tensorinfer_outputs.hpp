// SPDX-License-Identifier: MIT
//
// Where tensorinfer's outputs live: one bounded edgetensor pool per output the model declares
// static, so the runtime writes each run straight into a recycled tensor (InferSession::
// run_into), and the buffers that carry them on (memories of an other/tensors buffer, the data
// of GstTensorMeta tensors). An output with a dynamic dimension (a batch's too: the session
// takes caller tensors for static outputs only) is allocated by the session, copied out of the
// runtime's buffer (an output copy, counted) and wrapped as it is. Shared memory: outputs are
// written and read by CPUs (the runtime, the decoders), and a memfd still travels between processes
// as an fd.

#pragma once

#include "glib_raii.hpp"
#include "gst_tensor_meta.hpp"
#include "tensorinfer_caps.hpp"

#include <gst/gst.h>

#include <edgetensor/tensor_dyn.hpp>

#include <optional>
#include <vector>

namespace edgetensor::gst::tensorinfer
{

/// One run's outputs: the tensors run_into() writes (empty: the session allocates) and the
/// pooled buffers that hold them (null for those the session allocates).
struct RunOutputs {
    std::vector<TensorDyn> tensors;
    std::vector<MiniObjectPtr<GstBuffer>> buffers;
};

class OutputPools
{
public:
    /// One pool per output the model declares static (`shapes`: the outputs' shapes in this
    /// stream; made for `element`, inactive).
    /// False after a warning when a pool refuses its caps.
    bool configure(GstElement* element, const ModelCaps& m,
                   const std::vector<std::optional<Shape>>& shapes);
    /// A buffer and its tensor from each pool. Posts the element error (the pool's reason) and
    /// returns the flow error when one cannot be had.
    GstFlowReturn acquire(GstElement* element, RunOutputs* out);
    /// The records of every output after the run, ids and orders from `m`'s naming: pooled
    /// buffers as they are, the session's tensors wrapped, an empty output as an empty buffer
    /// with its dynamic dimensions 0.
    Result<std::vector<TensorRecord>> records(const ModelCaps& m, RunOutputs& run) const;
    /// Deactivates and drops the pools.
    void stop();
    /// The shapes configured (nullopt: dynamic).
    const std::vector<std::optional<Shape>>& shapes() const noexcept { return shapes_; }

private:
    std::vector<GstObjectPtr<GstBufferPool>> pools_;
    std::vector<std::optional<Shape>> shapes_;
};

} // namespace edgetensor::gst::tensorinfer
