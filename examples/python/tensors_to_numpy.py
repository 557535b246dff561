#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pull tensors from appsink and read them with numpy, without copying them.

Every buffer edgetensor produces carries a GstEdgeTensorMeta. Through GObject introspection
(GstEdgeTensor-1.0.typelib) its accessors give the tensor's shape, strides in bytes, dtype, fd,
identity and colorimetry, so a numpy array can be laid over the mapped buffer:
numpy.ndarray(shape, dtype, buffer=map.data, offset=offset, strides=strides) copies nothing and
is valid while the buffer stays mapped (inside the `with buffer.map(...)` block).

    python3 examples/python/tensors_to_numpy.py [--frames N] [PIPELINE]

PIPELINE is a gst-launch-1.0 description ending in "appsink name=sink" (default: a test
pattern converted to a 224x224 float32 CHW tensor). From a build tree, `meson devenv -C build`
sets GST_PLUGIN_PATH, GI_TYPELIB_PATH and LD_LIBRARY_PATH; installed, nothing is needed.

Needs Debian's python3-gi, python3-gst-1.0 (its overrides map a buffer as a memoryview),
gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0 and python3-numpy.
"""

import argparse
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
gi.require_version("GstEdgeTensor", "1.0")
from gi.repository import GstApp, GstEdgeTensor, Gst  # noqa: E402,F401  (GstApp: appsink)

import numpy as np  # noqa: E402

DEFAULT_PIPELINE = (
    "tensortestsrc num-buffers=3 ! video/x-raw,format=NV12,width=640,height=360 ! "
    "tensorconvert width=224 height=224 letterbox=true dtype=float32 layout=chw std=255 ! "
    "appsink name=sink"
)


def tensor_view(buffer, meta, mapinfo):
    """A numpy array over the mapped bytes of the tensor `meta` describes (no copy)."""
    offset = meta.get_offset(buffer)
    if offset < 0:
        raise RuntimeError("the meta does not describe this buffer's memory")
    return np.ndarray(
        shape=tuple(meta.get_shape()),
        dtype=np.dtype(meta.get_dtype_name()),
        buffer=mapinfo.data,
        offset=offset,
        strides=tuple(meta.get_strides()),
    )


def describe(meta):
    return (
        f"shape {list(meta.get_shape())} strides {list(meta.get_strides())} bytes, "
        f"dtype {meta.get_dtype_name()}, element format {meta.get_element_format()}, "
        f"memory {meta.get_memory_kind().value_nick} fd {meta.get_fd()}, "
        f"identity {meta.get_identity()}, colorimetry {meta.get_colorimetry()}, "
        f"applied colorimetry {meta.get_applied_colorimetry()}"
    )


def check(view, n, args):
    """The optional checks the tests use: fail loudly, naming what differs."""
    if args.expect_shape and list(view.shape) != args.expect_shape:
        raise SystemExit(f"frame {n}: shape {list(view.shape)}, expected {args.expect_shape}")
    if args.expect_frame_counter and not (view == n % 256).all():
        raise SystemExit(f"frame {n}: not every element is {n % 256}: {view.reshape(-1)[:8]}")
    if args.expect_value is not None and not np.allclose(view, args.expect_value, atol=1e-3):
        raise SystemExit(
            f"frame {n}: values {float(view.min())}..{float(view.max())}, "
            f"expected {args.expect_value}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline", nargs="?", default=DEFAULT_PIPELINE)
    parser.add_argument("--frames", type=int, default=0, help="stop after N frames (0: at EOS)")
    parser.add_argument("--expect-shape", type=lambda s: [int(d) for d in s.split(",")])
    parser.add_argument("--expect-frame-counter", action="store_true",
                        help="every element of frame n must be n %% 256 (pattern=frame-counter)")
    parser.add_argument("--expect-value", type=float, help="every element must be this value")
    args = parser.parse_args()

    Gst.init(None)
    pipeline = Gst.parse_launch(args.pipeline)
    sink = pipeline.get_by_name("sink")
    if sink is None:
        raise SystemExit('the pipeline needs an "appsink name=sink"')
    sink.set_property("sync", False)
    pipeline.set_state(Gst.State.PLAYING)

    frames = 0
    try:
        while not args.frames or frames < args.frames:
            sample = sink.try_pull_sample(10 * Gst.SECOND)
            if sample is None:
                break
            buffer = sample.get_buffer()
            meta = GstEdgeTensor.buffer_get_edge_tensor_meta(buffer)
            if meta is None:
                raise SystemExit(f"frame {frames}: the buffer carries no GstEdgeTensorMeta")
            print(f"frame {frames}: {describe(meta)}")
            with buffer.map(Gst.MapFlags.READ) as mapinfo:
                view = tensor_view(buffer, meta, mapinfo)
                # Zero-copy: the array's bytes are the mapped buffer's bytes.
                if not np.shares_memory(view, np.frombuffer(mapinfo.data, dtype=np.uint8)):
                    raise SystemExit("the numpy view is not over the mapped buffer")
                flat = view.reshape(-1) if view.flags.c_contiguous else view.ravel()
                print(
                    f"  numpy {view.dtype}{list(view.shape)}: first {flat[:4].tolist()}, "
                    f"min {float(view.min()):.4g} max {float(view.max()):.4g} "
                    f"mean {float(view.mean()):.4g}"
                )
                check(view, frames, args)
                del view, flat
            frames += 1
        msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
        if msg is not None:
            err, debug = msg.parse_error()
            raise SystemExit(f"pipeline error: {err.message} ({debug})")
    finally:
        pipeline.set_state(Gst.State.NULL)
    if frames == 0:
        raise SystemExit("no tensor reached appsink")
    print(f"{frames} tensors read through numpy without a copy")


if __name__ == "__main__":
    sys.exit(main())
