// SPDX-License-Identifier: MIT
//
// Where a tensor's picture came from in a frame: the source rectangle a converter read (the
// crop, or the whole frame) and the rectangle the picture fills in the tensor (the rest is
// letterbox padding). With it, a point or a box in the tensor's pixels (what a detector reports)
// maps back onto the frame. tensorconvert records one per converted buffer; tensorinfer undoes it
// on detector outputs so boxes land on the frame that travels. Pure; not installed.

#pragma once

#include <edgetensor/convert.hpp>

#include <cstdint>

namespace edgetensor::gst
{

struct FrameTransform {
    /// The source rectangle read, in frame pixels.
    double src_x = 0, src_y = 0, src_w = 0, src_h = 0;
    /// The rectangle the picture fills, in tensor pixels.
    double dst_x = 0, dst_y = 0, dst_w = 0, dst_h = 0;
    /// The frame's and the tensor picture's sizes.
    uint32_t frame_width = 0, frame_height = 0;
    uint32_t tensor_width = 0, tensor_height = 0;

    bool valid() const noexcept
    {
        return src_w > 0 && src_h > 0 && dst_w > 0 && dst_h > 0 && frame_width > 0 &&
               frame_height > 0 && tensor_width > 0 && tensor_height > 0;
    }
    /// True when the tensor is the whole frame at the same size (nothing to undo).
    bool identity() const noexcept
    {
        return src_x == 0 && src_y == 0 && dst_x == 0 && dst_y == 0 && src_w == dst_w &&
               src_h == dst_h && frame_width == tensor_width && frame_height == tensor_height &&
               src_w == frame_width && src_h == frame_height;
    }

    /// A tensor x (y) coordinate in pixels -> the frame's.
    double frame_x(double x) const noexcept { return src_x + (x - dst_x) * src_w / dst_w; }
    double frame_y(double y) const noexcept { return src_y + (y - dst_y) * src_h / dst_h; }
    /// A width (height) in tensor pixels -> frame pixels.
    double frame_w(double w) const noexcept { return w * src_w / dst_w; }
    double frame_h(double h) const noexcept { return h * src_h / dst_h; }

    /// A coordinate normalised to the tensor's width (height) -> normalised to the frame's.
    double frame_nx(double nx) const noexcept { return frame_x(nx * tensor_width) / frame_width; }
    double frame_ny(double ny) const noexcept { return frame_y(ny * tensor_height) / frame_height; }
};

/// The transform a conversion of geometry `g` makes, from a `frame_width` x `frame_height` frame
/// into a `tensor_width` x `tensor_height` picture.
inline FrameTransform frame_transform_from(const ConvertGeometry& g, uint32_t frame_width,
                                           uint32_t frame_height, uint32_t tensor_width,
                                           uint32_t tensor_height) noexcept
{
    FrameTransform t;
    t.src_x = double(g.source.x);
    t.src_y = double(g.source.y);
    t.src_w = double(g.source.width);
    t.src_h = double(g.source.height);
    t.dst_x = double(g.content.x);
    t.dst_y = double(g.content.y);
    t.dst_w = double(g.content.width);
    t.dst_h = double(g.content.height);
    t.frame_width = frame_width;
    t.frame_height = frame_height;
    t.tensor_width = tensor_width;
    t.tensor_height = tensor_height;
    return t;
}

} // namespace edgetensor::gst
