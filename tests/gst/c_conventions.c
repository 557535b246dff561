/* SPDX-License-Identifier: MIT */
/*
 * What a C consumer reads with the C headers alone (built as C11, no C++ header anywhere):
 * a descriptor's colorimetry decoded with the EDGETENSOR_COLOR_* / EDGETENSOR_COLORIMETRY_*
 * macros of edgetensor/tensor_desc.h — from a pool buffer whose caps state it and from
 * tensorconvert's output, which records what it applied — and tensorimport's stats message
 * read through the GST_EDGE_TENSOR_STATS_* names of gst/edgetensor/gstedgetensorstats.h.
 */

#include <edgetensor/tensor_desc.h>
#include <gst/check/gstharness.h>
#include <gst/edgetensor/edgetensor.h>

#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static const char* primaries_name(uint32_t c)
{
    switch (EDGETENSOR_COLORIMETRY_PRIMARIES(c)) {
    case EDGETENSOR_COLOR_PRIMARIES_UNSPECIFIED:
        return "unspecified";
    case EDGETENSOR_COLOR_PRIMARIES_BT709:
        return "bt709";
    case EDGETENSOR_COLOR_PRIMARIES_BT2020:
        return "bt2020";
    case EDGETENSOR_COLOR_PRIMARIES_SRGB:
        return "srgb";
    case EDGETENSOR_COLOR_PRIMARIES_SMPTE170M:
        return "smpte170m";
    }
    return "unknown";
}

static void print_colorimetry(const char* what, uint32_t c)
{
    printf("%s: primaries %s, transfer %u, matrix %u, range %u\n", what, primaries_name(c),
           (unsigned)EDGETENSOR_COLORIMETRY_TRANSFER(c), (unsigned)EDGETENSOR_COLORIMETRY_MATRIX(c),
           (unsigned)EDGETENSOR_COLORIMETRY_RANGE(c));
}

/* A pool buffer of caps that state bt709: the descriptor carries exactly that. */
static int pool_descriptor(void)
{
    GstBufferPool* pool = gst_edge_tensor_buffer_pool_new();
    GstCaps* caps =
        gst_caps_from_string("video/x-raw,format=NV12,width=64,height=32,colorimetry=bt709");
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, 0, 1, 1);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool, config))
        CHECK(gst_buffer_pool_set_config(pool, gst_buffer_pool_get_config(pool)));
    CHECK(gst_buffer_pool_set_active(pool, TRUE));
    GstBuffer* buf = NULL;
    CHECK(gst_buffer_pool_acquire_buffer(pool, &buf, NULL) == GST_FLOW_OK);
    const GstEdgeTensorMeta* meta = gst_buffer_get_edge_tensor_meta(buf);
    CHECK(meta != NULL);
    CHECK(meta->desc.version == EDGETENSOR_DESC_VERSION);
    const uint32_t c = meta->desc.colorimetry;
    print_colorimetry("pool NV12 bt709", c);
    CHECK(EDGETENSOR_COLORIMETRY_PRIMARIES(c) == EDGETENSOR_COLOR_PRIMARIES_BT709);
    CHECK(EDGETENSOR_COLORIMETRY_TRANSFER(c) == EDGETENSOR_COLOR_TRANSFER_BT709);
    CHECK(EDGETENSOR_COLORIMETRY_MATRIX(c) == EDGETENSOR_COLOR_MATRIX_BT709);
    CHECK(EDGETENSOR_COLORIMETRY_RANGE(c) == EDGETENSOR_COLOR_RANGE_LIMITED);
    CHECK(c == EDGETENSOR_COLORIMETRY_PACK(
                   EDGETENSOR_COLOR_PRIMARIES_BT709, EDGETENSOR_COLOR_TRANSFER_BT709,
                   EDGETENSOR_COLOR_MATRIX_BT709, EDGETENSOR_COLOR_RANGE_LIMITED));
    gst_buffer_unref(buf);
    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
    gst_caps_unref(caps);
    return 0;
}

/* tensorconvert from an unlabelled SD frame: the applied colorimetry (BT.601 limited, the
 * SMPTE 170M primaries GStreamer assumes for it) and the output's values (full range, no
 * matrix), both in the meta. */
