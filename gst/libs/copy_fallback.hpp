// SPDX-License-Identifier: MIT
//
// The copy fallback of the elements that pass fd memory on (tensorimport, tensoripcsink):
// "zero-copy is the default and copies are loud". A buffer that cannot go on as it is, is
// refused (copy-mode=never: an element error naming the upstream element and the reason) or
// copied into a buffer of a lazily made edgetensor pool (auto: counted, warned once per
// start). Element helpers, compiled into the plugin; not installed.

#pragma once

#include "glib_raii.hpp"
#include "pool_negotiation.hpp"
#include "stream_layout.hpp"

#include <gst/gst.h>

#include <atomic>
#include <mutex>
#include <string>

namespace edgetensor::gst
{

/// The copy-mode property's values (GstTensorImportCopyMode and GstTensorIpcSinkCopyMode share
/// them: 0 = auto, 1 = never).
enum class CopyMode { Auto = 0, Never = 1 };

/// How an element speaks of what it does with fd memory, and the pool it copies into.
struct CopyPolicy {
    const char* action = "import";    ///< "Cannot import a buffer from upstream element ..."
    const char* acting = "importing"; ///< "Copying frames: importing a buffer ... failed"
    const char* done = "imported";    ///< "... which cannot be imported without a copy"
    const char* offer = "the pool it proposes"; ///< "... or have upstream use <offer>."
    PoolPolicy pool;
};

/// Why a buffer cannot go on as it is.
struct Unusable {
    std::string sent;    ///< what arrived: `memory of type "SystemMemory"`, a memory layout
    std::string why;     ///< the reason, in detail
    bool failed = false; ///< a system call failed: not the memory's fault
};

class CopyFallback
{
public:
    explicit CopyFallback(CopyPolicy policy) : policy_(std::move(policy)) {}
    CopyFallback(const CopyFallback&) = delete;
    CopyFallback& operator=(const CopyFallback&) = delete;

    /// A new run (the element's start): no copies counted, the next one warns again.
    void start();
    /// Deactivates the pool unless it was made for `caps` (null: stop; always deactivated).
    void retire_pool_unless(const GstCaps* caps);
    /// Frames copied since start().
    guint64 copies() const noexcept { return copies_.load(); }

    /// `inbuf` (a frame of `layout`; null before caps) cannot go on as it is (`what`). Never:
    /// posts the element error and returns GST_FLOW_ERROR. Auto: warns once, copies the frame
    /// into a pooled buffer (`out`, owned by the caller; its metadata is the caller's to copy),
    /// counts it. Failures post their element error.
    GstFlowReturn copy(GstElement* element, CopyMode mode, const StreamLayoutPtr& layout,
                       const Unusable& what, GstBuffer* inbuf, GstBuffer** out);

private:
    GstFlowReturn refuse(GstElement* element, const std::string& upstream, const Unusable& what);
    void warn_once(GstElement* element, const std::string& upstream, const Unusable& what);
    GstObjectPtr<GstBufferPool> pool_for(GstElement* element, const StreamLayoutPtr& layout,
                                         GstFlowReturn* ret);

    const CopyPolicy policy_;
    std::mutex mu_; // pool_, pool_caps_, warned_
    GstObjectPtr<GstBufferPool> pool_;
    MiniObjectPtr<GstCaps> pool_caps_;
    bool warned_ = false;
    std::atomic<guint64> copies_{0};
};

/// "v4l2src0": the element upstream of `element`'s "sink" pad, or a description of the peer
/// when it has no element.
std::string upstream_name(GstElement* element);

/// Copies the frame in `src` into `dst` (a pooled buffer of the same `layout`): every plane's
/// rows (copy_video_frame()) or the tensor's bytes wherever its memories hold them. False when
/// either cannot be mapped or `dst` is too small.
bool copy_frame(GstBuffer* dst, GstBuffer* src, const StreamLayout& layout);

} // namespace edgetensor::gst
