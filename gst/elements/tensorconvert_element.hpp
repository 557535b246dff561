// SPDX-License-Identifier: MIT
//
// tensorconvert's instance and the state its files share: gsttensorconvert.cpp (the element's
// vfuncs: caps, allocation, start/stop, properties) and tensorconvert_run.cpp (one buffer).
// Not installed.

#pragma once

#include "caps_refusal.hpp"
#include "frame_transform.hpp"
#include "glib_raii.hpp"
#include "gsttensorconvert.h"
#include "stream_layout.hpp"
#include "tensorconvert_caps.hpp"
#include "tensorconvert_meta.hpp"
#include "tensorconvert_properties.hpp"
#include "tensorconvert_settings.hpp"
#include "tensorconvert_stats.hpp"

#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/gst.h>

#include <edgetensor/convert.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorconvert
{

struct CacheFree {
    void operator()(GstEdgeTensorImportCache* c) const noexcept
    {
        gst_edge_tensor_import_cache_free(c);
    }
};
using ImportCachePtr = std::unique_ptr<GstEdgeTensorImportCache, CacheFree>;

struct Streaming {
    std::optional<edgetensor::Converter> converter;
    // Imported input (DMA-BUF, memfd) resolved to the same tensor every time its buffer comes
    // back; created at start, re-keyed by set_caps, freed at stop.
    ImportCachePtr cache;
    StreamLayoutPtr in; // the input caps, parsed once (the cache reads the same snapshot)
    OutputCaps out;
    guint64 frames = 0;
    // Recorded in every output meta: the output values' and the applied (source) colorimetry.
    guint32 out_colorimetry = 0;
    guint32 applied_colorimetry = 0;
    // The last assumption warned about, so each is said once per start.
    std::string warned_colorimetry;
    Counters counters;
    // A top-down copy of a bottom-up (negative-stride) frame: the engine takes positive pitches.
    std::vector<uint8_t> scratch;
    // The tensor's id in GStreamer's tensor meta (1.26+; the element's name), for a riding
    // tensor (output-mode=meta) and for an other/tensors output.
    std::string tensor_id;
    // output-mode=meta: the tensor's caps (null in tensor mode), the pool its tensors come from
    // (configured at the first frame, once downstream can say what it needs) and where its
    // picture came from in the frame.
    MiniObjectPtr<GstCaps> meta_caps;
    MetaOutput meta;
    FrameTransform transform;
};

// One C++ state object per element: settings and report under the object lock, streaming
// state under mu.
struct State {
    Settings settings;
    guint64 settings_changes = 0; ///< every property set counts one (object lock)
    Report report;
    std::mutex mu;
    Streaming streaming;
    CapsRefusal refusal; ///< the caps set_caps refused last (said once)
};

} // namespace edgetensor::gst::tensorconvert

struct _GstTensorConvert {
    GstBaseTransform parent;
    edgetensor::gst::tensorconvert::State* state;
};

namespace edgetensor::gst::tensorconvert
{

inline State& state_of(gpointer self)
{
    return *GST_TENSOR_CONVERT(self)->state;
}

inline Settings settings_snapshot(GstTensorConvert* self)
{
    ObjectLockGuard lock(self);
    return state_of(self).settings;
}

} // namespace edgetensor::gst::tensorconvert
