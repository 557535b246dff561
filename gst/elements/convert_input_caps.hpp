// SPDX-License-Identifier: MIT
//
// What the conversion engine reads, as caps: the one list tensorconvert's and tensorbatch's sink
// templates (and their messages) spell, so that a format the engine learns is offered by both.

#pragma once

// Every format the engine reads (GStreamer spelling, as convert_format_from_name() takes it).
#define EDGETENSOR_CONVERT_SINK_FORMATS                                                            \
    "{ NV12, NV21, NV16, NV24, I420, YUY2, UYVY, VYUY, RGB, BGR, RGBA, BGRA, RGBx, BGRx, "         \
    "GRAY8, RGBP }"
// Any size the engine takes, per side.
#define EDGETENSOR_CONVERT_SIZE_RANGE "(int) [ 1, 16384 ]"
