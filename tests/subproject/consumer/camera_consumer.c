/* SPDX-License-Identifier: MIT */
/*
 * The GStreamer library from a C project that builds edgetensor as a subproject: a camera
 * app's pool, a buffer, its meta read through the accessors.
 */

#include <gst/edgetensor/edgetensor.h>

#include <stdio.h>

int main(int argc, char** argv)
{
    gst_init(&argc, &argv);
    GstBufferPool* pool = gst_edge_tensor_buffer_pool_new();
    GstCaps* caps = gst_caps_from_string("video/x-raw,format=NV12,width=320,height=240,"
                                         "colorimetry=bt601");
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, 0, 2, 2);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool, config) &&
        !gst_buffer_pool_set_config(pool, gst_buffer_pool_get_config(pool))) {
        fprintf(stderr, "the pool refused its config\n");
        return 1;
    }
    GstBuffer* buf = NULL;
    if (!gst_buffer_pool_set_active(pool, TRUE) ||
        gst_buffer_pool_acquire_buffer(pool, &buf, NULL) != GST_FLOW_OK) {
        fprintf(stderr, "no buffer\n");
        return 1;
    }
    const GstEdgeTensorMeta* meta = gst_buffer_get_edge_tensor_meta(buf);
    gchar* colorimetry = meta ? gst_edge_tensor_meta_get_colorimetry(meta) : NULL;
    const int ok =
        meta && colorimetry && g_str_equal(colorimetry, "bt601") &&
        EDGETENSOR_COLORIMETRY_MATRIX(meta->desc.colorimetry) == EDGETENSOR_COLOR_MATRIX_BT601;
    printf("gstreamer-edgetensor-1.0 as a subproject: %s %ux%u, %s, colorimetry %s: %s\n",
           meta ? gst_edge_tensor_meta_get_element_format(meta) : "?", meta ? meta->width : 0,
           meta ? meta->height : 0, meta ? gst_edge_tensor_meta_get_dtype_name(meta) : "?",
           colorimetry ? colorimetry : "(none)", ok ? "ok" : "WRONG");
    g_free(colorimetry);
    gst_buffer_unref(buf);
    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
    gst_caps_unref(caps);
    return ok ? 0 : 1;
}
