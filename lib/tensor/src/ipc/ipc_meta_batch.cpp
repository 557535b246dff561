// SPDX-License-Identifier: MIT
//
// The BATCH record (ipc_meta.hpp): tensorbatch's per-slot provenance, so a receiver in another
// process maps a slot's detections back to the frame they came from. Read like every record:
// the slot count checked against the limit and the bytes left before anything is allocated,
// then every slot's fields against each other (a crop inside its source, finite positive
// scales), because the receiver's consumers do arithmetic with them.

#include "ipc_meta_io.hpp"

#include <cmath>
#include <string>

namespace edgetensor::ipc::detail
{

namespace
{

// Bytes of a slot without its label's.
constexpr size_t kSlotFixedSize = 88;

Result<void> check_slot(const BatchSlot& s, const std::string& at)
{
    if (s.roi_kind > kLastRoiKind)
        return bad(at + ": ROI kind " + std::to_string(s.roi_kind) + " is unknown");
    if (!s.filled)
        return {}; // an empty slot's fields say nothing
    if (s.source_width == 0 || s.source_height == 0)
        return bad(at + ": a source of " + std::to_string(s.source_width) + "x" +
                   std::to_string(s.source_height));
    if (s.crop_width == 0 || s.crop_height == 0 ||
        uint64_t(s.crop_x) + s.crop_width > s.source_width ||
        uint64_t(s.crop_y) + s.crop_height > s.source_height)
        return bad(at + ": crop " + std::to_string(s.crop_x) + "," + std::to_string(s.crop_y) +
                   " " + std::to_string(s.crop_width) + "x" + std::to_string(s.crop_height) +
                   " is not inside its " + std::to_string(s.source_width) + "x" +
                   std::to_string(s.source_height) + " source");
    if (!std::isfinite(s.scale_x) || !std::isfinite(s.scale_y) || s.scale_x <= 0 || s.scale_y <= 0)
        return bad(at + ": scale " + std::to_string(s.scale_x) + " x " + std::to_string(s.scale_y) +
                   " (finite and positive)");
    return {};
}

} // namespace

void encode_batch(Writer& w, const BatchMeta& m)
{
    w.put(m.slot_width);
    w.put(m.slot_height);
    w.put(uint32_t(m.slots.size()));
    for (const BatchSlot& s : m.slots) {
        w.put(uint32_t(s.filled ? 1 : 0));
        w.put(s.pad_index);
        w.put(s.pts);
        w.put(s.source_width);
        w.put(s.source_height);
        w.put(s.crop_x);
        w.put(s.crop_y);
        w.put(s.crop_width);
        w.put(s.crop_height);
        w.put(s.scale_x);
        w.put(s.scale_y);
        w.put(s.pad_left);
        w.put(s.pad_top);
        w.put(s.pad_right);
        w.put(s.pad_bottom);
        w.put(s.roi_kind);
        w.put(s.roi_id);
        w.str(s.roi_label);
        w.put(s.applied_colorimetry);
    }
}

Result<BatchMeta> parse_batch(Reader& r, const std::string& where)
{
    BatchMeta m;
    uint32_t n = 0;
    if (!r.get(&m.slot_width) || !r.get(&m.slot_height) || !r.get(&n))
        return bad(where + ": truncated");
    if (m.slot_width == 0 || m.slot_height == 0)
        return bad(where + ": slots of " + std::to_string(m.slot_width) + "x" +
                   std::to_string(m.slot_height));
    if (n < 1 || n > kMaxBatchSlots || r.left() < size_t(n) * kSlotFixedSize)
        return bad(where + ": " + std::to_string(n) + " slots (1 to " +
                   std::to_string(kMaxBatchSlots) + ", and what the record holds)");
    m.slots.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
        BatchSlot& s = m.slots[i];
        const std::string at = where + " slot " + std::to_string(i);
        uint32_t filled = 2;
        r.get(&filled);
        r.get(&s.pad_index);
        r.get(&s.pts);
        r.get(&s.source_width);
        r.get(&s.source_height);
        r.get(&s.crop_x);
        r.get(&s.crop_y);
        r.get(&s.crop_width);
        r.get(&s.crop_height);
        r.get(&s.scale_x);
        r.get(&s.scale_y);
        r.get(&s.pad_left);
        r.get(&s.pad_top);
        r.get(&s.pad_right);
        r.get(&s.pad_bottom);
        r.get(&s.roi_kind);
        r.get(&s.roi_id);
        if (!r.ok())
            return bad(at + ": truncated");
        if (auto label = r.str(&s.roi_label, at + " ROI label"); !label)
            return unexpected(std::move(label).error());
        if (!r.get(&s.applied_colorimetry))
            return bad(at + ": truncated");
        if (filled > 1)
            return bad(at + ": filled is " + std::to_string(filled) + " (0 or 1)");
        s.filled = filled == 1;
        if (auto ok = check_slot(s, at); !ok)
            return unexpected(std::move(ok).error());
    }
    return m;
}

} // namespace edgetensor::ipc::detail

namespace edgetensor::ipc
{

Result<std::vector<uint8_t>> encode_batch_body(const BatchMeta& batch)
{
    detail::Writer w;
    detail::encode_batch(w, batch);
    std::vector<uint8_t> bytes = w.take();
    if (auto check = parse_batch_body(bytes); !check)
        return make_error(ErrorCode::InvalidArgument, check.error().message());
    return bytes;
}

Result<BatchMeta> parse_batch_body(std::span<const uint8_t> bytes)
{
    detail::Reader r(bytes);
    auto b = detail::parse_batch(r, "batch meta");
    if (!b)
        return b;
    if (r.left() != 0)
        return detail::bad("batch meta: " + std::to_string(r.left()) + " bytes left over");
    return b;
}

} // namespace edgetensor::ipc
