// SPDX-License-Identifier: MIT
//
// What the conversion engine reads and writes, as caps: the one spelling tensorconvert's and
// tensorbatch's pad templates (and their messages) use, so that a format the engine learns is
// offered by both.

#pragma once

// Every format the engine reads (GStreamer spelling, as convert_format_from_name() takes it).
#define EDGETENSOR_CONVERT_SINK_FORMATS                                                            \
    "{ NV12, NV21, NV16, NV24, I420, YUY2, UYVY, VYUY, RGB, BGR, RGBA, BGRA, RGBx, BGRx, "         \
    "GRAY8, RGBP }"
// Any size the engine takes, per side.
#define EDGETENSOR_CONVERT_SIZE_RANGE "(int) [ 1, 16384 ]"
// A frame the engine reads, any size it takes.
#define EDGETENSOR_CONVERT_SINK_CAPS                                                               \
    "video/x-raw, format = (string) " EDGETENSOR_CONVERT_SINK_FORMATS                              \
    ", width = " EDGETENSOR_CONVERT_SIZE_RANGE ", height = " EDGETENSOR_CONVERT_SIZE_RANGE         \
    ", framerate = (fraction) [ 0/1, 2147483647/1 ]"
// One tensor of a dtype the engine writes (dimensions fixed at negotiation).
#define EDGETENSOR_CONVERT_TENSOR_CAPS                                                             \
    "other/tensors, num_tensors = (int) 1, format = (string) static, "                             \
    "types = (string) { uint8, int8, float16, float32 }, "                                         \
    "framerate = (fraction) [ 0/1, 2147483647/1 ]"
