// SPDX-License-Identifier: MIT
//
// GStreamer's analysis metas across tensoripcsink/tensoripcsrc (docs/ipc.md, "Metas with the
// frame"): the sink turns a buffer's GstTensorMeta (GStreamer 1.26+) and
// GstAnalyticsRelationMeta (1.24+) into the FRAME's meta section and meta fds; the source
// attaches them again to the buffer it rebuilds. Where this GStreamer lacks a meta (or the
// build lacks the analytics library) the sink sends nothing of it and the source drops it.
// tensorbatch's per-slot provenance (GstEdgeTensorBatchMeta) goes the same way on every version.

#pragma once

#include "glib_raii.hpp"
#include "ipc_connection.hpp"
#include "ipc_meta.hpp"
#include "ipc_wire.hpp"

#include <edgetensor/unique_fd.hpp>

#include <gst/gst.h>

#include <memory>
#include <string>
#include <vector>

namespace edgetensor::gst::tensoripc
{

/// Whether this build carries GStreamer's tensor meta and analytics relation meta.
bool carries_tensor_meta() noexcept;
bool carries_analytics_meta() noexcept;

/// A buffer's metas ready to send.
struct OutgoingMetas {
    std::vector<uint8_t> section; ///< ipc::encode_metas(); empty: the buffer has none to send
    std::vector<int> fds;         ///< meta fds, borrowed from the buffer's tensors or `blob`
    UniqueFd blob;                ///< tensor bytes without a passable fd of their own, copied
    std::string skipped;          ///< what was left out and why (empty: nothing), for a log
};

/// The metas of `buffer` that travel. Tensors whose data is one DMA-BUF or sealed-memfd memory
/// travel as that fd (zero-copy: the buffer, kept alive until released, keeps them); the rest
/// are copied into `blob`. Metadata the protocol does not carry is left out, as is everything
/// when it would not fit a record (said in `skipped`). Errors: only system failures making the
/// blob (Io).
Result<OutgoingMetas> collect_metas(GstBuffer* buffer);

/// Attaches `frame`'s metas to `buffer` (writable): one memory per meta fd (adopting it,
/// read-only, holding `release`, so the sender keeps a tensor's bytes until the last of them is
/// gone), a GstTensor over a window of it per tensor. False, with `why`, when a meta cannot be
/// rebuilt here (a tensor type or a meta this GStreamer lacks): the rest still is.
bool attach_metas(GstBuffer* buffer, ipc::Frame& frame,
                  const std::shared_ptr<ipc::FrameRelease>& release, GstAllocator* dmabuf_alloc,
                  GstAllocator* fd_alloc, std::string* why);

} // namespace edgetensor::gst::tensoripc
