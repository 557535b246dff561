// SPDX-License-Identifier: MIT
//
// One frame into one slot of a batch (tensorbatch_fill.hpp).

#include "tensorbatch_fill.hpp"

#include "tensorbatch_provenance.hpp"

#include <edgetensor/convert.hpp>

#include <cstring>
#include <string>
#include <utility>

namespace edgetensor::gst::tensorbatch
{

Result<SlotOutcome> convert_slot(PadStream& ps, GstBuffer* buf, const Roi* roi,
                                 const TensorDyn& view)
{
    SlotOutcome o;
    empty_slot(&o.record);
    if (!ps.configured() || !ps.check(buf, &o.why)) {
        // Dropped as stock converters drop what does not match the caps; the slot stays empty.
        if (o.why.empty())
            o.why = "no caps";
        return o;
    }
    Converter* conv = nullptr;
    if (roi) {
        auto rc = ps.region_converter(roi->rect);
        if (!rc)
            return make_error(rc.error().code(), "cannot convert region " +
                                                     std::to_string(roi->id) + ": " +
                                                     rc.error().message());
        conv = *rc;
    } else {
        conv = ps.frame_converter();
    }
    auto r = ps.convert(*conv, buf, view);
    if (!r)
        return make_error(r.error().code(),
                          "conversion into the batch failed: " + r.error().message());
    o.state = SlotState::Filled;
    o.copied = r->copied;
    o.streamed = conv->streaming_stores();
    SlotSource src;
    src.pad_index = ps.index();
    src.pts = GST_BUFFER_PTS(buf);
    src.applied_colorimetry = ps.input().colorimetry.applied.pack();
    if (roi) {
        src.roi_kind = roi->kind;
        src.roi_id = roi->id;
        src.roi_label = roi->label;
    }
    fill_slot(&o.record, src, conv->config(), conv->geometry());
    o.colorimetry = ps.input().colorimetry.output.pack();
    return o;
}

bool account(Streaming& st, const std::string& pad_name, const Result<SlotOutcome>& o,
             Deferred* msgs)
{
    if (!o) {
        msgs->error(
            GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED, pad_name + ": " + o.error().message(),
            std::string("edgetensor error ") + std::string(error_code_name(o.error().code())));
        return false;
    }
    if (o->state != SlotState::Filled) {
        ++st.counters.dropped;
        if (st.warned.insert(pad_name + " mismatch").second)
            msgs->warning(GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                          pad_name + ": a buffer does not match its caps (" + o->why +
                              "); it is dropped and its slot left empty.");
        return true;
    }
    ++st.counters.frames;
    if (o->streamed)
        ++st.counters.streamed;
    if (o->copied) {
        ++st.counters.copies;
        if (st.warned.insert(pad_name + " copy").second)
            msgs->warning(GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                          pad_name + ": bottom-up frames (negative strides) are converted from a "
                                     "top-down copy; counted in copies.");
    }
    return true;
}

void place(OpenBatch& b, guint slot, guint pad_index, const SlotOutcome& o)
{
    b.state[slot] = o.state;
    b.owner[slot] = pad_index;
    b.records[slot] = o.record;
    b.colorimetry[slot] = o.colorimetry;
}

Result<void> clear_slot(const TensorDyn& view)
{
    auto map = view.map_raw(CpuAccess::Write);
    if (!map)
        return unexpected(std::move(map).error());
    size_t bytes = dtype_size(view.dtype());
    for (size_t d : view.shape())
        bytes *= d;
    std::memset(map->bytes(), 0, bytes);
    return {};
}

} // namespace edgetensor::gst::tensorbatch
