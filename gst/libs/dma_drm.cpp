// SPDX-License-Identifier: MIT
//
// DMA_DRM caps (dma_drm.hpp).

#include "dma_drm.hpp"

#include "glib_raii.hpp"
#include "vfunc_guard.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

namespace edgetensor::gst
{

namespace
{

#if GST_CHECK_VERSION(1, 24, 0)

void append_string(GValue* list, const char* s)
{
    GValue item = G_VALUE_INIT;
    g_value_init(&item, G_TYPE_STRING);
    g_value_set_string(&item, s);
    gst_value_list_append_and_take_value(list, &item);
}

// Calls `f` with every string of `v` (a string or a list of them).
template <typename F> void each_string(const GValue* v, F&& f)
{
    if (!v)
        return;
    if (G_VALUE_HOLDS_STRING(v)) {
        f(g_value_get_string(v));
        return;
    }
    if (GST_VALUE_HOLDS_LIST(v))
        for (guint i = 0; i < gst_value_list_get_size(v); ++i)
            each_string(gst_value_list_get_value(v, i), f);
}

// A copy of `s` whose field `from` (a string or a list) becomes field `to`: each entry through
// `map` (an empty result leaves it out), a lone one as a string. Null when none is left.
template <typename F>
GstStructure* remap_field(const GstStructure* s, const char* from, const char* to, F&& map)
{
    GValue list = G_VALUE_INIT;
    gst_value_list_init(&list, 0);
    each_string(gst_structure_get_value(s, from), [&](const char* name) {
        const std::string mapped = map(name);
        if (!mapped.empty())
            append_string(&list, mapped.c_str());
    });
    const guint n = gst_value_list_get_size(&list);
    GstStructure* out = nullptr;
    if (n > 0) {
        out = gst_structure_copy(s);
        gst_structure_remove_field(out, from);
        gst_structure_set_value(out, to, n == 1 ? gst_value_list_get_value(&list, 0) : &list);
    }
    g_value_unset(&list);
    return out;
}

// The linear drm-format of a GStreamer format ("" where DRM has none).
std::string linear_drm_name(GstVideoFormat format)
{
    const guint32 fourcc = gst_video_dma_drm_fourcc_from_format(format);
    return fourcc ? drm_format_name(fourcc, kDrmLinear) : std::string();
}

GstCaps* caps_of_dma_drm(GstStructure* s)
{
    GstCaps* caps = gst_caps_new_full(s, nullptr);
    gst_caps_set_features(caps, 0, gst_caps_features_new(GST_CAPS_FEATURE_MEMORY_DMABUF, nullptr));
    return caps;
}

#endif

} // namespace

bool dma_drm_negotiated() noexcept
{
    return GST_CHECK_VERSION(1, 24, 0);
}

std::string drm_format_name(uint32_t fourcc, uint64_t modifier)
{
#if GST_CHECK_VERSION(1, 24, 0)
    // GStreamer's own spelling, as producers put it in caps ("R8  " keeps its padding).
    GCharPtr name(gst_video_dma_drm_fourcc_to_string(fourcc, modifier));
    if (name)
        return name.get();
#endif
    char buf[40];
    if (modifier == kDrmLinear)
        std::snprintf(buf, sizeof buf, "%" GST_FOURCC_FORMAT, GST_FOURCC_ARGS(fourcc));
    else
        std::snprintf(buf, sizeof buf, "%" GST_FOURCC_FORMAT ":0x%016" PRIx64,
                      GST_FOURCC_ARGS(fourcc), modifier);
    return buf;
}

GstCaps* dma_drm_caps(std::span<const GstVideoFormat> formats)
{
#if GST_CHECK_VERSION(1, 24, 0)
    GValue list = G_VALUE_INIT;
    gst_value_list_init(&list, guint(formats.size()));
    for (GstVideoFormat f : formats)
        append_string(&list, gst_video_format_to_string(f));
    GstStructure* video = gst_structure_new("video/x-raw", "width", GST_TYPE_INT_RANGE, 1, G_MAXINT,
                                            "height", GST_TYPE_INT_RANGE, 1, G_MAXINT, "framerate",
                                            GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, nullptr);
    gst_structure_take_value(video, "format", &list);
    GstStructure* drm = video_as_dma_drm(video);
    gst_structure_free(video);
    return drm ? caps_of_dma_drm(drm) : gst_caps_new_empty();
#else
    (void)formats;
    return gst_caps_new_empty();
#endif
}

GstCaps* dma_drm_caps_any_linear()
{
    guint n = 0;
    const GstVideoFormat* raw = gst_video_formats_raw(&n);
    return dma_drm_caps(std::span<const GstVideoFormat>(raw, n));
}

GstCaps* dma_drm_caps_like(const GstCaps* caps)
{
    GstCaps* out = gst_caps_new_empty();
#if GST_CHECK_VERSION(1, 24, 0)
    for (guint i = 0; i < gst_caps_get_size(caps); ++i) {
        const GstCapsFeatures* f = gst_caps_get_features(caps, i);
        const GstStructure* s = gst_caps_get_structure(caps, i);
        if ((f && !gst_caps_features_is_equal(f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY)) ||
            !gst_structure_has_name(s, "video/x-raw"))
            continue;
        if (GstStructure* drm = video_as_dma_drm(s))
            out = gst_caps_merge(out, caps_of_dma_drm(drm));
    }
#else
    (void)caps;
#endif
    return out;
}

GstPadTemplate* pad_template_with_dma_drm(GstStaticPadTemplate* templ, GstCaps* dma_drm)
{
    MiniObjectPtr<GstCaps> caps(gst_static_pad_template_get_caps(templ));
    caps.reset(gst_caps_merge(caps.release(), dma_drm));
    return gst_pad_template_new(templ->name_template, templ->direction, templ->presence,
                                caps.get());
}

bool is_dma_drm_structure(const GstCaps* caps, guint i) noexcept
{
    const GstCapsFeatures* f = gst_caps_get_features(caps, i);
    const GstStructure* s = gst_caps_get_structure(caps, i);
    return f && s && gst_caps_features_contains(f, GST_CAPS_FEATURE_MEMORY_DMABUF) &&
           gst_structure_has_name(s, "video/x-raw") &&
           g_strcmp0(gst_structure_get_string(s, "format"), "DMA_DRM") == 0;
}

GstStructure* dma_drm_as_video(const GstStructure* s, std::span<const DrmFormat> tiled)
{
#if GST_CHECK_VERSION(1, 24, 0)
    if (!gst_structure_has_field(s, "drm-format")) {
        // Any drm-format: any format, the caller's templates decide.
        GstStructure* out = gst_structure_copy(s);
        gst_structure_remove_field(out, "format");
        return out;
    }
    return remap_field(s, "drm-format", "format", [&](const char* name) {
        guint64 modifier = kDrmLinear;
        const guint32 fourcc = gst_video_dma_drm_fourcc_from_string(name, &modifier);
        const GstVideoFormat f =
            fourcc ? gst_video_dma_drm_fourcc_to_format(fourcc) : GST_VIDEO_FORMAT_UNKNOWN;
        const bool readable = modifier == kDrmLinear ||
                              std::any_of(tiled.begin(), tiled.end(), [&](const DrmFormat& d) {
                                  return d.fourcc == fourcc && d.modifier == modifier;
                              });
        return readable && f != GST_VIDEO_FORMAT_UNKNOWN
                   ? std::string(gst_video_format_to_string(f))
                   : std::string();
    });
#else
    (void)s;
    (void)tiled;
    return nullptr;
#endif
}

GstCaps* dma_drm_tiled_caps_like(const GstCaps* caps, std::span<const DrmFormat> tiled)
{
    GstCaps* out = gst_caps_new_empty();
#if GST_CHECK_VERSION(1, 24, 0)
    for (guint i = 0; i < gst_caps_get_size(caps) && !tiled.empty(); ++i) {
        const GstCapsFeatures* f = gst_caps_get_features(caps, i);
        const GstStructure* s = gst_caps_get_structure(caps, i);
        if ((f && !gst_caps_features_is_equal(f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY)) ||
            !gst_structure_has_name(s, "video/x-raw"))
            continue;
        GValue list = G_VALUE_INIT;
        gst_value_list_init(&list, 0);
        each_string(gst_structure_get_value(s, "format"), [&](const char* name) {
            const guint32 fourcc =
                gst_video_dma_drm_fourcc_from_format(gst_video_format_from_string(name));
            for (const DrmFormat& d : tiled)
                if (fourcc && d.fourcc == fourcc && d.modifier != kDrmLinear)
                    append_string(&list, drm_format_name(d.fourcc, d.modifier).c_str());
        });
        const guint n = gst_value_list_get_size(&list);
        if (n > 0) {
            GstStructure* drm = gst_structure_copy(s);
            gst_structure_set(drm, "format", G_TYPE_STRING, "DMA_DRM", nullptr);
            gst_structure_set_value(drm, "drm-format",
                                    n == 1 ? gst_value_list_get_value(&list, 0) : &list);
            out = gst_caps_merge(out, caps_of_dma_drm(drm));
        }
        g_value_unset(&list);
    }
#else
    (void)caps;
    (void)tiled;
#endif
    return out;
}

GstStructure* video_as_dma_drm(const GstStructure* s)
{
#if GST_CHECK_VERSION(1, 24, 0)
    GstStructure* out = remap_field(s, "format", "drm-format", [](const char* name) {
        return linear_drm_name(gst_video_format_from_string(name));
    });
    if (out)
        gst_structure_set(out, "format", G_TYPE_STRING, "DMA_DRM", nullptr);
    return out;
#else
    (void)s;
    return nullptr;
#endif
}

GstVideoFormat video_format_of(const GstStructure* s)
{
    const char* format = gst_structure_get_string(s, "format");
#if GST_CHECK_VERSION(1, 24, 0)
    if (g_strcmp0(format, "DMA_DRM") == 0) {
        const char* drm = gst_structure_get_string(s, "drm-format");
        guint64 modifier = kDrmLinear;
        const guint32 fourcc = drm ? gst_video_dma_drm_fourcc_from_string(drm, &modifier) : 0;
        return fourcc && modifier == kDrmLinear ? gst_video_dma_drm_fourcc_to_format(fourcc)
                                                : GST_VIDEO_FORMAT_UNKNOWN;
    }
#endif
    return format ? gst_video_format_from_string(format) : GST_VIDEO_FORMAT_UNKNOWN;
}

bool accept_dma_drm(GstElement* element, const GstCaps* caps, const GstCaps* readable)
{
#if GST_CHECK_VERSION(1, 24, 0)
    if (!caps || gst_caps_get_size(caps) != 1 || !is_dma_drm_structure(caps, 0) ||
        gst_caps_is_subset(caps, readable))
        return true;
    const char* name = gst_structure_get_string(gst_caps_get_structure(caps, 0), "drm-format");
    GValue listed = G_VALUE_INIT;
    gst_value_list_init(&listed, 0);
    bool known = false;
    for (guint i = 0; i < gst_caps_get_size(readable); ++i)
        if (is_dma_drm_structure(readable, i))
            each_string(gst_structure_get_value(gst_caps_get_structure(readable, i), "drm-format"),
                        [&](const char* n) {
                            known = known || g_strcmp0(n, name) == 0;
                            append_string(&listed, n);
                        });
    GCharPtr list(gst_value_serialize(&listed));
    g_value_unset(&listed);
    if (known)
        return true; // a drm-format it reads: the usual check says what else does not fit
    guint64 modifier = kDrmLinear;
    if (name)
        gst_video_dma_drm_fourcc_from_string(name, &modifier);
    // A warning, not an error: an accept-caps query may be a probe (a producer or a bin trying
    // what fits); refused caps end the stream as not-negotiated anyway, this says why.
    if (modifier != kDrmLinear)
        GST_ELEMENT_WARNING(element, CORE, NEGOTIATION,
                            ("%s cannot read drm-format %s: its modifier is a tiled or "
                             "compressed layout, which read as linear rows gives wrong pixels. "
                             "Have the producer choose a linear drm-format: %s.",
                             GST_ELEMENT_NAME(element), name, list ? list.get() : "none"),
                            ("refused caps %" GST_PTR_FORMAT, caps));
    else
        GST_ELEMENT_WARNING(element, CORE, NEGOTIATION,
                            ("%s does not read drm-format %s; it reads %s.",
                             GST_ELEMENT_NAME(element), name ? name : "(none)",
                             list ? list.get() : "none"),
                            ("refused caps %" GST_PTR_FORMAT, caps));
    return false;
#else
    (void)element;
    (void)caps;
    (void)readable;
    return true;
#endif
}

gboolean transform_accept_caps_reading(GstBaseTransform* trans, GstPadDirection direction,
                                       GstCaps* caps, const GstCaps* readable)
{
    return guarded(trans, "accept_caps", FALSE, [&]() -> gboolean {
        if (!dma_drm_negotiated() || direction != GST_PAD_SINK)
            return transform_accept_caps(trans, direction, caps);
        if (!accept_dma_drm(GST_ELEMENT(trans), caps, readable))
            return FALSE;
        MiniObjectPtr<GstCaps> templ(
            gst_pad_get_pad_template_caps(GST_BASE_TRANSFORM_SINK_PAD(trans)));
        if (gst_caps_get_size(caps) != 1 || !is_dma_drm_structure(caps, 0) ||
            gst_caps_is_subset(caps, templ.get()))
            return transform_accept_caps(trans, direction, caps);
        // A tiled drm-format `readable` lists: beyond the template, so GstBaseTransform's own
        // check (a subset of the template) would refuse it; the rest of that check here.
        auto* klass = GST_BASE_TRANSFORM_GET_CLASS(trans);
        MiniObjectPtr<GstCaps> other(klass->transform_caps(trans, direction, caps, nullptr));
        MiniObjectPtr<GstCaps> src_templ(
            gst_pad_get_pad_template_caps(GST_BASE_TRANSFORM_SRC_PAD(trans)));
        return other && !gst_caps_is_empty(other.get()) &&
               gst_caps_can_intersect(other.get(), src_templ.get());
    });
}

gboolean transform_accept_caps(GstBaseTransform* trans, GstPadDirection direction, GstCaps* caps)
{
    return guarded(trans, "accept_caps", FALSE, [&]() -> gboolean {
        if (dma_drm_negotiated()) {
            MiniObjectPtr<GstCaps> readable(
                gst_pad_get_pad_template_caps(GST_BASE_TRANSFORM_SINK_PAD(trans)));
            if (!accept_dma_drm(GST_ELEMENT(trans), caps, readable.get()))
                return FALSE;
        }
        auto* base = GST_BASE_TRANSFORM_CLASS(g_type_class_peek(GST_TYPE_BASE_TRANSFORM));
        return base->accept_caps(trans, direction, caps);
    });
}

} // namespace edgetensor::gst
