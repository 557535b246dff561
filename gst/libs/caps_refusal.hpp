// SPDX-License-Identifier: MIT
//
// Caps a GstBaseTransform's set_caps refused, remembered so that the same caps are refused
// again quietly: the sink pad is offered the same sticky caps again before the first buffer
// (the bus held seven copies of one refusal), and the element error saying why was posted the
// first time.

#pragma once

#include "glib_raii.hpp"

#include <gst/gst.h>

#include <mutex>

namespace edgetensor::gst
{

class CapsRefusal
{
public:
    /// A set_caps vfunc's body: `answer()` says for `in` -> `out` unless the same caps
    /// under settings `generation` (a count of property changes, or 0 where no property set
    /// while running changes the answer) were the last refused, which are refused again
    /// without a word (logged at DEBUG in `category`); a refusal is remembered, an acceptance
    /// forgets it.
    template <typename SetCaps>
    bool set_caps(GstDebugCategory* category, GstObject* element, GstCaps* in, GstCaps* out,
                  guint64 generation, SetCaps&& answer)
    {
        if (refused_already(in, out, generation)) {
            GST_CAT_DEBUG_OBJECT(category, element, "%" GST_PTR_FORMAT " refused already", in);
            return false;
        }
        const bool accepted = answer();
        note(accepted, in, out, generation);
        return accepted;
    }

    /// At start: a new run says every refusal again.
    void reset()
    {
        std::lock_guard<std::mutex> lock(mu_);
        in_.reset();
        out_.reset();
    }

private:
    bool refused_already(GstCaps* in, GstCaps* out, guint64 generation)
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (!in_ || generation_ != generation || !gst_caps_is_equal(in_.get(), in))
            return false;
        return out_ ? out && gst_caps_is_equal(out_.get(), out) : !out;
    }

    void note(bool accepted, GstCaps* in, GstCaps* out, guint64 generation)
    {
        std::lock_guard<std::mutex> lock(mu_);
        in_.reset(accepted ? nullptr : gst_caps_ref(in));
        out_.reset(accepted || !out ? nullptr : gst_caps_ref(out));
        generation_ = generation;
    }

    std::mutex mu_;
    MiniObjectPtr<GstCaps> in_;
    MiniObjectPtr<GstCaps> out_;
    guint64 generation_ = 0;
};

} // namespace edgetensor::gst