static int convert_descriptor(void)
{
    GstHarness* h = gst_harness_new_parse("tensorconvert width=32 height=24");
    gst_harness_set_src_caps_str(h, "video/x-raw,format=NV12,width=64,height=48,framerate=30/1");
    gst_harness_set_sink_caps_str(h, "other/tensors");
    GstBuffer* in = gst_buffer_new_allocate(NULL, 64 * 48 * 3 / 2, NULL);
    gst_buffer_memset(in, 0, 128, 64 * 48 * 3 / 2);
    CHECK(gst_harness_push(h, in) == GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(h);
    CHECK(out != NULL);
    const GstEdgeTensorMeta* meta = gst_buffer_get_edge_tensor_meta(out);
    CHECK(meta != NULL);
    const uint32_t applied = meta->applied_colorimetry;
    print_colorimetry("tensorconvert applied", applied);
    CHECK(EDGETENSOR_COLORIMETRY_MATRIX(applied) == EDGETENSOR_COLOR_MATRIX_BT601);
    CHECK(EDGETENSOR_COLORIMETRY_RANGE(applied) == EDGETENSOR_COLOR_RANGE_LIMITED);
    CHECK(EDGETENSOR_COLORIMETRY_TRANSFER(applied) == EDGETENSOR_COLOR_TRANSFER_BT709);
    CHECK(EDGETENSOR_COLORIMETRY_PRIMARIES(applied) == EDGETENSOR_COLOR_PRIMARIES_SMPTE170M);
    const uint32_t values = meta->desc.colorimetry;
    print_colorimetry("tensorconvert output", values);
    CHECK(EDGETENSOR_COLORIMETRY_MATRIX(values) == EDGETENSOR_COLOR_MATRIX_UNSPECIFIED);
    CHECK(EDGETENSOR_COLORIMETRY_RANGE(values) == EDGETENSOR_COLOR_RANGE_FULL);
    CHECK(EDGETENSOR_COLORIMETRY_TRANSFER(values) == EDGETENSOR_COLOR_TRANSFER_BT709);
    CHECK(meta->desc.dtype == EDGETENSOR_DTYPE_U8);
    CHECK(meta->desc.ndim == 4 && meta->desc.shape[1] == 24 && meta->desc.shape[2] == 32);
    gst_buffer_unref(out);
    gst_harness_teardown(h);
    return 0;
}

/* tensorimport's stats at EOS, every field by its macro. */
static int stats_message(void)
{
    GstHarness* h = gst_harness_new("tensorimport");
    GstBus* bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    gst_harness_add_src_parse(h, "tensortestsrc", FALSE);
    gst_harness_set_sink_caps_str(h->src_harness,
                                  "video/x-raw,format=RGBA,width=32,height=8,framerate=30/1");
    gst_harness_play(h->src_harness);
    for (int n = 0; n < 6; ++n) {
        CHECK(gst_harness_push_from_src(h) == GST_FLOW_OK);
        gst_buffer_unref(gst_harness_pull(h));
    }
    CHECK(gst_harness_push_event(h, gst_event_new_eos()));
    GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT);
    CHECK(msg != NULL);
    const GstStructure* s = gst_message_get_structure(msg);
    CHECK(gst_structure_has_name(s, GST_EDGE_TENSOR_STATS_NAME));
    guint64 hits = 0, misses = 0, frames = 0, copies = 99, evictions = 99, invalidations = 99,
            failed = 99;
    guint entries = 0, peak = 0, max = 0;
    gboolean zero_copy = FALSE;
    CHECK(gst_structure_get_uint64(s, GST_EDGE_TENSOR_STATS_HITS, &hits));
    CHECK(gst_structure_get_uint64(s, GST_EDGE_TENSOR_STATS_MISSES, &misses));
    CHECK(gst_structure_get_uint64(s, GST_EDGE_TENSOR_STATS_EVICTIONS, &evictions));
    CHECK(gst_structure_get_uint64(s, GST_EDGE_TENSOR_STATS_INVALIDATIONS, &invalidations));
    CHECK(gst_structure_get_uint64(s, GST_EDGE_TENSOR_STATS_FAILED_IMPORTS, &failed));
    CHECK(gst_structure_get_uint(s, GST_EDGE_TENSOR_STATS_ENTRIES, &entries));
    CHECK(gst_structure_get_uint(s, GST_EDGE_TENSOR_STATS_PEAK_ENTRIES, &peak));
    CHECK(gst_structure_get_uint(s, GST_EDGE_TENSOR_STATS_MAX_ENTRIES, &max));
    CHECK(gst_structure_get_string(s, GST_EDGE_TENSOR_STATS_LAST_FAILURE) != NULL);
    CHECK(gst_structure_has_field_typed(s, GST_EDGE_TENSOR_STATS_FAILURES, GST_TYPE_STRUCTURE));
    CHECK(gst_structure_has_field_typed(s, GST_EDGE_TENSOR_STATS_INODES, GST_TYPE_ARRAY));
    CHECK(gst_structure_get_uint64(s, GST_EDGE_TENSOR_STATS_FRAMES, &frames));
    CHECK(gst_structure_get_uint64(s, GST_EDGE_TENSOR_STATS_COPIES, &copies));
    CHECK(gst_structure_get_boolean(s, GST_EDGE_TENSOR_STATS_ZERO_COPY, &zero_copy));
    printf("stats: %" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " hits, %" G_GUINT64_FORMAT
           " misses, %u entries, %" G_GUINT64_FORMAT " copies\n",
           frames, hits, misses, entries, copies);
    CHECK(frames == 6 && hits + misses == 6 && misses >= 1 && copies == 0 && zero_copy);
    CHECK(entries == misses && peak >= entries && max == GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE);
    CHECK(evictions == 0 && invalidations == 0 && failed == 0);
    gst_message_unref(msg);
    gst_harness_teardown(h);
    gst_bus_set_flushing(bus, TRUE);
    gst_object_unref(bus);
    return 0;
}

int main(int argc, char** argv)
{
    gst_init(&argc, &argv);
    gst_edge_tensor_init();
    if (pool_descriptor() || convert_descriptor() || stats_message())
        return 1;
    printf("decoded with the C headers alone\n");
    return 0;
}
