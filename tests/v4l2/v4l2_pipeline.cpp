// SPDX-License-Identifier: MIT

#include "v4l2_pipeline.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <sys/stat.h>

#ifndef ET_GST_PLUGINS_DIR
#error "ET_GST_PLUGINS_DIR must name GStreamer's system plugin directory"
#endif

namespace edgetensor::test::v4l2
{

guint64 inode_of(int fd)
{
    struct stat st {
    };
    return fstat(fd, &st) == 0 ? guint64(st.st_ino) : 0;
}

std::string load_system_plugins(std::initializer_list<const char*> files)
{
    std::string failed;
    for (const char* name : files) {
        const std::string path = std::string(ET_GST_PLUGINS_DIR) + "/" + name;
        GError* err = nullptr;
        GstPlugin* p = gst_plugin_load_file(path.c_str(), &err);
        if (!p) {
            failed += path + ": " + (err ? err->message : "?") + "; ";
            g_clear_error(&err);
            continue;
        }
        gst_object_unref(p);
    }
    return failed;
}

RunEnd run_to_eos(GstElement* pipeline)
{
    RunEnd end;
    const gint64 t0 = g_get_monotonic_time();
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    GstBus* bus = gst_element_get_bus(pipeline);
    for (;;) {
        GstMessage* msg = gst_bus_timed_pop_filtered(
            bus, 120 * GST_SECOND,
            GstMessageType(GST_MESSAGE_ERROR | GST_MESSAGE_EOS | GST_MESSAGE_ELEMENT));
        if (!msg) {
            end.error = "timed out after 120 s";
            break;
        }
        const GstMessageType type = GST_MESSAGE_TYPE(msg);
        if (type == GST_MESSAGE_ELEMENT &&
            gst_message_has_name(msg, GST_EDGE_TENSOR_IMPORT_STATS_NAME))
            end.stats.reset(gst_structure_copy(gst_message_get_structure(msg)));
        if (type == GST_MESSAGE_ERROR) {
            GError* e = nullptr;
            gchar* dbg = nullptr;
            gst_message_parse_error(msg, &e, &dbg);
            end.error = std::string(e->message) + " (" + (dbg ? dbg : "") + ")";
            g_error_free(e);
            g_free(dbg);
        }
        gst_message_unref(msg);
        if (type != GST_MESSAGE_ELEMENT)
            break;
    }
    end.seconds = double(g_get_monotonic_time() - t0) / 1e6;
    gst_object_unref(bus);
    return end;
}

guint64 stat_u64(const GstStructure* stats, const char* field, guint64 fallback)
{
    guint64 v = fallback;
    if (stats)
        gst_structure_get_uint64(stats, field, &v);
    return v;
}

std::set<guint64> cached_inodes(const GstStructure* stats)
{
    std::set<guint64> cached;
    const GValue* inodes = stats ? gst_structure_get_value(stats, "inodes") : nullptr;
    for (guint i = 0; inodes && i < gst_value_array_get_size(inodes); ++i)
        cached.insert(g_value_get_uint64(gst_value_array_get_value(inodes, i)));
    return cached;
}

} // namespace edgetensor::test::v4l2
