// SPDX-License-Identifier: MIT
//
// tensorbatch's caps (tensorbatch_caps.hpp).

#include "tensorbatch_caps.hpp"

#include "convert_input_caps.hpp"
#include "glib_raii.hpp"
#include "tensor_caps.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace edgetensor::gst::tensorbatch
{

GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink_%u", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS(EDGETENSOR_CONVERT_SINK_CAPS));

GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(EDGETENSOR_CONVERT_TENSOR_CAPS));

namespace
{

std::string caps_string(GstCaps* caps)
{
    GCharPtr s(gst_caps_to_string(caps));
    return s ? s.get() : "(null)";
}

} // namespace

Result<PadInput> read_pad_caps(GstCaps* caps, const Settings& s)
{
    auto layout = stream_layout_from_caps(caps);
    if (!layout)
        return make_error(ErrorCode::InvalidArgument,
                          "cannot read " + caps_string(caps) + ": " + layout.error().message());
    const StreamLayout& l = **layout;
    if (!l.video)
        return make_error(ErrorCode::InvalidArgument,
                          "tensorbatch batches video frames (video/x-raw), not " +
                              caps_string(caps));
    if (l.memory != StreamMemory::Any)
        return make_error(ErrorCode::InvalidArgument,
                          "tensorbatch maps frames, and memory:DMABuf caps say they cannot be "
                          "mapped; mappable DMA-BUF travels under plain video/x-raw caps");
    PadInput in;
    in.layout = *layout;
    in.info = l.vinfo;
    if (GST_VIDEO_INFO_INTERLACE_MODE(&in.info) != GST_VIDEO_INTERLACE_MODE_PROGRESSIVE)
        return make_error(ErrorCode::InvalidArgument,
                          "tensorbatch needs progressive video; deinterlace first");
    const GstVideoFormat vf = GST_VIDEO_INFO_FORMAT(&in.info);
    const char* name = gst_video_format_to_string(vf);
    const auto format = convert_format_from_name(name ? name : "");
    if (!format)
        return make_error(ErrorCode::InvalidArgument,
                          std::string("tensorbatch cannot read ") + (name ? name : "?") +
                              " frames (it reads " EDGETENSOR_CONVERT_SINK_FORMATS ")");
    in.format_name = name;
    in.colorimetry = resolve_convert_colorimetry(
        in.info, l.colorimetry_from_caps,
        s.format == GST_TENSOR_CONVERT_FORMAT_GRAY ? GST_VIDEO_FORMAT_GRAY8 : GST_VIDEO_FORMAT_RGB);
    if (!in.colorimetry.assumed_axes.empty())
        in.assumed = colorimetry_gst_string(in.colorimetry.applied, vf);
    in.facts = {*format, size_t(GST_VIDEO_INFO_WIDTH(&in.info)),
                size_t(GST_VIDEO_INFO_HEIGHT(&in.info)), in.colorimetry.applied};
    return in;
}

std::string why_refused(GstCaps* caps, const Settings& s)
{
    if (!caps || !gst_caps_is_fixed(caps))
        return "";
    MiniObjectPtr<GstCaps> templ(gst_static_pad_template_get_caps(&sink_template));
    if (gst_caps_is_subset(caps, templ.get())) {
        auto in = read_pad_caps(caps, s);
        return in ? "" : in.error().message();
    }
    auto in = read_pad_caps(caps, s);
    if (!in)
        return in.error().message();
    // Readable, but outside the template: a size beyond 1..16384.
    return caps_string(caps) + " is outside what a sink pad takes (" + caps_string(templ.get()) +
           ")";
}

Shape batch_shape(const Settings& s, size_t n, size_t width, size_t height)
{
    const size_t c = tensorconvert::channels_of(s);
    if (s.layout == GST_TENSOR_CONVERT_LAYOUT_CHW)
        return {n, c, height, width};
    return {n, height, width, c};
}

Result<size_t> batch_bytes(const Settings& s, const Shape& shape)
{
    const size_t limit = std::numeric_limits<uint32_t>::max();
    size_t bytes = dtype_size(tensorconvert::output_dtype(s.dtype));
    for (size_t d : shape) {
        if (d == 0 || bytes > limit / d)
            return make_error(ErrorCode::InvalidArgument,
                              "batch-size=" + std::to_string(s.batch_size) + " of [" +
                                  dimensions_string(Shape(shape.begin() + 1, shape.end())) + "] " +
                                  tensor_type_name(tensorconvert::output_dtype(s.dtype)) +
                                  " slots is more than a pooled buffer may hold (4 GiB): lower "
                                  "batch-size, width or height, or take a smaller dtype");
        bytes *= d;
    }
    return bytes;
}

GstCaps* output_caps(const Settings& s, const Shape& shape)
{
    GstStructure* st = gst_structure_new(kTensorsMediaType, "num_tensors", G_TYPE_INT, 1, "format",
                                         G_TYPE_STRING, "static", "types", G_TYPE_STRING,
                                         tensor_type_name(tensorconvert::output_dtype(s.dtype)),
                                         "framerate", GST_TYPE_FRACTION, 0, 1, nullptr);
    GValue dims = G_VALUE_INIT;
    padded_dimensions_list(shape, &dims);
    gst_structure_take_value(st, "dimensions", &dims);
    GstCaps* caps = gst_caps_new_empty();
    gst_caps_append_structure(caps, st);
    return caps;
}

std::string describe_settings(const Settings& s)
{
    std::string d = "format=";
    d += output_format_name(tensorconvert::output_format(s.format));
    d += " layout=";
    d += tensor_layout_name(tensorconvert::output_layout(s.layout));
    d += " dtype=";
    d += tensor_type_name(tensorconvert::output_dtype(s.dtype));
    d += " width=" + std::to_string(s.width) + " height=" + std::to_string(s.height);
    d += " batch-size=" + std::to_string(s.batch_size);
    d += s.mode == GST_TENSOR_BATCH_MODE_ROI ? " mode=roi" : " mode=streams";
    return d;
}

} // namespace edgetensor::gst::tensorbatch
