// SPDX-License-Identifier: MIT
//
// tensorconvert's colorimetry: resolving the input's, describing the output's.

#include "tensorconvert_colorimetry.hpp"

#include "internal.hpp"

namespace edgetensor::gst
{

ConvertColorimetry resolve_convert_colorimetry(const GstVideoInfo& in, bool from_caps,
                                               GstVideoFormat out_format)
{
    // GStreamer's own defaults for this format and size (gst_video_info_set_format()): what
    // videoconvert would assume, so both elements read an unlabelled frame alike.
    GstVideoInfo def;
    gst_video_info_init(&def);
    gst_video_info_set_format(&def, GST_VIDEO_INFO_FORMAT(&in), guint(GST_VIDEO_INFO_WIDTH(&in)),
                              guint(GST_VIDEO_INFO_HEIGHT(&in)));
    const Colorimetry defaults = colorimetry_from_gst(def.colorimetry);
    const bool yuv = GST_VIDEO_FORMAT_INFO_IS_YUV(in.finfo);

    ConvertColorimetry r;
    Colorimetry& a = r.applied;
    if (from_caps)
        a = colorimetry_from_gst(in.colorimetry);
    auto note = [&r](const char* axis) {
        if (!r.assumed_axes.empty())
            r.assumed_axes += ", ";
        r.assumed_axes += axis;
    };
    // The matrix and the range change the numbers a YUV frame decodes to: filling them in is
    // an assumption the user hears about. Primaries and transfer only travel with the values.
    if (yuv && a.encoding == ColorEncoding::Unspecified) {
        a.encoding = defaults.encoding;
        note("matrix");
    }
    if (a.range == ColorRange::Unspecified) {
        a.range = defaults.range;
        if (yuv)
            note("range");
    }
    if (a.transfer == ColorTransfer::Unspecified)
        a.transfer = defaults.transfer;
    if (a.space == ColorSpace::Unspecified)
        a.space = defaults.space;

    r.output.space = a.space;
    r.output.transfer = a.transfer;
    r.output.encoding =
        out_format == GST_VIDEO_FORMAT_GRAY8 ? ColorEncoding::Bt601 : ColorEncoding::Unspecified;
    // YUV decodes to full-range RGB; RGB sources keep their values, and so their range.
    r.output.range = yuv ? ColorRange::Full : a.range;
    return r;
}

std::string colorimetry_gst_string(const Colorimetry& c, GstVideoFormat format)
{
    const GstVideoColorimetry g = colorimetry_to_gst(c, format);
    gchar* s = gst_video_colorimetry_to_string(&g);
    std::string out = s ? s : "";
    g_free(s);
    return out;
}

std::optional<std::string> output_colorimetry_string(const GstStructure* in,
                                                     GstVideoFormat out_format)
{
    const char* format = gst_structure_get_string(in, "format");
    gint w = 0, h = 0;
    if (!format || !gst_structure_get_int(in, "width", &w) ||
        !gst_structure_get_int(in, "height", &h))
        return std::nullopt;
    const bool labelled = gst_structure_has_field(in, "colorimetry");
    const char* colorimetry = gst_structure_get_string(in, "colorimetry");
    if (labelled && !colorimetry)
        return std::nullopt; // a list or range: not decided yet
    // Only what the colorimetry depends on, so unfixed fields elsewhere (framerate) do not
    // stop the caps from being read.
    MiniObjectPtr<GstCaps> caps(gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, format,
                                                    "width", G_TYPE_INT, w, "height", G_TYPE_INT, h,
                                                    nullptr));
    if (labelled)
        gst_caps_set_simple(caps.get(), "colorimetry", G_TYPE_STRING, colorimetry, nullptr);
    auto layout = stream_layout_from_caps(caps.get());
    if (!layout || !(*layout)->video)
        return std::nullopt;
    return colorimetry_gst_string(
        resolve_convert_colorimetry((*layout)->vinfo, labelled, out_format).output, out_format);
}

} // namespace edgetensor::gst
