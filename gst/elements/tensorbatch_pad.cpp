// SPDX-License-Identifier: MIT
//
// A tensorbatch sink pad's stream (tensorbatch_pad.hpp).

#include "tensorbatch_pad.hpp"

#include "frame_check.hpp"
#include "import_cache.hpp"
#include "internal.hpp"
#include "tensorconvert_input.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/video/video.h>

#include <string>

namespace edgetensor::gst::tensorbatch
{

namespace
{

// The destination of a slot view as raw memory: its first byte and the pitches its strides say.
DestFrame dest_of(const TensorDyn& dst, uint8_t* data, TensorLayout layout)
{
    const auto& st = dst.strides();
    if (layout == TensorLayout::Chw)
        return DestFrame{data, size_t(st[1]), size_t(st[0])};
    return DestFrame{data, size_t(st[0]), 0};
}

} // namespace

Result<void> PadStream::set_caps(PadInput in, const Settings& s, size_t width, size_t height)
{
    tensorconvert::OutputSettings out = s;
    out.width = guint(width);
    out.height = guint(height);
    auto cfg = tensorconvert::output_config(out, in.facts);
    if (!cfg)
        return unexpected(std::move(cfg).error());
    // Every slot's converter writes into one batch tensor: the engine weighs that whole buffer
    // against the cache when it chooses how to store (OutputStores::Auto).
    if (auto bytes = batch_bytes(s, batch_shape(s, s.batch_size, width, height)))
        cfg->dest_buffer_bytes = *bytes;
    std::optional<Converter> frame;
    if (s.mode == GST_TENSOR_BATCH_MODE_STREAMS) {
        auto conv = Converter::create(*cfg);
        if (!conv)
            return unexpected(std::move(conv).error());
        frame = std::move(*conv);
    }
    if (!cache_)
        cache_.reset(gst_edge_tensor_import_cache_new(GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE));
    // The cache reads the same snapshot of the caps; other caps than before clear it.
    import_cache_set_layout(cache_.get(), in.layout);
    config_ = *cfg;
    frame_ = std::move(frame);
    regions_.clear();
    region_capacity_ = roi_converter_capacity(s.batch_size);
    input_ = std::move(in);
    return {};
}

void PadStream::reset() noexcept
{
    input_.reset();
    frame_.reset();
    regions_.clear();
    caps_.reset();
    tickets.clear();
    last_seq = 0;
    if (cache_)
        import_cache_set_layout(cache_.get(), nullptr);
}

Result<Converter*> PadStream::region_converter(const Region& crop)
{
    for (auto it = regions_.begin(); it != regions_.end(); ++it) {
        const Region& r = it->first;
        if (r.x == crop.x && r.y == crop.y && r.width == crop.width && r.height == crop.height) {
            regions_.splice(regions_.begin(), regions_, it);
            return &regions_.front().second;
        }
    }
    ConvertConfig cfg = config_;
    cfg.crop = crop;
    auto conv = Converter::create(cfg);
    if (!conv)
        return unexpected(std::move(conv).error());
    regions_.emplace_front(crop, std::move(*conv));
    while (regions_.size() > region_capacity_)
        regions_.pop_back();
    return &regions_.front().second;
}

bool PadStream::check(GstBuffer* buf, std::string* why) const
{
    GstVideoInfo info = input_->info;
    return check_video_frame(buf, &info, why);
}

void PadStream::clear_cache(const char* reason) noexcept
{
    if (cache_)
        gst_edge_tensor_import_cache_clear(cache_.get(), reason);
}

Result<Converted> PadStream::convert(Converter& conv, GstBuffer* buf, const TensorDyn& dst)
{
    Converted done;
    const TensorLayout layout = conv.config().layout;
    // Foreign fd memory (a camera's DMA-BUFs, a memfd) is imported once and read as the same
    // tensor whenever its buffer comes back. Our own pool's memory and system memory are
    // mapped, as is anything the tensor path refuses.
    GstMemory* first = gst_buffer_n_memory(buf) > 0 ? gst_buffer_peek_memory(buf, 0) : nullptr;
    if (first && cache_ && gst_is_fd_memory(first) && !gst_is_edge_tensor_memory(first)) {
        GstEdgeTensorImportResult res = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
        auto src = import_tensor(cache_.get(), buf, &res);
        if (src && src->is_image()) {
            auto r = conv.run(*src, dst);
            if (r) {
                done.imported = true;
                return done;
            }
        }
    }
    GstVideoInfo info = input_->info;
    GstVideoFrame in;
    if (!gst_video_frame_map(&in, &info, buf, GST_MAP_READ))
        return make_error(ErrorCode::InvalidArgument,
                          "cannot map the input frame" + take_map_failure() +
                              " (its size or GstVideoMeta does not match the caps)");
    SourceFrame src;
    if (frame_is_bottom_up(&in)) {
        tensorconvert::top_down_copy(&in, &info, &scratch_, &src);
        done.copied = true;
    } else {
        for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&in) && p < src.planes.size(); ++p)
            src.planes[p] = {static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&in, p)),
                             size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&in, p))};
    }
    auto map = dst.map_raw(CpuAccess::Write);
    if (!map) {
        gst_video_frame_unmap(&in);
        return make_error(map.error().code(),
                          "cannot map the batch slot: " + map.error().message());
    }
    auto r = conv.run(src, dest_of(dst, map->bytes(), layout));
    map->reset();
    gst_video_frame_unmap(&in);
    if (!r)
        return unexpected(std::move(r).error());
    return done;
}

} // namespace edgetensor::gst::tensorbatch
