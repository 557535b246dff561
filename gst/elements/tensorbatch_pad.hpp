// SPDX-License-Identifier: MIT
//
// One tensorbatch sink pad's stream: its caps (each pad its own format, size and colorimetry),
// the engine converter that writes its frames into a slot (streams mode: one; ROI mode: one per
// region geometry, a few kept), its import cache for foreign DMA-BUFs and memfds, and the
// conversion of one of its frames straight into a slot of the batch tensor.

#pragma once

#include "glib_raii.hpp"
#include "tensorbatch_caps.hpp"
#include "tensorbatch_early.hpp"
#include "tensorbatch_properties.hpp"
#include "tensorbatch_roi.hpp"

#include <edgetensor/convert.hpp>
#include <edgetensor/tensor_dyn.hpp>

#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/gst.h>

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace edgetensor::gst::tensorbatch
{

struct ImportCacheFree {
    void operator()(GstEdgeTensorImportCache* c) const noexcept
    {
        gst_edge_tensor_import_cache_free(c);
    }
};
using ImportCachePtr = std::unique_ptr<GstEdgeTensorImportCache, ImportCacheFree>;

/// What converting one frame did, for the counters.
struct Converted {
    bool imported = false; ///< read as a tensor through the import cache
    bool copied = false;   ///< read from a top-down copy (a bottom-up frame)
};

/// A sink pad's stream state; the element's streaming lock guards it.
class PadStream
{
public:
    /// `index`: the pad's number (sink_%u).
    explicit PadStream(guint index) : index_(index) {}

    guint index() const noexcept { return index_; }
    /// The slot the pad fills in streams mode; nullopt until one is given.
    std::optional<guint> slot;

    /// Takes new caps: the input they describe (`in`), and a converter for it under `s` into
    /// `width` x `height` slots (streams mode: made now; ROI mode: made per region later). The
    /// import cache is re-keyed; InvalidArgument/NotSupported from the engine say why not.
    Result<void> set_caps(PadInput in, const Settings& s, size_t width, size_t height);
    /// The caps are gone (stop, or a refused caps event).
    void reset() noexcept;
    bool configured() const noexcept { return input_.has_value(); }
    const PadInput& input() const { return *input_; }

    /// The streams-mode converter (the whole frame into a slot).
    Converter* frame_converter() noexcept { return frame_ ? &*frame_ : nullptr; }
    /// A converter of the region `crop` into a slot (ROI mode), made or reused.
    Result<Converter*> region_converter(const Region& crop);

    /// Converts `buf`, a frame of this pad's caps, with `conv` into `dst` (a slot of the batch
    /// tensor, [H, W, C] or [C, H, W]): foreign fd memory through the import cache as a tensor,
    /// anything else mapped; nothing copied except a bottom-up frame. Errors name the problem.
    Result<Converted> convert(Converter& conv, GstBuffer* buf, const TensorDyn& dst);

    /// Checks `buf` against the caps before anything reads it: false with `why` when a plane
    /// lies outside its memory or a GstVideoMeta disagrees.
    bool check(GstBuffer* buf, std::string* why) const;

    GstEdgeTensorImportCache* cache() const noexcept { return cache_.get(); }
    void clear_cache(const char* reason) noexcept;

    /// The last colorimetry assumption warned about for this pad.
    std::string warned_colorimetry;

    /// The caps set_caps() took (what the pad's current caps are once no caps event waits in
    /// its queue).
    GstCaps* caps() const noexcept { return caps_.get(); }
    void set_caps_object(GstCaps* caps) { caps_.reset(caps ? gst_caps_ref(caps) : nullptr); }

    /// Early conversion (tensorbatch_early.hpp): the frames in the pad's queue, oldest first,
    /// and the batch of the last one (0: none yet). Under the element's mu.
    std::deque<Ticket> tickets;
    guint64 last_seq = 0;
    /// Held by the pad's thread while it converts early, and by whatever changes the
    /// converter (set_caps, reset): taken before the element's mu.
    std::mutex conv_mu;

private:
    guint index_;
    std::optional<PadInput> input_;
    ConvertConfig config_; // without a crop
    std::optional<Converter> frame_;
    std::list<std::pair<Region, Converter>> regions_; // most recently used first
    size_t region_capacity_ = kRoiConverters;
    ImportCachePtr cache_;
    std::vector<uint8_t> scratch_;
    MiniObjectPtr<GstCaps> caps_;
};

} // namespace edgetensor::gst::tensorbatch
