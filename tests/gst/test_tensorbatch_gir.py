#!/ usr / bin / env python3
#SPDX - License - Identifier : MIT
"""tensorbatch's provenance and the quantization record through GObject introspection, as a
PyGObject consumer reads them: GstEdgeTensorBatchMeta (slots, their fields, the mapping of a box
back to its frame) and GstEdgeTensorMeta.get_quantization(). Exits non-zero naming the first
thing that differs."""

import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstEdgeTensor", "1.0")
from gi.repository import GstEdgeTensor, Gst  # noqa: E402

Gst.init(None)
GstEdgeTensor.edge_tensor_init()
ET = GstEdgeTensor


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)


def first_buffer(launch):
    pipeline = Gst.parse_launch(launch)
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    sample = sink.emit("try-pull-sample", 20 * Gst.SECOND)
    pipeline.set_state(Gst.State.NULL)
    check(sample is not None, "a buffer from: " + launch)
    return sample.get_buffer()

#Two streams of different sizes, letterboxed into 64x64 slots of a batch of three.
buf = first_buffer(
    "tensorbatch name=b batch-size=3 width=64 height=64 letterbox=true dtype=int8 "
    "quant-scale=0.5 quant-zero-point=-3 ! appsink name=sink "
    "tensortestsrc num-buffers=2 ! video/x-raw,format=NV12,width=128,height=64 ! b.sink_0 "
    "tensortestsrc num-buffers=2 ! video/x-raw,format=RGB,width=32,height=64 ! b.sink_1")
meta = ET.buffer_get_edge_tensor_batch_meta(buf)
check(meta is not None, "the batch carries a GstEdgeTensorBatchMeta")
check(meta.get_n_slots() == 3, "three slots")
s0, s1, s2 = (meta.get_slot(i) for i in range(3))
check(meta.get_slot(3) is None, "no fourth slot")
check(s0.filled and s1.filled and not s2.filled, "two filled slots, the third empty")
check((s0.pad_index, s1.pad_index) == (0, 1), "pad indices 0 and 1")
check((s0.source_width, s0.source_height) == (128, 64), "slot 0 came from a 128x64 frame")
check((s1.source_width, s1.source_height) == (32, 64), "slot 1 came from a 32x64 frame")
check(s0.pad_top == 16 and s0.pad_left == 0, "slot 0: 16 padding rows above (2:1 into 1:1)")
check(s1.pad_left == 16 and s1.pad_top == 0, "slot 1: 16 padding columns left (1:2 into 1:1)")
check(s0.roi_id == -1 and s0.get_roi_label() is None, "whole frames have no region")
ok, x, y = s0.to_source(32.0, 32.0)
check(ok and abs(x - 64.0) < 1e-9 and abs(y - 32.0) < 1e-9,
      "the slot's centre maps to the frame's centre (64, 32)")
ok, x, y, w, h = s1.box_to_source(16.0, 0.0, 32.0, 64.0)
check(ok and (x, y, w, h) == (0.0, 0.0, 32.0, 64.0), "slot 1's picture maps to its whole frame")
ok, *_ = s2.to_source(1.0, 1.0)
check(not ok, "an empty slot maps nothing")
tmeta = ET.buffer_get_edge_tensor_meta(buf)
check(list(tmeta.get_shape()) == [3, 64, 64, 3], "the tensor meta's shape is [3, 64, 64, 3]")
quantized, scale, zero_point = tmeta.get_quantization()
check(quantized and scale == 0.5 and zero_point == -3, "quantized with scale 0.5, zero point -3")

#tensorconvert : a batch of one.
buf = first_buffer(
    "tensortestsrc num-buffers=1 ! video/x-raw,format=NV12,width=100,height=50 ! "
    "tensorconvert width=50 height=50 letterbox=true ! appsink name=sink")
meta = ET.buffer_get_edge_tensor_batch_meta(buf)
check(meta is not None and meta.get_n_slots() == 1, "tensorconvert's output is a batch of one")
slot = meta.get_slot(0)
check(slot.filled and slot.pad_top == 12 and abs(slot.scale_y - 0.5) < 1e-9,
      "its slot says the letterbox (12 rows above, scale 0.5)")
check(not ET.buffer_get_edge_tensor_meta(buf).get_quantization()[0], "not quantized")
print("PASS")
