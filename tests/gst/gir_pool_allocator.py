#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The pool and allocator through GObject introspection, as a PyGObject camera app uses them:
constructors, config setters and getters, the memory kind the pool resolved, and the meta of
the buffers it hands out. Exits non-zero naming the first thing that differs."""

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


# The pool: new, configured for shared memory and write access, 64-byte rows asked for.
pool = ET.EdgeTensorBufferPool.new()
check(isinstance(pool, ET.EdgeTensorBufferPool), "EdgeTensorBufferPool.new() gives the pool type")
caps = Gst.Caps.from_string("video/x-raw,format=RGB,width=321,height=10,colorimetry=sRGB")
config = pool.get_config()
Gst.BufferPool.config_set_params(config, caps, 0, 2, 2)
ET.EdgeTensorBufferPool.config_set_memory_kind(config, ET.EdgeTensorMemoryKind.SHM)
ET.EdgeTensorBufferPool.config_set_cpu_access(config, ET.EdgeTensorCpuAccess.WRITE)
Gst.BufferPool.config_add_option(config, "GstBufferPoolOptionVideoMeta")
check(ET.EdgeTensorBufferPool.config_get_memory_kind(config) == ET.EdgeTensorMemoryKind.SHM,
      "config_get_memory_kind reads back SHM")
check(ET.EdgeTensorBufferPool.config_get_cpu_access(config) == ET.EdgeTensorCpuAccess.WRITE,
      "config_get_cpu_access reads back WRITE")
if not pool.set_config(config):
    check(pool.set_config(pool.get_config()), "the corrected config is accepted")
check(ET.EdgeTensorBufferPool.get_memory_kind(pool) == ET.EdgeTensorMemoryKind.SHM,
      "the pool resolved SHM")
check(pool.set_active(True), "the pool activates")
ret, buf = pool.acquire_buffer(None)
check(ret == Gst.FlowReturn.OK and buf is not None, "a buffer is acquired")
meta = ET.buffer_get_edge_tensor_meta(buf)
check(meta is not None, "the buffer carries a GstEdgeTensorMeta")
check(meta.get_memory_kind() == ET.EdgeTensorMemoryKind.SHM, "meta memory kind SHM")
check(meta.get_element_format() == "RGB", "meta element format RGB")
check(meta.get_dtype_name() == "uint8", "meta dtype uint8")
check(list(meta.get_shape()) == [10, 321, 3], "meta shape [10, 321, 3]")
check(list(meta.get_strides()) == [964, 3, 1],
      "shared memory keeps GStreamer's default pitch (963 rounded up to 4)")
check(meta.get_colorimetry() == "sRGB", "meta colorimetry from the caps: sRGB")
check(meta.get_applied_colorimetry() is None, "no conversion: no applied colorimetry")
check(meta.get_fd() >= 0, "meta fd is the memory's")
mem = buf.peek_memory(0)
check(ET.is_edge_tensor_memory(mem), "is_edge_tensor_memory(buffer memory)")
check(ET.edge_tensor_memory_get_identity(mem) == meta.get_identity(),
      "memory identity equals the meta's")
check(ET.edge_tensor_memory_get_fd(mem) == meta.get_fd(), "memory fd equals the meta's handle")
check(meta.get_offset(buf) == 0, "the tensor starts the mapped buffer")
buf = None
pool.set_active(False)

# The allocators: the shared one (registered as "edgetensor") and a private SHM one.
shared = ET.EdgeTensorAllocator.get()
check(isinstance(shared, ET.EdgeTensorAllocator), "EdgeTensorAllocator.get()")
check(Gst.Allocator.find("edgetensor") == shared, 'registered as "edgetensor"')
private = ET.EdgeTensorAllocator.new(ET.EdgeTensorMemoryKind.SHM)
# Gst.Allocator's alloc (GstDmaBufAllocator's static alloc(fd, size) shadows the name).
mem = Gst.Allocator.alloc(private, 4096, None)
check(mem is not None and ET.is_edge_tensor_memory(mem), "a private SHM allocator's memory")
check(ET.edge_tensor_memory_get_kind(mem) == ET.EdgeTensorMemoryKind.SHM, "its kind is SHM")
check(ET.edge_tensor_memory_get_fd(mem) >= 0, "it has an fd")
shm = ET.EdgeTensorAllocator.get_shm_allocator(private)
check(shm is not None and mem.allocator == shm, "the memory belongs to the SHM sibling")
print("pool and allocator reachable through GObject introspection")
