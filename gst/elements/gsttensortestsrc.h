// SPDX-License-Identifier: MIT
//
// tensortestsrc: a live-capable source of patterned video/x-raw or other/tensors frames in
// edgetensor pool buffers (DMA-BUF where the host has it).

#pragma once

#include <gst/base/gstpushsrc.h>
#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_TEST_SRC (gst_tensor_test_src_get_type())
G_DECLARE_FINAL_TYPE(GstTensorTestSrc, gst_tensor_test_src, GST, TENSOR_TEST_SRC, GstPushSrc)

/**
 * GstTensorTestSrcPattern:
 * @GST_TENSOR_TEST_SRC_GRADIENT: a horizontal colour ramp that scrolls one pixel per frame
 * @GST_TENSOR_TEST_SRC_CHECKERS: 8x8 black and white squares
 * @GST_TENSOR_TEST_SRC_BLACK: solid black
 * @GST_TENSOR_TEST_SRC_WHITE: solid white
 * @GST_TENSOR_TEST_SRC_FRAME_COUNTER: every byte of frame n holds n modulo 256 (for tests)
 */
typedef enum {
    GST_TENSOR_TEST_SRC_GRADIENT = 0,
    GST_TENSOR_TEST_SRC_CHECKERS = 1,
    GST_TENSOR_TEST_SRC_BLACK = 2,
    GST_TENSOR_TEST_SRC_WHITE = 3,
    GST_TENSOR_TEST_SRC_FRAME_COUNTER = 4,
} GstTensorTestSrcPattern;

#define GST_TYPE_TENSOR_TEST_SRC_PATTERN (gst_tensor_test_src_pattern_get_type())
GType gst_tensor_test_src_pattern_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(tensortestsrc);

G_END_DECLS
