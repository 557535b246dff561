/* SPDX-License-Identifier: MIT */
/*
 * The public header compiles as C11 and the C API works from C: a pool, a buffer, its meta,
 * its memory's fd/inode/identity, and the colorimetry mapping.
 */

#include <gst/edgetensor/edgetensor.h>
#include <gst/video/gstvideopool.h>

#include <stdio.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char** argv)
{
    gst_init(&argc, &argv);
    gst_edge_tensor_init();

    GstBufferPool* pool = gst_edge_tensor_buffer_pool_new();
    GstCaps* caps = gst_caps_from_string("video/x-raw,format=NV12,width=322,height=100");
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, 0, 2, 2);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_edge_tensor_buffer_pool_config_set_cpu_access(config, GST_EDGE_TENSOR_CPU_ACCESS_WRITE);
    if (!gst_buffer_pool_set_config(pool, config))
        CHECK(gst_buffer_pool_set_config(pool, gst_buffer_pool_get_config(pool)));
    CHECK(gst_buffer_pool_set_active(pool, TRUE));

    GstBuffer* buf = NULL;
    CHECK(gst_buffer_pool_acquire_buffer(pool, &buf, NULL) == GST_FLOW_OK);
    GstEdgeTensorMeta* meta = gst_buffer_get_edge_tensor_meta(buf);
    CHECK(meta != NULL);
    CHECK(meta->desc.version == EDGETENSOR_DESC_VERSION);
    CHECK(meta->n_planes == 2);
    GstMemory* mem = gst_buffer_peek_memory(buf, 0);
    CHECK(gst_is_edge_tensor_memory(mem));
    CHECK(gst_edge_tensor_memory_get_identity(mem) == meta->identity);
    if (gst_edge_tensor_memory_get_kind(mem) != GST_EDGE_TENSOR_MEMORY_SYSTEM) {
        guint64 ino = 0;
        CHECK(gst_edge_tensor_memory_get_fd(mem) >= 0);
        CHECK(gst_edge_tensor_memory_get_inode(mem, NULL, &ino));
        CHECK(ino != 0);
    }
    gsize offset = 0;
    gint stride = 0;
    CHECK(gst_edge_tensor_memory_get_plane_layout(mem, 0, &offset, &stride));
    CHECK(stride >= 322);

    GstVideoColorimetry c, back;
    CHECK(gst_video_colorimetry_from_string(&c, "bt709"));
    guint32 packed = gst_edge_tensor_colorimetry_from_gst(&c);
    CHECK(packed == EDGETENSOR_COLORIMETRY_PACK(1, 1, 2, 2));
    CHECK(gst_edge_tensor_colorimetry_to_gst(packed, GST_VIDEO_FORMAT_NV12, &back));
    CHECK(gst_video_colorimetry_is_equal(&c, &back));

    GstAllocator* alloc = gst_edge_tensor_allocator_get();
    CHECK(GST_IS_EDGE_TENSOR_ALLOCATOR(alloc));
    gst_object_unref(alloc);

    gst_buffer_unref(buf);
    CHECK(gst_buffer_pool_set_active(pool, FALSE));
    gst_object_unref(pool);
    gst_caps_unref(caps);
    printf("C API ok\n");
    return 0;
}
