/* SPDX-License-Identifier: MIT */
/*
 * camera-pool: how a camera application uses the edgetensor buffer pool from plain C.
 *
 * It creates a GstEdgeTensorBufferPool for 1920x1080 NV12, asks for GstVideoMeta and video
 * alignment (so every plane gets a 64-byte-aligned stride an NPU or GPU can import), then
 * acquires and releases buffers the way a capture loop would, printing for each frame the
 * DMA-BUF fd, its inode, the plane strides and the tensor identity. The output shows the pool
 * recycling: the same few identities and inodes come back frame after frame, so a consumer
 * that caches imports by (st_dev, st_ino) imports each buffer once.
 *
 *   cc camera-pool.c $(pkg-config --cflags --libs gstreamer-edgetensor-1.0) -o camera-pool
 *   ./camera-pool [--frames N]
 *
 * Exits 1 if the pool did not recycle (more distinct tensors than buffers).
 */

#include <gst/edgetensor/edgetensor.h>
#include <gst/video/gstvideopool.h>
#include <gst/video/video.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_BUFFERS 4
#define MAX_FRAMES 1000

static const char* kind_name(GstEdgeTensorMemoryKind kind)
{
    switch (kind) {
    case GST_EDGE_TENSOR_MEMORY_DMA:
        return "dma-buf";
    case GST_EDGE_TENSOR_MEMORY_SHM:
        return "shm";
    case GST_EDGE_TENSOR_MEMORY_SYSTEM:
        return "heap";
    default:
        return "?";
    }
}

static guint count_distinct(const guint64* v, guint n)
{
    guint distinct = 0;
    for (guint i = 0; i < n; ++i) {
        gboolean seen = FALSE;
        for (guint j = 0; j < i && !seen; ++j)
            seen = v[j] == v[i];
        if (!seen)
            distinct++;
    }
    return distinct;
}

int main(int argc, char** argv)
{
    guint frames = 12;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
            frames = (guint)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [--frames N]  (N from 1 to %d)\n", argv[0], MAX_FRAMES);
            return 2;
        }
    }
    if (frames == 0 || frames > MAX_FRAMES) {
        fprintf(stderr, "--frames must be 1 to %d\n", MAX_FRAMES);
        return 2;
    }

    gst_init(&argc, &argv);

    GstBufferPool* pool = gst_edge_tensor_buffer_pool_new();
    GstCaps* caps = gst_caps_from_string("video/x-raw, format=NV12, width=1920, height=1080, "
                                         "framerate=30/1, colorimetry=bt709");

    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, 0, POOL_BUFFERS, POOL_BUFFERS);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
    GstVideoAlignment align;
    gst_video_alignment_reset(&align);
    gst_buffer_pool_config_set_video_alignment(config, &align);
    /* The camera writes the frames; the CPU only touches them in this demo. */
    gst_edge_tensor_buffer_pool_config_set_cpu_access(config, GST_EDGE_TENSOR_CPU_ACCESS_WRITE);

    if (!gst_buffer_pool_set_config(pool, config)) {
        /* GStreamer convention: FALSE means the pool corrected the config; check and accept. */
        config = gst_buffer_pool_get_config(pool);
        if (!gst_buffer_pool_config_validate_params(config, caps, 0, POOL_BUFFERS, POOL_BUFFERS) ||
            !gst_buffer_pool_set_config(pool, config)) {
            fprintf(stderr, "the pool refused the configuration\n");
            return 1;
        }
        printf("the pool corrected the configuration; accepted\n");
    }
    if (!gst_buffer_pool_set_active(pool, TRUE)) {
        fprintf(stderr, "the pool could not allocate its buffers\n");
        return 1;
    }
    printf("pool: %d buffers of 1920x1080 NV12 in %s memory\n", POOL_BUFFERS,
           kind_name(gst_edge_tensor_buffer_pool_get_memory_kind(pool)));

    GstVideoInfo info;
    gst_video_info_from_caps(&info, caps);
    guint64 identities[MAX_FRAMES], inodes[MAX_FRAMES];
    guint n_inodes = 0;
    int rc = 0;

    for (guint n = 0; n < frames; ++n) {
        GstBuffer* buf = NULL;
        if (gst_buffer_pool_acquire_buffer(pool, &buf, NULL) != GST_FLOW_OK) {
            fprintf(stderr, "frame %u: acquire failed\n", n);
            rc = 1;
            break;
        }
        GstMemory* mem = gst_buffer_peek_memory(buf, 0);
        GstEdgeTensorMeta* meta = gst_buffer_get_edge_tensor_meta(buf);
        GstVideoMeta* vmeta = gst_buffer_get_video_meta(buf);
        if (!meta || !vmeta) {
            fprintf(stderr, "frame %u: a pooled buffer without its metas\n", n);
            rc = 1;
            gst_buffer_unref(buf);
            break;
        }

        /* "Capture": the camera would DMA into the buffer; we write a marker with the CPU. */
        GstVideoFrame frame;
        if (gst_video_frame_map(&frame, &info, buf, GST_MAP_WRITE)) {
            ((guint8*)GST_VIDEO_FRAME_PLANE_DATA(&frame, 0))[0] = (guint8)n;
            gst_video_frame_unmap(&frame);
        }

        const gint fd = gst_edge_tensor_memory_get_fd(mem); /* borrowed, owned by the memory */
        guint64 ino = 0;
        gboolean has_ino = gst_edge_tensor_memory_get_inode(mem, NULL, &ino);
        identities[n] = meta->identity;
        if (has_ino)
            inodes[n_inodes++] = ino;
        printf("frame %3u: identity %3" G_GUINT64_FORMAT "  fd %3d  inode %8" G_GUINT64_FORMAT
               "  %s  Y stride %d offset %zu  UV stride %d offset %zu%s\n",
               n, meta->identity, fd, ino, kind_name(meta->memory_kind), vmeta->stride[0],
               vmeta->offset[0], vmeta->stride[1], vmeta->offset[1],
               (meta->flags & GST_EDGE_TENSOR_META_FLAG_STRIDES_ALIGNED) ? "  (64-byte aligned)"
                                                                         : "");
        gst_buffer_unref(buf); /* back to the pool: the newest free tensor is handed out next */
    }

    if (rc == 0) {
        const guint ids = count_distinct(identities, frames);
        const guint inos = count_distinct(inodes, n_inodes);
        printf("%u frames used %u distinct tensors and %u distinct inodes (pool of %d): "
               "identities and inodes repeat\n",
               frames, ids, inos, POOL_BUFFERS);
        if (ids > POOL_BUFFERS || inos > POOL_BUFFERS || (frames > 0 && ids == 0)) {
            fprintf(stderr, "the pool did not recycle its tensors\n");
            rc = 1;
        }
    }

    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
    gst_caps_unref(caps);
    return rc;
}
