// SPDX-License-Identifier: MIT
//
// The copy fallback (copy_fallback.hpp).

#include "copy_fallback.hpp"

#include "frame_check.hpp"
#include "internal.hpp"
#include "pool_acquire.hpp"
#include "tensor_memories.hpp"

#include <gst/video/video.h>

#include <utility>

#define GST_CAT_DEFAULT gst_edge_tensor_pool_debug

namespace edgetensor::gst
{

std::string upstream_name(GstElement* element)
{
    GstObjectPtr<GstPad> sink(gst_element_get_static_pad(element, "sink"));
    GstObjectPtr<GstPad> peer(sink ? gst_pad_get_peer(sink.get()) : nullptr);
    if (!peer)
        return "(not linked)";
    GstObjectPtr<GstElement> parent(gst_pad_get_parent_element(peer.get()));
    if (parent)
        return GST_OBJECT_NAME(parent.get());
    return std::string("pad ") + GST_OBJECT_NAME(peer.get());
}

bool copy_frame(GstBuffer* dst, GstBuffer* src, const StreamLayout& layout)
{
    bool ok = false;
    if (layout.video) {
        GstVideoFrame in, o;
        if (gst_video_frame_map(&in, &layout.vinfo, src, GST_MAP_READ)) {
            if (gst_video_frame_map(&o, &layout.vinfo, dst, GST_MAP_WRITE)) {
                ok = copy_video_frame(&o, &in);
                gst_video_frame_unmap(&o);
            }
            gst_video_frame_unmap(&in);
        }
        return ok;
    }
    GstMapInfo o;
    if (gst_buffer_map(dst, &o, GST_MAP_WRITE)) {
        ok = copy_tensor_bytes(src, layout.frame_bytes, o.data, o.size);
        gst_buffer_unmap(dst, &o);
    }
    return ok;
}

void CopyFallback::start()
{
    copies_ = 0;
    std::lock_guard<std::mutex> lock(mu_);
    warned_ = false;
}

void CopyFallback::retire_pool_unless(const GstCaps* caps)
{
    GstObjectPtr<GstBufferPool> old;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (caps && pool_caps_ && gst_caps_is_equal(pool_caps_.get(), caps))
            return;
        old = std::move(pool_);
        pool_caps_.reset();
    }
    // Outside the lock: deactivating waits for nothing of ours, but may free tensors.
    if (old)
        gst_buffer_pool_set_active(old.get(), FALSE);
}

namespace
{

// Posts an element error or warning about a buffer that cannot go on as it is: a failed system
// call is a resource read error, memory that cannot be imported a stream format error.
void post(GstElement* element, GstMessageType type, bool failed, const std::string& text,
          const std::string& debug)
{
    GST_WARNING_OBJECT(element, "%s (%s)", text.c_str(), debug.c_str());
    gst_element_message_full(element, type, failed ? GST_RESOURCE_ERROR : GST_STREAM_ERROR,
                             failed ? gint(GST_RESOURCE_ERROR_READ) : gint(GST_STREAM_ERROR_FORMAT),
                             g_strdup(text.c_str()), g_strdup(debug.c_str()), __FILE__,
                             GST_FUNCTION, __LINE__);
}

} // namespace

GstFlowReturn CopyFallback::refuse(GstElement* element, const std::string& upstream,
                                   const Unusable& what)
{
    const std::string from = "upstream element \"" + upstream + "\"";
    // An import that failed (a system call said no) is not the memory's fault: say what failed.
    if (what.failed)
        post(element, GST_MESSAGE_ERROR, true,
             std::string("Cannot ") + policy_.action + " a buffer from " + from + ": " + what.why +
                 ".",
             what.sent + "; copy-mode is \"never\", so it is not copied either");
    else
        post(element, GST_MESSAGE_ERROR, false,
             "Upstream element \"" + upstream + "\" sends " + what.sent + ", which cannot be " +
                 policy_.done + " without a copy, and copy-mode is \"never\".",
             what.why +
                 ". Set copy-mode=auto to copy (every copy is counted), or have upstream "
                 "use " +
                 policy_.offer + ".");
    return GST_FLOW_ERROR;
}

