// SPDX-License-Identifier: MIT
//
// tensorbatch's properties (tensorbatch_properties.hpp) and the GTypes of its enums.

#include "tensorbatch_properties.hpp"

#include "enum_type.hpp"
#include "glib_raii.hpp"
#include "settings_table.hpp"

#include <span>
#include <string>
#include <utility>

GType gst_tensor_batch_mode_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_BATCH_MODE_STREAMS, "One slot per sink pad: a frame of each stream", "streams"},
        {GST_TENSOR_BATCH_MODE_ROI, "The slots hold the regions of interest of one stream's frames",
         "roi"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstTensorBatchMode", values);
}

GType gst_tensor_batch_ordering_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_TENSOR_BATCH_ORDERING_FIFO,
         "Each slot takes its stream's oldest waiting frame; no frame is dropped", "fifo"},
        {GST_TENSOR_BATCH_ORDERING_LATEST,
         "Each slot takes its stream's newest waiting frame; older waiting ones are dropped",
         "latest"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstTensorBatchOrdering", values);
}

namespace edgetensor::gst::tensorbatch
{

namespace
{

constexpr GParamFlags kReadyFlags =
    GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
constexpr GParamFlags kPlayingFlags =
    GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
constexpr GParamFlags kReportFlags = GParamFlags(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

} // namespace

bool parse_roi_labels(const char* str, std::vector<std::string>* out, std::string* why)
{
    out->clear();
    for (std::string& label : tensorconvert::split_list(str)) {
        if (label.empty()) {
            *why = "an empty label (labels are comma separated, e.g. \"person,car\")";
            out->clear();
            return false;
        }
        out->push_back(std::move(label));
    }
    return true;
}

void install_properties(GObjectClass* klass)
{
    tensorconvert::install_output_properties(klass);
    g_object_class_install_property(
        klass, PROP_BATCH_SIZE,
        g_param_spec_uint("batch-size", "Batch size",
                          "Slots per batch, N of the output's leading dimension (1 to 1024; a "
                          "batch may also not exceed 4 GiB; default 4)",
                          1, kMaxBatchSize, DEFAULT_BATCH_SIZE, kReadyFlags));
    g_object_class_install_property(
        klass, PROP_BATCHED_PUSH_TIMEOUT,
        g_param_spec_uint64(
            "batched-push-timeout", "Batched push timeout",
            "The latency bound in nanoseconds: a batch still missing frames goes out this long "
            "after its oldest frame's running time (plus upstream's latency), its empty slots "
            "marked (0 to 18446744073709551615; the maximum waits for every stream; default "
            "33333333, one frame at 30 fps)",
            0, G_MAXUINT64, DEFAULT_BATCHED_PUSH_TIMEOUT, kPlayingFlags));
    g_object_class_install_property(
        klass, PROP_ORDERING,
        g_param_spec_enum("ordering", "Ordering",
                          "Which frame of a stream a batch takes when several wait: fifo (the "
                          "oldest; none dropped) or latest (the newest; older waiting frames of "
                          "that stream dropped and counted) (default: fifo)",
                          GST_TYPE_TENSOR_BATCH_ORDERING, DEFAULT_ORDERING, kReadyFlags));
    g_object_class_install_property(
        klass, PROP_MODE,
        g_param_spec_enum("mode", "Mode",
                          "streams (one slot per sink pad) or roi (the slots hold the regions of "
                          "interest of one stream's frames: GstVideoRegionOfInterestMeta, and "
                          "object detections of GstAnalyticsRelationMeta on GStreamer 1.24+; "
                          "needs width and height) (default: streams)",
                          GST_TYPE_TENSOR_BATCH_MODE, DEFAULT_MODE, kReadyFlags));
    g_object_class_install_property(
        klass, PROP_ROI_LABELS,
        g_param_spec_string("roi-labels", "ROI labels",
                            "mode=roi: the region types or classes to batch, comma separated, "
                            "e.g. \"person,car\" (default: empty = every region)",
                            "", kReadyFlags));
    g_object_class_install_property(
        klass, PROP_ROI_MIN_SIZE,
        g_param_spec_uint("roi-min-size", "ROI minimum size",
                          "mode=roi: regions narrower or lower than this many source pixels are "
                          "skipped (0 to 16384; default 0 = every size)",
                          0, tensorconvert::kMaxSize, DEFAULT_ROI_MIN_SIZE, kReadyFlags));
    g_object_class_install_property(
        klass, PROP_CONVERT_ON_ARRIVAL,
        g_param_spec_boolean(
            "convert-on-arrival", "Convert on arrival",
            "mode=streams with ordering=fifo: convert each frame into its slot in its own "
            "stream's thread as it arrives, as separate tensorconvert branches would, instead of "
            "one after another in the batching thread once the batch is complete. A batch then "
            "leaves as soon as its last frame is converted, and unpaced sources run the "
            "conversions on as many cores as there are streams; it holds up to four batch "
            "buffers open and wakes threads more often (about 10% more CPU per batch with "
            "unpaced sources on a 2-core host; the same with live ones) (default: false)",
            DEFAULT_CONVERT_ON_ARRIVAL, kReadyFlags));
    g_object_class_install_property(
        klass, PROP_COPIES,
        g_param_spec_uint64("copies", "Copies",
                            "Input frames copied before conversion (bottom-up frames, which the "
                            "engine reads from a top-down copy); 0 otherwise: every frame is "
                            "converted straight into its slot (read-only, since the element "
                            "started)",
                            0, G_MAXUINT64, 0, kReportFlags));
    g_object_class_install_property(
        klass, PROP_STATS,
        g_param_spec_boxed("stats", "Statistics",
                           "edgetensor-stats: frames, copies, zero-copy, batches, partial-batches, "
                           "empty-slots, dropped, rois, rois-refused, rois-filtered and the "
                           "inputs' import caches (hits, misses, evictions, entries) since the "
                           "element started; also posted as an element message at EOS "
                           "(read-only)",
                           GST_TYPE_STRUCTURE, kReportFlags));
}

namespace
{

// The settings a GValue reaches as it is; roi-labels is parsed (set_property()).
std::span<const SettingField<Settings>> setting_fields()
{
    static constexpr SettingField<Settings> kFields[] = {
        setting_field<&Settings::batch_size>(PROP_BATCH_SIZE),
        setting_field<&Settings::timeout>(PROP_BATCHED_PUSH_TIMEOUT),
        setting_field<&Settings::ordering>(PROP_ORDERING),
        setting_field<&Settings::mode>(PROP_MODE),
        setting_field<&Settings::roi_min_size>(PROP_ROI_MIN_SIZE),
        setting_field<&Settings::convert_on_arrival>(PROP_CONVERT_ON_ARRIVAL),
    };
    return kFields;
}

} // namespace

bool set_property(GstElement* self, Settings* settings, guint prop_id, const GValue* value,
                  GParamSpec* pspec)
{
    if (tensorconvert::set_output_property(self, settings, prop_id, value, pspec))
        return false;
    if (prop_id != PROP_ROI_LABELS)
        return store_setting(G_OBJECT(self), setting_fields(), *settings, prop_id, value, pspec) &&
               prop_id == PROP_BATCHED_PUSH_TIMEOUT;
    if (refuse_unless_ready(self, pspec))
        return false;
    // What throws here stops at the element's set_property guard (vfunc_guard.hpp).
    std::vector<std::string> labels;
    const char* str = g_value_get_string(value);
    std::string why;
    if (!parse_roi_labels(str, &labels, &why)) {
        tensorconvert::refuse_value(self, settings, pspec->name, str, why);
        return false;
    }
    ObjectLockGuard lock(self);
    settings->refused.accept(pspec->name);
    settings->roi_labels_str = str ? str : "";
    settings->roi_labels = std::move(labels);
    return false;
}

bool get_property(const Settings& s, guint prop_id, GValue* value)
{
    if (tensorconvert::get_output_property(s, prop_id, value))
        return true;
    if (prop_id == PROP_ROI_LABELS) {
        g_value_set_string(value, s.roi_labels_str.c_str());
        return true;
    }
    return get_setting(setting_fields(), s, prop_id, value);
}

} // namespace edgetensor::gst::tensorbatch
