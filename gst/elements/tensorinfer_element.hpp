// SPDX-License-Identifier: MIT
//
// tensorinfer's instance and the state its files share: gsttensorinfer.cpp (the element's
// vfuncs: start/stop, caps, allocation, properties) and tensorinfer_run.cpp (one buffer's run).
// Not installed.

#pragma once

#include "caps_refusal.hpp"
#include "glib_raii.hpp"
#include "gsttensorinfer.h"
#include "tensorinfer_caps.hpp"
#include "tensorinfer_input.hpp"
#include "tensorinfer_outputs.hpp"
#include "tensorinfer_properties.hpp"

#include <edgetensor/infer.hpp>

#include <gst/gst.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace edgetensor::gst::tensorinfer
{

// What the model is, for caps and statistics: replaced at start and stop, read from any thread
// under info_mu (never held across a run).
struct ModelInfo {
    std::shared_ptr<InferSession> session;
    std::shared_ptr<const ModelCaps> caps;
    std::string runtime_version;
    std::string backend;
    std::string execution_provider;
    // The session's counters when it was closed (stop): readable until the next start.
    InferStats closed_stats;

    InferStats stats() const { return session ? session->stats() : closed_stats; }
};

// The streaming thread's state, under mu.
struct Streaming {
    bool frame_mode = false;
    InputSource input;
    OutputPools outputs;
    // Frame mode: the rider's dtype and shape last checked against the model.
    std::optional<std::pair<DType, Shape>> checked;
    bool warned_input_copy = false;
    bool warned_output_copy = false;
    guint64 last_output_copies = 0;
};

// One C++ state object per element: settings under the object lock, the model under info_mu,
// streaming state under mu; counters are atomics, so property reads never wait for a run.
struct State {
    Settings settings;
    std::mutex info_mu;
    ModelInfo info;
    std::mutex mu;
    Streaming streaming;
    std::atomic<guint64> frames{0};
    std::atomic<guint64> element_copies{0};
    // What the runtime needs of an input buffer (propose_allocation), set at start.
    std::atomic<size_t> trailing_bytes{0};
    // The caps set_caps refused last (said once; they depend on the model, opened at start).
    CapsRefusal refusal;

    ModelInfo model()
    {
        std::lock_guard<std::mutex> lock(info_mu);
        return info;
    }
};

} // namespace edgetensor::gst::tensorinfer

struct _GstTensorInfer {
    GstBaseTransform parent;
    edgetensor::gst::tensorinfer::State* state;
};

namespace edgetensor::gst::tensorinfer
{

inline State& state_of(gpointer self)
{
    return *GST_TENSOR_INFER(self)->state;
}

inline Settings settings_snapshot(GstTensorInfer* self)
{
    ObjectLockGuard lock(self);
    return state_of(self).settings;
}

inline std::string code_of(const Error& e)
{
    return std::string(error_code_name(e.code()));
}

} // namespace edgetensor::gst::tensorinfer