void CopyFallback::warn_once(GstElement* element, const std::string& upstream, const Unusable& what)
{
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (std::exchange(warned_, true))
            return;
    }
    const std::string counted = "; every copy is counted (property \"copies\").";
    if (what.failed)
        post(element, GST_MESSAGE_WARNING, true,
             std::string("Copying frames: ") + policy_.acting +
                 " a buffer from upstream element \"" + upstream + "\" failed (" + what.why + ")" +
                 counted,
             what.sent);
    else
        post(element, GST_MESSAGE_WARNING, false,
             "Copying frames: upstream element \"" + upstream + "\" sends " + what.sent +
                 ", which cannot be " + policy_.done + counted,
             what.why);
}

GstObjectPtr<GstBufferPool>
CopyFallback::pool_for(GstElement* element, const StreamLayoutPtr& layout, GstFlowReturn* ret)
{
    *ret = GST_FLOW_ERROR;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (pool_ && pool_caps_ && layout->same_caps(pool_caps_.get())) {
            *ret = GST_FLOW_OK;
            return GstObjectPtr<GstBufferPool>(GST_BUFFER_POOL(gst_object_ref(pool_.get())));
        }
    }
    retire_pool_unless(nullptr); // made for other caps
    NegotiatedPool made = make_pool(element, layout, policy_.pool);
    if (!made) {
        GST_ELEMENT_ERROR(element, CORE, NEGOTIATION,
                          ("Cannot create a buffer pool to copy into: %s.", made.why.c_str()),
                          ("caps %" GST_PTR_FORMAT, layout->caps.get()));
        return {};
    }
    if (!activate_pool(element, made.pool.get(), "the buffers to copy into"))
        return {};
    std::lock_guard<std::mutex> lock(mu_);
    pool_.reset(GST_BUFFER_POOL(gst_object_ref(made.pool.get())));
    pool_caps_.reset(gst_caps_ref(layout->caps.get()));
    *ret = GST_FLOW_OK;
    return std::move(made.pool);
}

GstFlowReturn CopyFallback::copy(GstElement* element, CopyMode mode, const StreamLayoutPtr& layout,
                                 const Unusable& what, GstBuffer* inbuf, GstBuffer** out)
{
    const std::string upstream = upstream_name(element);
    if (mode == CopyMode::Never)
        return refuse(element, upstream, what);
    if (!layout) {
        GstElementFactory* factory = gst_element_get_factory(element);
        GST_ELEMENT_ERROR(element, CORE, NEGOTIATION,
                          ("%s received data before caps.",
                           factory ? GST_OBJECT_NAME(factory) : GST_OBJECT_NAME(element)),
                          (nullptr));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    GstFlowReturn ret = GST_FLOW_OK;
    GstObjectPtr<GstBufferPool> pool = pool_for(element, layout, &ret);
    if (!pool)
        return ret;
    // Once there is somewhere to copy to: frames no pool holds are an error, not copies.
    warn_once(element, upstream, what);
    GstBuffer* dst = nullptr;
    ret = gst_buffer_pool_acquire_buffer(pool.get(), &dst, nullptr);
    if (ret == GST_FLOW_ERROR)
        post_acquire_error(element, pool.get(), ret, "a buffer to copy into");
    if (ret != GST_FLOW_OK)
        return ret;
    MiniObjectPtr<GstBuffer> owned(dst);
    if (!copy_frame(dst, inbuf, *layout)) {
        GST_ELEMENT_ERROR(element, RESOURCE, READ,
                          ("Cannot copy the input frame%s.", take_map_failure().c_str()),
                          ("mapping or copying %" GST_PTR_FORMAT " failed", inbuf));
        return GST_FLOW_ERROR;
    }
    copies_++;
    *out = owned.release();
    return GST_FLOW_OK;
}

} // namespace edgetensor::gst
