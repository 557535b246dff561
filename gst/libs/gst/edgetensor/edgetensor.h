/* SPDX-License-Identifier: MIT */
/*
 * libgstedgetensor-1.0: the GStreamer face of edgetensor for applications and elements.
 * Plain C; link with `pkg-config --cflags --libs gstreamer-edgetensor-1.0`.
 * C++ code can reach the tensor behind a memory through <gst/edgetensor/edgetensor.hpp>.
 */

#ifndef GST_EDGE_TENSOR_H
#define GST_EDGE_TENSOR_H

#include <gst/edgetensor/edgetensor-prelude.h>
#include <gst/edgetensor/gstedgetensorallocator.h>
#include <gst/edgetensor/gstedgetensorbatchmeta.h>
#include <gst/edgetensor/gstedgetensorbufferpool.h>
#include <gst/edgetensor/gstedgetensorimportcache.h>
#include <gst/edgetensor/gstedgetensormeta.h>
#include <gst/edgetensor/gstedgetensorstats.h>

#endif /* GST_EDGE_TENSOR_H */
